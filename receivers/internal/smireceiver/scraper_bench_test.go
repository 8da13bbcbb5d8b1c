package smireceiver

import (
	"context"
	"fmt"
	"testing"

	"github.com/heteroflow/heteroflow/receivers/inventory"
)

// BenchmarkScrapeEmit8 is the emit half of one scrape of an 8-device node
// (the parse half is benchmarked per vendor in the parser packages).
func BenchmarkScrapeEmit8(b *testing.B) {
	snap := &inventory.Snapshot{Vendor: inventory.VendorNVIDIA, DriverVersion: ptr("550.54.15")}
	for i := range 8 {
		snap.Devices = append(snap.Devices, inventory.Device{
			Index: i, UUID: ptr(fmt.Sprintf("GPU-%d", i)), Model: "NVIDIA H100 80GB HBM3",
			MemoryTotalMiB: ptr(int64(81559)), MemoryUsedMiB: ptr(int64(1000 * i)),
			UtilizationPercent: ptr(float64(10 * i)), TemperatureCelsius: ptr(40.0), PowerWatts: ptr(300.0),
			PowerLimitWatts: ptr(700.0), BusID: ptr(fmt.Sprintf("0000:%02x:00.0", i)), Health: ptr("ok"),
		})
	}
	s := testScraper(b, func(context.Context) (*inventory.Snapshot, error) { return snap, nil }, nil, nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Scrape(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
