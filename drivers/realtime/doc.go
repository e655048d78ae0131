// Package realtime is the operating-system side of hilrig's real-time
// executor, in one place: memory locked in RAM, a thread raised to
// SCHED_FIFO with a 1 ns timer slack, idle CPUs asked to poll rather than
// halt, a waiter that sleeps until a deadline (or until woken) and spins
// the last stretch, the check-in by which a locked thread that waits in
// system calls lets Go's runtime monitor rest, and the kernel's preemption
// model, which decides whether such a thread waits for other processes'
// system calls. Each facility the
// process is not allowed reports an error, and the caller says so once
// and carries on without it.
//
// On Linux these are the system calls measured in BENCHMARKS.md; elsewhere
// every facility but the waiter reports ErrUnsupported, and the waiter
// sleeps on Go's timers, which are late by about a millisecond.
package realtime

import (
	"errors"
	"time"
)

// ErrUnsupported is returned where the operating system has no such
// facility.
var ErrUnsupported = errors.New("not supported on this operating system")

// Monotonic is the time since Start on the monotonic clock (Go's monotonic
// reading is CLOCK_MONOTONIC, read through the vDSO on Linux).
type Monotonic struct{ start time.Time }

// NewMonotonic starts a clock at zero now.
func NewMonotonic() *Monotonic { return &Monotonic{start: time.Now()} }

// Restart sets the clock to zero now. It must happen before anything that
// reads the clock runs on another goroutine: a run restarts its clock as it
// begins, so that the time spent preparing it counts for nothing.
func (c *Monotonic) Restart() { c.start = time.Now() }

// Start is the wall-clock time at which the clock was zero.
func (c *Monotonic) Start() time.Time { return c.start }

// Now is the time since the clock started.
func (c *Monotonic) Now() time.Duration { return time.Since(c.start) }

// DefaultSpin is the longest a waiter spins before a deadline: long enough
// to absorb the VM's timer wakeup latency when it is loaded (BENCHMARKS.md);
// on a quieter machine it spins less, as its wake-ups need.
const DefaultSpin = 100 * time.Microsecond

// waiting is what the waiters of every operating system share: the loop
// that sleeps and then spins, and the account of what their waits cost,
// which tells the executor how much of its CPU it leaves to others.
type waiting struct {
	clock *Monotonic
	spin  time.Duration
	// sleep sleeps for d, or until woken, and returns false when pending
	// turned true before it slept. It is a method value made once: a
	// closure made per call would allocate on every wait.
	sleep func(d time.Duration, pending func() bool) bool
	// rest sleeps for d whatever happens, or less where a signal ends
	// the sleep.
	rest func(d time.Duration)
	// slept and spun are the time spent asleep and spinning in waits so
	// far; only the waiting goroutine touches them.
	slept, spun time.Duration
	// late is how late the sleeps ended, which sets how much of spin a
	// wait spins.
	late lateness
}

// Until returns at deadline, or earlier when pending reports work; it says
// which. It sleeps until shortly before the deadline and spins the rest, so
// that it returns on time rather than when the scheduler gets to it: it
// spins what covers its last sleeps' lateness at p99, at most the spin it
// was given.
// pending must be cheap: it is called while spinning.
func (w *waiting) Until(deadline time.Duration, pending func() bool) (woken bool) {
	for {
		if pending() {
			return true
		}
		now := w.clock.Now()
		left := deadline - now
		if left <= 0 {
			return false
		}
		spin := w.late.spinFor(w.spin)
		if left <= spin {
			for {
				t := w.clock.Now()
				if t >= deadline {
					w.spun += t - now
					return false
				}
				if pending() {
					w.spun += t - now
					return true
				}
			}
		}
		slept := w.sleep(left-spin, pending)
		woke := w.clock.Now()
		w.slept += woke - now
		if !slept {
			return true // a wake between the check above and the sleep
		}
		if over := woke - (deadline - spin); over >= 0 {
			w.late.record(over) // the sleep ran its course: its lateness is the machine's
		}
	}
}

// SetSpin sets the longest a waiter spins before a deadline (0: it sleeps
// all the way).
func (w *waiting) SetSpin(spin time.Duration) { w.spin = spin }

// SpinWithin is how long the waiter spins before a deadline when it may
// spin up to ceiling: what covers its recent sleeps' lateness. It knows
// that while it does not spin (SetSpin(0)) too: its sleeps are measured
// all the same.
func (w *waiting) SpinWithin(ceiling time.Duration) time.Duration {
	return w.late.spinFor(ceiling)
}

// Spin is the longest the waiter spins before a deadline.
func (w *waiting) Spin() time.Duration { return w.spin }

// Spent is the time the waiter's goroutine has spent asleep and spinning
// in its waits so far.
func (w *waiting) Spent() (slept, spun time.Duration) { return w.slept, w.spun }

// Rest sleeps until deadline whatever arrives meanwhile: an executor that
// has used up its share of the CPU gives the rest of the machine its
// turn.
func (w *waiting) Rest(deadline time.Duration) {
	start := w.clock.Now()
	now := start
	for now < deadline {
		w.rest(deadline - now)
		now = w.clock.Now()
	}
	w.slept += now - start
}
