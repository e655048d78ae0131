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
func RaiseProcess(int) (func(), error)   { return func() {}, ErrUnsupported }
func ThreadCPU() (time.Duration, bool)   { return 0, false }
func KernelPreemption() string           { return "" }

// Waiter sleeps on Go's timers and spins the last stretch.
type Waiter struct {
	waiting
	wake chan struct{}
}

func NewWaiter(clock *Monotonic, spin time.Duration) (*Waiter, error) {
	w := &Waiter{waiting: waiting{clock: clock, spin: spin}, wake: make(chan struct{}, 1)}
	w.sleep, w.rest = w.timer, time.Sleep
	return w, nil
}

func (w *Waiter) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *Waiter) timer(d time.Duration, _ func() bool) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.wake:
	case <-t.C:
	}
	return true
}

func (w *Waiter) Close() error { return nil }
