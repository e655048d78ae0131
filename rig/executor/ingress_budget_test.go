package executor

import (
	"runtime"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/realtime"
)

// TestFloodedReaderLeavesTheCPU: a reader thread handed frames as fast as
// it can take them (a device flooding the rig) takes no more than
// ReaderBudget of each LoadWindow of its CPU, by the kernel's count, where
// it took all of it.
func TestFloodedReaderLeavesTheCPU(t *testing.T) {
	in := NewIngress(64, func() {})
	in.meter(1)
	clock := realtime.NewMonotonic()
	payload := make([]byte, 32)
	done := make(chan [2]time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		cpu0, _ := realtime.ThreadCPU()
		start := clock.Now()
		for clock.Now()-start < 500*time.Millisecond {
			in.Frame(0, payload, clock.Now())
			in.pop(nil) // the executor takes it
		}
		cpu, _ := realtime.ThreadCPU()
		done <- [2]time.Duration{cpu - cpu0, clock.Now() - start}
	}()
	r := <-done
	frac := float64(r[0]) / float64(r[1])
	t.Logf("the reader took %v of CPU in %v (%.1f%%), resting %d times", r[0], r[1], 100*frac, in.readers[0].rests.Load())
	// Its share, with a window's grace: the first window is measured
	// before any rest.
	if limit := float64(ReaderBudget)/float64(LoadWindow) + float64(LoadWindow)/float64(r[1]); frac > limit {
		t.Errorf("the reader took %.1f%% of its CPU, want at most %.1f%%", 100*frac, 100*limit)
	}
}
