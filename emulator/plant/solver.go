package plant

import (
	"fmt"
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"

	"gonum.org/v1/gonum/mat"
)

// Solver is a fixed-step integration method.
type Solver string

const (
	// RK4 is the classic explicit fourth-order Runge–Kutta method: four
	// derivative evaluations a step, and stable only while every
	// eigenvalue λ of the linearised model keeps |R(hλ)| ≤ 1, R(z) = 1 + z
	// + z²/2 + z³/6 + z⁴/24. A stiff model (the quarter car's tyre
	// damping) needs a small step.
	RK4 Solver = "rk4"
	// Trapezoidal is the implicit trapezoidal rule (Crank–Nicolson,
	// Tustin for a linear model): x⁺ = x + h/2·(f(t, x) + f(t+h, x⁺)),
	// second order and A-stable, so stiffness does not limit the step.
	// x⁺ is found by Newton's method; for a linear part one iteration is
	// exact and its matrix is factorised once.
	Trapezoidal Solver = "trapezoidal"
)

// Solvers lists the solvers by name.
var Solvers = []Solver{RK4, Trapezoidal}

// Integrator steps a part in time at a fixed step. Its inputs from the
// other part are held at the last value given (SetIn) until the next.
//
// The part's sampled blocks take a hit once, when the part is first
// sampled or advanced at its instant, with the inputs held then. A caller
// that sets what arrived at an instant before sampling (a controller that
// replies to each measurement) has them read it: over a link without
// delay, such a controller computes exactly what it would in the uncut
// model. One that samples first (to send what it has at its clock tick)
// has them read what they held, as a controller computing on its latest
// measurement does; a value set afterwards waits for the next hit.
type Integrator struct {
	pt     *Part
	ev     *evaluator
	solver Solver
	step   time.Duration
	h      float64
	steps  int64
	x      []float64

	sampled    []int     // entries of pt.subs that are sampled blocks
	next       []float64 // a sampled block's next state, for Update
	hitPending bool      // a hit is due at this instant and not yet taken

	k1, k2, k3, k4, xt []float64 // RK4 stages

	linear   bool
	jac      *mat.Dense // df/dx, for the Newton iterations
	jacStale bool       // jac was computed at an earlier step
	// lu holds I − h/2·J factorised; solving with it allocates nothing.
	lu          *luFactors
	fk, fz      []float64
	g, dz       []float64
	col, saved  []float64
	unconverged uint64
}

// NewIntegrator prepares to integrate a part from its initial state with
// a solver and step. RK4 is refused at a step where the part, linearised at
// its initial state, is unstable; the error says which step would do.
func NewIntegrator(pt *Part, solver Solver, step time.Duration) (*Integrator, error) {
	if step <= 0 {
		return nil, fmt.Errorf("the step must be positive")
	}
	n := pt.n
	it := &Integrator{pt: pt, ev: newEvaluator(pt), solver: solver, step: step, h: step.Seconds(), x: make([]float64, n)}
	pt.initialState(it.x)
	// What the other part sends is, until it arrives, what the uncut
	// plant has there at time 0.
	initial := pt.plant.initialSignals()
	for _, k := range pt.in {
		it.ev.sig[k] = initial[k]
	}
	maxStates := 0
	for i, s := range pt.subs {
		b := &pt.plant.subs[s]
		if b.period == 0 {
			continue
		}
		if b.period%step != 0 {
			return nil, fmt.Errorf("the sampled block %s acts every %v, which is not a whole number of steps of %v", b.Name, b.period, step)
		}
		it.sampled = append(it.sampled, i)
		maxStates = max(maxStates, len(b.States))
	}
	it.next = make([]float64, maxStates)
	it.hitPending = len(it.sampled) > 0 // time 0 is every sampled block's first hit
	// The solvers' preparation below needs the sampled blocks' outputs at
	// time 0; they are computed without taking the hit, which waits for
	// what the caller sets at time 0.
	it.ev.hitAll(true)
	it.ev.stimulate(0)
	it.ev.signals(0, it.x)
	it.ev.hitAll(false)
	it.linear = true
	for _, s := range pt.subs {
		it.linear = it.linear && pt.plant.subs[s].Linear != nil
	}
	it.fk, it.fz, it.col, it.saved, it.xt = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	it.jac = mat.NewDense(max(n, 1), max(n, 1), nil)
	switch solver {
	case RK4:
		it.k1, it.k2, it.k3, it.k4 = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
		if n > 0 {
			if err := it.checkRK4Stability(); err != nil {
				return nil, err
			}
		}
	case Trapezoidal:
		it.lu = newLUFactors(n)
		it.g, it.dz = make([]float64, n), make([]float64, n)
		if n > 0 {
			it.ev.stimulate(0)
			it.jacobian(0, it.x)
			it.factorise()
		}
	default:
		return nil, fmt.Errorf("no solver %q (want rk4 or trapezoidal)", solver)
	}
	return it, nil
}

// initialSignals is every signal of the uncut plant at time 0.
func (p *Plant) initialSignals() []float64 {
	whole := p.Whole()
	ev := newEvaluator(whole)
	x := make([]float64, whole.n)
	whole.initialState(x)
	ev.stimulate(0)
	ev.hitAll(true) // time 0 is every sampled block's first hit
	ev.signals(0, x)
	return ev.sig
}

// Part is the part being integrated.
func (it *Integrator) Part() *Part { return it.pt }

// Step is the integration step.
func (it *Integrator) Step() time.Duration { return it.step }

// Time is how far the part has been integrated.
func (it *Integrator) Time() time.Duration { return time.Duration(it.steps) * it.step }

// SetIn holds the i-th signal received from the other part (in In order).
func (it *Integrator) SetIn(i int, v float64) { it.ev.sig[it.pt.in[i]] = v }

// In is the value held for the i-th received signal.
func (it *Integrator) In(i int) float64 { return it.ev.sig[it.pt.in[i]] }

// Sample computes the part's signals at the current time, for Out and
// Signal, taking a sampled blocks' hit due now first.
func (it *Integrator) Sample() {
	it.settle()
	t := it.Time().Seconds()
	it.ev.stimulate(t)
	it.ev.signals(t, it.x)
}

// Out is the i-th signal sent to the other part (in Out order), as of the
// last Sample.
func (it *Integrator) Out(i int) float64 { return it.ev.sig[it.pt.out[i]] }

// Signal is a signal by its index in the plant's Signals, as of the last
// Sample; signals the part does not compute or receive read 0.
func (it *Integrator) Signal(k int) float64 { return it.ev.sig[k] }

// State is the part's state vector; the caller must not change it. A
// sampled block's state is as before a hit due now and not yet taken.
func (it *Integrator) State() []float64 { return it.x }

// NonFinite names the first of the part's states and signals, as of the
// last Sample, that is not a finite number, with its value ("state
// wheel.v1 = NaN", "signal Fseat = +Inf"), or is "" while every one is: a
// part whose numbers overflowed, or that computed or received a NaN, has
// diverged, and nothing it computes from then on means anything. It
// allocates only to name what it found.
func (it *Integrator) NonFinite() string {
	pt := it.pt
	for _, s := range pt.subs {
		if b := &pt.plant.subs[s]; b.Equations != nil && b.Equations.Failure != nil {
			if err := b.Equations.Failure(); err != nil {
				return fmt.Sprintf("%s failed: %v", b.Name, err)
			}
		}
	}
	for i, s := range pt.subs {
		b := &pt.plant.subs[s]
		for j, v := range it.x[pt.stateOff[i] : pt.stateOff[i]+len(b.States)] {
			if !finite(v) {
				return fmt.Sprintf("state %s.%s = %v", b.Name, b.States[j], v)
			}
		}
	}
	for _, set := range [][]int{pt.produces, pt.in, pt.external} {
		for _, k := range set {
			if v := it.ev.sig[k]; !finite(v) {
				return fmt.Sprintf("signal %s = %v", pt.plant.signals[k], v)
			}
		}
	}
	return ""
}

// Unconverged counts the steps whose Newton iterations stopped before the
// tolerance (the step is taken anyway).
func (it *Integrator) Unconverged() uint64 { return it.unconverged }

// Advance takes one step, from a sampled blocks' hit due now, if not
// yet taken.
func (it *Integrator) Advance() {
	it.settle()
	t := it.Time().Seconds()
	switch it.solver {
	case RK4:
		it.rk4(t)
	case Trapezoidal:
		it.trapezoidal(t)
	}
	it.steps++
	it.hitPending = it.hitDue()
}

// AdvanceBy takes as many whole steps as fit in d and returns the rest of
// d that is shorter than a step (d itself if it is not positive). A long
// advance, such as a supervisor's jump of several exchange steps, is so
// taken in the integrator's own steps: each stays within RK4's stability
// limit and the solver's accuracy, whatever d is.
func (it *Integrator) AdvanceBy(d time.Duration) (rest time.Duration) {
	for ; d >= it.step; d -= it.step {
		it.Advance()
	}
	return d
}

// hitDue reports whether some sampled block has a hit at the current time.
func (it *Integrator) hitDue() bool {
	now := it.Time()
	for _, i := range it.sampled {
		if now%it.pt.plant.subs[it.pt.subs[i]].period == 0 {
			return true
		}
	}
	return false
}

// settle takes the hit due at the current time, if not yet taken: the
// sampled blocks at it compute and hold their outputs, from the signals at
// this instant, then jump to their next state.
func (it *Integrator) settle() {
	if !it.hitPending {
		return
	}
	it.hitPending = false
	now := it.Time()
	t := now.Seconds()
	ev, p := it.ev, it.pt.plant
	for _, i := range it.sampled {
		ev.hit[i] = now%p.subs[it.pt.subs[i]].period == 0
	}
	ev.stimulate(t)
	ev.signals(t, it.x)
	for _, i := range it.sampled {
		if !ev.hit[i] {
			continue
		}
		ev.hit[i] = false
		b := &p.subs[it.pt.subs[i]]
		n := len(b.States)
		if b.Equations.Update == nil {
			continue
		}
		// A block without states may still act at its hits: an FMU
		// steps itself (fmi.Block).
		u := ev.u[:len(b.in)]
		for j, k := range b.in {
			u[j] = ev.sig[k]
		}
		off := it.pt.stateOff[i]
		b.Equations.Update(t, it.x[off:off+n], u, it.next[:n])
		copy(it.x[off:off+n], it.next[:n])
	}
}

func (it *Integrator) rk4(t float64) {
	h, x, ev := it.h, it.x, it.ev
	ev.stimulate(t)
	ev.derivative(t, x, it.k1)
	// Every product rounded before it is added (detmath's doc).
	for i := range x {
		it.xt[i] = x[i] + float64(h/2*it.k1[i])
	}
	mid := t + float64(h/2) // h/2 is h·0.5, a product like any other
	ev.stimulate(mid)
	ev.derivative(mid, it.xt, it.k2)
	for i := range x {
		it.xt[i] = x[i] + float64(h/2*it.k2[i])
	}
	ev.derivative(mid, it.xt, it.k3)
	for i := range x {
		it.xt[i] = x[i] + float64(h*it.k3[i])
	}
	ev.stimulateBefore(t + h)
	ev.derivative(t+h, it.xt, it.k4)
	for i := range x {
		x[i] += float64(h / 6 * (it.k1[i] + float64(2*it.k2[i]) + float64(2*it.k3[i]) + it.k4[i]))
	}
}

// trapezoidal solves G(z) = z − x − h/2·(f(t, x) + f(t+h, z)) = 0 for the
// new state z by Newton's method, z ← z − (I − h/2·J)⁻¹·G(z). A nonlinear
// part reuses its Jacobian from step to step and recomputes it when the
// iterations converge slowly.
func (it *Integrator) trapezoidal(t float64) {
	n := it.pt.n
	if n == 0 {
		return
	}
	h, x, ev := it.h, it.x, it.ev
	ev.stimulate(t)
	ev.derivative(t, x, it.fk)
	z := it.xt
	for i := range z {
		z[i] = x[i] + float64(h*it.fk[i]) // explicit Euler: the first guess
	}
	ev.stimulateBefore(t + h)
	g, dz := it.g, it.dz
	const maxIter = 20
	for iter := 0; ; iter++ {
		ev.derivative(t+h, z, it.fz)
		for i := range z {
			g[i] = z[i] - x[i] - float64(h/2*(it.fk[i]+it.fz[i]))
		}
		if !it.linear && it.jacStale && iter >= 3 {
			it.jacobian(t+h, z)
			it.factorise()
		}
		copy(dz, g)
		if !it.lu.singular {
			it.lu.solve(dz)
		}
		size, norm := 0.0, 0.0
		for i := range z {
			z[i] -= dz[i]
			size = max(size, math.Abs(dz[i]))
			norm = max(norm, math.Abs(z[i]))
		}
		if it.linear || size <= float64(1e-10*(1+norm)) {
			break
		}
		if iter == maxIter {
			it.unconverged++
			break
		}
	}
	copy(x, z)
	if !it.linear {
		it.jacStale = true
	}
}

// jacobian sets jac to df/dx at (t, x) by finite differences, with the
// part's inputs as they are. For a linear part the differences are exact,
// with a step of 1.
func (it *Integrator) jacobian(t float64, x []float64) {
	n := it.pt.n
	base, saved := it.fz, it.saved
	it.ev.derivative(t, x, base)
	copy(saved, base)
	for j := range n {
		delta := 1.0
		if !it.linear {
			delta = 1e-7 * max(1, math.Abs(x[j]))
		}
		xj := x[j]
		x[j] = xj + delta
		it.ev.derivative(t, x, it.col)
		x[j] = xj
		for i := range n {
			it.jac.Set(i, j, (it.col[i]-saved[i])/delta)
		}
	}
	copy(base, saved)
	it.jacStale = false
}

// factorise prepares the Newton matrix I − h/2·J. Should it be singular
// (h/2 the inverse of an eigenvalue), the iterations fall back to plain
// fixed-point steps, which converge for steps that small.
func (it *Integrator) factorise() {
	n := it.pt.n
	for i := range n {
		for j := range n {
			v := float64(-it.h / 2 * it.jac.At(i, j))
			if i == j {
				v++
			}
			*it.lu.at(i, j) = v
		}
	}
	it.lu.factorise()
}

// checkRK4Stability refuses a step at which RK4 amplifies some mode of the
// part that the equations damp.
func (it *Integrator) checkRK4Stability() error {
	it.ev.stimulate(0)
	it.jacobian(0, it.x)
	var eig mat.Eigen
	if !eig.Factorize(it.jac, mat.EigenNone) {
		return nil
	}
	worst, hmax := complex(0, 0), math.Inf(1)
	for _, l := range eig.Values(nil) {
		if real(l) >= 0 {
			continue // not damped by the equations either
		}
		if s := rk4StableStep(l); s < hmax {
			worst, hmax = l, s
		}
	}
	if it.h <= hmax {
		return nil
	}
	how := "linear"
	if !it.linear {
		how = "linearised at its initial state"
	}
	return fmt.Errorf("rk4 at a step of %v is unstable for the %s part (%s): its eigenvalue %.4g%+.4gi/s needs a step under %v; use the trapezoidal solver or a smaller step",
		it.step, it.pt.name, how, real(worst), imag(worst), time.Duration(hmax*1e9).Round(time.Microsecond))
}

// rk4StableStep is the largest h with |R(h·λ)| ≤ 1 along λ's ray, found by
// bisection from a step known to be unstable (the stability region lies
// inside |z| < 2.8).
func rk4StableStep(l complex128) float64 {
	r := func(h float64) float64 {
		z := detmath.Mul(complex(h, 0), l)
		z2 := detmath.Mul(z, z)
		z3 := detmath.Mul(z2, z)
		return detmath.Abs(1 + z + detmath.Div(z2, 2) + detmath.Div(z3, 6) + detmath.Div(detmath.Mul(z3, z), 24))
	}
	lo, hi := 0.0, 3/detmath.Abs(l)
	for range 60 {
		mid := (lo + hi) / 2
		if r(mid) <= 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
