// Package realtime is the operating-system side of hilrig's real-time
// executor, in one place: memory locked in RAM, a thread raised to
// SCHED_FIFO with a 1 ns timer slack, idle CPUs asked to poll rather than
// halt, and a waiter that sleeps until a deadline (or until woken) and spins
// the last stretch. Each facility the process is not allowed reports an
// error, and the caller says so once and carries on without it.
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

// DefaultSpin is how long before a deadline a waiter stops sleeping and
// spins: long enough to absorb the VM's usual timer wakeup latency
// (BENCHMARKS.md).
const DefaultSpin = 100 * time.Microsecond

// until is a waiter's loop: it returns at deadline, or earlier when
// pending reports work, and says which. It sleeps (sleep, which returns
// early when woken, and false when pending turned true before it slept)
// until spin before the deadline and spins the rest, so that it returns on
// time rather than when the scheduler gets to it. sleep is a method value
// made once: a closure made per call would allocate on every wait.
func until(clock *Monotonic, spin, deadline time.Duration, pending func() bool, sleep func(time.Duration, func() bool) bool) (woken bool) {
	for {
		if pending() {
			return true
		}
		left := deadline - clock.Now()
		if left <= 0 {
			return false
		}
		if left <= spin {
			for clock.Now() < deadline {
				if pending() {
					return true
				}
			}
			return false
		}
		if !sleep(left-spin, pending) {
			return true // a wake between the check above and the sleep
		}
	}
}
