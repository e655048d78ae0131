//go:build linux

package fmu_test

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/rig/fmu"
	"github.com/hilrig/hilrig/rig/fmu/fmutest"
)

// TestMain makes the test binary an isolated FMU's process when it is
// started as one, as hilrig's fmu-host command does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fmu.HostCommand {
		os.Exit(fmu.ServeHost())
	}
	os.Exit(m.Run())
}

// start builds a test FMU, opens it and starts a model of it, isolated or
// not, with the default experiment when cfg has none; the unit is closed
// at the test's end, and must leave nothing behind.
func start(t testing.TB, spec fmutest.Spec, cfg fmi.Config, opts fmu.Options) (fmu.Model, *fmu.Unit) {
	t.Helper()
	if !fmu.Supported {
		t.Skip("this build cannot load FMUs")
	}
	u, err := fmu.Open(fmutest.Build(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(u.Dir()); !os.IsNotExist(err) {
			t.Errorf("the unpacked FMU is still there after Close: %v", err)
		}
	})
	if cfg.Experiment == (fmi.Experiment{}) {
		cfg.Experiment = u.Description.Experiment
	}
	m, err := u.Start(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() }) // before the unit's
	return m, u
}

// stepUntilError steps a model by 10 ms until it fails, or to 1 s.
func stepUntilError(m fmu.Model) error {
	for i := 1; i <= 100; i++ {
		if err := m.Step(float64(i) * 0.01); err != nil {
			return err
		}
	}
	return nil
}

// gone reports whether a process has ended and been reaped.
func gone(pid int) bool {
	return unix.Kill(pid, 0) == unix.ESRCH
}

// TestIsolatedSameAsInProcess: over 1000 steps of a varying input, the DC
// motor isolated gives every output, time and count bit for bit as
// in-process, in both interfaces and both FMI versions: the same Stepper
// runs in the child, and numbers cross as their bits.
func TestIsolatedSameAsInProcess(t *testing.T) {
	for _, v := range versions {
		for _, k := range kinds {
			t.Run(fmt.Sprintf("FMI%d/%v", v, k), func(t *testing.T) {
				spec := fmutest.Spec{Model: fmutest.DCMotor, Version: v}
				cfg := fmi.Config{Kind: k, Experiment: fmi.Experiment{Stop: 10}}
				local, _ := start(t, spec, cfg, fmu.Options{})
				isolated, _ := start(t, spec, cfg, fmu.Options{Isolate: true, Budget: 10 * time.Second})
				if _, ok := isolated.(*fmu.Isolated); !ok {
					t.Fatalf("a %T", isolated)
				}
				if !slices.Equal(local.InputSignals(), isolated.InputSignals()) || !slices.Equal(local.OutputSignals(), isolated.OutputSignals()) {
					t.Fatalf("signals %v %v in-process, %v %v isolated", local.InputSignals(), local.OutputSignals(), isolated.InputSignals(), isolated.OutputSignals())
				}
				a, b := make([]float64, 1), make([]float64, 1)
				for i := 1; i <= 1000; i++ {
					if i%7 != 0 { // some steps keep the inputs held, which Model Exchange tells apart
						in := []float64{12 * math.Sin(float64(i)/50)}
						local.Set(in)
						isolated.Set(in)
					}
					to := float64(i) * 2e-3
					if err := local.Step(to); err != nil {
						t.Fatal(err)
					}
					if err := isolated.Step(to); err != nil {
						t.Fatal(err)
					}
					local.Outputs(a)
					isolated.Outputs(b)
					if math.Float64bits(a[0]) != math.Float64bits(b[0]) || local.Time() != isolated.Time() {
						t.Fatalf("step %d: w = %v at %v in-process, %v at %v isolated", i, a[0], local.Time(), b[0], isolated.Time())
					}
				}
				if local.Stats() != isolated.Stats() {
					t.Errorf("stats %+v in-process, %+v isolated", local.Stats(), isolated.Stats())
				}
				if err := isolated.Step(1); err == nil || err.Error() != local.Step(1).Error() {
					t.Errorf("a step back in time: %v; in-process %v", err, local.Step(1))
				}
				if err := isolated.Step(2.002); err != nil {
					t.Errorf("a step after a refused one: %v", err)
				}
			})
		}
	}
}

// TestIsolatedFailures: each way an FMU fails in its process comes back as
// a typed error at the step it happened in, the same error at every later
// step, with the FMU's last messages; the rig's process goes on, the
// child is reaped, and the unit's Close leaves nothing (start's cleanup).
func TestIsolatedFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mode  int
		check func(t *testing.T, err error)
	}{
		{"crash", fmutest.Crash, func(t *testing.T, err error) {
			var ce *fmu.CrashError
			if !errors.As(err, &ce) || ce.Signal != syscall.SIGSEGV {
				t.Fatalf("%v; want a crash with SIGSEGV", err)
			}
			if !slices.Contains(ce.Report, "signal arrived during cgo execution") {
				t.Errorf("report %q", ce.Report)
			}
			want := "the FMU's process crashed with SIGSEGV (segmentation fault) in the step from 0.05 to 0.06; the FMU logged: fmi2Warning logAll: dereferencing NULL at t = 0.05 in doStep"
			if err.Error() != want {
				t.Errorf("%q\nwant %q", err, want)
			}
		}},
		{"abort", fmutest.Abort, func(t *testing.T, err error) {
			var ce *fmu.CrashError
			if !errors.As(err, &ce) || ce.Signal != syscall.SIGABRT || !strings.HasSuffix(err.Error(), "aborting at t = 0.05 in doStep") {
				t.Fatalf("%v; want a crash with SIGABRT, and the FMU's message", err)
			}
		}},
		{"exit", fmutest.Exit, func(t *testing.T, err error) {
			var ee *fmu.ExitError
			if !errors.As(err, &ee) || ee.Code != 3 {
				t.Fatalf("%v; want an exit with status 3", err)
			}
			want := "the FMU's process exited with status 3 in the step from 0.05 to 0.06; the FMU logged: fmi2Warning logAll: exiting at t = 0.05 in doStep"
			if err.Error() != want {
				t.Errorf("%q\nwant %q", err, want)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := start(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2}, fmi.Config{Kind: fmi.CS, Params: map[string]float64{"mode": float64(tc.mode), "at": 0.05}},
				fmu.Options{Isolate: true, Budget: 10 * time.Second})
			pid := m.(*fmu.Isolated).Pid()
			err := stepUntilError(m)
			tc.check(t, err)
			if m.Time() != 0.05 {
				t.Errorf("time %g after the failed step; want 0.05, where it was", m.Time())
			}
			if again := m.Step(0.07); again != err {
				t.Errorf("the next step: %v; want the same error", again)
			}
			if !gone(pid) {
				t.Errorf("the child %d has not been reaped", pid)
			}
			if err := m.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

// TestIsolatedSameErrors: the FMU's own failures, which the Stepper in the
// child reports, come back with the type and the text they have
// in-process: an fmi2Error with its message, a NaN output, the end of
// the simulation (after which the outputs and time are where it ended).
func TestIsolatedSameErrors(t *testing.T) {
	for _, tc := range []struct {
		mode int
		kind fmi.Kind
		v    fmi.Version
		is   func(error) bool
	}{
		{fmutest.Error, fmi.CS, fmi.FMI2, func(err error) bool { var ce *fmi.CallError; return errors.As(err, &ce) && ce.Status == fmi.Error }},
		{fmutest.Error, fmi.ME, fmi.FMI3, func(err error) bool { var ce *fmi.CallError; return errors.As(err, &ce) && ce.Status == fmi.Error }},
		{fmutest.Fatal, fmi.CS, fmi.FMI2, fmi.IsFatal},
		{fmutest.NotANumber, fmi.CS, fmi.FMI3, func(err error) bool { var oe *fmi.OutputError; return errors.As(err, &oe) }},
		{fmutest.NotANumber, fmi.ME, fmi.FMI2, func(err error) bool { var oe *fmi.OutputError; return errors.As(err, &oe) }},
		{fmutest.Ends, fmi.ME, fmi.FMI3, func(err error) bool { return errors.Is(err, fmi.ErrTerminated) }},
	} {
		t.Run(fmt.Sprintf("mode%d/FMI%d/%v", tc.mode, tc.v, tc.kind), func(t *testing.T) {
			spec := fmutest.Spec{Model: fmutest.Bad, Version: tc.v}
			cfg := fmi.Config{Kind: tc.kind, Params: map[string]float64{"mode": float64(tc.mode)}, Initial: []float64{1}}
			local, _ := start(t, spec, cfg, fmu.Options{})
			isolated, _ := start(t, spec, cfg, fmu.Options{Isolate: true, Budget: 10 * time.Second})
			want, got := stepUntilError(local), stepUntilError(isolated)
			if !tc.is(got) || got.Error() != want.Error() {
				t.Fatalf("isolated: %v\nin-process: %v", got, want)
			}
			a, b := make([]float64, 1), make([]float64, 1)
			local.Outputs(a)
			isolated.Outputs(b)
			if math.Float64bits(a[0]) != math.Float64bits(b[0]) || local.Time() != isolated.Time() {
				t.Errorf("after the error y = %v at %v isolated; %v at %v in-process", b[0], isolated.Time(), a[0], local.Time())
			}
			if lerr, ierr := local.Close(), isolated.Close(); fmt.Sprint(lerr) != fmt.Sprint(ierr) {
				t.Errorf("close: %v isolated, %v in-process", ierr, lerr)
			}
		})
	}
}

// raiseThread makes the calling goroutine's thread SCHED_FIFO, as the
// executor's is, where that is permitted. The thread is never lowered
// again: the goroutine stays locked to it, and it ends with the
// goroutine.
func raiseThread() error {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	return unix.SchedSetAttr(0, &attr, 0)
}

// TestIsolatedHang: a step that never returns is a timeout at its budget
// (the step returns then, within a margin), the child is killed, and
// every later step returns the timeout at once. The test's thread is
// SCHED_FIFO, as the executor's is, so that what it measures is the
// budget's keeping and not its wait for a CPU on a loaded machine; the
// margin, 5 ms, is the futex timeout's lateness at SCHED_FIFO (p99 under
// 0.1 ms on the VM of BENCHMARKS.md) and a kill system call, fifty times
// over.
func TestIsolatedHang(t *testing.T) {
	const budget, margin = 200 * time.Millisecond, 5 * time.Millisecond
	m, _ := start(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI3}, fmi.Config{Kind: fmi.CS, Params: map[string]float64{"mode": fmutest.Hang, "at": 0.05}},
		fmu.Options{Isolate: true, Budget: budget})
	pid := m.(*fmu.Isolated).Pid()
	done := make(chan struct{})
	var took time.Duration
	var err, raised error
	go func() { // on a thread of its own, raised and then ended with the goroutine
		defer close(done)
		raised = raiseThread()
		for i := 1; i <= 100 && err == nil; i++ {
			start := time.Now()
			err = m.Step(float64(i) * 0.01)
			took = time.Since(start)
		}
	}()
	<-done
	var te *fmu.TimeoutError
	if !errors.As(err, &te) || te.Where.From != 0.05 {
		t.Fatalf("%v; want a timeout in the step from 0.05", err)
	}
	if raised != nil {
		t.Logf("SCHED_FIFO is not permitted here (%v): the step's time is not checked", raised)
	} else if took < budget || took > budget+margin {
		t.Errorf("the step returned after %v; want its budget, %v, within %v", took, budget, margin)
	}
	t.Logf("%v after a budget of %v", took, budget)
	start := time.Now()
	if again := m.Step(1); again != err || time.Since(start) > time.Millisecond {
		t.Errorf("the next step: %v after %v; want the same error at once", again, time.Since(start))
	}
	if err := m.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if !gone(pid) {
		t.Errorf("the child %d is still there", pid)
	}
}

// TestIsolatedLogFlood: an FMU that logs 4 MiB a step costs the rig what
// it costs in-process: the last 16 lines and a count, which the link
// carries.
func TestIsolatedLogFlood(t *testing.T) {
	m, _ := start(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2}, fmi.Config{Kind: fmi.CS, Params: map[string]float64{"mode": fmutest.Flood, "at": 0}},
		fmu.Options{Isolate: true, Budget: 10 * time.Second})
	for i := 1; i <= 5; i++ {
		if err := m.Step(float64(i) * 0.01); err != nil {
			t.Fatal(err)
		}
	}
	lines, bytes := m.Log().Counts()
	if lines != 5*4096 || bytes < 5*4096*1000 {
		t.Errorf("counted %d messages, %d bytes; want 20480, over 20 MB", lines, bytes)
	}
	tail := m.Log().Tail(0)
	want := "fmi2Warning logAll: message 4096 of 4096 at t = 0.04: xxx"
	if len(tail) != fmu.TailLines || !strings.HasPrefix(tail[len(tail)-1], want) || !strings.HasSuffix(tail[len(tail)-1], "x…") {
		t.Errorf("%d lines kept, the last %.80q", len(tail), tail[len(tail)-1])
	}
}

// TestIsolatedNormalPriority: a child started from a SCHED_FIFO thread (the
// executor's, or any thread of the rig during a run) runs every thread at
// SCHED_OTHER, nice 0: an FMU that spins must not hold a CPU above the
// machine's other work.
func TestIsolatedNormalPriority(t *testing.T) {
	if !fmu.Supported {
		t.Skip("this build cannot load FMUs")
	}
	u, err := fmu.Open(fmutest.Build(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2}))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var m fmu.Model
	var raised error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if raised = raiseThread(); raised == nil {
			m, err = u.Start(fmi.Config{Kind: fmi.CS, Experiment: u.Description.Experiment}, fmu.Options{Isolate: true})
		}
	}()
	<-done
	if raised != nil {
		t.Skipf("SCHED_FIFO is not permitted here (%v)", raised)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Step(0.01); err != nil {
		t.Fatal(err)
	}
	pid := m.(*fmu.Isolated).Pid()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, _ := strconv.Atoi(task.Name())
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // ended
		}
		if attr.Policy != unix.SCHED_NORMAL || attr.Nice != 0 {
			t.Errorf("the child's thread %d has policy %d, priority %d, nice %d; want SCHED_OTHER (0), nice 0", tid, attr.Policy, attr.Priority, attr.Nice)
		}
	}
	t.Logf("%d threads of the child at SCHED_OTHER", len(tasks))
}

// TestIsolatedDescriptors: the child holds the standard three and its
// link, nothing of the rig's: not even a device the rig opened without
// O_CLOEXEC.
func TestIsolatedDescriptors(t *testing.T) {
	device := filepath.Join(t.TempDir(), "device")
	fd, err := unix.Open(device, unix.O_RDWR|unix.O_CREAT, 0o600) // no O_CLOEXEC: leaked to a plain exec
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	m, _ := start(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI3}, fmi.Config{Kind: fmi.CS}, fmu.Options{Isolate: true})
	if err := m.Step(0.01); err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("/proc/%d/fd", m.(*fmu.Isolated).Pid())
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		held = append(held, e.Name()+" → "+target)
		n, _ := strconv.Atoi(e.Name())
		switch {
		case target == device:
			t.Errorf("the child holds the rig's device as fd %d", n)
		case n <= 2, n == 3 && strings.HasPrefix(target, "/memfd:hilrig-fmu"), n == 4 && strings.HasPrefix(target, "socket:"),
			strings.HasPrefix(target, "anon_inode:"), strings.HasPrefix(target, "/sys/fs/cgroup/"): // the standard ones, the link, the Go runtime's own (its poller, its CPU quota)
		default:
			t.Errorf("the child holds fd %d, %s", n, target)
		}
	}
	t.Logf("the child's descriptors: %s", strings.Join(held, ", "))
}

// BenchmarkIsolatedStep is BenchmarkStep's DC motor isolated: the cost of
// a round trip to the child and of the step there. The rig's side
// allocates nothing. It reports the step's percentiles.
func BenchmarkIsolatedStep(b *testing.B) {
	for _, v := range versions {
		for _, k := range kinds {
			b.Run(fmt.Sprintf("FMI%d/%v", v, k), func(b *testing.B) {
				m, _ := start(b, fmutest.Spec{Model: fmutest.DCMotor, Version: v}, fmi.Config{Kind: k, Experiment: fmi.Experiment{}}, fmu.Options{Isolate: true, Budget: time.Second})
				in, out := []float64{0}, make([]float64, 1)
				took := fmutest.NewPercentiles()
				b.ReportAllocs()
				for i := 1; b.Loop(); i++ {
					start := time.Now()
					in[0] = float64(i%100) / 10
					m.Set(in)
					if err := m.Step(float64(i) * 2e-3); err != nil {
						b.Fatal(err)
					}
					m.Outputs(out)
					took.Add(time.Since(start))
				}
				took.Report(b)
			})
		}
	}
}

// TestIsolatedStepAllocatesNothing: a step of an isolated FMU that logs
// nothing allocates nothing in the rig's process, so that the executor's
// exchanges make no garbage.
func TestIsolatedStepAllocatesNothing(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the race detector allocates")
	}
	m, _ := start(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2}, fmi.Config{Kind: fmi.CS}, fmu.Options{Isolate: true, Budget: 10 * time.Second})
	in, out := []float64{1}, make([]float64, 1)
	step := 0
	allocs := testing.AllocsPerRun(1000, func() {
		step++
		m.Set(in)
		if err := m.Step(float64(step) * 1e-3); err != nil {
			t.Fatal(err)
		}
		m.Outputs(out)
	})
	if allocs != 0 {
		t.Errorf("%v allocations a step", allocs)
	}
}

// TestUnitCloseReapsIsolated: a unit closed with an isolated model still
// running closes it first (the child ends, reaped), then removes the
// files.
func TestUnitCloseReapsIsolated(t *testing.T) {
	if !fmu.Supported {
		t.Skip("this build cannot load FMUs")
	}
	u, err := fmu.Open(fmutest.Build(t, fmutest.Spec{Model: fmutest.Ball, Version: fmi.FMI3}))
	if err != nil {
		t.Fatal(err)
	}
	m, err := u.Start(fmi.Config{Kind: fmi.ME, Experiment: u.Description.Experiment}, fmu.Options{Isolate: true})
	if err != nil {
		t.Fatal(err)
	}
	pid := m.(*fmu.Isolated).Pid()
	if err := m.Step(0.5); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if !gone(pid) {
		t.Errorf("the child %d is still there", pid)
	}
	if _, err := os.Stat(u.Dir()); !os.IsNotExist(err) {
		t.Errorf("the unpacked FMU: %v", err)
	}
	if err := m.Step(1); err == nil {
		t.Error("a step after the close")
	}
}

// rigEnv makes the test binary a rig that starts an isolated FMU, says
// its child's pid and its directory, and waits to be killed.
const rigEnv = "HILRIG_FMU_TEST_RIG"

// TestRig is the rig of TestIsolatedRigDies.
func TestRig(t *testing.T) {
	path := os.Getenv(rigEnv)
	if path == "" {
		t.Skip("run by TestIsolatedRigDies")
	}
	u, err := fmu.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := u.Start(fmi.Config{Kind: fmi.CS, Experiment: u.Description.Experiment}, fmu.Options{Isolate: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("child %d dir %s\n", m.(*fmu.Isolated).Pid(), u.Dir())
	select {}
}

// TestIsolatedRigDies: when the rig dies (SIGKILL: no Close runs), its
// FMU's process sees its control socket close, removes the unpacked FMU
// that the rig can no longer remove, and ends.
func TestIsolatedRigDies(t *testing.T) {
	path := fmutest.Build(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2})
	rig := exec.Command(os.Args[0], "-test.run=^TestRig$", "-test.v")
	rig.Env = append(os.Environ(), rigEnv+"="+path)
	stdout, err := rig.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.Start(); err != nil {
		t.Fatal(err)
	}
	defer rig.Process.Kill()
	var pid int
	var dir string
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		if n, _ := fmt.Sscanf(sc.Text(), "child %d dir %s", &pid, &dir); n == 2 {
			break
		}
	}
	if pid == 0 {
		rig.Wait()
		t.Fatal("the rig did not start its FMU")
	}
	rig.Process.Kill()
	rig.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for !ended(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !ended(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the FMU's process %d outlived its rig by 10 s", pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		os.RemoveAll(dir)
		t.Errorf("the unpacked FMU is still there: %v", err)
	}
}

// ended reports whether a process has ended: gone, or a zombie that its
// new parent has not reaped yet.
func ended(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}
