package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPlantParametersAreChecked is the hardening issue's item 7 as a user
// meets it: a parameter that is not finite, not physical or subnormal is
// refused wherever it is given, exit 2, with the parameter, its value and
// its domain, before anything is computed or printed. couple ranked such
// models at "-Inf dB at 0 rad/s" (and m2 = -900, an unstable car, as if it
// were one), exit 0.
func TestPlantParametersAreChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"couple", "quarter-car", "--param", "m3=0"}, "model quarter-car: parameter m3 = 0 kg is out of range: must be > 0 (mass)"},
		{[]string{"couple", "quarter-car", "--param", "k1=NaN"}, "model quarter-car: parameter k1 = NaN is not a finite number: must be ≥ 0 (stiffness)"},
		{[]string{"couple", "quarter-car", "--param", "b2=Inf"}, "model quarter-car: parameter b2 = +Inf is not a finite number: must be ≥ 0 (damping)"},
		{[]string{"couple", "quarter-car", "--param", "m1=1e-320"}, "model quarter-car: parameter m1 = 1e-320 kg is subnormal"},
		{[]string{"couple", "quarter-car", "--param", "m2=-900"}, "model quarter-car: parameter m2 = -900 kg is out of range: must be > 0 (mass)"},
		{[]string{"couple", "quarter-car", "--param", "m1=2.3e-308"}, "model quarter-car: its parameters overflow: subsystems.wheel.A[1][0] is -Inf"},
		{[]string{"models", "quarter-car", "--param", "m3=-Inf"}, "model quarter-car: parameter m3 = -Inf is not a finite number: must be > 0 (mass)"},
		{[]string{"models", "bicycle", "--param", "dmax=1.5707963267948966"}, "parameter dmax = 1.5707963267948966 rad is out of range: must be 0 ≤ x < 1.5707963267948966 (angle)"},
		{[]string{"couple", "dc-motor", "--param", "N=0"}, "model dc-motor: parameter N = 0 is out of range: must be > 0 (gear ratio)"},
		{[]string{"couple", "quarter-car", "--delay", "0s"}, "--delay must be positive"},
	} {
		r := runHilrig(t, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.want)
		}
	}
}

// TestCoupleSaysWhyNoDistortion: without the seat's spring and damper
// nothing crosses CP2 back, and its distortion and sensitivity are zero at
// every frequency: couple says "none" and why, where it printed "-Inf dB
// at 0 rad/s" and "+Inf dB below". No NaN nor infinity is printed.
func TestCoupleSaysWhyNoDistortion(t *testing.T) {
	r := runHilrig(t, "couple", "quarter-car", "--param", "k3=0", "--param", "b3=0")
	for _, want := range []string{"1      CP2   none", "CP2: no distortion: the round trip changes deflection's response at no frequency",
		"CP2: no sensitivity", "CP2 distorts least: not at all."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in:\n%s", want, r.stdout)
		}
	}
	if r.code != 0 || strings.Contains(r.stdout, "Inf") || strings.Contains(r.stdout, "NaN") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// quarterCarBench is a bench of the quarter car at CP2, its car endpoint's
// model mapping given.
func quarterCarBench(t *testing.T, model string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.yaml")
	bench := "name: b\nendpoints:\n  car:  {model: " + model + "}\n  seat: {pty: {link: /tmp/hilrig-plant-test-seat, framing: line}}\n" +
		"bind:\n  to-plant:      {from: car, to: seat}\n  to-controller: {from: seat, to: car}\n"
	if err := os.WriteFile(path, []byte(bench), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBenchParametersAtTheirKey: a bench's params are checked as --param
// is, each error at its key's line and column; a stimulus that is not
// finite is refused at its input. params: {m1: NaN} ran, its signals all
// NaN, the summary saying peak 0, max_error 0, exit 0.
func TestBenchParametersAtTheirKey(t *testing.T) {
	// A problem is at the value after its key, on line 3 of the bench.
	type at struct{ key, path, msg string }
	for _, tc := range []struct {
		model string
		want  []at
	}{
		{"{name: quarter-car, cut: CP2, params: {m1: NaN}}", []at{
			{"m1: ", "params.m1", "model quarter-car: parameter m1 = NaN is not a finite number: must be > 0 (mass)"}}},
		{"{name: quarter-car, cut: CP2, params: {k2: 1, m2: -1, b1: 1e-320}}", []at{
			{"m2: ", "params.m2", "model quarter-car: parameter m2 = -1 kg is out of range: must be > 0 (mass)"},
			{"b1: ", "params.b1", "model quarter-car: parameter b1 = 1e-320 N·s/m is subnormal (not zero, but smaller in magnitude than 2.2250738585072014e-308, the smallest normal float64): not a physical value; must be ≥ 0 (damping)"}}},
		{"{name: motor-speed, cut: controller, params: {umin: 20}}", []at{
			{"umin: ", "params.umin", "model motor-speed: umin 20 V exceeds umax 12 V"}}},
		{"{name: quarter-car, cut: CP2, inputs: {v0: {constant: NaN}}}", []at{
			{"v0: ", "inputs.v0", "reaches NaN; a stimulus must stay a finite number"}}},
	} {
		bench := quarterCarBench(t, tc.model)
		line := strings.Split(string(mustRead(t, bench)), "\n")[2]
		var want []string
		for _, w := range tc.want {
			col := strings.Index(line, w.key) + len(w.key) + 1
			want = append(want, fmt.Sprintf("hilrig: %s:3:%d: endpoints.car.model.%s: %s", bench, col, w.path, w.msg))
		}
		for _, args := range [][]string{{"check", "--bench", bench, "internet-hil"}, {"sim", "internet-hil", "--bench", bench, "--duration", "1s"}} {
			r := runHilrig(t, args...)
			if got := strings.Split(strings.TrimSpace(r.stderr), "\n"); r.code != 2 || r.stdout != "" || !slices.Equal(got, want) {
				t.Errorf("%s %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and:\n%s", args[0], tc.model, r.code, r.stdout, r.stderr, strings.Join(want, "\n"))
			}
		}
	}
}

// TestModelFileNumbersAreFinite: a model file's matrix entry, initial
// state or stimulus that is not a finite number is refused at its place
// (hilrig models described such a model, exit 0, and a bench ran it).
func TestModelFileNumbersAreFinite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.yaml")
	line3 := "         A: [[0, 1], [NaN, -2]], B: [[0], [1]], C: [[1, 0]], initial: [0, -Inf]}"
	model := "subsystems:\n  mass: {states: [x, v], inputs: [F], outputs: [x],\n" + line3 + "\ninputs:\n  F: {step: {to: Inf}}\n"
	if err := os.WriteFile(path, []byte(model), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runHilrig(t, "models", path)
	want := fmt.Sprintf("hilrig: %s:3:%d: subsystems.mass.A[1][0]: is NaN; a matrix entry must be a finite number\n"+
		"hilrig: %s:3:%d: subsystems.mass.initial[1]: is -Inf; an initial state must be a finite number\n"+
		"hilrig: %s:5:6: inputs.F: reaches +Inf; a stimulus must stay a finite number\n",
		path, strings.Index(line3, "NaN")+1, path, strings.Index(line3, "-Inf")+1, path)
	if r.code != 2 || r.stderr != want || r.stdout != "" {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", r.code, r.stderr, want)
	}
}

// divergingPlatoon runs the platoon with a spacing gain of the wrong sign,
// legal (a gain takes either sign) but unstable once the lead's broadcast
// is held between its messages: the followers' errors grow until their
// numbers overflow.
func divergingPlatoon(t *testing.T, dir string) (r result, summary, trace, signals string) {
	t.Helper()
	bench := filepath.Join(dir, "platoon.yaml")
	if err := os.WriteFile(bench, []byte(`name: platoon-unstable
endpoints:
  followers: {model: {name: platoon, cut: lead, exchange: 100ms, step: 10ms, params: {cp: -1e4}}}
  lead:      {udp: {listen: "127.0.0.1:9400"}}
bind:
  to-plant: {from: lead, to: followers}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	summary, trace, signals = filepath.Join(dir, "summary.json"), filepath.Join(dir, "trace.csv"), filepath.Join(dir, "signals.csv")
	r = runHilrig(t, "sim", "internet-hil", "--bench", bench, "--duration", "10s", "--summary", summary, "--trace", trace, "--signals", signals)
	return r, summary, trace, signals
}

// TestDivergingModelFailsTheRun: in virtual time, a model whose numbers
// overflow is an event at its instant, and the run stops there as a
// failure (exit 1) that says why, its trace complete up to the instant:
// every frame sent has its row, delivered or in flight, and nothing is
// sent after. The run is reproducible bit for bit. It ran its 10 s with
// NaN signals, exit 0, stopped: duration.
func TestDivergingModelFailsTheRun(t *testing.T) {
	dir := t.TempDir()
	r, summaryPath, tracePath, signalsPath := divergingPlatoon(t, dir)
	const at = 1700 * time.Millisecond // the exchange at which the followers' state is NaN
	if r.code != 1 || !strings.Contains(r.stderr, "model diverged at 1.700 s: followers: in the rig's part, state followers.x1 = NaN") ||
		!strings.Contains(r.stderr, "run stopped: model followers diverged at 1.7s") {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Stopped string
		Flows   []struct {
			Name     string
			Sent     uint64
			InFlight uint64 `json:"in_flight"`
		}
		Models []struct {
			Output *struct {
				Peak      float64
				MaxError  float64  `json:"max_error"`
				DivergedS *float64 `json:"diverged_at_s"`
			}
		}
		Events []struct {
			AtS    float64 `json:"at_s"`
			Kind   string
			Detail string
		}
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Stopped != "failed: model followers diverged at 1.7s: in the rig's part, state followers.x1 = NaN" {
		t.Errorf("stopped %q", s.Stopped)
	}
	if len(s.Events) != 1 || s.Events[0].Kind != "model_diverged" || s.Events[0].AtS != at.Seconds() || !strings.Contains(s.Events[0].Detail, "state followers.x1 = NaN") {
		t.Errorf("events %+v", s.Events)
	}
	if len(s.Models) != 1 || s.Models[0].Output == nil || s.Models[0].Output.DivergedS == nil || *s.Models[0].Output.DivergedS != at.Seconds() || !(s.Models[0].Output.MaxError > 0) {
		t.Errorf("models %+v", s.Models)
	}
	// The trace: a row for every frame each flow sent, none sent after
	// the instant the run stopped.
	rows := readTrace(t, tracePath)
	perFlow := map[string]uint64{}
	var inFlight uint64
	for _, row := range rows {
		perFlow[row.flow]++
		if row.sent > at {
			t.Errorf("a frame sent at %v, after the run stopped at %v", row.sent, at)
		}
		if row.status == "in_flight" {
			inFlight++
		}
	}
	var sent, flying uint64
	for _, f := range s.Flows {
		sent += f.Sent
		flying += f.InFlight
		if perFlow[f.Name] != f.Sent {
			t.Errorf("flow %s: %d rows for %d frames sent", f.Name, perFlow[f.Name], f.Sent)
		}
	}
	if sent == 0 || inFlight != flying || uint64(len(rows)) != sent {
		t.Errorf("%d rows, %d sent; %d in flight in the trace, %d in the summary", len(rows), sent, inFlight, flying)
	}
	// The signals end at the instant, where the followers' are NaN.
	sig := readCSV(t, signalsPath)
	if last := sig[len(sig)-1]; last[0] != "1.700000000" || last[1] != "NaN" {
		t.Errorf("the signals' last row %v", last[:2])
	}
	// Bit for bit again (the summaries differ in the bench's path).
	r2, _, trace2, signals2 := divergingPlatoon(t, t.TempDir())
	for _, pair := range [][2]string{{tracePath, trace2}, {signalsPath, signals2}} {
		a, _ := os.ReadFile(pair[0])
		b, _ := os.ReadFile(pair[1])
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from a second run's", filepath.Base(pair[0]))
		}
	}
	if r2.code != r.code {
		t.Errorf("a second run exit %d", r2.code)
	}
}
