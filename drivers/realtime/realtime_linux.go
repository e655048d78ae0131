package realtime

import (
	"bytes"
	"os"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// LockMemory keeps every page of the process in RAM, so that no page fault
// stalls the executor. MCL_ONFAULT locks pages as they are touched rather
// than all of Go's address-space reservations at once.
func LockMemory() error {
	return unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
}

// HoldIdleLatency asks the kernel (PM QoS) for idle CPUs that wake at
// once, as cyclictest does, until the returned file is closed. A halted CPU,
// or a virtual CPU halted in its hypervisor, takes tens of microseconds to
// wake for the frame that just arrived; with the request, idle CPUs poll.
func HoldIdleLatency() (*os.File, error) {
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

// RaiseThread makes the calling thread SCHED_FIFO at priority and gives it
// a timer slack of 1 ns. The caller has locked its goroutine to the thread
// and either calls LowerThread before unlocking it or never unlocks it: a
// goroutine scheduled on the thread later must not run at real-time
// priority.
func RaiseThread(priority int) error {
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}
	return unix.SchedSetAttr(0, &attr, 0)
}

// LowerThread undoes RaiseThread.
func LowerThread() {
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}
	unix.SchedSetAttr(0, &attr, 0)
	unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // 0: the default again
}

// RaiseProcess makes every thread of the process that runs at normal
// priority SCHED_FIFO at priority, and with them the threads the process
// starts from now on (a thread inherits its creator's policy), and
// returns what puts them back. Go's runtime hands a real-time thread's
// goroutine back to it through its other threads (a processor taken back
// during a system call, a goroutine readied): at normal priority, on a
// loaded machine, they waited for the CPU, and the real-time thread with
// them, for tens of milliseconds. priority is meant to be 1: above every
// ordinary process, below the rig's own real-time threads, where there is
// a CPU to move a preempted thread to (see rig.threadPriorities).
func RaiseProcess(priority int) (restore func(), err error) {
	each := func(f func(tid int, attr *unix.SchedAttr) error) error {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		var first error
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			attr, err := unix.SchedGetAttr(tid, 0)
			if err != nil {
				continue // the thread has ended
			}
			if err := f(tid, attr); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	// Until a pass finds none to raise: a thread that a thread not yet
	// raised was starting during a pass was not in its list. A thread
	// being started takes its policy from its starter at once but shows in
	// /proc/self/task only when its start is done, which a starter just
	// changed (and so possibly preempted) may not finish before the next
	// pass reads the list: a pass that changed threads is followed by the
	// next a millisecond later. (Restoring without that pause left a
	// thread at 1 in 1 of 20 runs of this package's tests.)
	const settle = time.Millisecond
	for range 10 {
		raised := 0
		err = each(func(tid int, attr *unix.SchedAttr) error {
			if attr.Policy != unix.SCHED_NORMAL {
				return nil
			}
			raised++
			return unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(priority)}, 0)
		})
		if raised == 0 || err != nil {
			break
		}
		time.Sleep(settle)
	}
	return func() {
		for range 10 { // as many passes, for the threads started meanwhile
			lowered := 0
			each(func(tid int, attr *unix.SchedAttr) error {
				if attr.Policy != unix.SCHED_FIFO || attr.Priority != uint32(priority) {
					return nil
				}
				lowered++
				return unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}, 0)
			})
			if lowered == 0 {
				return
			}
			time.Sleep(settle)
		}
	}, err
}

// ThreadCPU is the CPU time the calling thread has used, as the kernel
// counts it (the time its system calls took included, which a wall clock
// around them would count as asleep); false where it cannot be read. It is
// a system call (about a microsecond on the VM of BENCHMARKS.md), not for
// every turn of a loop.
func ThreadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// MaxRSS is the process's peak resident memory, in KiB: its VmHWM.
//
// Not getrusage's Maxrss, which on Linux counts the memory of whatever
// started the process too: a parent that vforks (go run, os/exec, Python's
// subprocess) shares its memory with the child until the exec, and the
// exec records its peak as the child's. hilrig run by go run read 41 MB
// where it used 29.
func MaxRSS() int64 {
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		if kib, ok := statusKiB(status, "VmHWM:"); ok {
			return kib
		}
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Maxrss) // a long: 32 bits on arm and 386
}

// Waiter puts a thread to sleep until a deadline, or until another
// goroutine wakes it (a frame arrived, the run must stop). It sleeps in
// ppoll on an eventfd, which Wake writes, and spins the last stretch so
// that it returns on time rather than when the scheduler gets to it.
//
// Its ppoll is a raw system call: to Go's scheduler the sleeping goroutine
// is running, and keeps its P, so that whoever makes a waiter must add
// one to GOMAXPROCS for it, for as long as it is used, or the other
// goroutines lose one (rig's session does for its executor, and the demo
// for its device). A system call as the scheduler knows one lets its
// monitor look at the thread while it sleeps, holding the goroutine's scan
// bit for a moment each time, and take its P; a thread coming back from
// the call spins until the bit is released, and one above the monitor's
// priority, on the monitor's only CPU, spun for good
// (tests/hardening_onecpu_test.go). The monitor's requests to give up the
// CPU (every 10 ms of running, as the scheduler counts it) end the ppoll
// with EINTR, and the goroutine yields at its next function call, as any
// running one does. The garbage collector still takes a running
// goroutine's scan bit to look at its stack; a real-time run keeps it
// from running (rig's holdGC).
type Waiter struct {
	waiting
	efd    int
	asleep atomic.Bool
	fds    [1]unix.PollFd
	ts     unix.Timespec
	buf    [8]byte
	one    [8]byte
}

// NewWaiter returns a waiter on clock that spins at most the last spin
// before each deadline.
func NewWaiter(clock *Monotonic, spin time.Duration) (*Waiter, error) {
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &Waiter{waiting: waiting{clock: clock, spin: spin}, efd: efd}
	w.sleep, w.rest = w.ppoll, w.nap
	w.fds[0] = unix.PollFd{Fd: int32(efd), Events: unix.POLLIN}
	w.one[0] = 1 // eventfd counters are host-endian; x86 and arm are little-endian
	return w, nil
}

// Wake ends a sleep in progress; it costs a system call only when the
// waiter is asleep.
func (w *Waiter) Wake() {
	if w.asleep.Load() {
		unix.Write(w.efd, w.one[:])
	}
}

// ppoll sleeps for d, or until woken.
func (w *Waiter) ppoll(d time.Duration, pending func() bool) bool {
	w.ts = unix.NsecToTimespec(int64(d))
	w.asleep.Store(true)
	if pending() { // a wake between the check and now was not lost
		w.asleep.Store(false)
		return false
	}
	n, errno := rawPpoll(w.fds[:], &w.ts)
	w.asleep.Store(false)
	if errno == 0 && n > 0 {
		unix.RawSyscall(unix.SYS_READ, uintptr(w.efd), uintptr(unsafe.Pointer(&w.buf[0])), uintptr(len(w.buf)))
	}
	return true // also when a signal ended it early: Until sleeps again
}

// nap sleeps for d, deaf to wakes (a signal may end it early).
func (w *Waiter) nap(d time.Duration) {
	w.ts = unix.NsecToTimespec(int64(d))
	rawPpoll(nil, &w.ts)
}

// rawPpoll is ppoll(2) as a raw system call (see Waiter): the number of
// descriptors ready, or the error (EINTR when a signal ended it).
func rawPpoll(fds []unix.PollFd, ts *unix.Timespec) (uintptr, unix.Errno) {
	var first unsafe.Pointer
	if len(fds) > 0 {
		first = unsafe.Pointer(&fds[0])
	}
	n, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(first), uintptr(len(fds)), uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	return n, errno
}

// Close releases the waiter's eventfd.
func (w *Waiter) Close() error { return unix.Close(w.efd) }

// statusKiB reads a field in kB from a /proc/PID/status.
func statusKiB(status []byte, field string) (int64, bool) {
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kib, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kib, err == nil
		}
	}
	return 0, false
}
