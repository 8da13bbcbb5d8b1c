package controlplane

import "fmt"

// CodedError is a domain error with a stable code and the values its
// message names, so a client shows the reason in its own language: the
// API answers {"error":{"code","message","params"}} and the console keeps
// a translation per code. Kind (ErrInvalid, ErrNotFound, ErrConflict,
// ErrForbidden) decides the HTTP status.
type CodedError struct {
	Kind   error
	Code   string
	Params map[string]string
	msg    string
}

func (e *CodedError) Error() string { return e.msg }
func (e *CodedError) Unwrap() error { return e.Kind }

// Coded returns a CodedError of kind whose message is format (an invalid
// one reads "invalid input: …", as Invalidf). params are key, value pairs.
func Coded(kind error, code string, params []string, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if kind == ErrInvalid {
		msg = fmt.Sprintf("%v: %s", ErrInvalid, msg)
	}
	p := make(map[string]string, len(params)/2)
	for i := 0; i+1 < len(params); i += 2 {
		p[params[i]] = params[i+1]
	}
	return &CodedError{Kind: kind, Code: code, Params: p, msg: msg}
}

// InvalidCode is Coded(ErrInvalid, …).
func InvalidCode(code string, params []string, format string, args ...any) error {
	return Coded(ErrInvalid, code, params, format, args...)
}

// WithCode gives err (of kind) a code and params, keeping its message.
func WithCode(err, kind error, code string, params ...string) error {
	ce := Coded(kind, code, params, "").(*CodedError)
	ce.msg = err.Error()
	return ce
}
