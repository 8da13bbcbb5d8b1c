// Package parseutil holds the small text helpers every vendor parser shares:
// recognising the many spellings of "unknown" (N/A, [N/A], [Not Supported],
// NA, -), reading numbers that carry units ("66.92 W", "40960 MiB", "49.0C"),
// converting memory units to MiB, normalising PCI bus ids to the 4-hex-digit
// lower-case domain form, and splitting box-drawn tables into cells.
//
// Every helper returns nil for an unknown value so that parsers never report
// 0 for something the tool did not print.
package parseutil
