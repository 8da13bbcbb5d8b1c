package parseutil

import (
	"errors"
	"fmt"
)

// ErrUnrecognised means the input is not the output of the tool/form the
// parser was asked for (wrong vendor, wrong command, truncated header).
var ErrUnrecognised = errors.New("unrecognised tool output")

// ErrNoDevices means the output was recognised but lists no device.
var ErrNoDevices = errors.New("no devices in tool output")

// ErrTooLarge means the input exceeds MaxInput.
var ErrTooLarge = errors.New("tool output too large")

// Unrecognised wraps ErrUnrecognised with what was expected.
func Unrecognised(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnrecognised, fmt.Sprintf(format, args...))
}

// CheckSize rejects inputs over MaxInput and empty ones.
func CheckSize(data []byte) error {
	if len(data) > MaxInput {
		return fmt.Errorf("%w: %d bytes (limit %d)", ErrTooLarge, len(data), MaxInput)
	}
	if len(bytesTrim(data)) == 0 {
		return fmt.Errorf("%w: empty input", ErrUnrecognised)
	}
	return nil
}

func bytesTrim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\n' || b[j-1] == '\r' || b[j-1] == '\t') {
		j--
	}
	return b[i:j]
}
