package realtime

import (
	"runtime"
	"time"
)

// CheckIn is for a goroutine locked to its thread that waits in system
// calls (an endpoint's reader, an isolated FMU's server) and so would never
// pass through Go's scheduler. To the runtime's monitor (sysmon) a
// goroutine that has not been through the scheduler for 10 ms is one running
// too long: it takes that goroutine's P at every system call it finds it
// in, which is at every wait, and, having taken one, looks again 20 µs
// later. Measured (BENCHMARKS.md): with two serial endpoints at 1 kHz the
// monitor woke 15 000 to 20 000 times a second, at SCHED_FIFO 1 above the
// kernel's pty workers, and each read came back without its P; passing
// through the scheduler every CheckInEvery, it woke some 100 times a
// second. It does not keep the monitor from taking the P of a thread that
// has waited in one call for 10 ms, as a reader of a device sending every
// 10 to 100 ms does, for each frame (BENCHMARKS.md, "Slow traffic and Go's
// monitor"). The zero CheckIn passes at its first call.
type CheckIn struct{ last time.Time }

// CheckInEvery is how often a goroutine checks in: well within the
// monitor's 10 ms, at the cost of a hand-off of its P and back (some
// microseconds), between waits.
const CheckInEvery = 5 * time.Millisecond

// Pass yields to the scheduler if the goroutine has not for CheckInEvery.
func (c *CheckIn) Pass() {
	if now := time.Now(); now.Sub(c.last) >= CheckInEvery {
		c.last = now
		runtime.Gosched()
	}
}
