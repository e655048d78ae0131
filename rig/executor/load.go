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
//     latency, tens of microseconds) until a window's work, with what
//     spinning would have cost it, would stay under SpinResumeBelow. A
//     spin absorbs the wake-up's lateness and costs only the rest: each
//     wake-up would have spun the spin less how late it came, so a
//     machine that wakes a thread 18 µs late spins 2 µs of a 20 µs spin
//     (at 10 kHz, 2 % of the time, not 20 %).
//   - It never takes more than LoadBudget of a window: once busy that long,
//     it rests for the rest of the window, deaf to what arrives (frames
//     wait in the ingress ring, releases come late), so that the rest of
//     the machine gets its turn at most LoadWindow apart; and it gives up
//     spinning at once if it had not.
//   - A window that began without spinning and in which it had to rest
//     ran out on work alone: it is overloaded. OverloadWindows of them in
//     a row are a stretch of overload: the event overload at its start
//     (with what was late), overload_ended at the first window after it
//     busy less than OverloadEndBelow; a stretch as long as OverloadLimit
//     stops the run,
//     failed: its timing no longer means anything, and outputs go to
//     their safe levels.
const (
	LoadWindow       = 10 * time.Millisecond
	LoadBudget       = LoadWindow * 9 / 10
	SpinShedAbove    = LoadWindow / 2
	SpinResumeBelow  = LoadWindow * 2 / 5
	OverloadWindows  = 2
	OverloadEndBelow = LoadWindow * 3 / 4
	OverloadLimit    = time.Second
)

// A meteredClock is a real clock that accounts for its waits and for the
// CPU time of the thread that waits on it (executor.Real).
type meteredClock interface {
	Spent() (slept, spun time.Duration)
	CPU() (time.Duration, bool)
	Rest(until time.Duration)
	Spin() time.Duration
	SetSpin(time.Duration)
	SpinWithin(ceiling time.Duration) time.Duration
}

// loadMeter is the executor's account of its CPU by windows.
type loadMeter struct {
	clock       meteredClock // nil: not metered (virtual time)
	spin        time.Duration
	start       time.Duration // of the window
	slept, spun time.Duration // the clock's Spent at the window's start
	cpu         time.Duration // the clock's CPU at the window's start
	wouldSpin   time.Duration // in the window's wake-ups, had it spun
	shed        bool          // spinning is given up
	spent       bool          // the window's budget ran out
	confirmed   bool          // the thread's CPU time was read for it
	overloaded  bool          // and it had begun without spinning
	overWindows int           // overloaded windows in a row so far
	overFrom    time.Duration // when they began
	worstLate   time.Duration // the worst release lateness in a stretch
	overruns    uint64        // the models' at the stretch's start

	// For the summary.
	busy, overloadFor, shedFor time.Duration
	episodes                   uint64
}

func (l *loadMeter) init(c Clock, now time.Duration) {
	mc, ok := c.(meteredClock)
	if !ok || !c.Real() {
		return
	}
	l.clock, l.spin = mc, mc.Spin()
	l.shed = l.spin == 0 // nothing to give up
	l.open(now)
}

// open begins a window at now.
func (l *loadMeter) open(now time.Duration) {
	l.start, l.wouldSpin, l.spent, l.confirmed, l.overloaded = now, 0, false, false, false
	l.slept, l.spun = l.clock.Spent()
	l.cpu, _ = l.clock.CPU()
}

// outOfBudget rests for what is left of the window, stretched so that
// the executor had LoadBudget of it (the last turn may have run past its
// end): the machine's turn. Only a window that began without spinning ran
// out on work alone and is overloaded; spinning is otherwise given up at
// once.
func (l *loadMeter) outOfBudget(busy time.Duration) {
	l.spent, l.overloaded = true, l.shed
	if !l.shed {
		l.shed = true
		l.clock.SetSpin(0)
	}
	l.clock.Rest(l.start + busy*LoadWindow/LoadBudget)
}

// busySince is the time the executor spent working or spinning since the
// window began, by the wall clock: its time less its sleeps.
func (l *loadMeter) busySince(now time.Duration) time.Duration {
	slept, _ := l.clock.Spent()
	return now - l.start - (slept - l.slept)
}

// check is called once a turn, before the executor waits: it rests when
// the window's budget is spent, and closes the window once it has ended.
// It reports a reason to stop the run.
func (l *loadMeter) check(x *Executor) error {
	if l.clock == nil {
		return nil
	}
	now := x.clock.Now()
	if !l.spent && !l.confirmed && l.busySince(now) >= LoadBudget {
		// By the wall clock the budget is spent; the kernel's count of
		// the thread's CPU time says whether it was: a thread preempted,
		// or a virtual CPU its host did not run, was not working.
		l.confirmed = true
		if busy := l.cpuSince(now); busy >= LoadBudget {
			l.outOfBudget(busy)
			now = x.clock.Now()
		}
	}
	if now-l.start < LoadWindow {
		return nil
	}
	busy := l.cpuSince(now)
	if !l.spent && busy >= LoadBudget*(now-l.start)/LoadWindow {
		l.outOfBudget(busy)
		now = x.clock.Now()
	}
	length := now - l.start
	l.busy += busy
	if l.shed && l.spin > 0 {
		l.shedFor += length
	}
	// Spinning stops after a window busy more than SpinShedAbove, and
	// starts again once the window's work plus what its wake-ups would
	// have spun would stay under SpinResumeBelow.
	switch {
	case l.spin == 0:
	case !l.shed && busy > SpinShedAbove*length/LoadWindow:
		l.shed = true
		l.clock.SetSpin(0)
	case l.shed && !l.spent && busy+l.wouldSpin < SpinResumeBelow*length/LoadWindow:
		l.shed = false
		l.clock.SetSpin(l.spin)
	}
	// A stretch of overload is OverloadWindows windows or more in a row:
	// a single one is as likely a stall of the machine (its host not
	// running the virtual CPU for tens of milliseconds counts as CPU time
	// to the guest) as work.
	var err error
	inStretch := l.overWindows >= OverloadWindows
	switch {
	case l.overloaded || inStretch && busy >= OverloadEndBelow*length/LoadWindow:
		if l.overWindows == 0 {
			l.overFrom = l.start
		}
		l.overWindows++
		if l.overWindows < OverloadWindows {
			break
		}
		if l.overWindows == OverloadWindows {
			l.overloadFor += now - l.overFrom
			l.worstLate, l.overruns = 0, x.overruns()
			l.episodes++
			_, spun := l.clock.Spent()
			x.notify(l.overFrom, "overload", fmt.Sprintf("the executor was busy %v of %v (%v of it spinning) and rests %v of every %v from now on: frames wait and are released late, models overrun, until it catches up", busy.Round(time.Microsecond), length.Round(time.Microsecond), (spun-l.spun).Round(time.Microsecond), LoadWindow-LoadBudget, LoadWindow), true)
		} else {
			l.overloadFor += length
		}
		if now-l.overFrom >= OverloadLimit {
			err = fmt.Errorf("overload: the executor could not keep up for %v (%s); the bench asks more than this machine does in real time: fewer or slower frames, a longer exchange, or a faster machine", OverloadLimit, l.lateness(x))
		}
	case inStretch:
		x.notify(now, "overload_ended", fmt.Sprintf("after %v: %s", (l.start-l.overFrom).Round(time.Millisecond), l.lateness(x)), true)
		l.overWindows = 0
	default:
		l.overWindows = 0
	}
	x.readersResting(now)
	l.open(now)
	return err
}

// ReaderQuiet is how long a reader that rested must go without resting
// before its stretch of overload is over: a reader flooded without pause
// rests every few windows, and each would otherwise be an event.
const ReaderQuiet = 100 * time.Millisecond

// readersResting tells of the endpoints whose readers are flooded, resting
// out of their share of the CPU again within a window of the last time,
// and of those that have not rested for ReaderQuiet since. A single rest
// is in the summary's reader_rest_s but no news: it is as likely the
// machine's doing as the device's (ReaderBudget).
func (x *Executor) readersResting(now time.Duration) {
	if x.in == nil {
		return
	}
	for i := range x.in.readers {
		r, e := &x.in.readers[i], &x.endpoints[i]
		floods, rests := r.floods.Load(), r.rests.Load()
		if rests > r.seenRests {
			e.restedAt = now
		}
		switch {
		case floods > r.seenFloods && !e.resting:
			e.resting = true
			x.notify(now, "reader_overload", fmt.Sprintf("%s: its reader keeps using its %v of every %v and rests: frames from the device wait in the kernel (a socket drops what overflows its buffer)", e.name, ReaderBudget, LoadWindow), true)
		case e.resting && now-e.restedAt >= ReaderQuiet:
			e.resting = false
			x.notify(now, "reader_overload_ended", fmt.Sprintf("%s: its reader has kept up for %v", e.name, ReaderQuiet), true)
		}
		r.seenFloods, r.seenRests = floods, rests
	}
}

// cpuSince is the CPU time the executor's thread used since the window
// began, as the kernel counts it (its system calls included: a sleep of a
// few microseconds costs about as much as it lasts, and the wall clock
// counts it as asleep); by the wall clock where there is no such count.
func (l *loadMeter) cpuSince(now time.Duration) time.Duration {
	if cpu, ok := l.clock.CPU(); ok {
		return cpu - l.cpu
	}
	return l.busySince(now)
}

// woke notes a wake-up for a deadline, late by late: while spinning is
// given up, what a spin would have cost it, the spin its wake-ups need less
// the lateness it would have absorbed.
func (l *loadMeter) woke(late time.Duration) {
	if l.shed {
		l.wouldSpin += max(0, l.clock.SpinWithin(l.spin)-late)
	}
}

// late notes a release's lateness during an overload.
func (l *loadMeter) late(d time.Duration) {
	if l.overWindows >= OverloadWindows {
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
func (l *loadMeter) overloading() bool { return l.overWindows >= OverloadWindows }

// overruns is the models' overruns so far.
func (x *Executor) overruns() uint64 {
	var n uint64
	for _, m := range x.models {
		n += m.overruns
	}
	return n
}
