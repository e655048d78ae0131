package realtime

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkWakeup is the executor's wakeup lateness at 1 kHz: its waiter
// asked for a deadline every millisecond, as `cyclictest -p 80 -i 1000`
// asks for one, on a locked thread at SCHED_FIFO 80 with memory locked and
// idle CPUs polling, as in a run. spin=0 sleeps all the way, as cyclictest
// does; spin=100µs is the executor's default. Run with -benchtime=10000x.
func BenchmarkWakeup(b *testing.B) {
	for _, spin := range []time.Duration{0, DefaultSpin} {
		b.Run("spin="+spin.String(), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)) // the waiter's P
			if err := RaiseThread(80); err != nil {
				b.Logf("no SCHED_FIFO: %v", err)
			} else {
				defer LowerThread()
			}
			if err := LockMemory(); err != nil {
				b.Logf("memory not locked: %v", err)
			}
			if qos, err := HoldIdleLatency(); err != nil {
				b.Logf("idle CPUs may halt: %v", err)
			} else {
				defer qos.Close()
			}
			clock := NewMonotonic()
			w, err := NewWaiter(clock, spin)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			none := func() bool { return false }
			late := make([]time.Duration, b.N)
			next := clock.Now() + time.Millisecond
			b.ResetTimer()
			for i := range late {
				w.Until(next, none)
				late[i] = clock.Now() - next
				next += time.Millisecond
			}
			b.StopTimer()
			slices.Sort(late)
			q := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))]) / 1e3 }
			b.ReportMetric(q(0.5), "late-p50-µs")
			b.ReportMetric(q(0.99), "late-p99-µs")
			b.ReportMetric(q(0.999), "late-p99.9-µs")
			b.ReportMetric(float64(late[len(late)-1])/1e3, "late-max-µs")
		})
	}
}

// TestWaitAllocatesNothing: the executor waits once per turn; a wait
// allocates nothing.
func TestWaitAllocatesNothing(t *testing.T) {
	clock := NewMonotonic()
	w, err := NewWaiter(clock, DefaultSpin)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	none := func() bool { return false }
	if allocs := testing.AllocsPerRun(100, func() { w.Until(clock.Now()+10*time.Microsecond, none) }); allocs != 0 {
		t.Errorf("%v allocations per wait", allocs)
	}
	if allocs := testing.AllocsPerRun(20, func() { w.Until(clock.Now()+300*time.Microsecond, none) }); allocs != 0 {
		t.Errorf("%v allocations per wait with a sleep", allocs)
	}
}
