package fmu_test

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/rig/fmu"
	"github.com/hilrig/hilrig/rig/fmu/fmutest"
)

var versions = []fmi.Version{fmi.FMI2, fmi.FMI3}
var kinds = []fmi.Kind{fmi.CS, fmi.ME}

// open builds a test FMU, opens it and makes a stepper of it; both are
// closed at the test's end.
func open(t testing.TB, spec fmutest.Spec, kind fmi.Kind, cfg fmi.Config) (*fmi.Stepper, fmu.Instance, *fmu.Unit) {
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
	})
	inst, err := u.Instantiate(kind, fmu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind = kind
	if cfg.Experiment == (fmi.Experiment{}) {
		cfg.Experiment = u.Description.Experiment
	}
	s, err := fmi.NewStepper(u.Description, inst, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, inst, u
}

// motorSpeed is the DC motor's exact speed at t after a step of 1 V from
// rest: x(t) = ∫₀ᵗ e^(As) ds·B, the top right of e^(Mt) with M = [A B; 0 0].
func motorSpeed(t float64) float64 {
	const J, b, K, R, L = 0.01, 0.1, 0.01, 1, 0.5
	m := mat.NewDense(3, 3, []float64{
		-b / J, K / J, 0,
		-K / L, -R / L, 1 / L,
		0, 0, 0,
	})
	m.Scale(t, m)
	var e mat.Dense
	e.Exp(m)
	return e.At(0, 2)
}

// TestDCMotor: the motor's speed after a 1 V step, in both FMI versions
// and both interfaces, against the exact solution. Co-Simulation's RK4 at
// 1e-4 s errs by some h⁴·|λ|⁵ ≈ 1e-16·10⁵·t per unit: 1e-9 of the 0.1
// rad/s peak is allowed; Model Exchange at a tolerance of 1e-9 errs by at
// most 1e-9·(1 + |x|) per step, over ≤ 300 steps: 3e-7 absolute.
func TestDCMotor(t *testing.T) {
	for _, v := range versions {
		for _, k := range kinds {
			t.Run(fmt.Sprintf("FMI%d/%v", v, k), func(t *testing.T) {
				s, _, _ := open(t, fmutest.Spec{Model: fmutest.DCMotor, Version: v}, k, fmi.Config{Initial: []float64{1}, Experiment: fmi.Experiment{Stop: 3, Tolerance: 1e-9}})
				if ins, outs := s.InputSignals(), s.OutputSignals(); len(ins) != 1 || ins[0].Name != "V" || len(outs) != 1 || outs[0].Name != "w" || outs[0].Unit != "rad/s" {
					t.Fatalf("inputs %+v, outputs %+v", ins, outs)
				}
				tol := 1e-10
				if k == fmi.ME {
					tol = 3e-7
				}
				out := make([]float64, 1)
				worst := 0.0
				for i := 1; i <= 300; i++ {
					ti := float64(i) * 0.01
					if err := s.Step(ti); err != nil {
						t.Fatal(err)
					}
					s.Outputs(out)
					worst = max(worst, math.Abs(out[0]-motorSpeed(ti)))
				}
				if worst > tol {
					t.Errorf("the speed is off the exact one by up to %.3g rad/s; want under %.3g", worst, tol)
				}
				t.Logf("largest error %.3g rad/s (peak 0.1)", worst)
			})
		}
	}
}

// TestBallBounces: in Model Exchange the native ball bounces where the
// equations say, read through its outputs (the positions between bounces
// are parabolas, reproduced exactly; see the fmi package's ball test), and
// its Boolean output says when it rests. In Co-Simulation its own solver
// handles the bounce at the end of its 1 ms internal step.
func TestBallBounces(t *testing.T) {
	first := math.Sqrt(2 / 9.81)
	for _, v := range versions {
		for _, k := range kinds {
			t.Run(fmt.Sprintf("FMI%d/%v", v, k), func(t *testing.T) {
				s, _, _ := open(t, fmutest.Spec{Model: fmutest.Ball, Version: v}, k, fmi.Config{})
				out := make([]float64, 3)
				for i := 1; i <= 300; i++ {
					ti := float64(i) * 0.01
					if err := s.Step(ti); err != nil {
						t.Fatal(err)
					}
					s.Outputs(out)
					if i == 50 { // 0.5 s: rising after the first bounce
						u := 0.7 * 9.81 * first
						dt := 0.5 - first
						h, vel := u*dt-9.81/2*dt*dt, u-9.81*dt
						tol := 1e-9
						if k == fmi.CS {
							tol = 0.02 // the bounce is up to 1 ms late: 1 ms at 4.4 m/s, and the path from there
						}
						if math.Abs(out[0]-h) > tol || math.Abs(out[1]-vel) > tol {
							t.Errorf("at 0.5 s h = %.12g, v = %.12g; want %.12g, %.12g within %g", out[0], out[1], h, vel, tol)
						}
					}
				}
				if out[2] != 1 || out[1] != 0 {
					t.Errorf("at 3 s: v = %g, resting = %g; want a ball at rest", out[1], out[2])
				}
				if k == fmi.ME && s.Stats().StateEvents != 11 {
					t.Errorf("stats %+v; want 11 bounces", s.Stats())
				}
			})
		}
	}
}

// TestFMUError: an FMU's error comes back naming the function, the status
// and what the FMU logged, formatted from its variadic arguments (a
// double, a string and an int in FMI 2).
func TestFMUError(t *testing.T) {
	for _, v := range versions {
		for _, k := range kinds {
			t.Run(fmt.Sprintf("FMI%d/%v", v, k), func(t *testing.T) {
				s, _, _ := open(t, fmutest.Spec{Model: fmutest.Bad, Version: v}, k, fmi.Config{Params: map[string]float64{"mode": fmutest.Error}})
				var err error
				for i := 1; i <= 100 && err == nil; i++ {
					err = s.Step(float64(i) * 0.01)
				}
				function := map[fmi.Kind]string{fmi.CS: fmt.Sprintf("fmi%dDoStep", v), fmi.ME: map[fmi.Version]string{2: "fmi2GetDerivatives", 3: "fmi3GetContinuousStateDerivatives"}[v]}[k]
				var ce *fmi.CallError
				if !errors.As(err, &ce) || ce.Function != function || ce.Status != fmi.Error {
					t.Fatalf("%v; want %s's error", err, function)
				}
				want := regexp.MustCompile(fmt.Sprintf(`^%s returned fmi%dError; the FMU logged: fmi%dError logStatusError: deliberate error at t = 0\.5\d* in \S+ \(mode 2\)$`, function, v, v))
				if !want.MatchString(err.Error()) {
					t.Errorf("%q\nwant %s", err, want)
				}
			})
		}
	}
}

// TestFatal: after a fatal error nothing is called: not Terminate, not
// FreeInstance, and the library stays loaded.
func TestFatal(t *testing.T) {
	s, _, _ := open(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2}, fmi.CS, fmi.Config{Params: map[string]float64{"mode": fmutest.Fatal, "at": 0.1}})
	var err error
	for i := 1; i <= 100 && err == nil; i++ {
		err = s.Step(float64(i) * 0.01)
	}
	if !fmi.IsFatal(err) || !strings.Contains(err.Error(), "fmi2DoStep returned fmi2Fatal; the FMU logged: fmi2Fatal logStatusFatal: deliberate fatal error at t = 0.1") {
		t.Fatalf("%v", err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// TestTerminate: an FMU that ends the simulation ends the stepping where
// it ended (a time event at 0.5 s, inside the step from 0.5 to 0.51 in
// Co-Simulation, whose internal step lands on it), its outputs read
// there.
func TestTerminate(t *testing.T) {
	for _, v := range versions {
		for _, k := range kinds {
			s, _, _ := open(t, fmutest.Spec{Model: fmutest.Bad, Version: v}, k, fmi.Config{Params: map[string]float64{"mode": fmutest.Ends}, Initial: []float64{1}})
			var err error
			for i := 1; i <= 100 && err == nil; i++ {
				err = s.Step(float64(i) * 0.01)
			}
			if !errors.Is(err, fmi.ErrTerminated) || math.Abs(s.Time()-0.5) > 1e-9 {
				t.Errorf("FMI %d %v: %v at %g s; want the FMU to end at 0.5 s", v, k, err, s.Time())
			}
			out := make([]float64, 1)
			s.Outputs(out)
			if want := 1 - math.Exp(-0.5/0.1); math.Abs(out[0]-want) > 1e-3 {
				t.Errorf("FMI %d %v: y = %g at the end; want %g", v, k, out[0], want)
			}
		}
	}
}

// TestNaNOutput: an output that is not a number stops the run at the
// step that produced it.
func TestNaNOutput(t *testing.T) {
	for _, k := range kinds {
		s, _, _ := open(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI3}, k, fmi.Config{Params: map[string]float64{"mode": fmutest.NotANumber}})
		var err error
		for i := 1; i <= 100 && err == nil; i++ {
			err = s.Step(float64(i) * 0.01)
		}
		var oe *fmi.OutputError
		if !errors.As(err, &oe) || oe.Signal != "y" || oe.Time != 0.5 {
			t.Errorf("%v: %v; want y NaN at 0.5 s", k, err)
		}
	}
}

// TestLogFlood: an FMU that logs 4 MiB at every step costs a bounded
// tail: 16 messages of at most 512 bytes, and a count of all of them.
func TestLogFlood(t *testing.T) {
	for _, v := range versions {
		s, inst, _ := open(t, fmutest.Spec{Model: fmutest.Bad, Version: v}, fmi.CS, fmi.Config{Params: map[string]float64{"mode": fmutest.Flood, "at": 0}})
		for i := 1; i <= 5; i++ {
			if err := s.Step(float64(i) * 0.01); err != nil {
				t.Fatal(err)
			}
		}
		lines, bytes := inst.Log().Counts()
		if lines != 5*4096 || bytes < 5*4096*1000 {
			t.Errorf("FMI %d: counted %d messages, %d bytes; want 20480, over 20 MB", v, lines, bytes)
		}
		tail := inst.Log().Tail(0)
		kept := 0
		for _, l := range tail {
			kept += len(l)
		}
		if len(tail) != fmu.TailLines || kept > fmu.TailLines*(fmu.MaxLine+len("…")) {
			t.Errorf("FMI %d: kept %d messages, %d bytes", v, len(tail), kept)
		}
		want := fmt.Sprintf("fmi%dWarning logAll: message 4096 of 4096 at t = 0.04: xxx", v)
		if last := tail[len(tail)-1]; !strings.HasPrefix(last, want) || !strings.HasSuffix(last, "x…") {
			t.Errorf("FMI %d: the last message kept is %.80q…; want it to start %q and be cut", v, last, want)
		}
	}
}

// TestWrongToken: a description whose GUID or instantiation token is not
// the library's is refused by the FMU, and the error says so with its
// message.
func TestWrongToken(t *testing.T) {
	for _, tc := range []struct {
		v    fmi.Version
		want string
	}{
		{fmi.FMI2, "fmi2Instantiate returned NULL: the FMU refused to instantiate (a wrong GUID/instantiationToken, a missing resource, ...); the FMU logged: fmi2Error logStatusError: wrong GUID {not-it}: this FMU is {hilrig-test-dcmotor} (21 characters)"},
		{fmi.FMI3, "fmi3InstantiateCoSimulation returned NULL: the FMU refused to instantiate (a wrong GUID/instantiationToken, a missing resource, ...); the FMU logged: fmi3Error logStatusError: wrong instantiationToken {not-it}: this FMU is {hilrig-test-dcmotor}"},
	} {
		u, err := fmu.Open(fmutest.Build(t, fmutest.Spec{Model: fmutest.DCMotor, Version: tc.v, Token: "{not-it}"}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = u.Instantiate(fmi.CS, fmu.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v\nwant %q", err, tc.want)
		}
		u.Close()
	}
}

// TestMissingFunction: a library that does not export a function an
// interface needs is refused for that interface, naming the function.
func TestMissingFunction(t *testing.T) {
	u, err := fmu.Open(fmutest.Build(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2, Omit: []string{"fmi2DoStep"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	_, err = u.Instantiate(fmi.CS, fmu.Options{})
	if err == nil || !strings.Contains(err.Error(), "binaries/linux64/dcmotor.so: the library does not export fmi2DoStep, which Co-Simulation needs") {
		t.Errorf("Co-Simulation: %v", err)
	}
	inst, err := u.Instantiate(fmi.ME, fmu.Options{})
	if err != nil {
		t.Fatalf("Model Exchange needs no fmi2DoStep: %v", err)
	}
	inst.Free()
}

// TestNoBinaryForThisMachine: an FMU with binaries for other platforms
// only is refused, naming what it has.
func TestNoBinaryForThisMachine(t *testing.T) {
	u, err := fmu.Open(fmutest.Build(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI3, Platform: "x86_64-windows"}))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	_, err = u.Instantiate(fmi.CS, fmu.Options{})
	if err == nil || !strings.Contains(err.Error(), "the FMU has no dcmotor.so for this machine") || !strings.Contains(err.Error(), "it has binaries for x86_64-windows only") {
		t.Errorf("%v", err)
	}
}

// TestUnpackedPrivately: the FMU is unpacked into a directory only its
// user can enter, its files readable by that user alone, and Close
// removes it.
func TestUnpackedPrivately(t *testing.T) {
	u, err := fmu.Open(fmutest.Build(t, fmutest.Spec{Model: fmutest.Ball, Version: fmi.FMI2}))
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(u.Dir())
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("%v, %v", info.Mode(), err)
	}
	lib, err := os.Stat(u.Dir() + "/binaries/linux64/ball.so")
	if err != nil || lib.Mode().Perm() != 0o600 {
		t.Errorf("the library: %v, %v", lib.Mode(), err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(u.Dir()); !os.IsNotExist(err) {
		t.Errorf("after Close: %v", err)
	}
}

// childEnv runs a bad FMU in a child process (the test binary again), for
// what cannot be survived in-process.
const childEnv = "HILRIG_FMU_CHILD"

// TestChild is the child's side of TestCrashEndsTheProcess and
// TestHangNeverReturns: it steps the bad FMU in the mode it is given and
// says when it starts the step that misbehaves.
func TestChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("run by TestCrashEndsTheProcess and TestHangNeverReturns")
	}
	m, _ := strconv.Atoi(mode)
	u, err := fmu.Open(os.Getenv("HILRIG_FMU_PATH"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := u.Instantiate(fmi.CS, fmu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := fmi.NewStepper(u.Description, inst, fmi.Config{Kind: fmi.CS, Experiment: u.Description.Experiment, Params: map[string]float64{"mode": float64(m), "at": 0.05}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 10; i++ {
		if i == 6 {
			fmt.Println("stepping from 0.05")
		}
		if err := s.Step(float64(i) * 0.01); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("survived")
}

func child(t *testing.T, mode int) *exec.Cmd {
	if !fmu.Supported {
		t.Skip("this build cannot load FMUs")
	}
	path := fmutest.Build(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2})
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
	// The child dies with its FMU unpacked: in the test's directory, which
	// the test removes.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, mode), "HILRIG_FMU_PATH="+path, "TMPDIR="+t.TempDir())
	return cmd
}

// TestCrashEndsTheProcess: a SIGSEGV in an FMU loaded in-process ends the
// process, as Go's runtime does with a fault in foreign code: what an
// isolated (child process) FMU is for.
func TestCrashEndsTheProcess(t *testing.T) {
	out, err := child(t, fmutest.Crash).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("%v; want the runtime's exit status 2\n%s", err, out)
	}
	for _, want := range []string{"stepping from 0.05", "SIGSEGV: segmentation violation", "signal arrived during cgo execution"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("no %q in the child's output:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "survived") {
		t.Error("the child survived")
	}
}

// TestHangNeverReturns: a doStep that never returns holds its caller for
// good: the child is still in it a second after entering it, and has to
// be killed.
func TestHangNeverReturns(t *testing.T) {
	cmd := child(t, fmutest.Hang)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	entered := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "stepping from 0.05" {
				entered <- true
			}
		}
		close(entered)
	}()
	select {
	case ok := <-entered:
		if !ok {
			t.Fatal("the child ended before the hanging step")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the child did not reach the hanging step in 60 s")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the child ended (%v) instead of hanging", err)
	case <-time.After(time.Second):
	}
	cmd.Process.Kill()
	<-done
}

// BenchmarkStep is the cost of a communication step through purego (and
// its percentiles): the
// DC motor at 2 ms, its input set before each step and its output read
// after (Co-Simulation: 20 RK4 steps inside the FMU; Model Exchange: the
// integrator's steps, each 7 derivative evaluations through the FMU).
func BenchmarkStep(b *testing.B) {
	for _, v := range versions {
		for _, k := range kinds {
			b.Run(fmt.Sprintf("FMI%d/%v", v, k), func(b *testing.B) {
				s, _, _ := open(b, fmutest.Spec{Model: fmutest.DCMotor, Version: v}, k, fmi.Config{Experiment: fmi.Experiment{}})
				in, out := []float64{0}, make([]float64, 1)
				took := fmutest.NewPercentiles()
				b.ReportAllocs()
				for i := 1; b.Loop(); i++ {
					start := time.Now()
					in[0] = float64(i%100) / 10
					s.Set(in)
					if err := s.Step(float64(i) * 2e-3); err != nil {
						b.Fatal(err)
					}
					s.Outputs(out)
					took.Add(time.Since(start))
				}
				took.Report(b)
			})
		}
	}
}

// TestOpenRefusesWhatIsNotAFile: a named pipe given as an .fmu is refused
// at once, naming what it is; opened as a file, it blocked until someone
// wrote to it.
func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "model.fmu")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := fmu.Open(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is not a regular file (a named pipe)") {
			t.Errorf("Open(a named pipe): %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open(a named pipe) blocks")
	}
}
