package executor

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
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
		var meter drivers.ReaderMeter
		start := clock.Now()
		for clock.Now()-start < 500*time.Millisecond {
			in.Frame(0, payload, clock.Now())
			in.Read(0, &meter, clock.Now())
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

// TestReadersOfOneEndpointMeteredApart: an endpoint with two reader
// threads (a GPIO endpoint's two input pins), neither of which works, is
// never rested, and race-free. When the endpoint had one account, one
// thread's CPU was measured from the other's: a thread that had used
// 20 ms of CPU before (the pin that saw a burst) looked as if it had used
// them in the last window, slept up to LoadWindow/ReaderBudget times that
// and delayed its edges by hundreds of ms (TestRunGPIO, pin 1: p50 231 ms).
func TestReadersOfOneEndpointMeteredApart(t *testing.T) {
	in := NewIngress(64, func() {})
	in.meter(1)
	clock := realtime.NewMonotonic()
	var wg sync.WaitGroup
	for _, burn := range []time.Duration{20 * time.Millisecond, 0} {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for cpu, _ := realtime.ThreadCPU(); ; {
				if now, _ := realtime.ThreadCPU(); now-cpu >= burn {
					break
				}
			}
			var meter drivers.ReaderMeter
			for range 100 {
				time.Sleep(time.Millisecond) // an edge a ms: next to no CPU
				in.Read(0, &meter, clock.Now())
			}
		})
	}
	wg.Wait()
	if n := in.readers[0].rests.Load(); n != 0 {
		t.Errorf("the idle readers rested %d times, %v in all", n, time.Duration(in.readers[0].rested.Load()))
	}
}
