package tests

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// gcLive matches a line of GODEBUG=gctrace=1: the heap at the start of
// the collection, at its end, and what it found live, in MB.
var gcLive = regexp.MustCompile(`(?m)^gc \d+ .* (\d+)->(\d+)->(\d+) MB`)

// TestCheckLargeLiveHeap bounds the Go heap that hilrig check of the large
// profile holds live, as each of its collections finds it
// (GODEBUG=gctrace=1). The profile's values and engine configuration are
// some 10 MB when loaded; the YAML node tree of its 240 000 keys, values
// and collections is 38 MB, and was live whole while they were decoded
// (46 to 49 MB found live). Parsed lazily with a stub for each hop and
// flow, 17 to 18 MB were (the stubs and their keys 7 MB); with the hops
// and the flows themselves stubs, their entries read one by one, 10 to
// 11 MB: the loaded profile, and the file's bytes and text; with the
// text alone kept, 8 to 9 MB; with the paths joined only for messages,
// the file read once and the tree's first slab small, 7 MB (the loaded
// profile is 6.8 of them). Since the collector is held while the profile
// is decoded and built, which keep almost all they allocate, the
// collections are those of the parse before it, and find 2 MB live: the
// text and the lazy tree's top (TestCheckLargeAnonymousMemory bounds the
// whole). The bound is 3 MB: one step of gctrace's whole megabytes over
// what is reached; the tree parsed whole (38 MB) does not fit under it.
func TestCheckLargeLiveHeap(t *testing.T) {
	// Collections at every fifth more of heap, not every doubling: the
	// heap is seen live near its peak, whenever that is.
	out := checkLargeTraced(t, 20)
	collections := gcLive.FindAllSubmatch(out, -1)
	if len(collections) == 0 {
		t.Fatalf("hilrig check with GODEBUG=gctrace=1 reported no collection:\n%s", out)
	}
	most := 0
	for _, c := range collections {
		live, _ := strconv.Atoi(string(c[3]))
		most = max(most, live)
	}
	const bound = 3
	if most > bound {
		t.Errorf("hilrig check of %d hops and flows held %d MB live in the Go heap, want at most %d MB", largeHops, most, bound)
	}
	t.Logf("%d collections, at most %d MB live", len(collections), most)
}

// checkLargeTraced runs hilrig check of the large profile with
// GODEBUG=gctrace=1 at GOGC gogc (not the environment's), and returns
// what it printed.
func checkLargeTraced(t *testing.T, gogc int) []byte {
	t.Helper()
	cmd := exec.Command(hilrig, "check", largeProfileFile(t))
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "GOGC="+strconv.Itoa(gogc))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("hilrig check: %v\n%s", err, out)
	}
	return out
}
