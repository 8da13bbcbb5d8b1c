package parseutil

import (
	"strconv"
	"strings"
)

// unknownWords are the spellings vendor CLIs use for "no value". Compared
// case-insensitively after trimming.
var unknownWords = map[string]bool{
	"":                true,
	"n/a":             true,
	"[n/a]":           true,
	"na":              true,
	"-":               true,
	"--":              true,
	"none":            true,
	"not supported":   true,
	"[not supported]": true,
	"unknown":         true,
	"[unknown error]": true,
	"n/a / n/a":       true,
}

// IsUnknown reports whether s is one of the "no value" spellings.
func IsUnknown(s string) bool {
	return unknownWords[strings.ToLower(strings.TrimSpace(s))]
}

// Str returns a pointer to the trimmed s, or nil when s means "unknown".
func Str(s string) *string {
	s = strings.TrimSpace(s)
	if IsUnknown(s) {
		return nil
	}
	return &s
}

// Ptr returns a pointer to v (for values the parser computed itself).
func Ptr[T any](v T) *T { return &v }

// unitSuffixes are stripped from the end of numeric cells, longest first so
// that "MiB" wins over "B".
var unitSuffixes = []string{"KB/s", "MiB", "GiB", "KiB", "MHz", "mV", "MB", "GB", "KB", "W", "C", "c", "%", "B", "x"}

// trimUnit removes one known unit suffix and surrounding spaces.
func trimUnit(s string) string {
	s = strings.TrimSpace(s)
	for _, u := range unitSuffixes {
		if strings.HasSuffix(s, u) {
			return strings.TrimSpace(strings.TrimSuffix(s, u))
		}
	}
	return s
}

// Float parses a number that may carry a unit ("66.92 W", "36 C", "0 %",
// "49.0C"); unknown or unparseable text gives nil.
func Float(s string) *float64 {
	if IsUnknown(s) {
		return nil
	}
	v, err := strconv.ParseFloat(trimUnit(s), 64)
	if err != nil {
		return nil
	}
	return &v
}

// Int parses an integer that may carry a unit; unknown gives nil.
func Int(s string) *int {
	if IsUnknown(s) {
		return nil
	}
	v, err := strconv.Atoi(trimUnit(s))
	if err != nil {
		return nil
	}
	return &v
}

// Int64 parses an integer that may carry a unit; unknown gives nil.
func Int64(s string) *int64 {
	if IsUnknown(s) {
		return nil
	}
	v, err := strconv.ParseInt(trimUnit(s), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// MiB parses a memory size and converts it to MiB. The unit comes from the
// text ("40960 MiB", "32 GB", "17163091968 B") or, when the text is a bare
// number, from defUnit ("MiB", "MB", "B", "KiB", "GiB"). Vendor CLIs that
// print "MB" mean MiB (npu-smi, xpu_smi report 32768 MB for a 32 GiB card), so
// MB is treated as MiB.
func MiB(s, defUnit string) *int64 {
	s = strings.TrimSpace(s)
	if IsUnknown(s) {
		return nil
	}
	unit := defUnit
	num := s
	for _, u := range []string{"MiB", "GiB", "KiB", "MB", "GB", "KB", "B"} {
		if strings.HasSuffix(s, u) {
			unit = u
			num = strings.TrimSpace(strings.TrimSuffix(s, u))
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || v > 1e18 {
		return nil
	}
	var mib float64
	switch unit {
	case "B":
		mib = v / (1 << 20)
	case "KiB", "KB":
		mib = v / 1024
	case "GiB", "GB":
		mib = v * 1024
	default: // MiB, MB
		mib = v
	}
	out := int64(mib + 0.5)
	return &out
}
