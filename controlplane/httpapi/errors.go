package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/heteroflow/heteroflow/controlplane"
	"github.com/heteroflow/heteroflow/controlplane/auth"
)

// APIError is the one error type the API writes. It satisfies
// huma.StatusError so huma serialises it as the response body.
type APIError struct {
	status int
	Body   ErrorInfo `json:"error"`
	header http.Header
}

func (e *APIError) Error() string           { return e.Body.Message }
func (e *APIError) GetStatus() int          { return e.status }
func (e *APIError) GetHeaders() http.Header { return e.header }

// statusClientClosed (nginx's 499) marks requests whose client went away
// before the answer; nobody reads it, but logs and metrics must not count
// them as server errors.
const statusClientClosed = 499

// codes maps HTTP statuses to the contract's error codes.
var codes = map[int]string{
	http.StatusBadRequest:            "invalid_argument",
	http.StatusUnauthorized:          "unauthenticated",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusConflict:              "conflict",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusLocked:                "locked",
	http.StatusTooManyRequests:       "too_many_requests",
	http.StatusServiceUnavailable:    "unavailable",
	http.StatusInternalServerError:   "internal",
	statusClientClosed:               "cancelled",
}

// CodedError is an error with its own stable code (e.g. "never_fits"),
// for answers the console translates more precisely than the status's.
func CodedError(status int, code, msg string) error {
	return &APIError{status: status, Body: ErrorInfo{Code: code, Message: msg}}
}

func newAPIError(status int, msg string) *APIError {
	code, ok := codes[status]
	if !ok {
		code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	return &APIError{status: status, Body: ErrorInfo{Code: code, Message: msg}}
}

func init() {
	// huma builds every error it writes (validation, body parsing, size
	// limits) through NewError; replacing it gives one error shape for the
	// whole API. 422 (schema validation, including unknown fields) becomes
	// 400 because the contract has one "invalid_argument" code.
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		for _, e := range errs {
			var mbe *http.MaxBytesError
			if errors.As(e, &mbe) {
				return newAPIError(http.StatusRequestEntityTooLarge,
					"request body is larger than "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
			}
		}
		if status == http.StatusUnprocessableEntity {
			status = http.StatusBadRequest
		}
		var parts []string
		for _, e := range errs {
			if e == nil {
				continue
			}
			var d *huma.ErrorDetail
			if errors.As(e, &d) {
				loc := strings.TrimPrefix(strings.TrimPrefix(d.Location, "body"), ".")
				if loc == "" {
					parts = append(parts, d.Message)
				} else {
					parts = append(parts, loc+": "+d.Message)
				}
			} else {
				parts = append(parts, e.Error())
			}
		}
		if len(parts) > 0 {
			msg = msg + ": " + strings.Join(parts, "; ")
		}
		if status >= 500 && status != http.StatusServiceUnavailable {
			// Never leak internal error text; the cause is logged where it happened.
			msg = "internal error"
		}
		return newAPIError(status, msg)
	}
	// The context variant also hands the message to the audit entry.
	huma.NewErrorWithContext = func(ctx huma.Context, status int, msg string, errs ...error) huma.StatusError {
		e := huma.NewError(status, msg, errs...)
		if ctx != nil {
			noteError(ctx.Context(), e.Error())
		}
		return e
	}
}

// statusOf maps a domain error to its HTTP status: the one table.
func statusOf(err error) int {
	switch {
	case errors.Is(err, context.Canceled):
		return statusClientClosed
	case errors.Is(err, controlplane.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, controlplane.ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, controlplane.ErrForbidden):
		return http.StatusForbidden
	case errors.Is(err, controlplane.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, controlplane.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, controlplane.ErrLocked):
		return http.StatusLocked
	case errors.Is(err, auth.ErrRateLimited):
		return http.StatusTooManyRequests
	case errors.Is(err, controlplane.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		// A dependency that did not answer in time is unavailable, not broken.
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// toAPIError converts any error to the API's error; 5xx text is replaced
// and the cause logged once here.
func toAPIError(log *slog.Logger, err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	st := statusOf(err)
	msg := err.Error()
	switch st {
	case http.StatusInternalServerError:
		log.Error("internal error", "err", err)
		msg = "internal error"
	case http.StatusServiceUnavailable:
		log.Warn("dependency unavailable", "err", err)
		msg = "service unavailable, try again"
	}
	e := newAPIError(st, msg)
	var ce *controlplane.CodedError
	if st < http.StatusInternalServerError && errors.As(err, &ce) {
		e.Body.Code, e.Body.Params = ce.Code, ce.Params
	}
	if st == http.StatusServiceUnavailable && errors.As(err, &ce) {
		// A coded unavailable dependency (a directory that does not answer)
		// says which one and keeps its own text, written for users.
		e.Body.Code, e.Body.Params, e.Body.Message = ce.Code, ce.Params, ce.Error()
	}
	var rl *auth.RateLimitError
	if errors.As(err, &rl) {
		secs := int(rl.RetryAfter.Round(time.Second) / time.Second)
		if secs < 1 {
			secs = 1
		}
		e.header = http.Header{"Retry-After": []string{strconv.Itoa(secs)}}
	}
	return e
}

// WriteError writes err in the API's error shape; for plain net/http
// handlers mounted beside the huma operations.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	ae := toAPIError(log, err)
	writeAPIError(w, r, ae)
}

func writeAPIError(w http.ResponseWriter, r *http.Request, ae *APIError) {
	for k, vs := range ae.header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	noteError(r.Context(), ae.Body.Message)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ae.status)
	_ = json.NewEncoder(w).Encode(ae)
}
