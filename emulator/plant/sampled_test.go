package plant

import (
	"math"
	"strings"
	"testing"
	"time"
)

// sampledLoop is a lag τ·dx/dt = −x + u under a proportional controller
// sampled every period: u_n = K·(r − x_n), held until the next sample.
func sampledLoop(tau, k float64, period time.Duration) Model {
	return Model{
		Name: "sampled-loop",
		Subsystems: []Subsystem{
			{
				Name: "lag", States: []string{"x"}, Inputs: []string{"u"}, Outputs: []string{"x"},
				Linear: &LTI{A: dense([]float64{-1 / tau}), B: dense([]float64{1 / tau}), C: dense([]float64{1})},
			},
			{
				Name: "controller", States: []string{"n"}, Inputs: []string{"r", "x"}, Outputs: []string{"u", "samples"},
				Equations: &Equations{
					Output:      func(_ float64, s, u, y []float64) { y[0], y[1] = k*(u[0]-u[1]), s[0] },
					Update:      func(_ float64, s, _, next []float64) { next[0] = s[0] + 1 },
					Period:      period,
					Feedthrough: true,
				},
			},
		},
		Inputs: []Input{{Name: "r", Stimulus: Constant(1)}},
		Cuts:   []Cut{{Name: "controller", Hardware: []string{"controller"}}},
	}
}

// TestSampledLoopClosedForm: over one period P the lag sees a constant u_n,
// so exactly x_{n+1} = a·x_n + (1 − a)·u_n with a = e^(−P/τ); with u_n =
// K·(1 − x_n) and x_0 = 0 that is x_n = x*·(1 − λⁿ), λ = a − (1 − a)·K, x* =
// K/(1 + K). At each sample the integrated x must match it within RK4's
// error: per step |e^z − R(z)| ≤ |z|⁵/120 (z = −h/τ, 10 % added for the
// rest) of a deviation at most max|u − x| ≤ K + 1, over N steps; an error
// in x_n comes back through u_n multiplied by λ each period, which
// multiplies the sum by at most 1/(1 − |λ|). And the controller's counter
// shows one hit per period, the first at time 0.
func TestSampledLoopClosedForm(t *testing.T) {
	const tau, k = 0.1, 3.0
	period, step := 20*time.Millisecond, 2*time.Millisecond
	p := mustNew(t, sampledLoop(tau, k, period))
	it, err := NewIntegrator(p.Whole(), RK4, step)
	if err != nil {
		t.Fatal(err)
	}
	a := math.Exp(-period.Seconds() / tau)
	lambda, xs := a-(1-a)*k, k/(1+k)
	xi, ni := p.SignalIndex("x"), p.SignalIndex("samples")
	z := step.Seconds() / tau
	worst, n := 0.0, 0
	for it.Time() <= time.Second {
		if it.Time()%period == 0 {
			it.Sample()
			want := xs * (1 - math.Pow(lambda, float64(n)))
			worst = max(worst, math.Abs(it.Signal(xi)-want))
			if got := it.Signal(ni); got != float64(n) {
				t.Fatalf("at %v the controller has taken %g samples before this one, want %d", it.Time(), got, n)
			}
			n++
		}
		it.Advance()
	}
	bound := float64(it.steps) * (k + 1) * 1.1 * math.Pow(z, 5) / 120 / (1 - math.Abs(lambda))
	t.Logf("%d samples: worst error %.3g against the exact sampled response (bound %.3g)", n, worst, bound)
	if !(worst <= bound) {
		t.Errorf("error %.3g over the bound %.3g", worst, bound)
	}
}

// TestSampledHitOnce: a sampled block takes its hit once, at the first
// Sample or Advance at its instant, with what it holds then; a value set
// after that waits for the next hit. Between hits its outputs are held.
func TestSampledHitOnce(t *testing.T) {
	m := Model{
		Subsystems: []Subsystem{
			{
				Name: "source", States: []string{"s"}, Outputs: []string{"s"},
				Equations: &Equations{Derivative: func(_ float64, _, _, dx []float64) { dx[0] = 1 }, Output: func(_ float64, x, _, y []float64) { y[0] = x[0] }},
			},
			{
				Name: "zoh", Inputs: []string{"s"}, Outputs: []string{"held"},
				Equations: &Equations{Output: func(_ float64, _, u, y []float64) { y[0] = u[0] }, Period: 4 * time.Millisecond, Feedthrough: true},
			},
		},
		Cuts: []Cut{{Name: "source", Hardware: []string{"source"}}},
	}
	p := mustNew(t, m)
	sim, _, err := p.Cut("source")
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewIntegrator(sim, RK4, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	k := p.SignalIndex("held")
	held := func() float64 { it.Sample(); return it.Signal(k) }
	it.SetIn(0, 5) // before the first look at time 0: the hit reads it
	if got := held(); got != 5 {
		t.Errorf("at 0 after 5 arrived: %g", got)
	}
	it.SetIn(0, 6) // after: waits
	if got := held(); got != 5 {
		t.Errorf("at 0 after 6 arrived late: %g, want 5 still", got)
	}
	for range 3 {
		it.Advance()
		if got := held(); got != 5 {
			t.Errorf("at %v between hits: %g, want 5 held", it.Time(), got)
		}
	}
	it.Advance()
	if got := held(); got != 6 {
		t.Errorf("at the next hit, %v: %g, want 6", it.Time(), got)
	}
}

func TestSampledProblems(t *testing.T) {
	loop := func() Model { return sampledLoop(0.1, 3, 20*time.Millisecond) }
	for _, tc := range []struct {
		name   string
		change func(m *Model)
		want   string
	}{
		{"derivative", func(m *Model) {
			m.Subsystems[1].Equations.Derivative = func(float64, []float64, []float64, []float64) {}
		}, "subsystems.controller: is sampled (a period) and has a derivative"},
		{"no update", func(m *Model) { m.Subsystems[1].Equations.Update = nil }, "subsystems.controller: is sampled and has states but no update"},
		{"no period", func(m *Model) { m.Subsystems[1].Equations.Period = 0 }, "subsystems.controller: has an update but no period"},
		{"negative period", func(m *Model) { m.Subsystems[1].Equations.Period = -time.Millisecond }, "subsystems.controller.period: must be positive"},
	} {
		m := loop()
		c := *m.Subsystems[1].Equations
		m.Subsystems[1].Equations = &c
		tc.change(&m)
		if _, err := New(m); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %q", tc.name, err, tc.want)
		}
	}
	p := mustNew(t, loop())
	if _, err := NewIntegrator(p.Whole(), RK4, 3*time.Millisecond); err == nil || err.Error() != "the sampled block controller acts every 20ms, which is not a whole number of steps of 3ms" {
		t.Errorf("step 3 ms: %v", err)
	}
	if _, err := Analyse(p, "controller", "r", "x", 0, []float64{1}); err == nil ||
		err.Error() != "model sampled-loop has sampled blocks (controller): the frequency-domain analysis needs a continuous model" {
		t.Errorf("analysing a sampled loop: %v", err)
	}
}

// TestAdvanceBy: a long advance is taken in the integrator's own steps.
// The quarter car's RK4 must step under 1.33 ms; ten steps of 1 ms taken
// by AdvanceBy(10 ms) are the same ten steps as ten Advance calls, to the
// bit, where one RK4 step of 10 ms is refused as unstable. What is shorter
// than a step is handed back.
func TestAdvanceBy(t *testing.T) {
	p := quarterCarPlant(t)
	one, _ := NewIntegrator(p.Whole(), RK4, time.Millisecond)
	by, _ := NewIntegrator(p.Whole(), RK4, time.Millisecond)
	if _, err := NewIntegrator(p.Whole(), RK4, 10*time.Millisecond); err == nil {
		t.Error("rk4 at 10 ms accepted")
	}
	for range 30 {
		for range 10 {
			one.Advance()
		}
		if rest := by.AdvanceBy(10 * time.Millisecond); rest != 0 {
			t.Fatalf("rest %v", rest)
		}
	}
	for i, v := range one.State() {
		if by.State()[i] != v {
			t.Fatalf("after 300 ms: state %v by AdvanceBy, %v by Advance", by.State(), one.State())
		}
	}
	for _, tc := range []struct{ d, rest, moved time.Duration }{
		{2500 * time.Microsecond, 500 * time.Microsecond, 2 * time.Millisecond},
		{999 * time.Microsecond, 999 * time.Microsecond, 0},
		{0, 0, 0},
		{-time.Millisecond, -time.Millisecond, 0},
	} {
		before := by.Time()
		if rest := by.AdvanceBy(tc.d); rest != tc.rest || by.Time()-before != tc.moved {
			t.Errorf("AdvanceBy(%v): moved %v, rest %v; want %v and %v", tc.d, by.Time()-before, rest, tc.moved, tc.rest)
		}
	}
	if a := testing.AllocsPerRun(100, func() { by.AdvanceBy(3 * time.Millisecond) }); a != 0 {
		t.Errorf("%v allocations per AdvanceBy", a)
	}
}

// TestStatelessSampledBlockActs: a sampled block without states (an FMU,
// which keeps its state itself: fmi.Block) is updated at each of its hits,
// once, with its inputs then; it was skipped, and such a block never
// stepped.
func TestStatelessSampledBlockActs(t *testing.T) {
	var hits []float64
	var last float64
	p := mustNew(t, Model{
		Name: "stateless",
		Subsystems: []Subsystem{{
			Name: "fmu", Inputs: []string{"u"}, Outputs: []string{"y"},
			Equations: &Equations{
				Period: 10 * time.Millisecond,
				Output: func(_ float64, _, _, y []float64) { y[0] = last },
				Update: func(t float64, _, u, _ []float64) { hits, last = append(hits, t), u[0] },
			},
		}},
		Inputs: []Input{{Name: "u", Stimulus: Step{Time: 25 * time.Millisecond, From: 0, To: 1}}},
	})
	it, err := NewIntegrator(p.Whole(), RK4, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		it.Advance()
	}
	want := []float64{0, 0.01, 0.02, 0.03, 0.04}
	if len(hits) != len(want) {
		t.Fatalf("updated at %v, want %v", hits, want)
	}
	for i := range want {
		if math.Abs(hits[i]-want[i]) > 1e-12 {
			t.Fatalf("updated at %v, want %v", hits, want)
		}
	}
	if last != 1 {
		t.Errorf("the last update read u = %v, want 1", last)
	}
}
