package executor

import (
	"time"

	"github.com/hilrig/hilrig/drivers/realtime"
)

// A Clock is the executor's time.
type Clock interface {
	// Now is the time since the run started.
	Now() time.Duration
	// Until returns at deadline, or earlier when pending reports work, and
	// says which. pending must be cheap: a real clock calls it while
	// spinning.
	Until(deadline time.Duration, pending func() bool) (woken bool)
	// Real reports whether the clock is the wall clock: then the executor
	// also wakes for the engine's own events, to hand each frame to its
	// device at its time, and measures how late it was.
	Real() bool
}

// Virtual is virtual time: waiting for a deadline jumps to it.
type Virtual struct{ now time.Duration }

var _ Clock = (*Virtual)(nil)

func (c *Virtual) Now() time.Duration { return c.now }

func (c *Virtual) Until(deadline time.Duration, _ func() bool) bool {
	c.now = max(c.now, deadline)
	return false
}

func (c *Virtual) Real() bool { return false }

// Real is the wall clock (monotonic), waited on by a realtime.Waiter:
// ppoll until spin before the deadline, then spin. The goroutine that
// waits keeps its P while asleep: its caller adds one to GOMAXPROCS.
type Real struct {
	*realtime.Monotonic
	waiter *realtime.Waiter
}

var _ Clock = (*Real)(nil)

// NewReal starts a real clock at zero now.
func NewReal(spin time.Duration) (*Real, error) {
	mono := realtime.NewMonotonic()
	w, err := realtime.NewWaiter(mono, spin)
	if err != nil {
		return nil, err
	}
	return &Real{Monotonic: mono, waiter: w}, nil
}

func (c *Real) Until(deadline time.Duration, pending func() bool) bool {
	return c.waiter.Until(deadline, pending)
}

func (c *Real) Real() bool { return true }

// Spent is the time the clock's waits have spent asleep and spinning.
func (c *Real) Spent() (slept, spun time.Duration) { return c.waiter.Spent() }

// CPU is the CPU time the calling thread (the executor's) has used.
func (c *Real) CPU() (time.Duration, bool) { return realtime.ThreadCPU() }

// Rest sleeps until deadline, whatever arrives meanwhile.
func (c *Real) Rest(deadline time.Duration) { c.waiter.Rest(deadline) }

// Spin is the longest the clock spins before a deadline.
func (c *Real) Spin() time.Duration { return c.waiter.Spin() }

// SpinWithin is how long before a deadline the clock spins when it may
// spin up to ceiling, as its recent wake-ups need.
func (c *Real) SpinWithin(ceiling time.Duration) time.Duration {
	return c.waiter.SpinWithin(ceiling)
}

// SetSpin sets the longest the clock spins before a deadline.
func (c *Real) SetSpin(spin time.Duration) { c.waiter.SetSpin(spin) }

var _ meteredClock = (*Real)(nil)

// Wake ends a wait in progress: something arrived, or the run must stop.
func (c *Real) Wake() { c.waiter.Wake() }

// Close releases the clock's waiter.
func (c *Real) Close() error { return c.waiter.Close() }
