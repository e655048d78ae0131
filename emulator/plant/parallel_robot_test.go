package plant

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// paperChain is paper 002's Eqs. 1–2 as printed, φ(x, q) = 0, with the
// Jacobians Jx = ∂φ/∂x and Jq = ∂φ/∂q of its Eqs. 9–10: written out here
// apart from the model's geometry (fiveBar), to check it.
type paperChain struct{ xp, L, l float64 }

var robotChain = paperChain{0.1, 0.3, 0.7}

func (c paperChain) phi(x, z, q1, q2 float64) (f1, f2 float64) {
	f1 = sq(x-c.xp-c.L*math.Cos(q1)) + sq(z+c.L*math.Sin(q1)) - c.l*c.l
	f2 = sq(x+c.xp+c.L*math.Cos(q2)) + sq(z+c.L*math.Sin(q2)) - c.l*c.l
	return f1, f2
}

func sq(v float64) float64 { return v * v }

// jx is ∂φ/∂(x, z), row i for φi; jq the diagonal of ∂φ/∂q.
func (c paperChain) jacobians(x, z, q1, q2 float64) (jx [2][2]float64, jq [2]float64) {
	a1, b1 := x-c.xp-c.L*math.Cos(q1), z+c.L*math.Sin(q1)
	a2, b2 := x+c.xp+c.L*math.Cos(q2), z+c.L*math.Sin(q2)
	jx = [2][2]float64{{2 * a1, 2 * b1}, {2 * a2, 2 * b2}}
	jq = [2]float64{2*a1*c.L*math.Sin(q1) + 2*b1*c.L*math.Cos(q1), -2*a2*c.L*math.Sin(q2) + 2*b2*c.L*math.Cos(q2)}
	return jx, jq
}

// plate solves φ(x, q) = 0 for the plate by Newton's method from a guess.
func (c paperChain) plate(q1, q2, x, z float64) (float64, float64) {
	for range 50 {
		f1, f2 := c.phi(x, z, q1, q2)
		jx, _ := c.jacobians(x, z, q1, q2)
		det := jx[0][0]*jx[1][1] - jx[0][1]*jx[1][0]
		dx := (jx[1][1]*f1 - jx[0][1]*f2) / det
		dz := (-jx[1][0]*f1 + jx[0][0]*f2) / det
		x, z = x-dx, z-dz
		if math.Abs(dx)+math.Abs(dz) < 1e-15 {
			break
		}
	}
	return x, z
}

// velocity is ṗ = −Jx⁻¹·Jq·q̇ (differentiating φ = 0), and norm the
// spectral norm of that 2×2 matrix.
func (c paperChain) velocity(x, z, q1, q2, w1, w2 float64) (vx, vz, norm float64) {
	jx, jq := c.jacobians(x, z, q1, q2)
	det := jx[0][0]*jx[1][1] - jx[0][1]*jx[1][0]
	// −Jx⁻¹·diag(jq)
	a, b := -jx[1][1]*jq[0]/det, jx[0][1]*jq[1]/det
	cc, d := jx[1][0]*jq[0]/det, -jx[0][0]*jq[1]/det
	tr, dt := a*a+b*b+cc*cc+d*d, a*d-b*cc
	return a*w1 + b*w2, cc*w1 + d*w2, math.Sqrt((tr + math.Sqrt(tr*tr-4*dt*dt)) / 2)
}

// TestParallelRobotStart: the robot starts at rest with its plate at (0,
// −0.6) m, the path's start, its angles symmetric and on the paper's
// Eqs. 1–2 to rounding, the reference angles the same as its own, so the
// PID's first torques and the tracking error are nil. Paper 002's printed
// start (0, −0.38) m is refused: its distance from a motor, √(0.1² +
// 0.38²) = 0.3929 m, is under l − L = 0.4 m; at x = 0 the highest
// reachable plate is at z = −√(0.4² − 0.1²) = −0.3873 m.
func TestParallelRobotStart(t *testing.T) {
	m := builtin(t, "parallel-robot", nil)
	p := mustNew(t, m)
	it, err := NewIntegrator(p.Whole(), RK4, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	it.Sample()
	get := func(name string) float64 { return it.Signal(p.SignalIndex(name)) }
	q1, q2 := get("q1"), get("q2")
	f1, f2 := robotChain.phi(get("x"), get("z"), q1, q2)
	t.Logf("start: plate (%.3g, %.15g) m, q = (%.12f, %.12f) rad, φ = (%.2g, %.2g) m², τ = (%g, %g) N·m", get("x"), get("z"), q1, q2, f1, f2, get("tau1"), get("tau2"))
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"x", get("x"), 0}, {"z", get("z"), -0.6}, {"x_d", get("x_d"), 0}, {"z_d", get("z_d"), -0.6},
		{"q2 − q1", q2 - q1, 0}, {"q1_d − q1", get("q1_d") - q1, 0}, {"q2_d − q2", get("q2_d") - q2, 0},
		{"φ1", f1, 0}, {"φ2", f2, 0}, {"tau1", get("tau1"), 0}, {"tau2", get("tau2"), 0},
		{"track_err", get("track_err"), 0}, {"vx", get("vx"), 0}, {"vz", get("vz"), 0},
	} {
		if !(math.Abs(c.got-c.want) <= 1e-12) {
			t.Errorf("at the start %s = %.15g, want %g", c.what, c.got, c.want)
		}
	}
	if _, err := Analyse(p, "controller", "x_d", "track_err", 0, []float64{1}); err == nil ||
		err.Error() != "model parallel-robot has sampled blocks (controller): the frequency-domain analysis needs a continuous model" {
		t.Errorf("analysing the robot: %v", err)
	}
	b, _ := LookupBuiltin("parallel-robot")
	if _, err := b.Model(map[string]float64{"z0": -0.38}); err == nil || !strings.Contains(err.Error(), "the start (x0, z0) = (0, -0.38) m is out of the robot's reach") {
		t.Errorf("paper 002's printed start: %v", err)
	}
	for z, reachable := range map[float64]bool{-0.388: true, -0.387: false} {
		if _, err := b.Model(map[string]float64{"z0": z}); (err == nil) != reachable {
			t.Errorf("start at (0, %g): %v", z, err)
		}
	}
}

// TestParallelRobotTracks runs paper 002's 5 s with the robot and its PID
// uncut and measures the plate's distance from the path (track_err). Once
// the start is over (0.1 s: the path sets off at 0.55 m/s from a robot at
// rest), a PD loop keeps each joint about Γ/Kc from its reference, the
// torque it must give to carry the load over Kc; the plate is then at most
// ‖J‖·√2·max|Γ|/Kc from the path, ‖J‖ the largest spectral norm of the
// plate's velocity Jacobian along the way (from the paper's Jx and Jq,
// computed here).
func TestParallelRobotTracks(t *testing.T) {
	m := builtin(t, "parallel-robot", nil)
	p := mustNew(t, m)
	it, err := NewIntegrator(p.Whole(), RK4, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	at := func(name string) int { return p.SignalIndex(name) }
	q1, q2, x, z, tau1, tau2, e := at("q1"), at("q2"), at("x"), at("z"), at("tau1"), at("tau2"), at("track_err")
	var worst, sumSq, settled, maxTau, maxJ float64
	n := 0
	for it.Time() < 5*time.Second {
		it.Advance()
		it.Sample()
		err := it.Signal(e)
		worst, sumSq, n = max(worst, err), sumSq+err*err, n+1
		if it.Time() > 100*time.Millisecond {
			settled = max(settled, err)
			maxTau = max(maxTau, math.Abs(it.Signal(tau1)), math.Abs(it.Signal(tau2)))
			_, _, norm := robotChain.velocity(it.Signal(x), it.Signal(z), it.Signal(q1), it.Signal(q2), 0, 0)
			maxJ = max(maxJ, norm)
		}
	}
	rms := math.Sqrt(sumSq / float64(n))
	bound := maxJ * math.Sqrt2 * maxTau / 2000
	t.Logf("tracking error over 5 s: max %.3f mm, RMS %.3f mm; after 0.1 s max %.3f mm (bound %.3f mm: ‖J‖ %.3f m/rad, max |Γ| %.2f N·m)",
		1e3*worst, 1e3*rms, 1e3*settled, 1e3*bound, maxJ, maxTau)
	if !(settled <= bound) || math.IsNaN(worst) {
		t.Errorf("tracking error %.3g m after the start, over the bound %.3g m", settled, bound)
	}
}

// TestParallelRobotConservesEnergy: without friction or torque the robot
// is conservative: E = ½·A·|q̇|² + ½·M·|ṗ|² − (m1·rG + ½·m2·L)·g·(sin q1 +
// sin q2) + M·g·z must stay constant while it swings about its lowest
// pose. The energy is computed here from the paper's Eqs. 1–2 and their
// Jacobians (the plate by Newton's method, ṗ = −Jx⁻¹·Jq·q̇), apart from
// the model's code, so a wrong sign, lever or inertia in the model shows
// as drift of order one. RK4's global error is O(h⁴): the drift must be
// small and shrink about 16-fold when the step halves (between 8 and 32).
func TestParallelRobotConservesEnergy(t *testing.T) {
	full := builtin(t, "parallel-robot", map[string]float64{"Fs": 0, "Fv": 0})
	robot := full.Subsystems[0]
	robot.Initial = []float64{1.35, 1.5, 0, 0}
	m := Model{Subsystems: []Subsystem{robot}, Inputs: []Input{{Name: "tau1", Stimulus: Constant(0)}, {Name: "tau2", Stimulus: Constant(0)}}}
	const L, m1, m2, rG, g = 0.3, 0.82, 0.14, 0.15, 9.81
	const M, A = 0.14 + 0.5 + 5, 25*(0.37e-4+9.09e-4) + 0.0188 + 0.5*0.14*0.3*0.3
	drift := func(step time.Duration) (e0, worst float64) {
		x, z := robotChain.plate(1.35, 1.5, 0, -0.9)
		energy := func(s []float64) float64 {
			x, z = robotChain.plate(s[0], s[1], x, z)
			vx, vz, _ := robotChain.velocity(x, z, s[0], s[1], s[2], s[3])
			return 0.5*A*(s[2]*s[2]+s[3]*s[3]) + 0.5*M*(vx*vx+vz*vz) - (m1*rG+0.5*m2*L)*g*(math.Sin(s[0])+math.Sin(s[1])) + M*g*z
		}
		e0 = energy(robot.Initial)
		simulate(t, m, RK4, step, 2*time.Second, func(it *Integrator) {
			worst = max(worst, math.Abs(energy(it.State())-e0))
		})
		return e0, worst
	}
	e0, d1 := drift(time.Millisecond)
	_, d2 := drift(500 * time.Microsecond)
	t.Logf("energy %.6g J; drift over 2 s: %.3g J at 1 ms, %.3g J at 0.5 ms (ratio %.1f)", e0, d1, d2, d1/d2)
	if !(d1 <= 1e-6*math.Abs(e0)) || !(d1/d2 >= 8 && d1/d2 <= 32) {
		t.Errorf("energy drifts by %.3g J at 1 ms and %.3g J at 0.5 ms", d1, d2)
	}
}

// TestParallelRobotChainCloses: the model computes the plate from the
// angles in closed form, so the paper's Eqs. 1–2 hold at every step to
// rounding (|φ| ≤ 1e-12 m²). Its plate velocity (vx, vz), integrated by an
// odometer alongside the robot, must stay where the closed form puts the
// plate to within the solver's error: RK4's error in the plate's position
// at 1 ms, estimated by Richardson's rule from the runs at 1 ms and 0.5 ms
// (16/15 of their largest difference: the error is O(h⁴)). A wrong
// Jacobian would part them by order one.
func TestParallelRobotChainCloses(t *testing.T) {
	type run struct {
		worstPhi, worstGap float64
		plate              [][2]float64 // every ms
	}
	at := func(step time.Duration) (r run) {
		m := builtin(t, "parallel-robot", nil)
		m.Subsystems = append(m.Subsystems, Subsystem{
			Name: "odometer", States: []string{"xo", "zo"}, Inputs: []string{"vx", "vz"}, Outputs: []string{"xo", "zo"}, Initial: []float64{0, -0.6},
			Linear: &LTI{B: dense([]float64{1, 0}, []float64{0, 1}), C: dense([]float64{1, 0}, []float64{0, 1})},
		})
		p := mustNew(t, m)
		at := func(name string) int { return p.SignalIndex(name) }
		q1, q2, x, z, xo, zo := at("q1"), at("q2"), at("x"), at("z"), at("xo"), at("zo")
		simulate(t, m, RK4, step, 5*time.Second, func(it *Integrator) {
			f1, f2 := robotChain.phi(it.Signal(x), it.Signal(z), it.Signal(q1), it.Signal(q2))
			r.worstPhi = max(r.worstPhi, math.Abs(f1), math.Abs(f2))
			r.worstGap = max(r.worstGap, math.Hypot(it.Signal(xo)-it.Signal(x), it.Signal(zo)-it.Signal(z)))
			if it.Time()%time.Millisecond == 0 {
				r.plate = append(r.plate, [2]float64{it.Signal(x), it.Signal(z)})
			}
		})
		return r
	}
	coarse, fine := at(time.Millisecond), at(500*time.Microsecond)
	solverErr := 0.0
	for i := range coarse.plate {
		solverErr = max(solverErr, 16.0/15*math.Hypot(coarse.plate[i][0]-fine.plate[i][0], coarse.plate[i][1]-fine.plate[i][1]))
	}
	t.Logf("over 5 s: |φ| up to %.2g m²; the odometer parts from the closed form by up to %.3g m at 1 ms; RK4's error in the plate there %.3g m",
		max(coarse.worstPhi, fine.worstPhi), coarse.worstGap, solverErr)
	if !(max(coarse.worstPhi, fine.worstPhi) <= 1e-12) || !(coarse.worstGap <= solverErr) {
		t.Errorf("the chain: |φ| %.3g m²; the odometer parts by %.3g m, over the solver's error %.3g m", max(coarse.worstPhi, fine.worstPhi), coarse.worstGap, solverErr)
	}
}

// cosim runs a cut of a model for d, its two parts exchanging at every
// step: the part that measures (the simulated one, or the hardware one if
// hardwareMeasures) samples and sends first; the other receives what was
// sent lag exchanges ago and then, if reply, samples and sends back at the
// same instant; if not, it sent what it had before receiving (the
// executor's order: both send at the exchange instant, then take up what
// arrived). It returns signal, from the part that computes it, at every
// exchange from time 0.
func cosim(t *testing.T, p *Plant, cut string, hardwareMeasures bool, s Solver, step, d time.Duration, lag int, reply bool, signal string) []float64 {
	t.Helper()
	meterPart, replierPart, err := p.Cut(cut)
	if err != nil {
		t.Fatal(err)
	}
	if hardwareMeasures {
		meterPart, replierPart = replierPart, meterPart
	}
	meter, err := NewIntegrator(meterPart, s, step)
	if err != nil {
		t.Fatal(err)
	}
	replier, err := NewIntegrator(replierPart, s, step)
	if err != nil {
		t.Fatal(err)
	}
	k := p.SignalIndex(signal)
	reader := meter
	if slices.Contains(replierPart.Produces(), signal) {
		reader = replier
	}
	var sent [][]float64
	var out []float64
	back := func() {
		replier.Sample()
		for i := range meterPart.In() {
			meter.SetIn(i, replier.Out(i))
		}
	}
	for meter.Time() < d {
		meter.Sample()
		v := make([]float64, len(meterPart.Out()))
		for i := range v {
			v[i] = meter.Out(i)
		}
		sent = append(sent, v)
		if !reply {
			back()
		}
		if len(sent) > lag {
			for i, x := range sent[len(sent)-1-lag] {
				replier.SetIn(i, x)
			}
		}
		if reply {
			back()
		}
		reader.Sample()
		out = append(out, reader.Signal(k))
		meter.Advance()
		replier.Advance()
	}
	return out
}

func uncut(t *testing.T, p *Plant, s Solver, step, d time.Duration, signal string) []float64 {
	it, err := NewIntegrator(p.Whole(), s, step)
	if err != nil {
		t.Fatal(err)
	}
	k := p.SignalIndex(signal)
	var out []float64
	for it.Time() < d {
		it.Sample()
		out = append(out, it.Signal(k))
		it.Advance()
	}
	return out
}

func maxDiff(a, b []float64) float64 {
	d := 0.0
	for i := range a {
		d = max(d, math.Abs(a[i]-b[i]))
	}
	return d
}

// TestParallelRobotCutMatchesUncut: cut between the controller and the
// robot (either way round), exchanging the angles and the torques at the
// PID's 1 kHz over a link without delay, with the controller replying to
// each measurement (as paper 002's does), the robot moves exactly as the
// uncut one: the sampled PID reads the same angles at the same hits, and
// the robot integrates the same torques. RK4 repeats the same arithmetic,
// so the tracking errors agree to rounding (1e-12 m); the trapezoidal
// rule's Newton iterations stop at a relative 1e-10 per step and see the
// PID's states in the uncut part only, so the agreement is to the
// iterations' tolerance over 5000 steps: 5000·1e-10 m.
func TestParallelRobotCutMatchesUncut(t *testing.T) {
	p := mustNew(t, builtin(t, "parallel-robot", nil))
	for _, tc := range []struct {
		cut    string
		solver Solver
		tol    float64
	}{
		{"controller", RK4, 1e-12},
		{"robot", RK4, 1e-12},
		{"controller", Trapezoidal, 5000 * 1e-10},
	} {
		ref := uncut(t, p, tc.solver, time.Millisecond, 5*time.Second, "track_err")
		// The robot measures, wherever it is; the PID replies.
		got := cosim(t, p, tc.cut, tc.cut == "robot", tc.solver, time.Millisecond, 5*time.Second, 0, true, "track_err")
		d := maxDiff(got, ref)
		t.Logf("cut %s, %s: tracking error differs from the uncut robot's by %.3g m at most", tc.cut, tc.solver, d)
		if !(d <= tc.tol) {
			t.Errorf("cut %s, %s: differs by %.3g m, over %.3g m", tc.cut, tc.solver, d, tc.tol)
		}
	}
}

// TestParallelRobotLatency: the tracking error as the loop's latency
// grows, in whole samples of the PID. The executor's order (both sides
// send at the exchange instant) adds one sample to a link without delay.
// The departure from the uncut robot grows with every sample added, the
// property paper 002's Figure 9 shows as nodes join the bus.
func TestParallelRobotLatency(t *testing.T) {
	p := mustNew(t, builtin(t, "parallel-robot", nil))
	ref := uncut(t, p, RK4, time.Millisecond, 5*time.Second, "track_err")
	var lines []string
	last := -1.0
	for _, tc := range []struct {
		lag   int
		reply bool
	}{{0, true}, {0, false}, {1, false}, {2, false}, {4, false}, {9, false}} {
		got := cosim(t, p, "controller", false, RK4, time.Millisecond, 5*time.Second, tc.lag, tc.reply, "track_err")
		samples := tc.lag
		if !tc.reply {
			samples++
		}
		worst, sumSq := 0.0, 0.0
		for _, e := range got {
			worst, sumSq = max(worst, e), sumSq+e*e
		}
		d := maxDiff(got, ref)
		lines = append(lines, fmt.Sprintf("latency %2d ms: tracking error max %.3f mm, RMS %.3f mm; off the uncut robot by up to %.3f mm", samples, 1e3*worst, 1e3*math.Sqrt(sumSq/float64(len(got))), 1e3*d))
		if !(d > last) {
			t.Errorf("latency %d ms: off the uncut robot by %.3g m, no more than with less latency (%.3g m)", samples, d, last)
		}
		last = d
	}
	t.Log("\n" + strings.Join(lines, "\n"))
}
