package fmi

import (
	"math"
	"testing"
)

// ode is a Model Exchange instance of x' = f(t, x) with indicators
// z(t, x), recording its events.
type ode struct {
	t      float64
	x      []float64
	f      func(t float64, x, dx []float64)
	z      func(t float64, x, z []float64)
	events []float64
}

func (o *ode) Get(Type, []ValueReference, []float64) error { return nil }
func (o *ode) Set(Type, []ValueReference, []float64) error { return nil }
func (o *ode) EnterInitializationMode(Experiment) error    { return nil }
func (o *ode) ExitInitializationMode() error               { return nil }
func (o *ode) Terminate() error                            { return nil }
func (o *ode) Free()                                       {}
func (o *ode) EnterEventMode() error                       { o.events = append(o.events, o.t); return nil }
func (o *ode) UpdateDiscreteStates() (EventInfo, error)    { return EventInfo{}, nil }
func (o *ode) EnterContinuousTimeMode() error              { return nil }
func (o *ode) SetTime(t float64) error                     { o.t = t; return nil }
func (o *ode) SetContinuousStates(x []float64) error       { copy(o.x, x); return nil }
func (o *ode) GetContinuousStates(x []float64) error       { copy(x, o.x); return nil }
func (o *ode) GetDerivatives(dx []float64) error           { o.f(o.t, o.x, dx); return nil }
func (o *ode) GetNominalsOfContinuousStates(n []float64) error {
	for i := range n {
		n[i] = 1
	}
	return nil
}
func (o *ode) GetEventIndicators(z []float64) error {
	if o.z != nil {
		o.z(o.t, o.x, z)
	}
	return nil
}
func (o *ode) CompletedIntegratorStep(bool) (bool, bool, error) { return false, false, nil }

// newODE is an integrator of one state and nz indicators.
func newODE(o *ode, nz int, rtol float64) *integrator {
	d := &Description{
		Interfaces:              []Interface{{Kind: ME}},
		Variables:               []Variable{{Name: "x", Derivative: -1}, {Name: "der(x)", Derivative: 0}},
		Derivatives:             []int{1},
		NumberOfEventIndicators: nz,
	}
	return newIntegrator(d, o, rtol)
}

// TestDenseOutputOrder: the interpolant over a step is of fourth order,
// so its error in mid-step falls 2⁵ = 32-fold when the step halves (a
// third-order one, Hermite's, would fall 16-fold).
func TestDenseOutputOrder(t *testing.T) {
	var errs []float64
	for _, h := range []float64{0.4, 0.2, 0.1} {
		o := &ode{x: []float64{0}, f: func(t float64, _, dx []float64) { dx[0] = math.Cos(t) }}
		g := newODE(o, 0, 1e-6)
		if err := g.start(0); err != nil {
			t.Fatal(err)
		}
		if _, err := g.attempt(0, h, h); err != nil {
			t.Fatal(err)
		}
		g.prepareDense(h)
		mid := make([]float64, 1)
		g.interpolate(0.5, mid)
		errs = append(errs, math.Abs(mid[0]-math.Sin(h/2)))
	}
	for i := 1; i < len(errs); i++ {
		if r := errs[i-1] / errs[i]; r < 26 || r > 40 {
			t.Errorf("errors %v: halving the step divided the error by %.1f; want about 32", errs, r)
		}
	}
}

// TestStateEventLocated: an indicator crossing zero at an instant no step
// lands on is placed within the bisection's bracket after it.
func TestStateEventLocated(t *testing.T) {
	const at = 0.123456789
	o := &ode{x: []float64{0},
		f: func(_ float64, _, dx []float64) { dx[0] = 1 },
		z: func(_ float64, x, z []float64) { z[0] = x[0] - at },
	}
	g := newODE(o, 1, 1e-6)
	if err := g.start(0); err != nil {
		t.Fatal(err)
	}
	var st Stats
	if _, err := g.advance(0, 0.5, &st); err != nil {
		t.Fatal(err)
	}
	if len(o.events) != 1 || o.events[0] < at || o.events[0] > at+eventTolerance(at) {
		t.Fatalf("events at %v; want one in [%g, %g]", o.events, at, at+eventTolerance(at))
	}
	if st.StateEvents != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestErrorControl: on x' = −x from 1, the solution at 1 s is within the
// sum of the local errors the control allows: rtol·(1 + |x|) ≤ 2·rtol
// per step, over the steps taken.
func TestErrorControl(t *testing.T) {
	for _, rtol := range []float64{1e-4, 1e-6, 1e-8} {
		o := &ode{x: []float64{1}, f: func(_ float64, x, dx []float64) { dx[0] = -x[0] }}
		g := newODE(o, 0, rtol)
		if err := g.start(0); err != nil {
			t.Fatal(err)
		}
		var st Stats
		if _, err := g.advance(0, 1, &st); err != nil {
			t.Fatal(err)
		}
		bound := 2 * rtol * float64(st.SolverSteps)
		if e := math.Abs(g.x[0] - math.Exp(-1)); e > bound {
			t.Errorf("rtol %g: error %.3g after %d steps; want under %.3g", rtol, e, st.SolverSteps, bound)
		}
	}
}
