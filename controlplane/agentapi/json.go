package agentapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/heteroflow/heteroflow/controlplane"
)

// decode reads one JSON value; unknown fields are rejected so a typo in a
// client is an error, not a silently ignored field.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return controlplane.Invalidf("request body is empty")
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return controlplane.Invalidf("malformed JSON: %v", err)
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is already sent: an encoding error (a gone client) cannot
	// be reported to anyone.
	_ = json.NewEncoder(w).Encode(v)
}

// list is the contract's list envelope.
type list[T any] struct {
	Items  []T `json:"items"`
	Total  int `json:"total"`
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
}
