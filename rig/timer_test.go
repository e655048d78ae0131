package rig

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// wakeLateness runs n periodic wakeups and returns how late each was.
func wakeLateness(period time.Duration, n int, sleep func(deadline time.Duration, c *monoClock)) []time.Duration {
	c := &monoClock{start: time.Now()}
	late := make([]time.Duration, n)
	next := c.Now() + period
	for i := range late {
		sleep(next, c)
		late[i] = c.Now() - next
		next += period
	}
	return late
}

func percentiles(d []time.Duration) string {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(p float64) time.Duration { return d[int(p*float64(len(d)-1))] }
	return fmt.Sprintf("p50 %v p99 %v p99.9 %v max %v", q(0.5), q(0.99), q(0.999), d[len(d)-1])
}

// TestTimerProbe compares the executor's waiter with an absolute
// clock_nanosleep and a spin, at 1 kHz. Run with HILRIG_TIMER_PROBE=1.
func TestTimerProbe(t *testing.T) {
	if os.Getenv("HILRIG_TIMER_PROBE") == "" {
		t.Skip("set HILRIG_TIMER_PROBE=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := raiseThread(80); err != nil {
		t.Logf("no SCHED_FIFO: %v", err)
	}
	lockMemory()
	const n = 5000
	if v := os.Getenv("HILRIG_SPIN"); v != "" {
		spinProbe, _ = time.ParseDuration(v)
	}
	w, _ := newWaiter(&monoClock{start: time.Now()}, spinProbe)
	none := func() bool { return false }
	ppollLate := wakeLateness(time.Millisecond, n, func(d time.Duration, c *monoClock) { w.clock = c; w.until(d, none) })
	t.Logf("ppoll + spin %v:     %s", spinProbe, percentiles(ppollLate))
	nano := wakeLateness(time.Millisecond, n, func(d time.Duration, c *monoClock) {
		base := c.start
		target := base.Add(d - spinProbe)
		ts := unix.NsecToTimespec(monoNanos(target))
		unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil)
		for c.Now() < d {
		}
	})
	t.Logf("clock_nanosleep + spin: %s", percentiles(nano))
}

var spinProbe = 50 * time.Microsecond

// monoNanos converts a time to CLOCK_MONOTONIC nanoseconds.
func monoNanos(t time.Time) int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano() + int64(time.Until(t))
}
