package promapi

import (
	"encoding/json"
	"net/http"
)

// errorType values and their HTTP statuses, as Prometheus answers them.
type errorType string

const (
	errBadData     errorType = "bad_data"
	errExec        errorType = "execution"
	errTimeout     errorType = "timeout"
	errCanceled    errorType = "canceled"
	errInternal    errorType = "internal"
	errUnavailable errorType = "unavailable"
	errNotFound    errorType = "not_found"
)

var statusOf = map[errorType]int{
	errBadData:     http.StatusBadRequest,
	errExec:        http.StatusUnprocessableEntity,
	errTimeout:     http.StatusServiceUnavailable,
	errCanceled:    499, // nginx's "client closed request", as Prometheus uses
	errInternal:    http.StatusInternalServerError,
	errUnavailable: http.StatusServiceUnavailable,
	errNotFound:    http.StatusNotFound,
}

type response struct {
	Status    string    `json:"status"`
	Data      any       `json:"data,omitempty"`
	ErrorType errorType `json:"errorType,omitempty"`
	Error     string    `json:"error,omitempty"`
	Warnings  []string  `json:"warnings,omitempty"`
	Infos     []string  `json:"infos,omitempty"`
}

type apiError struct {
	typ errorType
	err error
}

func (e *apiError) Error() string { return e.err.Error() }

func badData(err error) *apiError { return &apiError{typ: errBadData, err: err} }

func writeSuccess(w http.ResponseWriter, data any, warnings, infos []string) {
	write(w, http.StatusOK, response{Status: "success", Data: data, Warnings: warnings, Infos: infos})
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	write(w, statusOf[e.typ], response{Status: "error", ErrorType: e.typ, Error: e.err.Error()})
}

func write(w http.ResponseWriter, status int, r response) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(r)
}
