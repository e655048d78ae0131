package fmu

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// Isolated is an FMU stepped in a child process (the running executable
// again, HostCommand), so that whatever the FMU does ends at most that
// process: a fault (SIGSEGV, abort) is a *CrashError, an exit an
// *ExitError, a step longer than the budget a *TimeoutError (the child is
// killed, and the step returns at the budget), and the FMU's own errors
// and NaN outputs come back as the in-process ones do (*fmi.CallError,
// *fmi.OutputError), with the same text. After any of them every Step
// returns it again at once.
//
// The rig unpacks the FMU (Unit) and the child loads it from there; the
// unit's Close removes the files whatever became of the child. The child
// runs at normal priority whatever the thread that starts it, holds no
// descriptor of the rig's but its link, and ends when the rig does.
//
// A step is one round trip over shared memory: the inputs and the time in,
// the outputs, the counts and what the FMU logged out. It allocates
// nothing in the rig's process unless the FMU logged or failed. An
// Isolated is not safe for concurrent use.
type Isolated struct {
	unit        *Unit
	ins, outs   []fmi.Signal
	out         []float64
	t           float64
	stats       fmi.Stats
	log         *Log
	budget      time.Duration
	closeBudget time.Duration
	err         error
	n           uint32        // the last request's number
	pending     atomic.Uint32 // n, for the watcher
	set         bool          // inputs set since the last step
	k           *link
	control     *os.File
	cmd         *exec.Cmd
	report      *headWriter
	mapped      atomic.Pointer[link] // k, for the watcher
	dead        atomic.Bool          // the child has ended and been reaped
	exited      chan struct{}        // closed once it has
	killed      atomic.Bool          // the rig killed it
	closed      bool
}

var _ Model = (*Isolated)(nil)

// startIsolated starts the child, which loads the FMU and starts stepping
// it, and maps the link it made.
func (u *Unit) startIsolated(cfg fmi.Config, opts Options) (*Isolated, error) {
	if !Supported {
		_, err := loadLibrary("", u.Description, cfg.Kind)
		return nil, fmt.Errorf("%s: %w", u.Path, err)
	}
	library, err := u.library(cfg.Kind)
	if err != nil {
		return nil, err
	}
	if opts.StartBudget <= 0 {
		opts.StartBudget = DefaultStartBudget
	}
	it := &Isolated{unit: u, log: &Log{}, budget: opts.Budget, closeBudget: opts.StartBudget, report: &headWriter{}, exited: make(chan struct{})}
	memory, err := it.spawn()
	if err != nil {
		return nil, fmt.Errorf("%s: starting the FMU's process: %w", u.Path, err)
	}
	defer memory.Close() // mapped or not, the mapping keeps what it needs
	if err := it.start(cfg, opts, library, memory); err != nil {
		it.kill()
		it.shutdown()
		return nil, err
	}
	u.mu.Lock()
	if u.running == nil {
		u.running = map[io.Closer]bool{}
	}
	u.running[it] = true
	u.mu.Unlock()
	return it, nil
}

// spawn starts the child with its shared memory (returned, to be mapped
// once the child has sized it) and its control socket.
func (it *Isolated) spawn() (*os.File, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	memfd, err := unix.MemfdCreate("hilrig-fmu", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("shared memory: %w", err)
	}
	memory := os.NewFile(uintptr(memfd), "fmu-memory")
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		memory.Close()
		return nil, err
	}
	// The rig's end is non-blocking, so that its reads can have a
	// deadline; the child's blocks.
	unix.SetNonblock(fds[0], true)
	it.control = os.NewFile(uintptr(fds[0]), "fmu-control")
	hostEnd := os.NewFile(uintptr(fds[1]), "fmu-control")
	defer hostEnd.Close()
	cmd := exec.Command(self, HostCommand)
	cmd.ExtraFiles = []*os.File{memory, hostEnd} // hostMemoryFD, hostControlFD
	cmd.Stderr = it.report
	// Its own process group: a Ctrl-C at the terminal is the rig's to
	// handle, which then closes the FMU.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = time.Second // a grandchild holding its stderr does not hold the rig
	it.cmd = cmd
	if err := startAtNormalPriority(cmd); err != nil {
		memory.Close()
		it.control.Close()
		return nil, err
	}
	go it.watch()
	return memory, nil
}

// startAtNormalPriority starts cmd from a thread of its own set to
// SCHED_OTHER: a process inherits the scheduling policy of the thread
// that forks it, and the rig's threads may be SCHED_FIFO when it starts
// an FMU (the executor's, and the others' during a run, see
// drivers/realtime.RaiseProcess). The thread is never unlocked: it ends
// with the goroutine, its policy with it.
func startAtNormalPriority(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		attr, err := unix.SchedGetAttr(0, 0)
		if err == nil {
			// A negative nice value goes too; a positive one cannot be
			// lowered without privilege, and is no harm.
			attr = &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Nice: max(attr.Nice, 0)}
			err = unix.SchedSetAttr(0, attr, 0)
		}
		if err != nil {
			done <- fmt.Errorf("setting normal priority for the FMU's process: %w", err)
			return
		}
		done <- cmd.Start()
	}()
	return <-done
}

// watch reaps the child when it ends and wakes a step waiting for it: it
// changes the response word, so that a step about to sleep on it does
// not, unless the child answered the step before it ended (a close), in
// which case the answer stands.
func (it *Isolated) watch() {
	it.cmd.Wait()
	it.dead.Store(true)
	if k := it.mapped.Load(); k != nil {
		if v := atomic.LoadUint32(&k.h.response); v != it.pending.Load() && atomic.CompareAndSwapUint32(&k.h.response, v, deadWord) {
			wake(&k.h.response)
		}
	}
	close(it.exited)
}

// start asks the child to start the FMU, within the start budget.
func (it *Isolated) start(cfg fmi.Config, opts Options, library string, memory *os.File) error {
	u := it.unit
	it.control.SetDeadline(time.Now().Add(opts.StartBudget))
	req := startRequest{Protocol: protocol, Path: u.Path, Dir: u.dir, Library: library, Name: opts.Name, LoggingOn: opts.LoggingOn, Config: encodeConfig(cfg)}
	if req.Name == "" {
		req.Name = u.Description.ModelName
	}
	var reply startReply
	err := writeMessage(it.control, &req)
	if err == nil {
		err = readMessage(it.control, &reply)
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		it.kill()
		return fmt.Errorf("%s: %w", u.Path, &TimeoutError{Budget: opts.StartBudget, Where: Where{Phase: "start"}, Log: it.lastLog(nil)})
	case err != nil:
		// The child closed its end: it ended. What else could fail here
		// fails once it has.
		select {
		case <-it.exited:
		case <-time.After(opts.StartBudget):
			it.kill()
			<-it.exited
		}
		return fmt.Errorf("%s: %w", u.Path, it.died(Where{Phase: "start"}))
	case reply.Protocol != protocol:
		return fmt.Errorf("%s: the FMU's process speaks protocol %d, the rig %d: is hilrig being replaced?", u.Path, reply.Protocol, protocol)
	case reply.Err != nil:
		return reply.Err.err()
	}
	it.control.SetDeadline(time.Time{})
	d := u.Description
	if it.ins, err = resolve(d, reply.Inputs); err == nil {
		it.outs, err = resolve(d, reply.Outputs)
	}
	if err == nil && len(reply.Values) != len(it.outs) {
		err = fmt.Errorf("%d values for %d outputs", len(reply.Values), len(it.outs))
	}
	if err != nil {
		return fmt.Errorf("%s: the FMU's process: %w", u.Path, err)
	}
	// Sealed, the memory cannot shrink under the rig's reads (which would
	// fault), whatever the child does from now on.
	if _, err := unix.FcntlInt(memory.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_SEAL); err != nil {
		return fmt.Errorf("%s: sealing the shared memory: %w", u.Path, err)
	}
	if it.k, err = mapLink(int(memory.Fd()), len(it.ins), len(it.outs)); err != nil {
		return fmt.Errorf("%s: %w", u.Path, err)
	}
	it.mapped.Store(it.k)
	it.out = make([]float64, len(it.outs))
	for i, v := range reply.Values {
		it.out[i] = math.Float64frombits(v)
	}
	it.t, it.stats = math.Float64frombits(reply.Time), reply.Stats
	it.k.readLog(it.log)
	return nil
}

// resolve finds the signals the child named, one each.
func resolve(d *fmi.Description, names []string) ([]fmi.Signal, error) {
	out := make([]fmi.Signal, 0, len(names))
	for _, name := range names {
		sigs, err := d.Signals([]string{name})
		if err != nil {
			return nil, err
		}
		if len(sigs) != 1 {
			return nil, fmt.Errorf("%s is %d signals, not one", name, len(sigs))
		}
		out = append(out, sigs[0])
	}
	return out, nil
}

func (it *Isolated) Description() *fmi.Description { return it.unit.Description }
func (it *Isolated) InputSignals() []fmi.Signal    { return it.ins }
func (it *Isolated) OutputSignals() []fmi.Signal   { return it.outs }
func (it *Isolated) Time() float64                 { return it.t }
func (it *Isolated) Stats() fmi.Stats              { return it.stats }
func (it *Isolated) Err() error                    { return it.err }

// Pid is the child's process ID.
func (it *Isolated) Pid() int { return it.cmd.Process.Pid }

// Log is what the FMU logged, as of the last exchange (and, after a
// crash, up to its end).
func (it *Isolated) Log() *Log { return it.log }

// Set holds the inputs (in InputSignals order) for the next Step.
func (it *Isolated) Set(values []float64) {
	if it.closed {
		return
	}
	copy(it.k.in, values)
	it.set = true
}

// Outputs copies the outputs at the current time into dst.
func (it *Isolated) Outputs(dst []float64) { copy(dst, it.out) }

var errFreed = errors.New("the FMU has been freed")

// Step advances to the communication point to, within the budget: see
// fmi.Stepper.Step, and Isolated for the errors of the process.
func (it *Isolated) Step(to float64) error {
	if it.err != nil {
		return it.err
	}
	if it.closed {
		return errFreed
	}
	start := time.Now()
	k := it.k
	k.req.op, k.req.to, k.req.set = opStep, to, 0
	if it.set {
		k.req.set = 1
	}
	it.request()
	switch await(&k.h.response, &k.h.rigSleep, it.n, start, it.budget, &it.dead) {
	case expired:
		it.kill()
		it.err = &TimeoutError{Budget: it.budget, Where: Where{Phase: "step", From: it.t, To: to}, Log: it.lastLog(k)}
		return it.err
	case ended:
		it.err = it.died(Where{Phase: "step", From: it.t, To: to})
		return it.err
	}
	it.set = false
	r := k.resp
	it.t, it.stats = r.time, r.stats
	copy(it.out, k.out)
	k.readLog(it.log)
	switch r.result {
	case resultOK:
		// The child checked; an output it let through is refused here all
		// the same, as its memory is the FMU's to scribble on.
		for i, v := range it.out {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				it.err = &fmi.OutputError{Signal: it.outs[i].Name, Value: v, Time: it.t, When: fmt.Sprintf("at t = %g", it.t)}
				return it.err
			}
		}
		return nil
	case resultRefused:
		return decodeReport(k.report[:min(int(r.errLen), len(k.report))])
	}
	it.err = decodeReport(k.report[:min(int(r.errLen), len(k.report))])
	return it.err
}

// request posts the request written in the link under the next number.
func (it *Isolated) request() {
	it.n = nextNumber(it.n)
	it.pending.Store(it.n)
	post(&it.k.h.request, &it.k.h.hostSleep, it.n)
}

// ErrStopped is an isolated FMU's process stopped by Kill.
var ErrStopped = errors.New("the FMU's process was stopped")

// Kill ends the child at once; it may be called from any goroutine. A
// step in progress returns an error wrapping ErrStopped, and so does every
// later one. Close must still be called.
func (it *Isolated) Kill() { it.kill() }

// kill ends the child at once.
func (it *Isolated) kill() {
	it.killed.Store(true)
	it.cmd.Process.Kill()
}

// died is the error of a child that ended by itself, once reaped: a
// *CrashError when a signal ended it (the Go runtime in it reports a
// fault in the FMU's code and exits with status 2: the signal is read
// from its report), else an *ExitError; ErrStopped when the rig killed
// it.
func (it *Isolated) died(where Where) error {
	<-it.exited
	if it.killed.Load() {
		return fmt.Errorf("%w %v", ErrStopped, where)
	}
	report := it.report.lines(4)
	log := it.lastLog(it.k)
	ws, _ := it.cmd.ProcessState.Sys().(syscall.WaitStatus)
	// The runtime's report first: with GOTRACEBACK=crash it ends the
	// process with SIGABRT whatever the fault was.
	if sig := reportedSignal(report); sig != 0 {
		return &CrashError{Signal: sig, Where: where, Report: report, Log: log}
	}
	if ws.Signaled() {
		return &CrashError{Signal: ws.Signal(), Where: where, Report: report, Log: log}
	}
	return &ExitError{Code: ws.ExitStatus(), Where: where, Report: report, Log: log}
}

// lastLog is the FMU's last lines, the ones the child wrote to k (nil:
// not yet mapped) included.
func (it *Isolated) lastLog(k *link) []string {
	if k != nil {
		k.readLog(it.log)
	}
	return it.log.Tail(logTail)
}

// logTail is how many of the FMU's last lines an error carries, as
// fmi.CallError's do.
const logTail = 8

// Close ends the FMU as fmi.Stepper.Close does, in the child, within the
// start budget, and reaps the child (killed if it does not end). It
// returns the FMU's Terminate's error. The unit's Close removes the
// files.
func (it *Isolated) Close() error {
	if it.closed {
		return nil
	}
	it.closed = true
	u := it.unit
	u.mu.Lock()
	delete(u.running, it)
	u.mu.Unlock()
	var err error
	if k := it.k; k != nil && !it.killed.Load() && !it.dead.Load() {
		start := time.Now()
		k.req.op = opClose
		it.request()
		switch await(&k.h.response, &k.h.rigSleep, it.n, start, it.closeBudget, &it.dead) {
		case arrived:
			if k.resp.result != resultOK {
				err = decodeReport(k.report[:min(int(k.resp.errLen), len(k.report))])
			}
		case expired:
			it.kill()
			err = &TimeoutError{Budget: it.closeBudget, Where: Where{Phase: "close"}, Log: it.lastLog(k)}
		case ended:
			err = it.died(Where{Phase: "close"})
		}
	}
	it.shutdown()
	return err
}

// shutdown reaps the child, killing it if it has not ended within the
// close budget, and releases the link.
func (it *Isolated) shutdown() {
	select {
	case <-it.exited:
	case <-time.After(it.closeBudget):
		it.kill()
		<-it.exited
	}
	it.mapped.Store(nil)
	it.k.unmap()
	it.control.Close()
}
