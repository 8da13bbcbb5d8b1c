package app

import (
	"net/http"
	"testing"
)

// BenchmarkRestart is what a restart of the assembled server costs on a
// data dir that already holds a store and a TSDB: New (store open,
// migrations check, metrics store open, every route mounted), Start
// (listeners, agent sweeper, scheduler campaign) and Shutdown.
func BenchmarkRestart(b *testing.B) {
	dir := b.TempDir()
	startServer(b, dir).stop() // first start: schema, bootstrap admin (argon2)
	b.ResetTimer()
	for b.Loop() {
		startServer(b, dir).stop()
	}
}

// BenchmarkDashboardReads measures the scheduler views the console polls,
// through the whole stack (JWT check, chi, handler, SQLite), on one node
// with eight devices and no tasks.
func BenchmarkDashboardReads(b *testing.B) {
	s := startServer(b, b.TempDir())
	admin := s.adminToken()
	s.enrollNode(admin, "bench-node", "nvidia", 8)
	for _, path := range []string{"/api/v1/scheduler/summary", "/api/v1/slices", "/api/v1/plugins", "/api/v1/quotas"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				if r := s.do(http.MethodGet, path, admin, nil); r.Status != http.StatusOK {
					b.Fatalf("%s: %d %s", path, r.Status, r.Body)
				}
			}
		})
	}
}
