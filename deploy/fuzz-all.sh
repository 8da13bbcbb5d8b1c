#!/usr/bin/env bash
# Runs every Go fuzz target in the module briefly: no panic, no hang.
# The budget is an execution count (default 20000x), not a duration: a
# duration-bounded run can end in a spurious "context deadline exceeded"
# when a loaded machine stalls a fuzz worker at the deadline. -timeout
# still catches a real hang.
set -euo pipefail
cd "$(dirname "$0")/.."
t="${1:-20000x}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "fuzz $pkg $target ($t)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$t" -timeout 5m "$pkg"
  done
done
