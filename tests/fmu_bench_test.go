package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/fmu/fmutest"
	"github.com/hilrig/hilrig/rig/record"
)

// carBench is a bench whose car is the quarter car's car side as an FMU
// (fmutest.CarSide), the seat on a pseudo-terminal and, in virtual time,
// the built-in quarter car's seat standing in for it; extra is more of the
// FMU endpoint's keys, indented as they are.
func carBench(t *testing.T, dir, fmuPath, extra string) string {
	t.Helper()
	text := fmt.Sprintf(`name: car-fmu
endpoints:
  car:
    fmu:
      file: %s
      sends: [v2]
      takes: [Fseat]
      inputs: {v0: {step: {at: 0.1s, to: 1}}}
      hardware: {model: quarter-car, cut: CP2}
%s
  seat: {pty: {link: %s, framing: line}}
bind:
  to-plant:      {from: car, to: seat}
  to-controller: {from: seat, to: car}
`, fmuPath, extra, filepath.Join(dir, "seat"))
	path := filepath.Join(dir, "car-fmu.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readSummary reads a summary file.
func readSummary(t *testing.T, path string) record.Summary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s record.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// TestFMUBenchMatchesTheBuiltinModel: the car side of the quarter car as
// an FMU (FMI 2 and 3, Co-Simulation and Model Exchange), cut from the
// seat across internet-hil in virtual time, gives the signals the built-in
// quarter car cut at CP2 gives on the same bench, solver and step.
//
// Co-Simulation steps one RK4 step of the same 10 µs on inputs held over
// it, as the rig's rk4 does on the cut's held inputs: the two differ by
// the order of rounding alone. Each of the N = 200 000 steps adds a few
// ulp (ε = 2⁻⁵³) of the peak, and the loop is stable, so the difference
// stays under N·8ε ≈ 1.8e-10 of the peak: 1e-9 is asked. Model Exchange is
// integrated by the rig's own variable-step solver to a relative
// tolerance of fmi.DefaultTolerance (1e-6): 1e-5 of the peak is asked.
func TestFMUBenchMatchesTheBuiltinModel(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join("..", "profiles", "internet-hil.yaml")
	builtin := filepath.Join(dir, "builtin.yaml")
	os.WriteFile(builtin, []byte(fmt.Sprintf(`name: car-builtin
endpoints:
  car: {model: {name: quarter-car, cut: CP2, exchange: 2ms, step: 10us, solver: rk4}}
  seat: {pty: {link: %s, framing: line}}
bind:
  to-plant:      {from: car, to: seat}
  to-controller: {from: seat, to: car}
`, filepath.Join(dir, "seat"))), 0o644)
	want := filepath.Join(dir, "builtin.csv")
	if out := runHilrig(t, "sim", profile, "--bench", builtin, "--duration", "2s", "--signals", want); out.code != 0 {
		t.Fatalf("sim of the built-in: exit %d: %s", out.code, out.stderr)
	}
	reference := parseTable(t, mustRead(t, want))
	for _, c := range []struct {
		version   fmi.Version
		iface     string
		tolerance float64
	}{
		{fmi.FMI2, "cs", 1e-9},
		{fmi.FMI3, "cs", 1e-9},
		{fmi.FMI2, "me", 1e-5},
	} {
		t.Run(fmt.Sprintf("FMI%d-%s", c.version, c.iface), func(t *testing.T) {
			sub := t.TempDir()
			fmuPath := fmutest.Build(t, fmutest.Spec{Model: fmutest.CarSide, Version: c.version})
			bench := carBench(t, sub, fmuPath, fmt.Sprintf("      interface: %s\n      exchange: 2ms\n      step: 10us\n      solver: rk4", c.iface))
			got := filepath.Join(sub, "fmu.csv")
			if out := runHilrig(t, "sim", profile, "--bench", bench, "--duration", "2s", "--signals", got); out.code != 0 {
				t.Fatalf("sim: exit %d: %s", out.code, out.stderr)
			}
			table := parseTable(t, mustRead(t, got))
			if len(table.rows) != len(reference.rows) || len(table.rows) < 999 {
				t.Fatalf("%d rows, the built-in's %d", len(table.rows), len(reference.rows))
			}
			for _, name := range []string{"v2", "deflection", "Fs", "Fseat", "hardware.Fseat", "hardware.v3"} {
				a, b := table.column(t, "car."+name, 0), reference.column(t, "car."+name, 0)
				peak, worst := 0.0, 0.0
				for i := range b {
					peak = max(peak, math.Abs(b[i]))
					worst = max(worst, math.Abs(a[i]-b[i]))
				}
				t.Logf("%s: peak %.6g, largest difference %.3g (%.3g of the peak)", name, peak, worst, worst/peak)
				if peak == 0 || worst > c.tolerance*peak {
					t.Errorf("%s differs from the built-in's by %.3g, %.3g of its peak %.6g; want at most %g", name, worst, worst/peak, peak, c.tolerance)
				}
			}
			// The FMU's values go by hilrig's names: body.a is body_a.
			if acc := table.column(t, "car.body_a", 0); slices0(acc) {
				t.Error("car.body_a is zero throughout")
			}
		})
	}
}

// slices0 reports whether every value is 0.
func slices0(v []float64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// loopModel is a model file whose hardware part is a controller closing
// the loop around the bad FMU's lag: u = r − y.
const loopModel = `name: loop
description: a lag and a controller closing the loop around it
subsystems:
  lag:
    states: [y]
    inputs: [u]
    outputs: [y]
    A: [[-10]]
    B: [[10]]
    C: [[1]]
  controller:
    inputs: [y, r]
    outputs: [u]
    D: [[-1, 1]]
inputs:
  r: {step: {at: 0s, to: 1}}
cuts:
  controller: {hardware: [controller]}
output: y
`

// badBench is a bench of the bad FMU (fmutest.Bad) misbehaving as mode
// says at 0.5 s, isolated, its safe value y = -1, the controller of
// loopModel standing in for the hardware; extra is more of its keys. It
// returns the bench's path and the FMU's.
func badBench(t *testing.T, dir string, mode int, extra string) (bench, fmuPath string) {
	t.Helper()
	fmuPath = fmutest.Build(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2})
	if err := os.WriteFile(filepath.Join(dir, "loop.yaml"), []byte(loopModel), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bad.yaml")
	os.WriteFile(path, []byte(fmt.Sprintf(`name: bad-fmu
endpoints:
  lag:
    fmu:
      file: %s
      sends: [y]
      takes: [u]
      params: {mode: %d, at: 0.5}
      hardware: {model: loop.yaml, cut: controller}
      safe: {y: -1}
%s
  controller: {pty: {link: %s, framing: line}}
bind:
  to-plant:      {from: lag, to: controller}
  to-controller: {from: controller, to: lag}
`, fmuPath, mode, extra, filepath.Join(dir, "ctl"))), 0o644)
	return path, fmuPath
}

// TestFMUFailureLeavesTheHardwareSafe: an isolated FMU that crashes
// (SIGSEGV in its step at 0.5 s), hangs past its budget, or ends with
// exit(3) is the model's failure, not the rig's: an event model_failed at
// the instant, saying why in the FMU's words, its safe value handed to the
// hardware at once, and the run stopped (exit 1) with its trace, signals
// and summary complete up to the instant. With on_failure: continue, the
// run goes on to its end sending the safe value across the network, and
// fails all the same.
func TestFMUFailureLeavesTheHardwareSafe(t *testing.T) {
	profile := filepath.Join("..", "profiles", "internet-hil.yaml")
	for _, c := range []struct {
		name     string
		mode     int
		extra    string
		says     string
		goesOn   bool
		fromTime float64 // the failure's instant at least
	}{
		{"crash", fmutest.Crash, "", "crashed with SIGSEGV", false, 0.5},
		{"hang", fmutest.Hang, "      budget: 300ms", "budget", false, 0.5},
		{"exit", fmutest.Exit, "", "exit", false, 0.5},
		{"crash-continue", fmutest.Crash, "      on_failure: continue", "crashed with SIGSEGV", true, 0.5},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bench, _ := badBench(t, dir, c.mode, c.extra)
			summary, signals, trace := filepath.Join(dir, "s.json"), filepath.Join(dir, "signals.csv"), filepath.Join(dir, "trace.csv")
			out := runHilrig(t, "sim", profile, "--bench", bench, "--duration", "1s", "--summary", summary, "--signals", signals, "--trace", trace)
			if out.code != 1 {
				t.Fatalf("exit %d, want 1: %s", out.code, out.stderr)
			}
			s := readSummary(t, summary)
			var failed *record.Event
			for i, e := range s.Events {
				if e.Kind == "model_failed" {
					failed = &s.Events[i]
				}
			}
			if failed == nil || !strings.Contains(failed.Detail, c.says) || !strings.Contains(failed.Detail, "y = -1") || failed.AtS < c.fromTime || failed.AtS > c.fromTime+0.01 {
				t.Fatalf("the failure's event: %+v; events %+v", failed, s.Events)
			}
			t.Logf("%s: %s", out.stderr[:strings.IndexByte(out.stderr, '\n')], failed.Detail)
			if len(s.Failures) != 1 || !strings.Contains(s.Failures[0], "FMU lag failed") {
				t.Errorf("failures %q", s.Failures)
			}
			if f := s.Models[0].FMU; f == nil || !f.Isolated || f.Interface != "Co-Simulation" || !strings.Contains(f.Error, c.says) || f.Steps < 250 {
				t.Errorf("the summary's FMU: %+v", f)
			}
			rows := parseTable(t, mustRead(t, signals))
			times, safe := rows.column(t, "t", 0), rows.column(t, "lag.hardware.y", 0)
			last := times[len(times)-1]
			if c.goesOn {
				if s.Stopped != "duration" || last < 0.99 {
					t.Errorf("stopped %q at %v s; with on_failure: continue it runs to its end", s.Stopped, last)
				}
			} else if !strings.HasPrefix(s.Stopped, "failed: FMU lag failed") || last > failed.AtS+0.01 {
				t.Errorf("stopped %q, its signals to %v s", s.Stopped, last)
			}
			// The hardware (its stand-in) has the safe value from the
			// failure on: at once, past the emulated network, when the
			// run stops; across it when the run goes on, after what was
			// on its way (internet-hil: at most 22 ms).
			safeFrom := failed.AtS
			if c.goesOn {
				safeFrom += 0.025
			}
			for i, at := range times {
				if at > safeFrom && safe[i] != -1 {
					t.Fatalf("at %v s the hardware reads y = %v, not the safe -1", at, safe[i])
				}
			}
			if safe[len(safe)-1] != -1 {
				t.Errorf("the hardware's last y is %v, not the safe -1", safe[len(safe)-1])
			}
			tr := parseTable(t, mustRead(t, trace))
			if len(tr.rows) < 400 {
				t.Errorf("the trace holds %d rows", len(tr.rows))
			}
		})
	}
}

// TestFMUWithoutStandInRunsOnlyAgainstHardware: an FMU endpoint with no
// hardware key has nothing to take the hardware's place in virtual time:
// sim refuses it, saying what to add, and check accepts it (it runs
// against the hardware).
func TestFMUWithoutStandInRunsOnlyAgainstHardware(t *testing.T) {
	dir := t.TempDir()
	fmuPath := fmutest.Build(t, fmutest.Spec{Model: fmutest.CarSide, Version: fmi.FMI2})
	bench := filepath.Join(dir, "b.yaml")
	os.WriteFile(bench, []byte(fmt.Sprintf(`name: car
endpoints:
  car: {fmu: {file: %s, sends: [v2], takes: [Fseat]}}
  seat: {pty: {link: %s}}
bind:
  to-plant: {from: car, to: seat}
  to-controller: {from: seat, to: car}
`, fmuPath, filepath.Join(dir, "seat"))), 0o644)
	profile := filepath.Join("..", "profiles", "internet-hil.yaml")
	if out := runHilrig(t, "check", profile, "--bench", bench); out.code != 0 {
		t.Errorf("check: exit %d: %s", out.code, out.stderr)
	}
	out := runHilrig(t, "sim", profile, "--bench", bench, "--duration", "1s")
	if out.code != 2 || !strings.Contains(out.stderr, "hardware: {model: ..., cut: ...}") {
		t.Errorf("sim: exit %d: %s", out.code, out.stderr)
	}
}

// TestFMUBenchErrors: each mistake in an FMU endpoint is refused by check
// at its line and column, saying what was expected.
func TestFMUBenchErrors(t *testing.T) {
	dir := t.TempDir()
	fmuPath := fmutest.Build(t, fmutest.Spec{Model: fmutest.CarSide, Version: fmi.FMI2})
	profile := filepath.Join("..", "profiles", "internet-hil.yaml")
	for _, c := range []struct {
		extra, replace, with string
		want                 string
	}{
		{"", "sends: [v2]", "sends: [v3]", "6:15: endpoints.car.fmu.sends[0]: the FMU has no value v3; did you mean v0?"},
		{"", "sends: [v2]", "sends: [Fseat]", "endpoints.car.fmu.sends[0]: Fseat is a variable of causality input, not output"},
		{"", "takes: [Fseat]", "takes: [v2]", "endpoints.car.fmu.takes[0]: v2 is a variable of causality output, not input"},
		{"", "sends: [v2]", "sends: [v2, deflection]", "endpoints.car.fmu.sends: the FMU sends v2, deflection; the hardware part reads v2 of them"},
		{"      isolate: false\n      budget: 1s", "", "", "endpoints.car.fmu.budget: a budget is kept only for an isolated FMU"},
		{"      safe: {Fs: 3}", "", "", "endpoints.car.fmu.safe.Fs: is not a value the FMU sends (sends: v2)"},
		{"      params: {m9: 3}", "", "", "endpoints.car.fmu.params.m9: the FMU has no value m9; did you mean m1?"},
		{"      interface: sc", "", "", "endpoints.car.fmu.interface:"},
		{"", "v0: {step", "Fseat: {step", "endpoints.car.fmu.inputs.Fseat: Fseat is taken from the hardware's frames (takes)"},
		{"      hardware: {model: quarter-car, cut: CP1}", "      hardware: {model: quarter-car, cut: CP2}\n", "", "endpoints.car.fmu"},
	} {
		text := strings.Replace(string(mustRead(t, carBench(t, dir, fmuPath, c.extra))), c.replace, c.with, 1)
		bench := filepath.Join(dir, "bad.yaml")
		os.WriteFile(bench, []byte(text), 0o644)
		out := runHilrig(t, "check", profile, "--bench", bench)
		if out.code != 2 || !strings.Contains(out.stderr, c.want) {
			t.Errorf("%s%s → %s: exit %d:\n%s\nwant %q", c.extra, c.with, c.replace, out.code, out.stderr, c.want)
		}
	}
	// The FMU and the stand-in's model file are files the bench reads: no
	// output may overwrite them.
	sub := t.TempDir()
	bench, badFMU := badBench(t, sub, fmutest.Behave, "")
	for _, read := range []string{filepath.Join(sub, "loop.yaml"), badFMU} {
		before := mustRead(t, read)
		out := runHilrig(t, "sim", profile, "--bench", bench, "--duration", "10ms", "--trace", read)
		if out.code != 2 || !strings.Contains(out.stderr, "a file the bench reads") || !bytes.Equal(mustRead(t, read), before) {
			t.Errorf("--trace %s: exit %d: %s", read, out.code, out.stderr)
		}
	}
	missing := strings.Replace(string(mustRead(t, carBench(t, dir, fmuPath, ""))), fmuPath, filepath.Join(dir, "none.fmu"), 1)
	bench = filepath.Join(dir, "missing.yaml")
	os.WriteFile(bench, []byte(missing), 0o644)
	if out := runHilrig(t, "check", profile, "--bench", bench); out.code != 2 || !strings.Contains(out.stderr, "endpoints.car.fmu.file:") || !strings.Contains(out.stderr, "none.fmu") {
		t.Errorf("a missing FMU: exit %d: %s", out.code, out.stderr)
	}
}

// TestFMURunsAgainstHardwareInRealTime: hilrig run exchanges with the car
// side as an FMU, isolated, at 500 Hz (a 2 ms exchange of 20 steps of
// 100 µs) with the seat on a pseudo-terminal, played by the reference
// plant node with the seat's equations on its own clock: the exchanges on
// time, the seat's force back in nearly every one, and the
// body's velocity that of the virtual-time run within what the network's
// delays make of it.
// realTimeCarBench writes, in dir, the bench of the isolated car FMU
// against a seat over the wire protocol (an exchange of 2 ms in 20 steps,
// each a round trip to the FMU's process), and returns it, the profile it
// runs with, and the bench loaded (for the seat's plant node).
func realTimeCarBench(t *testing.T, dir string) (bench, profile string, b *benchfile.LoadedBench) {
	t.Helper()
	fmuPath := fmutest.Build(t, fmutest.Spec{Model: fmutest.CarSide, Version: fmi.FMI2})
	bench = carBench(t, dir, fmuPath, "      exchange: 2ms\n      step: 100us\n      solver: rk4\n      codec: {wire: {sends: command}}")
	text := strings.Replace(string(mustRead(t, bench)), "framing: line", "codec: wire", 1)
	if err := os.WriteFile(bench, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	profile = filepath.Join("..", "profiles", "internet-hil.yaml")
	p, err := profiles.Load(profile)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = benchfile.LoadBench(bench, p); err != nil {
		t.Fatal(err)
	}
	return bench, profile, b
}

func TestFMURunsAgainstHardwareInRealTime(t *testing.T) {
	dir := t.TempDir()
	bench, profile, b := realTimeCarBench(t, dir)
	summary, signals := filepath.Join(dir, "s.json"), filepath.Join(dir, "signals.csv")
	cmd := exec.Command(hilrig, "run", "--bench", bench, profile, "--duration", "3s", "--summary", summary, "--signals", signals)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stop, err := rig.StartPlantNode(ctx, filepath.Join(dir, "seat"), b.Models["car"], 0)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the seat: %v; the rig said %s", err, stderr.String())
	}
	err = cmd.Wait()
	stop()
	if err != nil {
		t.Fatalf("run: %v: %s", err, stderr.String())
	}
	s := readSummary(t, summary)
	m := s.Models[0]
	t.Logf("%d exchanges, %d overruns, %d frames of the seat taken; release lateness %v", m.Exchanges, m.Overruns, m.FramesIn, s.Timing.ReleaseLateness)
	// On a quiet machine no exchange overruns (BENCHMARKS.md). On a
	// loaded one the FMU's process, a round trip at each of the 20 steps
	// of an exchange, is woken late now and then (10 of 1500 beside three
	// other engineers' builds), and when other real-time processes (other
	// packages' tests) use up the kernel's real-time share of a second
	// (sched_rt_runtime_us, 95 %), every SCHED_FIFO thread waits out the
	// remaining 50 ms: 25 exchanges overrun at once (32 seen). 5 %, three
	// such stalls, is allowed; the figure is logged.
	if m.Exchanges < 1490 || m.Overruns > m.Exchanges/20 {
		t.Errorf("%d exchanges in 3 s at 2 ms, %d overruns", m.Exchanges, m.Overruns)
	}
	// The seat's node runs in this process at normal priority: on a
	// loaded machine it skips periods (1 251 answers in 1 499 exchanges at
	// load 9). Half is what a closed loop needs here.
	if m.FramesIn < m.Exchanges/2 {
		t.Errorf("the seat's force came back %d times in %d exchanges", m.FramesIn, m.Exchanges)
	}
	table := parseTable(t, mustRead(t, signals))
	v2, fseat := table.column(t, "car.v2", 0), table.column(t, "car.Fseat", 0)
	peak, force := 0.0, 0.0
	for i := range v2 {
		peak, force = max(peak, math.Abs(v2[i])), max(force, math.Abs(fseat[i]))
	}
	// The road steps by 1 m/s at 0.1 s: the body follows it to about 1.15
	// m/s (the virtual-time run's peak), the seat pushing back with up to
	// some 190 N.
	if peak < 1 || peak > 1.3 || force < 100 {
		t.Errorf("the body's velocity peaked at %v m/s, the seat's force at %v N", peak, force)
	}
}
