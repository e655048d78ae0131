package fmi_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/emulator/plant/fmi/fmitest"
)

func newStepper(t *testing.T, m *fmitest.Model, kind fmi.Kind, cfg fmi.Config) (*fmi.Stepper, *fmitest.Instance) {
	t.Helper()
	inst := m.Instantiate(kind)
	cfg.Kind = kind
	if cfg.Experiment == (fmi.Experiment{}) {
		cfg.Experiment = m.Description.Experiment
	}
	s, err := fmi.NewStepper(m.Description, inst, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Close()
		if len(inst.Violations) > 0 {
			t.Errorf("calls FMI does not allow: %s", strings.Join(inst.Violations, "; "))
		}
	})
	return s, inst
}

// ballBounces is where the fake ball bounces, from the equations: it
// falls from 1 m for t₁ = √(2/9.81), hits at v₁ = 9.81·t₁ and leaves at
// e·v₁, and each flight of a ball leaving at u lasts 2u/9.81. At the
// bounce where it would leave slower than v_min it stays down.
func ballBounces(stop float64) []float64 {
	const g, e = 9.81, 0.7
	t := math.Sqrt(2 / g)
	times := []float64{t}
	for u := e * g * t; u >= 0.1; u *= e {
		t += 2 * u / g
		if t > stop {
			break
		}
		times = append(times, t)
	}
	return times
}

// TestBouncingBallBouncesOnTime: in Model Exchange the ball bounces at the
// instants the equations give. Its path is a parabola, which the
// integrator and its interpolant reproduce exactly, so an event is late
// only by the bisection's bracket (at most 1e-13·t s) and each bounce
// inherits the lateness of those before: the k-th is allowed k·3e-13 s
// (t ≤ 3 s) and 1e-13 s for the rounding.
func TestBouncingBallBouncesOnTime(t *testing.T) {
	s, inst := newStepper(t, fmitest.BouncingBall(), fmi.ME, fmi.Config{})
	for k := 1; k <= 300; k++ {
		if err := s.Step(float64(k) * 0.01); err != nil {
			t.Fatal(err)
		}
	}
	want := ballBounces(3)
	got := inst.EventTimes[1:] // the first is initialisation's
	if len(got) != len(want) {
		t.Fatalf("events at %v; want the bounces %v", got, want)
	}
	for i, w := range want {
		if d := got[i] - w; d < -1e-13 || d > float64(i+1)*3e-13+1e-13 {
			t.Errorf("bounce %d at %.15g s; want %.15g s (off by %.3g s)", i+1, got[i], w, d)
		}
	}
	if st := s.Stats(); st.StateEvents != uint64(len(want)) || st.Steps != 300 {
		t.Errorf("stats %+v", st)
	}
	out := make([]float64, 2)
	s.Outputs(out)
	if out[0] < 0 || out[0] > 1e-300 || out[1] != 0 {
		t.Errorf("at 3 s the ball is at h = %g, v = %g; want it lying still", out[0], out[1])
	}
}

// TestBouncingBallHeights: between bounces, the outputs follow the
// parabola of the flight, to the same exactness.
func TestBouncingBallHeights(t *testing.T) {
	s, _ := newStepper(t, fmitest.BouncingBall(), fmi.ME, fmi.Config{})
	bounces := ballBounces(1.5)
	out := make([]float64, 2)
	for k := 1; k <= 150; k++ {
		tk := float64(k) * 0.01
		if err := s.Step(tk); err != nil {
			t.Fatal(err)
		}
		s.Outputs(out)
		h, v := 1-9.81/2*tk*tk, -9.81*tk
		if tk > bounces[0] {
			i := 0
			for i+1 < len(bounces) && bounces[i+1] <= tk {
				i++
			}
			u := 9.81 * math.Sqrt(2/9.81) * math.Pow(0.7, float64(i+1))
			dt := tk - bounces[i]
			h, v = u*dt-9.81/2*dt*dt, u-9.81*dt
		}
		if math.Abs(out[0]-h) > 1e-9 || math.Abs(out[1]-v) > 1e-9 {
			t.Fatalf("at %g s: h = %.12g, v = %.12g; want %.12g, %.12g", tk, out[0], out[1], h, v)
		}
	}
}

// lagResponse is the first-order lag's output from y0 at t0 towards the
// target k·s·u: target + (y0 − target)·e^(−(t−t0)/τ).
func lagResponse(y0, target, dt float64) float64 {
	return target + (y0-target)*math.Exp(-dt/0.5)
}

// TestFirstOrderInputs: the lag's continuous input u steps at 0.5 s and
// its discrete input s flips at 1 s (set in event mode: the fake refuses
// it in continuous time), each set before the step that starts there. In Model Exchange, at a tolerance of 1e-10,
// each of the ≤ 200 accepted steps errs by at most 1e-10·(1 + |x|) ≤
// 3e-10, and a stable linear mode does not amplify them: their sum,
// 6e-8, bounds the error.
func TestFirstOrderInputs(t *testing.T) {
	s, inst := newStepper(t, fmitest.FirstOrder(), fmi.ME, fmi.Config{Experiment: fmi.Experiment{Stop: 2, Tolerance: 1e-10}})
	if got := len(s.InputSignals()); got != 2 {
		t.Fatalf("%d inputs", got)
	}
	out := make([]float64, 1)
	y1 := lagResponse(0, 2, 0.5)
	for k := 1; k <= 200; k++ {
		tk := float64(k) * 0.01
		switch k {
		case 51:
			s.Set([]float64{1, 1})
		case 101:
			s.Set([]float64{1, -1})
		}
		if err := s.Step(tk); err != nil {
			t.Fatal(err)
		}
		s.Outputs(out)
		var want float64
		switch {
		case tk <= 0.5+1e-9:
			want = 0
		case tk <= 1+1e-9:
			want = lagResponse(0, 2, tk-0.5)
		default:
			want = lagResponse(y1, -2, tk-1)
		}
		if math.Abs(out[0]-want) > 6e-8 {
			t.Fatalf("at %g s: y = %.12g; want %.12g", tk, out[0], want)
		}
	}
	if inst.Calls["EnterEventMode"] != 1 || s.Stats().InputEvents != 1 {
		t.Errorf("%d event modes, stats %+v; want one, for the discrete input", inst.Calls["EnterEventMode"], s.Stats())
	}
}

// TestFirstOrderCoSimulation: in Co-Simulation the fake's own explicit
// Euler at 1e-4 s does the work; it lags the exact response by at most
// K·h/(2τe) = 2·1e-4/(2·0.5·e) = 7.4e-5.
func TestFirstOrderCoSimulation(t *testing.T) {
	s, _ := newStepper(t, fmitest.FirstOrder(), fmi.CS, fmi.Config{Initial: []float64{1, 1}})
	out := make([]float64, 1)
	for k := 1; k <= 200; k++ {
		tk := float64(k) * 0.01
		if err := s.Step(tk); err != nil {
			t.Fatal(err)
		}
		s.Outputs(out)
		if want := lagResponse(0, 2, tk); math.Abs(out[0]-want) > 7.4e-5 {
			t.Fatalf("at %g s: y = %.9g; want %.9g", tk, out[0], want)
		}
	}
}

// TestCounterTimeEvents: time events are stepped to exactly, whatever the
// communication step, and the counter shows each from its instant on.
func TestCounterTimeEvents(t *testing.T) {
	s, inst := newStepper(t, fmitest.Counter(), fmi.ME, fmi.Config{})
	out := make([]float64, 1)
	for k := 1; k <= 20; k++ {
		tk := float64(k) * 0.1
		if err := s.Step(tk); err != nil {
			t.Fatal(err)
		}
		s.Outputs(out)
		want := 0.0
		for j := 1.0; j*0.3 <= tk; j++ {
			want = j
		}
		if out[0] != want {
			t.Fatalf("at %g s the count is %g; want %g", tk, out[0], want)
		}
	}
	for j, got := range inst.EventTimes[1:] {
		if want := float64(j+1) * 0.3; got != want {
			t.Errorf("time event %d at %.17g; want %.17g exactly", j+1, got, want)
		}
	}
	if st := s.Stats(); st.TimeEvents != 6 {
		t.Errorf("stats %+v; want 6 time events", st)
	}
}

// TestFMUErrors: an FMU's error stops the stepping, comes back on every
// later step, and the instance is freed without being terminated (FMI
// allows only freeing after an error); after a fatal error not even that.
func TestFMUErrors(t *testing.T) {
	for _, tc := range []struct {
		kind       fmi.Kind
		function   string
		status     fmi.Status
		terminated int
		freed      int
	}{
		{fmi.CS, "DoStep", fmi.Error, 0, 1},
		{fmi.CS, "DoStep", fmi.Fatal, 0, 0},
		{fmi.ME, "GetDerivatives", fmi.Error, 0, 1},
		{fmi.ME, "Get", fmi.Discard, 1, 1}, // a discard is not an error state
	} {
		t.Run(tc.kind.String()+"/"+tc.function+"/"+tc.status.Name(fmi.FMI2), func(t *testing.T) {
			m := fmitest.FirstOrder()
			inst := m.Instantiate(tc.kind)
			inst.FailAt(tc.function, 5, tc.status)
			s, err := fmi.NewStepper(m.Description, inst, fmi.Config{Kind: tc.kind, Experiment: m.Description.Experiment})
			if err != nil {
				t.Fatal(err)
			}
			var stepErr error
			for k := 1; k <= 100 && stepErr == nil; k++ {
				stepErr = s.Step(float64(k) * 0.01)
			}
			var ce *fmi.CallError
			if !errors.As(stepErr, &ce) || ce.Function != tc.function || ce.Status != tc.status {
				t.Fatalf("step error %v; want %s's %s", stepErr, tc.function, tc.status.Name(fmi.FMI3))
			}
			if !strings.Contains(stepErr.Error(), "failing as asked") {
				t.Errorf("%q does not carry the FMU's message", stepErr)
			}
			if again := s.Step(2); again != stepErr {
				t.Errorf("the next step returned %v", again)
			}
			s.Close()
			if inst.Calls["Terminate"] != tc.terminated || inst.Calls["Free"] != tc.freed {
				t.Errorf("Terminate called %d times, Free %d; want %d and %d", inst.Calls["Terminate"], inst.Calls["Free"], tc.terminated, tc.freed)
			}
			if len(inst.Violations) > 0 {
				t.Errorf("violations: %v", inst.Violations)
			}
		})
	}
}

// TestNotANumber: an output that is not a finite number is an error
// naming it; a derivative that is not is one naming the state.
func TestNotANumber(t *testing.T) {
	for _, tc := range []struct {
		kind fmi.Kind
		want string
	}{
		{fmi.CS, "the output y is NaN at t = 0.01"}, // Inf, then Inf − Inf in the fake's next internal step
		{fmi.ME, "the derivative of x is +Inf at t = 0"},
	} {
		m := fmitest.FirstOrder()
		inst := m.Instantiate(tc.kind)
		s, err := fmi.NewStepper(m.Description, inst, fmi.Config{Kind: tc.kind, Experiment: m.Description.Experiment, Params: map[string]float64{"k": math.Inf(1)}, Initial: []float64{1, 1}})
		if err == nil {
			err = s.Step(0.01)
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want %q", tc.kind, err, tc.want)
		}
		if inst.Calls["Free"] != 1 {
			t.Errorf("%v: freed %d times", tc.kind, inst.Calls["Free"])
		}
	}
}

// TestConfigErrors: what cannot be set or read is refused before
// anything runs, naming it.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *fmitest.Model
		cfg  fmi.Config
		want string
	}{
		{"unknown param", fmitest.BouncingBall(), fmi.Config{Params: map[string]float64{"ee": 0.8}}, "the FMU has no variable ee; did you mean e?"},
		{"param an output", fmitest.FirstOrder(), fmi.Config{Params: map[string]float64{"y": 1}}, "y is computed by the FMU"},
		{"input not an input", fmitest.FirstOrder(), fmi.Config{Inputs: []string{"k"}}, "k is not an input (its causality is parameter)"},
		{"integer input not whole", fmitest.FirstOrder(), fmi.Config{Initial: []float64{0, 0.5}}, "input s: 0.5 is not a whole number, which a Int32 takes"},
		{"integer input out of range", fmitest.FirstOrder(), fmi.Config{Initial: []float64{0, 1e10}}, "input s: 1e+10 is out of range for Int32"},
		{"NaN input", fmitest.FirstOrder(), fmi.Config{Initial: []float64{math.NaN(), 1}}, "input u is NaN"},
		{"wrong initial count", fmitest.FirstOrder(), fmi.Config{Initial: []float64{1}}, "1 initial values for 2 inputs"},
		{"not an array", fmitest.FirstOrder(), fmi.Config{Outputs: []string{"y[1]"}}, "y is not an array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := tc.m.Instantiate(fmi.CS)
			cfg := tc.cfg
			cfg.Kind, cfg.Experiment = fmi.CS, tc.m.Description.Experiment
			_, err := fmi.NewStepper(tc.m.Description, inst, cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want %q", err, tc.want)
			}
			if inst.Calls["Free"] != 1 || inst.Calls["Terminate"] != 0 {
				t.Errorf("after a refused configuration: Free %d, Terminate %d; want 1 and 0", inst.Calls["Free"], inst.Calls["Terminate"])
			}
		})
	}
}

// TestParamsChangeTheModel: a parameter set by name changes the run: with
// e = 0.9 the first flight after the bounce lasts 0.9/0.7 times as long.
func TestParamsChangeTheModel(t *testing.T) {
	var flights [2]float64
	for i, e := range []float64{0.7, 0.9} {
		s, inst := newStepper(t, fmitest.BouncingBall(), fmi.ME, fmi.Config{Params: map[string]float64{"e": e}})
		for k := 1; k <= 150; k++ {
			if err := s.Step(float64(k) * 0.01); err != nil {
				t.Fatal(err)
			}
		}
		flights[i] = inst.EventTimes[2] - inst.EventTimes[1]
	}
	if r := flights[1] / flights[0]; math.Abs(r-0.9/0.7) > 1e-9 {
		t.Errorf("flights %v: ratio %g; want %g", flights, r, 0.9/0.7)
	}
}

// TestStepsAllocateNothing: the stepping allocates nothing per step, in
// either interface (the fakes allocate nothing either).
func TestStepsAllocateNothing(t *testing.T) {
	for _, kind := range []fmi.Kind{fmi.CS, fmi.ME} {
		s, _ := newStepper(t, fmitest.FirstOrder(), kind, fmi.Config{})
		in, out := []float64{1, 1}, make([]float64, 1)
		tk, k := 0.0, 0
		allocs := testing.AllocsPerRun(200, func() {
			k++
			tk = float64(k) * 1e-3
			in[0] = math.Sin(tk)
			s.Set(in)
			if err := s.Step(tk); err != nil {
				t.Fatal(err)
			}
			s.Outputs(out)
		})
		if allocs != 0 {
			t.Errorf("%v: %g allocations a step", kind, allocs)
		}
	}
}

// TestStepMustAdvance: a step that does not move forward is refused.
func TestStepMustAdvance(t *testing.T) {
	s, _ := newStepper(t, fmitest.FirstOrder(), fmi.CS, fmi.Config{})
	if err := s.Step(0); err == nil || !strings.Contains(err.Error(), "the time must increase") {
		t.Errorf("a step to its own time: %v", err)
	}
}

func BenchmarkStep(b *testing.B) {
	for _, kind := range []fmi.Kind{fmi.CS, fmi.ME} {
		b.Run(kind.String(), func(b *testing.B) {
			m := fmitest.FirstOrder()
			s, err := fmi.NewStepper(m.Description, m.Instantiate(kind), fmi.Config{Kind: kind, Experiment: m.Description.Experiment})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			in, out := []float64{1, 1}, make([]float64, 1)
			b.ReportAllocs()
			for k := 1; b.Loop(); k++ {
				in[0] = float64(k % 7)
				s.Set(in)
				if err := s.Step(float64(k) * 2e-3); err != nil {
					b.Fatal(err)
				}
				s.Outputs(out)
			}
		})
	}
}
