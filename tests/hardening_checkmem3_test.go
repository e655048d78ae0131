package tests

import (
	"runtime"
	"testing"

	"github.com/hilrig/hilrig/profiles"
)

// TestParseLargeGarbage bounds what a load of 10 000 hops and 10 000
// flows allocates beside what the loaded profile keeps: with no more than
// that, the heap at the peak of hilrig check is the loaded profile and
// little else, however the collections fall. The decoder joined the path
// of every value it decoded (hops.h1.rate, flows.f1.route[0]) and the
// build of the engine's configuration those of every hop and flow again,
// for messages that were never made: 170 000 allocations, 3.7 MB of 12.8
// (290 000 allocations in all). Now a path is joined when a message is
// made of it: 9.06 MB in 120 000 allocations, most of them kept (9.52 MB
// and 125 000 under the race detector). The bounds leave 5 % and 8 % of
// room over the race detector's figures.
func TestParseLargeGarbage(t *testing.T) {
	data := largeProfile(largeHops)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	loaded, err := profiles.Parse("large.yaml", data)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(loaded)
	allocated, allocations := after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs
	t.Logf("allocated %.2f MB in %d allocations", float64(allocated)/1e6, allocations)
	const bytesBound, allocationsBound = 10_000_000, 135_000
	if allocated > bytesBound {
		t.Errorf("a load of %d hops and flows allocated %.2f MB, want at most %.2f MB", largeHops, float64(allocated)/1e6, float64(bytesBound)/1e6)
	}
	if allocations > allocationsBound {
		t.Errorf("a load of %d hops and flows made %d allocations, want at most %d", largeHops, allocations, allocationsBound)
	}
}
