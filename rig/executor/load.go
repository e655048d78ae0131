package executor

import (
	"fmt"
	"strings"
	"time"
)

// The executor's share of the CPU, on a real clock. At SCHED_FIFO nothing
// of normal priority runs on its CPU while it works or spins; an executor
// that can never catch up (too many frames, a model step longer than its
// exchange) would keep its CPU until the kernel's real-time throttling
// stopped it for 50 ms of every second, starving the board (its shell, its
// network) before that and stalling every release after. So the executor
// keeps its own budget, by windows of LoadWindow:
//
//   - Spinning is the first thing it gives up: after a window in which it
//     was busy (working or spinning) more than SpinShedAbove of the time,
//     it sleeps all the way to its deadlines (late by the machine's wakeup
//     latency, tens of microseconds) until a window's work, with a spin
//     before each of its deadlines, would stay under SpinResumeBelow.
//   - It never takes more than LoadBudget of a window: once busy that long,
//     it rests for the rest of the window, deaf to what arrives (frames
//     wait in the ingress ring, releases come late), so that the rest of
//     the machine gets its turn at most LoadWindow apart; and it gives up
//     spinning at once if it had not.
//   - A window that began without spinning and in which it had to rest
//     ran out on work alone: it is overloaded. The first of a
//     stretch is the event overload (with what was late), the first window
//     after it that it did not is overload_ended, and a stretch as long as
//     OverloadLimit stops the run, failed: its timing no longer means
//     anything, and outputs go to their safe levels.
const (
	LoadWindow      = 10 * time.Millisecond
	LoadBudget      = LoadWindow * 9 / 10
	SpinShedAbove   = LoadWindow / 2
	SpinResumeBelow = LoadWindow / 4
	OverloadLimit   = time.Second
)

// A meteredClock is a real clock that accounts for its waits (executor.Real).
type meteredClock interface {
	Spent() (slept, spun time.Duration)
	Rest(until time.Duration)
	Spin() time.Duration
	SetSpin(time.Duration)
}

// loadMeter is the executor's account of its CPU by windows.
type loadMeter struct {
	clock        meteredClock // nil: not metered (virtual time)
	spin         time.Duration
	start        time.Duration // of the window
	slept, spun  time.Duration // the clock's Spent at the window's start
	wakeups      uint64        // the executor's at the window's start
	shed         bool          // spinning is given up
	rested       bool          // the window's budget ran out
	overloadFrom time.Duration // when the stretch of overloaded windows began, or -1
	worstLate    time.Duration // the worst release lateness in the stretch
	overruns     uint64        // the models' at the stretch's start

	// For the summary.
	busy, overloaded, shedFor time.Duration
	episodes                  uint64
}

func (l *loadMeter) init(c Clock, now time.Duration) {
	mc, ok := c.(meteredClock)
	if !ok || !c.Real() {
		return
	}
	l.clock, l.overloadFrom, l.start, l.spin = mc, -1, now, mc.Spin()
	l.slept, l.spun = mc.Spent()
	l.shed = l.spin == 0 // nothing to give up
}

// check is called once a turn, before the executor waits: it closes the
// windows that have ended and rests when the current one's budget is
// spent. It reports a reason to stop the run.
func (l *loadMeter) check(x *Executor) error {
	if l.clock == nil {
		return nil
	}
	now := x.clock.Now()
	slept, spun := l.clock.Spent()
	busy := now - l.start - (slept - l.slept)
	if busy >= LoadBudget {
		// Out of budget: the rest of the window, stretched as the last
		// turn may have run past its end so that the executor had
		// LoadBudget of it, is the machine's. Only a window that began
		// without spinning ran out on work alone: it is overloaded;
		// otherwise spinning is given up at once.
		l.rested = l.shed
		if !l.shed {
			l.shed = true
			l.clock.SetSpin(0)
		}
		l.clock.Rest(l.start + busy*LoadWindow/LoadBudget)
		now = x.clock.Now()
		slept, spun = l.clock.Spent()
		busy = now - l.start - (slept - l.slept)
	}
	length := now - l.start
	if length < LoadWindow {
		return nil
	}
	l.busy += busy
	if l.shed && l.spin > 0 {
		l.shedFor += length
	}
	// Spinning stops after a window busy more than SpinShedAbove, and
	// starts again once the window's work plus a spin before each of its
	// deadlines would stay under SpinResumeBelow.
	switch {
	case l.spin == 0:
	case !l.shed && busy > SpinShedAbove*length/LoadWindow:
		l.shed = true
		l.clock.SetSpin(0)
	case l.shed && busy+time.Duration(x.wakeups-l.wakeups)*l.spin < SpinResumeBelow*length/LoadWindow:
		l.shed = false
		l.clock.SetSpin(l.spin)
	}
	var err error
	if l.rested {
		l.overloaded += now - l.start
		if l.overloadFrom < 0 {
			l.overloadFrom, l.worstLate, l.overruns = l.start, 0, x.overruns()
			l.episodes++
			x.notify(l.start, "overload", fmt.Sprintf("the executor was busy %v of %v (%v of it spinning) and rests %v of every %v from now on: frames wait and are released late, models overrun, until it catches up", busy.Round(time.Microsecond), (now-l.start).Round(time.Microsecond), (spun-l.spun).Round(time.Microsecond), LoadWindow-LoadBudget, LoadWindow), true)
		}
		if l.start+LoadWindow-l.overloadFrom >= OverloadLimit {
			err = fmt.Errorf("overload: the executor could not keep up for %v (%s); the bench asks more than this machine does in real time: fewer or slower frames, a longer exchange, or a faster machine", OverloadLimit, l.lateness(x))
		}
	} else if l.overloadFrom >= 0 {
		x.notify(now, "overload_ended", fmt.Sprintf("after %v: %s", (l.start-l.overloadFrom).Round(time.Millisecond), l.lateness(x)), true)
		l.overloadFrom = -1
	}
	l.start, l.slept, l.spun, l.wakeups, l.rested = now, slept, spun, x.wakeups, false
	return err
}

// late notes a release's lateness during an overload.
func (l *loadMeter) late(d time.Duration) {
	if l.overloadFrom >= 0 {
		l.worstLate = max(l.worstLate, d)
	}
}

// lateness says what was late in the stretch of overload so far.
func (l *loadMeter) lateness(x *Executor) string {
	var parts []string
	if l.worstLate > 0 {
		parts = append(parts, "frames released late by up to "+l.worstLate.Round(time.Microsecond).String())
	}
	if n := x.overruns() - l.overruns; n > 0 {
		parts = append(parts, fmt.Sprintf("%d model exchanges overrun", n))
	}
	if x.in != nil {
		if n := x.in.Dropped(); n > 0 {
			parts = append(parts, fmt.Sprintf("%d frames lost to a full ingress ring in the run", n))
		}
	}
	if len(parts) == 0 {
		return "its work took longer than the time it had"
	}
	return strings.Join(parts, ", ")
}

// overloading reports whether the executor is in a stretch of overload.
func (l *loadMeter) overloading() bool { return l.overloadFrom >= 0 && l.clock != nil }

// overruns is the models' overruns so far.
func (x *Executor) overruns() uint64 {
	var n uint64
	for _, m := range x.models {
		n += m.overruns
	}
	return n
}
