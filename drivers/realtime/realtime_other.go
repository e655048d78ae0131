//go:build !linux

package realtime

import (
	"os"
	"time"
)

func LockMemory() error                  { return ErrUnsupported }
func HoldIdleLatency() (*os.File, error) { return nil, ErrUnsupported }
func RaiseThread(priority int) error     { return ErrUnsupported }
func LowerThread()                       {}
func MaxRSS() int64                      { return 0 }

// Waiter sleeps on Go's timers and spins the last stretch.
type Waiter struct {
	clock *Monotonic
	spin  time.Duration
	wake  chan struct{}
}

func NewWaiter(clock *Monotonic, spin time.Duration) (*Waiter, error) {
	return &Waiter{clock: clock, spin: spin, wake: make(chan struct{}, 1)}, nil
}

func (w *Waiter) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Waiter) Until(deadline time.Duration, pending func() bool) (woken bool) {
	for {
		if pending() {
			return true
		}
		left := deadline - w.clock.Now()
		if left <= 0 {
			return false
		}
		if left <= w.spin {
			for w.clock.Now() < deadline {
				if pending() {
					return true
				}
			}
			return false
		}
		t := time.NewTimer(left - w.spin)
		select {
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (w *Waiter) Close() error { return nil }
