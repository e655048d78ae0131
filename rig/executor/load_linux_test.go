package executor_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/rig/executor"
)

// cpuBurner is a source that burns the CPU for cost every period, on the
// wall clock: a model step that takes longer than its exchange.
type cpuBurner struct {
	clock        *executor.Real
	period, cost time.Duration
	next         time.Duration
}

func (b *cpuBurner) Next() time.Duration { return b.next }

func (b *cpuBurner) Emit(now time.Duration, _ func(int, []byte)) {
	for end := b.clock.Now() + b.cost; b.clock.Now() < end; {
	}
	b.next = now + b.period
}

func threadCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestOverloadedExecutorLeavesTheCPU: on the wall clock, at SCHED_FIFO
// (priority 1) where the test may raise itself, an executor given 3 ms of work every
// millisecond takes no more of its CPU than LoadBudget of each LoadWindow
// (the kernel's own count of its thread's CPU time), where it used to
// take all of it until the kernel's real-time throttling stopped it; and
// it stops the run, failed, after OverloadLimit.
func TestOverloadedExecutorLeavesTheCPU(t *testing.T) {
	p := parse(t, `duration: 1h
hops:
  link: {delay: 1ms}
flows:
  m2s: {route: [link]}
`)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)) // the waiter's P
	clock, err := executor.NewReal(realtime.DefaultSpin)
	if err != nil {
		t.Fatal(err)
	}
	defer clock.Close()
	x, err := executor.New(executor.Config{Network: p.Config, Clock: clock, End: 10 * time.Second,
		Sources: []executor.Source{&cpuBurner{clock: clock, period: time.Millisecond, cost: 3 * time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// At the lowest real-time priority: above every thread of normal
	// priority, as a rig's executor is, but below the executors of the
	// other tests that may run meanwhile.
	if err := realtime.RaiseThread(1); err != nil {
		t.Logf("not raised (%v): the CPU is shared, the bound still holds", err)
	} else {
		defer realtime.LowerThread()
	}
	cpu0, wall0 := threadCPU(), time.Now()
	stopped, err := x.Run(context.Background())
	cpu, wall := threadCPU()-cpu0, time.Since(wall0)
	t.Logf("stopped %q after %v, with %v of CPU (%.1f%%)", stopped, wall, cpu, 100*float64(cpu)/float64(wall))
	if err == nil || !strings.Contains(stopped, "overload") {
		t.Fatalf("stopped %q, %v; want failed: overload", stopped, err)
	}
	// The run stopped when the last stretch of overload (the machine may
	// have broken an earlier one: a window it stole) had lasted
	// OverloadLimit, give or take the window that ended it.
	var last float64 = -1
	for _, e := range x.Events() {
		if e.Kind == "overload" {
			last = e.AtS
		}
	}
	if stretch := time.Duration((clock.Now().Seconds() - last) * float64(time.Second)); last < 0 || stretch < executor.OverloadLimit || stretch > executor.OverloadLimit+3*executor.LoadWindow {
		t.Errorf("stopped %v after the last overload event (%v), want %v", stretch, x.Events(), executor.OverloadLimit)
	}
	// The budget, with two windows' grace: the first, spent spinning,
	// and the turn that ran past a window's end (one 3 ms step).
	budget := float64(executor.LoadBudget)/float64(executor.LoadWindow) + float64(2*executor.LoadWindow+3*time.Millisecond)/float64(wall)
	if frac := float64(cpu) / float64(wall); frac > budget {
		t.Errorf("the executor took %.1f%% of its CPU, want at most %.1f%%", 100*frac, 100*budget)
	}
}
