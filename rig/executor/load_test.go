package executor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// workClock is a real clock the test drives: the executor's work moves it
// (a burner's Emit adds its cost), a wait jumps to its deadline, and the
// spin before each deadline is counted as spun, the rest as slept, as the
// real waiter does.
type workClock struct {
	driverstest.Clock
	spin, slept, spun time.Duration
	spins             []time.Duration // every SetSpin
}

func (c *workClock) Real() bool { return true }

func (c *workClock) Until(deadline time.Duration, _ func() bool) bool {
	if left := deadline - c.Now(); left > 0 {
		spun := min(left, c.spin)
		c.spun += spun
		c.slept += left - spun
		c.Set(deadline)
	}
	return false
}

func (c *workClock) Spent() (slept, spun time.Duration) { return c.slept, c.spun }

// CPU is the test's clock less its sleeps: all the rest was work.
func (c *workClock) CPU() (time.Duration, bool) { return c.Now() - c.slept, true }

func (c *workClock) Rest(deadline time.Duration) {
	if left := deadline - c.Now(); left > 0 {
		c.slept += left
		c.Set(deadline)
	}
}

func (c *workClock) Spin() time.Duration { return c.spin }

func (c *workClock) SetSpin(spin time.Duration) { c.spin, c.spins = spin, append(c.spins, spin) }

// burner is a source that wants to run every period and costs what cost
// says at each instant: work, on the test's clock.
type burner struct {
	clock  *workClock
	period time.Duration
	cost   func(now time.Duration) time.Duration
	next   time.Duration
}

func (b *burner) Next() time.Duration { return b.next }

func (b *burner) Emit(now time.Duration, _ func(int, []byte)) {
	b.clock.Add(b.cost(now))
	b.next = now + b.period
}

// runBurner runs a burner alone in an executor on the test's clock, for
// the given time, and returns how it stopped, its events and its timing.
func runBurner(t *testing.T, spin, period time.Duration, end time.Duration, cost func(time.Duration) time.Duration) (string, error, []record.Event, record.TimingSummary) {
	t.Helper()
	p := parse(t, `duration: 1h
hops:
  link: {delay: 1ms}
flows:
  m2s: {route: [link]}
`)
	clock := &workClock{spin: spin}
	x, err := executor.New(executor.Config{Network: p.Config, Clock: clock, End: end,
		Sources: []executor.Source{&burner{clock: clock, period: period, cost: cost}}})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := x.Run(context.Background())
	var timing record.TimingSummary
	x.Timing(&timing)
	return stopped, err, x.Events(), timing
}

func kinds(evs []record.Event) string {
	var ks []string
	for _, e := range evs {
		ks = append(ks, e.Kind)
	}
	return strings.Join(ks, " ")
}

// TestOverloadIsAnEventAndRests: an executor whose work takes twice the
// time it has (2 ms every 1 ms) from 100 ms to 400 ms of the run rests
// LoadWindow−LoadBudget of every window meanwhile; the stretch is one
// overload event at its first window and one overload_ended after it,
// and the run goes on to its end.
func TestOverloadIsAnEventAndRests(t *testing.T) {
	stopped, err, evs, timing := runBurner(t, 0, time.Millisecond, time.Second, func(now time.Duration) time.Duration {
		if now >= 100*time.Millisecond && now < 400*time.Millisecond {
			return 2 * time.Millisecond
		}
		return 100 * time.Microsecond
	})
	if err != nil || stopped != "duration" {
		t.Fatalf("stopped %q, %v", stopped, err)
	}
	if got := kinds(evs); got != "overload overload_ended" {
		t.Fatalf("events %q, want overload then overload_ended: %+v", got, evs)
	}
	// The first window to run out begins at the first turn at or after
	// 100 ms; the stretch ends with the first window that begins after
	// 400 ms of work queued behind... within a window or two of each.
	if at := evs[0].AtS; at < 0.09 || at > 0.11 {
		t.Errorf("overload at %.4f s, want within a window of 0.1 s", at)
	}
	if at := evs[1].AtS; at < 0.39 || at > 0.43 {
		t.Errorf("overload_ended at %.4f s, want within a few windows of 0.4 s", at)
	}
	if !strings.Contains(evs[0].Detail, "rests 1ms of every 10ms") {
		t.Errorf("overload detail %q", evs[0].Detail)
	}
	// Busy: 10 % before and after, 90 % in the stretch (the budget):
	// 0.1·0.7 + 0.9·0.3 = 0.34.
	if timing.Overloads != 1 || timing.OverloadS < 0.28 || timing.OverloadS > 0.33 || timing.Busy < 0.30 || timing.Busy > 0.38 {
		t.Errorf("overloads %d for %.3f s, busy %.3f; want 1 for about 0.3 s, busy about 0.34", timing.Overloads, timing.OverloadS, timing.Busy)
	}
}

// TestSustainedOverloadStopsTheRun: work that never fits stops the run
// after OverloadLimit, failed, saying what was late.
func TestSustainedOverloadStopsTheRun(t *testing.T) {
	stopped, err, evs, _ := runBurner(t, 0, time.Millisecond, time.Hour, func(time.Duration) time.Duration { return 3 * time.Millisecond })
	if err == nil || !strings.HasPrefix(stopped, "failed: overload: the executor could not keep up for 1s") {
		t.Fatalf("stopped %q, %v", stopped, err)
	}
	if got := kinds(evs); got != "overload" {
		t.Errorf("events %q, want one overload", got)
	}
}

// TestSpinningIsShedNotOverload: deadlines every 50 µs with 100 µs of spin
// before each keep a spinning executor busy all the time on almost no
// work; it gives up spinning (at once, when a window's budget runs out)
// rather than report an overload, and takes it up again when the
// deadlines thin out.
func TestSpinningIsShedNotOverload(t *testing.T) {
	clockSpin := 100 * time.Microsecond
	stopped, err, evs, timing := runBurner(t, clockSpin, 50*time.Microsecond, 500*time.Millisecond, func(now time.Duration) time.Duration {
		return time.Microsecond
	})
	if err != nil || stopped != "duration" || len(evs) != 0 {
		t.Fatalf("stopped %q, %v, events %v", stopped, err, evs)
	}
	// 2 % work once spinning stops: the busy fraction is the first
	// window's spinning, at most a window of the run, plus the work.
	if timing.Busy > 0.02+float64(executor.LoadWindow)/float64(500*time.Millisecond)+0.01 || timing.SpinShedS < 0.45 {
		t.Errorf("busy %.3f with spinning shed for %.3f s of 0.5 s", timing.Busy, timing.SpinShedS)
	}
}

// TestAStallIsNotAnOverload: one turn that takes 50 ms (a virtual CPU its
// host did not run, a page fault) spends one window's budget, and the
// executor rests, but one window is no stretch of overload: no event.
func TestAStallIsNotAnOverload(t *testing.T) {
	stopped, err, evs, timing := runBurner(t, 0, time.Millisecond, 500*time.Millisecond, func(now time.Duration) time.Duration {
		if now == 200*time.Millisecond {
			return 50 * time.Millisecond
		}
		return 100 * time.Microsecond
	})
	if err != nil || stopped != "duration" || len(evs) != 0 || timing.Overloads != 0 {
		t.Fatalf("stopped %q, %v, events %+v, overloads %d", stopped, err, evs, timing.Overloads)
	}
}
