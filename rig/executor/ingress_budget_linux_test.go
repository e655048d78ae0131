package executor

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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

// readerThread locks the calling goroutine to its thread and raises it to
// SCHED_FIFO 1, as an endpoint's reader thread runs raised (at 79), and
// returns what undoes both. At normal priority, beside six busy loops, a
// flooded thread ran too little of each window to use its budget: 2 or 3
// rests in 100 ms where a quarter of the CPU gives 10, and a burn of two
// budgets spread over a stretch four times as long.
func readerThread() (undo func()) {
	runtime.LockOSThread()
	if realtime.RaiseThread(1) != nil {
		return runtime.UnlockOSThread
	}
	return func() {
		realtime.LowerThread()
		runtime.UnlockOSThread()
	}
}

// burnCPU keeps the calling thread busy for d of its own CPU time.
func burnCPU(d time.Duration) {
	for cpu, _ := realtime.ThreadCPU(); ; {
		if now, _ := realtime.ThreadCPU(); now-cpu >= d {
			return
		}
	}
}

// TestReaderStallIsNoFlood: the kernel counts as a reader's CPU what it
// did not do (an interrupt, its virtual CPU's host running something
// else). A reader that reads every 5 ms and seems, every 50 ms, to use
// 1.875 ms of the stretch before a read (the 1.25 ms of 5 ms that rested
// the controller's reader on a loaded CI machine) uses under ReaderBudget
// of every window and does not rest (the rule before rested it at each:
// 6 times); one that seems to use two budgets at once (its share of the
// stretch up to the next read, however the window falls) rests once,
// which is no flood. One rest is allowed to the machine's own stalls.
func TestReaderStallIsNoFlood(t *testing.T) {
	cases := []struct {
		name      string
		stall     time.Duration
		every     int
		wantRests int
	}{
		{"3/4 of a budget every 50 ms", 3 * ReaderBudget / 4, 10, 0},
		{"two budgets at once", 2 * ReaderBudget, 60, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := NewIngress(64, func() {})
			in.meter(1)
			clock := realtime.NewMonotonic()
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer readerThread()()
				var meter drivers.ReaderMeter
				for i := range 60 {
					// The thread's own sleep: time.Sleep's wake-up comes
					// through the runtime's other threads, of normal
					// priority, late by tens of ms on a loaded machine.
					ts := unix.NsecToTimespec(int64(5 * time.Millisecond))
					unix.Nanosleep(&ts, nil)
					if i%c.every == c.every/2 {
						burnCPU(c.stall)
					}
					in.Read(0, &meter, clock.Now())
				}
			}()
			<-done
			r := &in.readers[0]
			if n := int(r.rests.Load()); n < c.wantRests || n > c.wantRests+1 {
				t.Errorf("rested %d times, want %d", n, c.wantRests)
			}
			if n := r.floods.Load(); n > 0 {
				t.Errorf("%d floods", n)
			}
		})
	}
}

// TestFloodedReaderIsToldOnce: a reader kept busy rests again and again,
// its rests a 3/4 window after the one before (all but the first a
// flood's), and the executor tells of it once, then of its end ReaderQuiet
// after its last rest. In 100 ms a quarter of the CPU makes 10 rests, 9 of
// them a flood's; the bounds ask half of each, because threads of higher
// priority (other packages' rigs at 80, whose tests run meanwhile) may
// hold this one at 1 for a window or more, which costs a rest and breaks a
// pair.
func TestFloodedReaderIsToldOnce(t *testing.T) {
	in := NewIngress(64, func() {})
	in.meter(1)
	x := &Executor{in: in, endpoints: []endpointState{{name: "udp"}}}
	clock := realtime.NewMonotonic()
	payload := make([]byte, 32)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer readerThread()()
		var meter drivers.ReaderMeter
		for start := clock.Now(); clock.Now()-start < 100*time.Millisecond; {
			in.Frame(0, payload, clock.Now())
			in.Read(0, &meter, clock.Now())
			in.pop(nil)
		}
	}()
	for ended := false; !ended; {
		time.Sleep(LoadWindow)
		select {
		case <-done:
			ended = true
		default:
		}
		x.readersResting(clock.Now())
	}
	r := &in.readers[0]
	if rests, floods := r.rests.Load(), r.floods.Load(); rests < 5 || floods < rests/2 {
		t.Errorf("%d rests, %d of them a flood's", rests, floods)
	}
	for quiet := clock.Now(); clock.Now()-quiet <= ReaderQuiet+LoadWindow; {
		time.Sleep(LoadWindow)
		x.readersResting(clock.Now())
	}
	var kinds []string
	for _, e := range x.Events() {
		kinds = append(kinds, e.Kind)
	}
	if want := []string{"reader_overload", "reader_overload_ended"}; !slices.Equal(kinds, want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
}
