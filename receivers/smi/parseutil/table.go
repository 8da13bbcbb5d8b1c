package parseutil

import (
	"strings"
)

// MaxInput bounds what a parser accepts: a management CLI never prints
// megabytes, and the bound keeps fuzzing and hostile input cheap.
const MaxInput = 8 << 20

// Lines splits data into lines with trailing CR, spaces and tabs removed.
func Lines(data []byte) []string {
	text := string(data)
	out := make([]string, 0, strings.Count(text, "\n")+1)
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		out = append(out, strings.TrimRight(line, " \t\r"))
		text = rest
	}
	return out
}

// Cells splits a box-drawn table row ("| a | b |") on '|' and trims each
// cell; the empty cells before the first and after the last bar are dropped.
func Cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	parts := strings.Split(line, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// IsRule reports whether a line is a table border ("+-----+", "|=====|",
// "=====") with no content.
func IsRule(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	return strings.Trim(t, "+-=|_ ~") == ""
}

// SplitPair splits "used / total" (any spacing, also "used/total") and
// returns both halves trimmed.
func SplitPair(s string) (string, string, bool) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return strings.TrimSpace(s), "", false
	}
	return strings.TrimSpace(a), strings.TrimSpace(b), true
}

// KeyValue splits "Key : Value" (first colon) and trims both sides.
func KeyValue(line string) (string, string, bool) {
	k, v, ok := strings.Cut(line, ":")
	if !ok {
		return "", "", false
	}
	return strings.TrimSpace(k), strings.TrimSpace(v), true
}

// StripANSI removes terminal colour escapes (Hygon's rocminfo prints them).
func StripANSI(s string) string {
	if !strings.Contains(s, "\x1b") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
