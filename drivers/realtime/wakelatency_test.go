package realtime

import (
	"testing"
	"time"
)

// TestSpinCoversLateWakes: on a machine whose sleeps end 150 µs late, a
// waiter spinning 100 µs (the default until this test) returned every wait
// 50 µs late; it now measures its sleeps and spins long enough to return
// on time. The
// clock is a stand-in that advances 1 µs each time it is read and by 150 µs
// more than each sleep asked, so that the machine's own wakeups play no
// part.
func TestSpinCoversLateWakes(t *testing.T) {
	const overshoot = 150 * time.Microsecond
	clock := &tickingClock{}
	w := &waiting{clock: clock, spin: DefaultSpin}
	w.sleep = func(d time.Duration, _ func() bool) bool {
		clock.now += d + overshoot
		return true
	}
	none := func() bool { return false }
	var worst time.Duration
	for i := range 4 * wakeEvery {
		deadline := clock.now + time.Millisecond
		w.Until(deadline, none)
		if late := clock.now - deadline; i >= 2*wakeEvery { // learnt
			worst = max(worst, late)
		}
	}
	if worst > 2*time.Microsecond {
		t.Errorf("waits returned up to %v late with sleeps %v late; want on time (spinning %v now)", worst, overshoot, w.late.spinFor(w.spin))
	}
}

// tickingClock advances by 1 µs each time it is read.
type tickingClock struct{ now time.Duration }

func (c *tickingClock) Now() time.Duration {
	c.now += time.Microsecond
	return c.now
}

// TestSpinForFollowsWakes: the spin is the p99 of how late the sleeps
// ended, with a margin, from BaseSpin up to the spin given.
func TestSpinForFollowsWakes(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		name  string
		spin  time.Duration
		lates func(i int) time.Duration // of sleep i of 10 wakeEvery
		want  time.Duration
	}{
		{"on time: BaseSpin", DefaultSpin, func(int) time.Duration { return 0 }, BaseSpin},
		{"a few late beyond p99: BaseSpin", DefaultSpin, func(i int) time.Duration {
			if i%200 == 0 {
				return time.Millisecond // 0.5 %
			}
			return 30 * us
		}, BaseSpin},
		{"all 150 µs late: covered", DefaultSpin, func(int) time.Duration { return 150 * us }, 152*us + wakeMargin},
		{"2 % 200 µs late: covered", DefaultSpin, func(i int) time.Duration {
			if i%50 == 0 {
				return 200 * us
			}
			return 10 * us
		}, 202*us + wakeMargin},
		{"all 1 ms late: the spin given", DefaultSpin, func(int) time.Duration { return time.Millisecond }, DefaultSpin},
		{"all 2 ms late, given 1.5 ms: 1.5 ms", 1500 * us, func(int) time.Duration { return 2 * time.Millisecond }, 1500 * us},
		{"given less than BaseSpin (a model's short exchange): given", 20 * us, func(int) time.Duration { return 150 * us }, 20 * us},
		{"no spin: none", 0, func(int) time.Duration { return 150 * us }, 0},
		{"woken early: no measure", DefaultSpin, func(int) time.Duration { return -time.Millisecond }, BaseSpin},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l wakeLatency
			for i := range 10 * wakeEvery {
				l.record(c.lates(i))
			}
			if got := l.spinFor(c.spin); got != c.want {
				t.Errorf("spinFor(%v) = %v, want %v", c.spin, got, c.want)
			}
		})
	}
}

// TestSpinFallsBack: once the machine's wakes are on time again, the
// spin returns to BaseSpin within a few updates: what was counted
// halves at each.
func TestSpinFallsBack(t *testing.T) {
	var l wakeLatency
	for range 10 * wakeEvery {
		l.record(150 * time.Microsecond)
	}
	updates := 0
	for l.spinFor(DefaultSpin) != BaseSpin {
		if updates++; updates > 8 {
			t.Fatalf("still spinning %v after %d updates of on-time wakes", l.spinFor(DefaultSpin), updates-1)
		}
		for range wakeEvery {
			l.record(0)
		}
	}
}

// TestRecordAllocatesNothing: a wake is recorded on every sleep of the
// executor.
func TestRecordAllocatesNothing(t *testing.T) {
	var l wakeLatency
	if allocs := testing.AllocsPerRun(1000, func() { l.record(42 * time.Microsecond) }); allocs != 0 {
		t.Errorf("%v allocations per record", allocs)
	}
}
