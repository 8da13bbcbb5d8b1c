package controlplane

import (
	"errors"
	"fmt"
)

// Sentinel errors returned by every Store implementation and by domain
// validation. The HTTP layer maps them to status codes in one table.
var (
	// ErrNotFound: the addressed row does not exist (or is not visible to the caller).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique key is taken, or an optimistic check (such as a
	// task state transition from a state the task is no longer in) failed.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the input breaks a domain rule; wrap it with the reason.
	ErrInvalid = errors.New("invalid input")
	// ErrUnauthenticated: no, or bad, credentials.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrForbidden: authenticated, but the role lacks the permission.
	ErrForbidden = errors.New("forbidden")
	// ErrLocked: the account is locked after too many failed logins.
	ErrLocked = errors.New("account locked")
	// ErrUnavailable: the store (or another dependency) cannot be reached.
	ErrUnavailable = errors.New("unavailable")
)

// Invalidf returns an ErrInvalid carrying a human-readable reason.
func Invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}
