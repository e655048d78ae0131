package profiles

import (
	"runtime/debug"
	"sync"
	"testing"
)

// TestLoadGivesTheCollectorBack: a load holds the garbage collector while
// it decodes (holdCollection) and gives back the percent it found, however
// loads overlap (a live server parses a profile for each link) and whether
// they succeed or fail; the hold nests in one taken before it (GOGC=off,
// a real-time run's).
func TestLoadGivesTheCollectorBack(t *testing.T) {
	good, err := library.ReadFile("bottleneck.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte("duration: 1s\nhops: {h: {rate: fast}}\nflows: {f: {route: [h]}}\n")
	tests := []struct {
		name    string
		percent int
		loads   int
		data    []byte
		fails   bool
	}{
		{"one load", 150, 1, good, false},
		{"loads at once", 150, 16, good, false},
		{"failing loads at once", 70, 16, bad, true},
		{"collector already held", -1, 4, good, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := debug.SetGCPercent(tt.percent)
			defer debug.SetGCPercent(before)
			var wg sync.WaitGroup
			for range tt.loads {
				wg.Go(func() {
					_, err := Parse("p.yaml", tt.data)
					if (err != nil) != tt.fails {
						t.Errorf("Parse: %v, want an error: %v", err, tt.fails)
					}
				})
			}
			wg.Wait()
			if got := debug.SetGCPercent(tt.percent); got != tt.percent {
				t.Errorf("after %d loads the collector's percent is %d, want %d as before them", tt.loads, got, tt.percent)
			}
		})
	}
}

// TestCollectionHoldLeavesOthersSettings: a percent someone else sets
// while a profile is decoded (a real-time run ending and giving its own
// back) stands when the decoding ends.
func TestCollectionHoldLeavesOthersSettings(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	release := holdCollection()
	debug.SetGCPercent(80)
	release()
	if got := debug.SetGCPercent(100); got != 80 {
		t.Errorf("the collector's percent is %d after the hold, want the 80 set during it", got)
	}
}
