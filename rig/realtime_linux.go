package rig

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The executor's timing rests on four things the OS can give a process
// (see DESIGN.md, "Time"): its pages locked in RAM, a SCHED_FIFO thread
// that nothing else preempts, timed waits that end when asked (a timer
// slack of 1 ns), and CPUs that poll rather than halt when idle. When the process may not have one of them, the run goes
// on without it and says so once.

// lockMemory keeps every page of the process in RAM, so that no page fault
// stalls the executor. MCL_ONFAULT locks pages as they are touched rather
// than all of Go's address-space reservations at once.
func lockMemory() error {
	return unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
}

// holdIdleLatency asks the kernel (PM QoS) for idle CPUs that wake at
// once, as cyclictest does, until the returned file is closed. A halted CPU,
// or a virtual CPU halted in its hypervisor, takes tens of microseconds to
// wake for the frame that just arrived; with the request, idle CPUs poll.
func holdIdleLatency() (*os.File, error) {
	f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	var zero [4]byte // an s32 in microseconds
	if _, err := f.Write(zero[:]); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// raiseThread makes the calling thread SCHED_FIFO at priority (the caller
// has locked its goroutine to the thread) and gives it a timer slack of
// 1 ns.
func raiseThread(priority int) error {
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}
	return unix.SchedSetAttr(0, &attr, 0)
}

// lowerThread undoes raiseThread, so that the thread may go back to Go's
// pool: a goroutine scheduled on it later must not run at real-time
// priority.
func lowerThread() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
	unix.SchedSetAttr(0, &attr, 0)
	unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // 0: the default again
}

// monoClock is the time since the start of a run on the monotonic clock
// (Go's monotonic reading is CLOCK_MONOTONIC, read through the vDSO).
type monoClock struct{ start time.Time }

func (c *monoClock) Now() time.Duration { return time.Since(c.start) }

// waiter puts the executor to sleep until a deadline, or until another
// goroutine wakes it (a frame arrived, the run must stop). It sleeps in
// ppoll on an eventfd, which the waker writes, and spins the last stretch
// so that it returns on time rather than when the scheduler gets to it.
type waiter struct {
	clock  *monoClock
	spin   time.Duration
	efd    int
	asleep atomic.Bool
	fds    [1]unix.PollFd
	ts     unix.Timespec
	buf    [8]byte
	one    [8]byte
}

func newWaiter(clock *monoClock, spin time.Duration) (*waiter, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &waiter{clock: clock, spin: spin, efd: efd}
	w.fds[0] = unix.PollFd{Fd: int32(efd), Events: unix.POLLIN}
	w.one[0] = 1 // eventfd counters are host-endian; x86 and arm are little-endian
	return w, nil
}

// wake ends a sleep in progress; it costs a system call only when the
// executor is asleep.
func (w *waiter) wake() {
	if w.asleep.Load() {
		unix.Write(w.efd, w.one[:])
	}
}

// until returns at deadline, or earlier when pending reports work; it says
// which. pending must be cheap: it is called while spinning.
func (w *waiter) until(deadline time.Duration, pending func() bool) (woken bool) {
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
		w.asleep.Store(true)
		if pending() { // a wake between the check above and now was not lost
			w.asleep.Store(false)
			return true
		}
		w.ts = unix.NsecToTimespec(int64(left - w.spin))
		n, _ := unix.Ppoll(w.fds[:], &w.ts, nil)
		w.asleep.Store(false)
		if n > 0 {
			unix.Read(w.efd, w.buf[:])
		}
	}
}

func (w *waiter) close() { unix.Close(w.efd) }

// maxRSS is the process's peak resident memory, in KiB.
func maxRSS() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss
}
