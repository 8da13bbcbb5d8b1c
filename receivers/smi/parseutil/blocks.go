package parseutil

import (
	"strings"
)

// Block is one device's rows in a box-drawn table: the rows between two
// rule lines, each split into its '|' cells.
type Block [][]string

// DeviceBlocks finds the device section of an nvidia-smi-style box table
// and returns one Block per device. The section starts at the first rule
// line after the header line containing headerKey (e.g. "Bus-Id"); blocks
// are separated by rule lines; the section ends at a blank line or at a
// process table (a line mentioning "Process"). Lines that do not start with
// '|' (mthreads-gmi's open layout) are taken as rows too when they contain
// a '|'.
func DeviceBlocks(lines []string, headerKey string) []Block {
	start := -1
	for i, l := range lines {
		if strings.Contains(l, headerKey) {
			for j := i + 1; j < len(lines); j++ {
				if IsRule(lines[j]) {
					start = j + 1
					break
				}
			}
			break
		}
	}
	if start < 0 {
		return nil
	}
	var out []Block
	var cur Block
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	for _, l := range lines[start:] {
		switch {
		case strings.TrimSpace(l) == "":
			flush()
			return out
		case strings.Contains(strings.ToLower(l), "process"):
			flush()
			return out
		case IsRule(l):
			flush()
		case strings.Contains(l, "|"):
			cur = append(cur, Cells(l))
		default:
			flush()
			return out
		}
	}
	flush()
	return out
}

// Cell returns row r, cell c of a block, or "" when absent.
func (b Block) Cell(r, c int) string {
	if r < 0 || r >= len(b) || c < 0 || c >= len(b[r]) {
		return ""
	}
	return b[r][c]
}

// Fields splits a cell on whitespace.
func Fields(cell string) []string { return strings.Fields(cell) }

// FirstWithSuffix returns the first field ending in suffix whose remainder
// is numeric ("32C", "106W"), or "".
func FirstWithSuffix(fields []string, suffix string) string {
	for _, f := range fields {
		if num, ok := strings.CutSuffix(f, suffix); ok && num != "" && Float(num) != nil {
			return f
		}
	}
	return ""
}

// HeaderValue finds "key" in line and returns the first whitespace-separated
// token after it ("Driver Version: 4.1.0" → "4.1.0"). key should include its
// colon when the tool prints one.
func HeaderValue(lines []string, key string) *string {
	for _, l := range lines {
		_, after, ok := strings.Cut(l, key)
		if !ok {
			continue
		}
		f := strings.Fields(strings.Trim(after, "| "))
		if len(f) > 0 {
			return Str(strings.Trim(f[0], "|"))
		}
	}
	return nil
}
