package controlplane

import "fmt"

// Constraint refusals as both stores report them. The API shows a 409's
// text as is, and a driver's text names tables, columns and constraints,
// so the stores map their unique and foreign-key violations to these; the
// caller's wrapping names the object ("tenant \"acme\": conflict: …").

// ConflictExists is a unique key already taken.
func ConflictExists() error { return fmt.Errorf("%w: it already exists", ErrConflict) }

// ConflictReference is a row that refers to a missing one, or is still
// referred to by another.
func ConflictReference() error {
	return fmt.Errorf("%w: it refers to something that does not exist, or something else still refers to it", ErrConflict)
}
