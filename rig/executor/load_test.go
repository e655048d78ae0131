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
// (a burner's Emit adds its cost), and a wait sleeps until spin before its
// deadline, wakes latency after that (the machine's wake-up latency: not
// the thread's CPU) and spins what is left, as the real waiter does: a
// wake-up later than the spin is late.
type workClock struct {
	driverstest.Clock
	spin, latency, slept, spun time.Duration
	spins                      []time.Duration // every SetSpin
}

func (c *workClock) Real() bool { return true }

func (c *workClock) Until(deadline time.Duration, _ func() bool) bool {
	now := c.Now()
	if deadline <= now {
		return false
	}
	if wake := deadline - c.spin; wake > now {
		woke := wake + c.latency
		c.slept += woke - now
		c.Set(woke)
		if woke >= deadline {
			return false
		}
		now = woke
	}
	c.spun += deadline - now
	c.Set(deadline)
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

// SpinWithin: the test's waiter spins all it may.
func (c *workClock) SpinWithin(ceiling time.Duration) time.Duration { return ceiling }

// burner is a source that wants to run every period and costs what cost
// says at each instant: work, on the test's clock. Its next turn is a
// period after this one began, or, on a grid, a period after this one was
// due (as a model's exchanges are).
type burner struct {
	clock  *workClock
	period time.Duration
	cost   func(now time.Duration) time.Duration
	next   time.Duration
	grid   bool
}

func (b *burner) Next() time.Duration { return b.next }

func (b *burner) Emit(now time.Duration, _ func(int, []byte)) {
	b.clock.Add(b.cost(now))
	if b.next += b.period; !b.grid || b.next <= now {
		b.next = now + b.period
	}
}

// runBurner runs a burner alone in an executor on the test's clock, for
// the given time, and returns how it stopped, its events and its timing.
func runBurner(t *testing.T, spin, period time.Duration, end time.Duration, cost func(time.Duration) time.Duration) (string, error, []record.Event, record.TimingSummary) {
	t.Helper()
	return runBurnerOn(t, &workClock{spin: spin}, false, period, end, cost)
}

// runBurnerOn is runBurner on a clock the test set up, its turns on a
// grid or not.
func runBurnerOn(t *testing.T, clock *workClock, grid bool, period time.Duration, end time.Duration, cost func(time.Duration) time.Duration) (string, error, []record.Event, record.TimingSummary) {
	t.Helper()
	p := parse(t, `duration: 1h
hops:
  link: {delay: 1ms}
flows:
  m2s: {route: [link]}
`)
	x, err := executor.New(executor.Config{Network: p.Config, Clock: clock, End: end,
		Sources: []executor.Source{&burner{clock: clock, period: period, cost: cost, grid: grid}}})
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

// TestSpinResumesWhereItFits: a 10 kHz exchange (on a grid, as a model's
// are) whose turn costs 30 µs,
// with 20 µs of spin before each deadline, on a machine that wakes a
// sleeping thread 18 µs late. A burst of work (60 µs a turn for 50 ms)
// sheds spinning; after it, spinning costs 2 µs a wake-up (the spin less
// the wake-up latency it absorbs), 32 % busy in all, and is taken up
// again. Where the machine wakes on time, the whole spin is spent each
// wake-up (50 % busy): spinning stays given up, as it does while the
// turns alone fill more than SpinResumeBelow of a window.
func TestSpinResumesWhereItFits(t *testing.T) {
	const (
		period = 100 * time.Microsecond
		spin   = 20 * time.Microsecond
		end    = 500 * time.Millisecond
		burst  = 50 * time.Millisecond
	)
	for _, tc := range []struct {
		name          string
		latency, work time.Duration
		resumes       bool
	}{
		{"18 µs wake-ups, 30 % work", 18 * time.Microsecond, 30 * time.Microsecond, true},
		{"10 µs wake-ups, 20 % work", 10 * time.Microsecond, 20 * time.Microsecond, true},
		{"on-time wake-ups, 30 % work", 0, 30 * time.Microsecond, false},
		{"18 µs wake-ups, 45 % work", 18 * time.Microsecond, 45 * time.Microsecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &workClock{spin: spin, latency: tc.latency}
			stopped, err, evs, timing := runBurnerOn(t, clock, true, period, end, func(now time.Duration) time.Duration {
				if now < burst {
					return 60 * time.Microsecond
				}
				return tc.work
			})
			if err != nil || stopped != "duration" || len(evs) != 0 {
				t.Fatalf("stopped %q, %v, events %v", stopped, err, evs)
			}
			if len(clock.spins) == 0 || clock.spins[0] != 0 {
				t.Fatalf("the burst did not shed spinning: SetSpin %v", clock.spins)
			}
			if !tc.resumes {
				// Shed from the burst's first window on (the last window
				// may close after the end and not count).
				if len(clock.spins) != 1 || timing.SpinShedS < (end-3*executor.LoadWindow).Seconds() {
					t.Errorf("spinning taken up again where it does not fit: SetSpin %v, shed %.3f s of %v", clock.spins, timing.SpinShedS, end)
				}
				return
			}
			// Shed for the burst, and back within two windows of its end
			// (the window it ends in, then the first whole one after).
			if len(clock.spins) != 2 || clock.spins[1] != spin {
				t.Fatalf("SetSpin %v, want 0 then %v", clock.spins, spin)
			}
			if shed, most := timing.SpinShedS, (burst + 2*executor.LoadWindow).Seconds(); shed > most {
				t.Errorf("spinning given up for %.3f s of %v, want at most %.3f s", shed, end, most)
			}
		})
	}
}
