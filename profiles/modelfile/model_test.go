package modelfile

import (
	"math"
	"math/cmplx"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
)

// TestModelFileMatchesBuiltin: the quarter car written as a model file is
// the built-in quarter car: the same distortion at every frequency and the
// same step response at every step, to rounding.
func TestModelFileMatchesBuiltin(t *testing.T) {
	file, err := LoadModel("../models/quarter-car.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := LoadModel("quarter-car", nil)
	if err != nil {
		t.Fatal(err)
	}
	omegas := plant.LogSpace(0.1, 1000, 20)
	for _, cut := range []string{"CP1", "CP2"} {
		a, err := plant.Analyse(file.Plant, cut, "v0", "deflection", 20*time.Millisecond, omegas)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := plant.Analyse(builtin.Plant, cut, "v0", "deflection", 20*time.Millisecond, omegas)
		for i := range omegas {
			if d := cmplx.Abs(a.Distortion[i]-b.Distortion[i]) / cmplx.Abs(b.Distortion[i]); d > 1e-9 {
				t.Errorf("%s at %g rad/s: relative difference %g", cut, omegas[i], d)
			}
		}
	}
	step := func(m *LoadedModel) []float64 {
		it, err := plant.NewIntegrator(m.Whole(), plant.Trapezoidal, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		k := m.SignalIndex("deflection")
		var out []float64
		for it.Time() < time.Second {
			it.Advance()
			it.Sample()
			out = append(out, it.Signal(k))
		}
		return out
	}
	a, b := step(file), step(builtin)
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-12 {
			t.Fatalf("step %d: deflection %g, built-in %g", i, a[i], b[i])
		}
	}
}

// TestModelFileErrors: mistakes in a model file are reported at their line
// and column, all at once.
func TestModelFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "subsystems:\n  m:\n    states: [x]\n    A: [[0]]\n    Q: 1\n", []string{"m.yaml:5:5: subsystems.m.Q: unknown key"}},
		{"ragged matrix", "subsystems:\n  m:\n    states: [x, v]\n    A: [[0, 1], [1]]\n", []string{"m.yaml:4:17: subsystems.m.A[1]: has 1 numbers; the first row has 2"}},
		{"wrong size", "subsystems:\n  m:\n    states: [x]\n    A: [[0, 1]]\n", []string{"m.yaml:4:8: subsystems.m.A: is 1×2; want 1×1 (1 states by 1 states)"}},
		{"not a number", "subsystems:\n  m:\n    states: [x]\n    A: [[zero]]\n", []string{`m.yaml:4:10: subsystems.m.A[0][0]: "zero" is not a number`}},
		{"unknown signal", "subsystems:\n  m:\n    states: [x]\n    inputs: [u]\n    A: [[-1]]\n    B: [[1]]\n", []string{"m.yaml:4:14: subsystems.m.inputs[0]: no subsystem produces u and it is not an input of the model"}},
		{"bad stimulus", "subsystems:\n  m:\n    states: [x]\n    inputs: [u]\n    B: [[1]]\ninputs:\n  u: {ramp: 1}\n", []string{"m.yaml:7:7: inputs.u.ramp: unknown key (want constant, step, sine, square, steps)"}},
		{"no period", "subsystems:\n  m:\n    states: [x]\n    inputs: [u]\n    B: [[1]]\ninputs:\n  u: {sine: {amplitude: 1, period: 0s}}\n", []string{"m.yaml:7:36: inputs.u.sine.period: must be positive"}},
		{"bad cut", "subsystems:\n  m:\n    states: [x]\n    A: [[-1]]\ncuts:\n  C: {hardware: [n]}\n", []string{"m.yaml:6:6: cuts.C: no subsystem named n (the subsystems: m)"}},
		{"two at once", "subsystems:\n  m:\n    states: [x]\n    A: [[-1]]\n    initial: [1, 2]\noutput: y\n", []string{
			"m.yaml:5:14: subsystems.m.initial: has 2 values for 1 states",
			"m.yaml:6:9: output: no signal is named y",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseModel("m.yaml", []byte(tc.text))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadModelByName(t *testing.T) {
	if _, err := LoadModel("quarter-cart", nil); err == nil || !strings.Contains(err.Error(), "no built-in model or file named quarter-cart; did you mean quarter-car?") {
		t.Errorf("misspelt: %v", err)
	}
	m, err := LoadModel("quarter-car", map[string]float64{"m3": 80})
	if err != nil || m.Builtin == nil {
		t.Fatalf("%v", err)
	}
	if _, err := LoadModel("quarter-car", map[string]float64{"m4": 80}); err == nil || !strings.Contains(err.Error(), "model quarter-car has no parameter m4; did you mean m1?") {
		t.Errorf("unknown parameter: %v", err)
	}
	if _, err := LoadModel("../models/mass-spring-damper.yaml", map[string]float64{"m": 2}); err == nil || !strings.Contains(err.Error(), "params change a built-in model's parameters") {
		t.Errorf("params on a file: %v", err)
	}
}

func FuzzModel(f *testing.F) {
	for _, seed := range []string{
		"subsystems:\n  m:\n    states: [x]\n    A: [[-1]]\n",
		"subsystems:\n  a: {states: [x], inputs: [y], outputs: [z], A: [[0]], B: [[1]], C: [[1]], D: [[1]]}\n  b: {inputs: [z], outputs: [y], D: [[1]]}\n",
		"subsystems: {m: {outputs: [y], D: []}}\ninputs: {u: {steps: [{at: 1s, value: 2}, {at: 0s, value: 1}]}}\ncuts: {c: {hardware: [m]}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseModel("f.yaml", data)
		if err != nil {
			return
		}
		// What parses can be integrated and analysed without a panic.
		if it, err := plant.NewIntegrator(m.Whole(), plant.Trapezoidal, time.Millisecond); err == nil {
			it.Advance()
			it.Sample()
		}
	})
}
