package tests

import (
	"runtime"
	"testing"

	"github.com/hilrig/hilrig/profiles"
)

// TestParseLargeRetains bounds what a loaded profile of 10 000 hops and
// 10 000 flows keeps in the Go heap, once the bytes it was parsed from
// are dropped: its values, the engine's configuration, the index of each
// named mapping, and its text once (1.48 MB), which its names are slices
// of and which hilrig show parses again; 7.10 MB measured. It kept the
// bytes given besides the text parsed from them (9.20 MB), and indexed
// each named mapping in a map[string]int (7.71 MB, 0.6 MB more): the
// bound, 7.5 MB, leaves room (5 %) for less than either.
func TestParseLargeRetains(t *testing.T) {
	data := largeProfile(largeHops)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	loaded, err := profiles.Parse("large.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	data = nil
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	runtime.KeepAlive(loaded)
	const bound = 7_500_000
	if retained > bound {
		t.Errorf("a loaded profile of %d hops and flows retained %.2f MB, want at most %.2f MB", largeHops, float64(retained)/1e6, float64(bound)/1e6)
	}
	t.Logf("retained %.2f MB", float64(retained)/1e6)
}
