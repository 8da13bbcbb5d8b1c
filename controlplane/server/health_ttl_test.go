package server

import "time"

// healthCacheTTLForTest outlasts the health endpoints' probe cache.
const healthCacheTTLForTest = 2100 * time.Millisecond
