package plant

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// lag is τ·dx/dt = −x + u with a unit step at t = 0: x(t) = 1 − e^(−t/τ).
func lag(tau float64) Model {
	return Model{
		Subsystems: []Subsystem{{
			Name: "lag", States: []string{"x"}, Inputs: []string{"u"}, Outputs: []string{"y"},
			Linear: &LTI{A: dense([]float64{-1 / tau}), B: dense([]float64{1 / tau}), C: dense([]float64{1})},
		}},
		Inputs: []Input{{Name: "u", Stimulus: Step{To: 1}}},
	}
}

// msd is m·x” + b·x' + k·x = F, F a unit step at t = 0, written as two
// blocks (mass and spring-damper) to exercise the joining of signals.
func msd(m, b, k float64) Model {
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "mass", States: []string{"x", "v"}, Inputs: []string{"F", "Fsd"}, Outputs: []string{"x", "v"},
				Linear: &LTI{
					A: dense([]float64{0, 1}, []float64{0, 0}),
					B: dense([]float64{0, 0}, []float64{1 / m, -1 / m}),
					C: dense([]float64{1, 0}, []float64{0, 1}),
				},
			},
			{
				Name: "spring", Inputs: []string{"x", "v"}, Outputs: []string{"Fsd"},
				Linear: &LTI{D: dense([]float64{k, b})},
			},
		},
		Inputs: []Input{{Name: "F", Stimulus: Step{To: 1}}},
	}
}

// msdExact is the underdamped step response of msd.
func msdExact(m, b, k, t float64) float64 {
	wn := math.Sqrt(k / m)
	zeta := b / (2 * math.Sqrt(k*m))
	wd := wn * math.Sqrt(1-zeta*zeta)
	return (1 - math.Exp(-zeta*wn*t)*(math.Cos(wd*t)+zeta/math.Sqrt(1-zeta*zeta)*math.Sin(wd*t))) / k
}

// run integrates the whole model for d and returns the worst deviation of
// signal from exact at every step.
func run(t *testing.T, m Model, solver Solver, step, d time.Duration, signal string, exact func(float64) float64) float64 {
	t.Helper()
	p, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewIntegrator(p.Whole(), solver, step)
	if err != nil {
		t.Fatal(err)
	}
	k := p.SignalIndex(signal)
	worst := 0.0
	for it.Time() < d {
		it.Advance()
		it.Sample()
		worst = max(worst, math.Abs(it.Signal(k)-exact(it.Time().Seconds())))
	}
	return worst
}

// TestFirstOrderLag checks both solvers against x(t) = 1 − e^(−t/τ) over
// 5τ. One step multiplies the error-free part by R(z), z = −h/τ, where the
// exact factor is e^z; over N = 5τ/h steps the error is at most
// N·|e^z − R(z)|. RK4: e^z − R(z) = z⁵/120 + O(z⁶), so the bound is
// (h/τ)⁴/24. Trapezoidal: R(z) = (1 + z/2)/(1 − z/2), e^z − R(z) = z³/12 +
// O(z⁴), bound 5·(h/τ)²/12. Each bound gets 10 % for the higher terms.
func TestFirstOrderLag(t *testing.T) {
	const tau = 0.1
	exact := func(s float64) float64 { return 1 - math.Exp(-s/tau) }
	for _, tc := range []struct {
		solver Solver
		step   time.Duration
		bound  func(r float64) float64 // r = h/τ
	}{
		{RK4, time.Millisecond, func(r float64) float64 { return math.Pow(r, 4) / 24 }},
		{RK4, 10 * time.Millisecond, func(r float64) float64 { return math.Pow(r, 4) / 24 }},
		{Trapezoidal, time.Millisecond, func(r float64) float64 { return 5 * r * r / 12 }},
		{Trapezoidal, 10 * time.Millisecond, func(r float64) float64 { return 5 * r * r / 12 }},
	} {
		worst := run(t, lag(tau), tc.solver, tc.step, 500*time.Millisecond, "y", exact)
		bound := 1.1*tc.bound(tc.step.Seconds()/tau) + 1e-13
		t.Logf("%s at %v: worst error %.3g, bound %.3g", tc.solver, tc.step, worst, bound)
		if worst > bound {
			t.Errorf("%s at %v: error %.3g over the bound %.3g", tc.solver, tc.step, worst, bound)
		}
	}
}

// TestMassSpringDamper checks both solvers against the underdamped step
// response of m = 1 kg, b = 2 N·s/m, k = 400 N/m (ωn = 20 rad/s, ζ = 0.05)
// over 2 s. The modes are λ = −ζωn ± iωd, |λ| = ωn; a step's error on a
// mode is |e^z − R(z)| with z = hλ, at most |z|⁵/120 for RK4 and |z|³/12
// for trapezoidal (first terms, 10 % added for the rest), and the response
// has size at most 2F/k per mode; over N = 2 s/h steps that bounds the
// error by N·2·(2F/k)·|e^z − R(z)|.
func TestMassSpringDamper(t *testing.T) {
	const m, b, k = 1.0, 2.0, 400.0
	exact := func(s float64) float64 { return msdExact(m, b, k, s) }
	wn := math.Sqrt(k / m)
	for _, tc := range []struct {
		solver Solver
		step   time.Duration
		local  func(z float64) float64
	}{
		{RK4, time.Millisecond, func(z float64) float64 { return math.Pow(z, 5) / 120 }},
		{Trapezoidal, time.Millisecond, func(z float64) float64 { return math.Pow(z, 3) / 12 }},
		{Trapezoidal, 5 * time.Millisecond, func(z float64) float64 { return math.Pow(z, 3) / 12 }},
	} {
		h := tc.step.Seconds()
		steps := 2 / h
		bound := steps * 2 * (2 / k) * 1.1 * tc.local(h*wn)
		worst := run(t, msd(m, b, k), tc.solver, tc.step, 2*time.Second, "x", exact)
		t.Logf("%s at %v: worst error %.3g m (response 5e-3 m), bound %.3g", tc.solver, tc.step, worst, bound)
		if worst > bound {
			t.Errorf("%s at %v: error %.3g over the bound %.3g", tc.solver, tc.step, worst, bound)
		}
	}
}

// TestRK4RefusesUnstableSteps: the quarter car's fastest mode is damped by
// the tyre, λ ≈ −(b1 + b2)/m1 ≈ −2091/s, and RK4's stability interval on
// the negative real axis ends at z ≈ −2.785, so the largest stable step is
// about 2.785/2091 s ≈ 1.33 ms.
func TestRK4RefusesUnstableSteps(t *testing.T) {
	p := quarterCarPlant(t)
	if _, err := NewIntegrator(p.Whole(), RK4, 2*time.Millisecond); err == nil || !strings.Contains(err.Error(), "needs a step under 1.333ms") {
		t.Errorf("rk4 at 2 ms: %v", err)
	}
	if _, err := NewIntegrator(p.Whole(), RK4, time.Millisecond); err != nil {
		t.Errorf("rk4 at 1 ms: %v", err)
	}
	if _, err := NewIntegrator(p.Whole(), Trapezoidal, 20*time.Millisecond); err != nil {
		t.Errorf("trapezoidal at 20 ms: %v", err)
	}
}

func quarterCarPlant(t testing.TB) *Plant {
	b, _ := LookupBuiltin("quarter-car")
	m, err := b.Model(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSolversAgreeOnTheQuarterCar: driven by a smooth road (a 5 Hz sine:
// a step's jump would make any one-step method first order for a moment),
// the trapezoidal rule's response approaches RK4's at 0.25 ms as h²:
// halving its step shrinks the difference about fourfold.
func TestSolversAgreeOnTheQuarterCar(t *testing.T) {
	b, _ := LookupBuiltin("quarter-car")
	m, _ := b.Model(nil)
	m.Inputs[0].Stimulus = Sine{Amplitude: 1, Period: 200 * time.Millisecond}
	p, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	k := p.SignalIndex("deflection")
	trace := func(s Solver, step time.Duration) []float64 {
		it, err := NewIntegrator(p.Whole(), s, step)
		if err != nil {
			t.Fatal(err)
		}
		var out []float64
		every := int(time.Millisecond / step)
		for i := 0; it.Time() < time.Second; i++ {
			it.Advance()
			if (i+1)%every == 0 {
				it.Sample()
				out = append(out, it.Signal(k))
			}
		}
		return out
	}
	ref := trace(RK4, 250*time.Microsecond)
	diff := func(a []float64) float64 {
		d := 0.0
		for i := range ref {
			d = max(d, math.Abs(a[i]-ref[i]))
		}
		return d
	}
	peak := slices.Max(ref) - slices.Min(ref)
	d1 := diff(trace(Trapezoidal, 500*time.Microsecond))
	d2 := diff(trace(Trapezoidal, 250*time.Microsecond))
	t.Logf("deflection range %.4g m; trapezoidal vs rk4: %.3g at 0.5 ms, %.3g at 0.25 ms (ratio %.2f)", peak, d1, d2, d1/d2)
	if d1/d2 < 3 || d1/d2 > 5 || d1 > 0.01*peak {
		t.Errorf("differences %.3g, %.3g", d1, d2)
	}
}

// TestStepAllocatesNothing: a step of either solver, and a sample,
// allocate nothing once prepared; nor does a sampled block's hit (the
// parallel robot's PID takes one at every 1 ms step).
func TestStepAllocatesNothing(t *testing.T) {
	robot := mustNew(t, builtin(t, "parallel-robot", nil))
	robotSim, robotHw, err := robot.Cut("controller")
	if err != nil {
		t.Fatal(err)
	}
	carSim, _, err := quarterCarPlant(t).Cut("CP2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		part *Part
		step time.Duration
	}{
		{"quarter-car@CP2", carSim, 500 * time.Microsecond},
		{"parallel-robot", robot.Whole(), time.Millisecond},
		{"parallel-robot@controller", robotSim, time.Millisecond},
		{"parallel-robot@controller (the controller)", robotHw, time.Millisecond},
	} {
		for _, s := range Solvers {
			it, err := NewIntegrator(tc.part, s, tc.step)
			if err != nil {
				t.Fatal(err)
			}
			in := len(tc.part.In())
			if a := testing.AllocsPerRun(100, func() {
				for i := range in {
					it.SetIn(i, it.In(i))
				}
				it.Advance()
				it.Sample()
			}); a != 0 {
				t.Errorf("%s, %s: %v allocations per step", tc.name, s, a)
			}
		}
	}
}

// TestNonFinite: an unstable block, dx/dt = 1000·x from x = 1, stepped
// with RK4 at 1 ms (hλ = 1), grows by R = 1 + 1 + 1/2 + 1/6 + 1/24 a step.
// A step from x sums the stages k1 + 2k2 + 2k3 + k4 = 1000·x·(1 + 3 + 3.5
// + 2.75) = 10250·x, which overflows first: at step n, the first with
// 10250·R^(n−1) > MaxFloat64, x becomes +Inf. NonFinite names the state
// then and says nothing before (the margin is most of a step: R^0.9, far
// beyond the sums' rounding). A value received across a cut that is NaN
// is named as the signal it is. Checking allocates nothing.
func TestNonFinite(t *testing.T) {
	p, err := New(Model{
		Subsystems: []Subsystem{{Name: "grow", States: []string{"x"}, Outputs: []string{"y"}, Initial: []float64{1},
			Linear: &LTI{A: dense([]float64{1000}), C: dense([]float64{1})}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewIntegrator(p.Whole(), RK4, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	r := 1 + 1 + 1.0/2 + 1.0/6 + 1.0/24
	overflow := int(math.Floor(math.Log(math.MaxFloat64/10250)/math.Log(r))) + 2
	it.Sample()
	if a := testing.AllocsPerRun(100, func() { it.NonFinite() }); a != 0 {
		t.Errorf("NonFinite allocates %v times", a)
	}
	steps := 0
	for ; it.NonFinite() == ""; steps++ {
		if steps > overflow+1 {
			t.Fatalf("state %v after %d steps and still finite", it.State(), steps)
		}
		it.Advance()
		it.Sample()
	}
	if got := it.NonFinite(); steps != overflow || got != "state grow.x = +Inf" {
		t.Errorf("after %d steps (overflow at %d): %q", steps, overflow, got)
	}

	sim, _, err := quarterCarPlant(t).Cut("CP2")
	if err != nil {
		t.Fatal(err)
	}
	it, err = NewIntegrator(sim, Trapezoidal, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	it.Sample()
	if got := it.NonFinite(); got != "" {
		t.Fatalf("at rest: %q", got)
	}
	it.SetIn(0, math.NaN())
	it.Sample()
	if got := it.NonFinite(); got != "signal Fseat = NaN" {
		t.Errorf("a NaN received: %q", got)
	}
}
