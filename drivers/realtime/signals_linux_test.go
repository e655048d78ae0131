package realtime

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaitsOutlastSignals: the waiter's ppoll is a raw system call, which
// a signal ends early (EINTR), and Go's scheduler signals a goroutine that
// has run for 10 ms, as it sees a raw call, to ask it to yield. Until and
// Rest must return at their deadlines all the same, never before, and
// Until must not take a signal for a wake.
func TestWaitsOutlastSignals(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)) // the waiter's P
	tid, pid := unix.Gettid(), unix.Getpid()
	clock := NewMonotonic()
	w, err := NewWaiter(clock, 0) // no spin: every wait is all sleep
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop := make(chan struct{})
	var signals atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
				unix.Tgkill(pid, tid, unix.SIGURG) // the scheduler's own signal: Go handles it
				signals.Add(1)
			}
		}
	}()
	none := func() bool { return false }
	const wait = 30 * time.Millisecond
	for range 3 {
		deadline := clock.Now() + wait
		if w.Until(deadline, none) {
			t.Error("Until said it was woken; nothing woke it")
		}
		if early := deadline - clock.Now(); early > 0 {
			t.Errorf("Until returned %v before its deadline", early)
		}
		deadline = clock.Now() + wait
		w.Rest(deadline)
		if early := deadline - clock.Now(); early > 0 {
			t.Errorf("Rest returned %v before its deadline", early)
		}
	}
	close(stop)
	if signals.Load() == 0 {
		t.Fatal("no signal was sent: the test tested nothing")
	}
	t.Logf("%d signals in %v of waits", signals.Load(), 6*wait)
}
