package tests

import (
	"runtime"
	"testing"

	"github.com/hilrig/hilrig/profiles"
)

// TestParseLargeGarbage bounds what a load of 10 000 hops and 10 000
// flows allocates in all, beside what the loaded profile keeps: with no
// more than that, the heap at the peak of hilrig check is the loaded
// profile and little else, however the collections fall. (The bounds were
// 24 MiB and 350 000 allocations while a stub of each hop and flow was
// kept through the decoding.) The decoder joined the path
// of every value it decoded (hops.h1.rate, flows.f1.route[0]) and the
// build of the engine's configuration those of every hop and flow again,
// for messages that were never made: 170 000 allocations, 3.7 MB of 12.8
// (290 000 allocations in all). Now a path is joined when a message is
// made of it: 9.06 MB in 120 000 allocations. A list's slice is grown in
// place (reflect.MakeSlice allocated a header for each, 24 bytes for
// every flow's route): 8.82 MB in 110 000. The tree's first slab of nodes
// is a few, not 1 024, and a Map's index of names three quarters full at
// most, not half: 8.49 MB, most of it kept (8.97 MB and 115 000
// allocations under the race detector). The bounds leave 5 % and 8 % of
// room over the race detector's figures.
func TestParseLargeGarbage(t *testing.T) {
	data := largeProfile(largeHops)
	allocated, allocations := allocatedBy(t, func() (any, error) { return profiles.Parse("large.yaml", data) })
	t.Logf("allocated %.2f MB in %d allocations", float64(allocated)/1e6, allocations)
	const bytesBound, allocationsBound = 9_400_000, 125_000
	if allocated > bytesBound {
		t.Errorf("a load of %d hops and flows allocated %.2f MB, want at most %.2f MB", largeHops, float64(allocated)/1e6, float64(bytesBound)/1e6)
	}
	if allocations > allocationsBound {
		t.Errorf("a load of %d hops and flows made %d allocations, want at most %d", largeHops, allocations, allocationsBound)
	}
}

// TestLoadLargeReadsOnce bounds what profiles.Load of a file of 10 000
// hops and 10 000 flows (1.48 MB) allocates: the file is read into the
// text the loaded profile keeps, not into bytes and then copied (as
// much again in garbage): 14.28 MB at the start of this work, 10.5 with
// the paths joined only for messages, 8.83 read into the text, 8.51 now
// (8.97 under the race detector). The bound, 9.4 MB, is 5 % over that.
func TestLoadLargeReadsOnce(t *testing.T) {
	file := largeProfileFile(t)
	allocated, allocations := allocatedBy(t, func() (any, error) { return profiles.Load(file) })
	t.Logf("allocated %.2f MB in %d allocations", float64(allocated)/1e6, allocations)
	const bound = 9_400_000
	if allocated > bound {
		t.Errorf("loading %d hops and flows from a file allocated %.2f MB, want at most %.2f MB", largeHops, float64(allocated)/1e6, float64(bound)/1e6)
	}
}

// allocatedBy is what load allocated, in bytes and in allocations, from a
// heap just collected; what it loads is kept until it is counted.
func allocatedBy(t *testing.T, load func() (any, error)) (bytes, allocations uint64) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	loaded, err := load()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(loaded)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}
