package fmi

import (
	"fmt"
	"math"

	"github.com/hilrig/hilrig/emulator/detmath"
)

// The Dormand–Prince 5(4) pair (Dormand and Prince 1980), its error
// weights and Shampine's dense output (Hairer, Nørsett and Wanner,
// Solving ODEs I, 2nd ed., II.5 and II.6): a fifth-order step whose
// difference from the embedded fourth-order one estimates the error, and
// a fourth-order interpolant over the step from the same stages.
const (
	c2, c3, c4, c5             = 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9
	a21                        = 1.0 / 5
	a31, a32                   = 3.0 / 40, 9.0 / 40
	a41, a42, a43              = 44.0 / 45, -56.0 / 15, 32.0 / 9
	a51, a52, a53, a54         = 19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729
	a61, a62, a63, a64, a65    = 9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656
	a71, a73, a74, a75, a76    = 35.0 / 384, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84
	e1, e3, e4, e5, e6, e7     = 71.0 / 57600, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40
	d1, d3, d4, d5, d6, d7     = -12715105075.0 / 11282082432, 87487479700.0 / 32700410799, -10690763975.0 / 1880347072, 701980252875.0 / 199316789632, -1453857185.0 / 822651844, 69997945.0 / 29380423
	safety, shrinkMin, growMax = 0.9, 0.2, 10.0
)

// integrator integrates a Model Exchange instance with hilrig's own
// solver: Dormand–Prince 5(4) with error control, each step's error kept
// within rtol·|x| + rtol·nominal per state (a root mean square over the
// states). State events are located by bisection on the step's dense
// output, to within eventTolerance of where the indicators change sign,
// and handled there; time events are stepped to exactly; step events
// follow fmi*CompletedIntegratorStep.
type integrator struct {
	me            ModelExchange
	n, nz         int
	rtol          float64
	callCompleted bool
	stateNames    []string

	x, dx, xNew, xs, xProbe []float64
	k                       [7][]float64 // the stages; k[0] is dx, k[6] the derivative at the step's end
	nominal                 []float64
	z, zNew, zProbe         []float64
	dense                   [5][]float64
	h                       float64 // the step the error control proposes next

	nextEvent     float64
	hasNextEvent  bool
	timeSet       float64      // the time last given to the instance: a step's last two stages share theirs
	writeDiscrete func() error // sets the discrete inputs, in event mode
}

// eventTolerance is how close to the instant its indicators change sign
// an event is placed: 1e-13 s, relative beyond 1 s (some 450 times the
// spacing of float64 values there).
func eventTolerance(t float64) float64 { return 1e-13 * max(1, math.Abs(t)) }

func newIntegrator(d *Description, me ModelExchange, rtol float64) *integrator {
	if rtol <= 0 {
		rtol = DefaultTolerance
	}
	n, nz := d.NumberOfContinuousStates(), d.NumberOfEventIndicators
	g := &integrator{me: me, n: n, nz: nz, rtol: rtol, callCompleted: !d.Interface(ME).CompletedIntegratorStepNotNeeded, timeSet: math.NaN()}
	for _, k := range d.States() {
		g.stateNames = append(g.stateNames, d.Variables[k].ElementNames()...)
	}
	vec := func() []float64 { return make([]float64, n) }
	g.x, g.dx, g.xNew, g.xs, g.xProbe, g.nominal = vec(), vec(), vec(), vec(), vec(), vec()
	g.k[0] = g.dx
	for i := 1; i < 7; i++ {
		g.k[i] = vec()
	}
	for i := range g.dense {
		g.dense[i] = vec()
	}
	g.z, g.zNew, g.zProbe = make([]float64, nz), make([]float64, nz), make([]float64, nz)
	return g
}

// start takes the instance from the event mode initialisation leaves it
// in to continuous time at t.
func (g *integrator) start(t float64) error {
	if err := g.iterate(t, true); err != nil {
		return err
	}
	if g.hasNextEvent && g.nextEvent <= t {
		return g.event(t, false)
	}
	return nil
}

// event handles an event at t: event mode, the discrete inputs when they
// changed, event iteration, back to continuous time.
func (g *integrator) event(t float64, inputs bool) error {
	if err := g.me.EnterEventMode(); err != nil {
		return err
	}
	if inputs {
		if err := g.writeDiscrete(); err != nil {
			return err
		}
	}
	if err := g.iterate(t, false); err != nil {
		return err
	}
	if g.hasNextEvent && g.nextEvent <= t {
		return fmt.Errorf("the FMU's next time event, %g, is not after the event it has just handled at %g", g.nextEvent, t)
	}
	return nil
}

// iterate runs event iteration until the FMU needs no more, then enters
// continuous-time mode and takes up the states it changed.
func (g *integrator) iterate(t float64, first bool) error {
	var info EventInfo
	for i := 0; ; i++ {
		var err error
		if info, err = g.me.UpdateDiscreteStates(); err != nil {
			return err
		}
		if info.TerminateSimulation {
			return fmt.Errorf("%w at t = %g (in event iteration)", ErrTerminated, t)
		}
		if !info.DiscreteStatesNeedUpdate {
			break
		}
		if i == maxEventIterations {
			return fmt.Errorf("event iteration at t = %g did not settle in %d steps: the FMU keeps asking for new discrete states", t, maxEventIterations)
		}
	}
	if err := g.me.EnterContinuousTimeMode(); err != nil {
		return err
	}
	if first || info.ValuesOfContinuousStatesChanged {
		if err := g.me.GetContinuousStates(g.x); err != nil {
			return err
		}
	}
	if first || info.NominalsOfContinuousStatesChanged {
		if err := g.me.GetNominalsOfContinuousStates(g.nominal); err != nil {
			return err
		}
		for i, v := range g.nominal {
			if !(v > 0) || math.IsInf(v, 0) {
				g.nominal[i] = 1 // a nominal that is no scale: FMI's default
			}
		}
	}
	g.hasNextEvent, g.nextEvent = info.NextEventTimeDefined, info.NextEventTime
	return g.restart(t)
}

// restart takes up the derivatives and event indicators at t, after an
// event or an input that changed them.
func (g *integrator) restart(t float64) error {
	if err := g.rhs(t, g.x, g.dx); err != nil {
		return err
	}
	return g.indicators(g.z)
}

// setTime gives the instance the time t, unless it has it.
func (g *integrator) setTime(t float64) error {
	if t == g.timeSet {
		return nil
	}
	g.timeSet = math.NaN()
	if err := g.me.SetTime(t); err != nil {
		return err
	}
	g.timeSet = t
	return nil
}

// rhs evaluates the derivatives at (t, x).
func (g *integrator) rhs(t float64, x, dx []float64) error {
	if err := g.rhsState(t, x); err != nil {
		return err
	}
	if g.n == 0 {
		return nil
	}
	if err := g.me.GetDerivatives(dx); err != nil {
		return err
	}
	for i, v := range dx {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("the derivative of %s is %g at t = %g", g.stateNames[i], v, t)
		}
	}
	return nil
}

func (g *integrator) indicators(z []float64) error {
	if g.nz == 0 {
		return nil
	}
	return g.me.GetEventIndicators(z)
}

// crossed reports whether some indicator is in another domain (z > 0 or
// z ≤ 0) in b than in a.
func crossed(a, b []float64) bool {
	for i := range a {
		if (a[i] > 0) != (b[i] > 0) {
			return true
		}
	}
	return false
}

// advance integrates from t to the communication point to, handling the
// events on the way. It returns the time reached: to, or where the FMU
// ended the simulation.
func (g *integrator) advance(t, to float64, stats *Stats) (float64, error) {
	if g.h == 0 {
		g.h = g.initialStep(to - t)
	}
	for t < to {
		end := to
		timeEvent := g.hasNextEvent && g.nextEvent <= to
		if timeEvent {
			end = g.nextEvent
		}
		h := min(g.h, end-t)
		last := h >= end-t || end-t-h <= eventTolerance(end)
		if last {
			h = end - t
		}
		tNew := t + h
		if last {
			tNew = end // not t + (end − t), which may miss end by a rounding
		}
		errNorm, err := g.attempt(t, h, tNew)
		if err != nil {
			return t, err
		}
		if errNorm > 1 || math.IsNaN(errNorm) {
			stats.Rejected++
			fac := shrinkMin
			if !math.IsNaN(errNorm) {
				fac = max(shrinkMin, safety*detmath.Pow(errNorm, -0.2))
			}
			g.h = h * fac
			if g.h < 16*1e-16*max(1, math.Abs(t)) {
				return t, fmt.Errorf("the integrator's step fell to %g s at t = %g: the model is too stiff for an explicit solver, or jumps without an event", g.h, t)
			}
			continue
		}
		stats.SolverSteps++
		if !last || errNorm > 0 {
			g.h = h * min(growMax, max(shrinkMin, safety*detmath.Pow(max(errNorm, 1e-10), -0.2)))
		}
		if err := g.indicators(g.zNew); err != nil {
			return t, err
		}
		if crossed(g.z, g.zNew) {
			tEvent, err := g.locate(t, h, tNew)
			if err != nil {
				return t, err
			}
			stats.StateEvents++
			if err := g.event(tEvent, false); err != nil {
				return tEvent, err
			}
			t = tEvent
			continue
		}
		t = tNew
		copy(g.x, g.xNew)
		copy(g.dx, g.k[6])
		copy(g.z, g.zNew)
		if g.callCompleted {
			enter, terminate, err := g.me.CompletedIntegratorStep(true)
			if err != nil {
				return t, err
			}
			if terminate {
				return t, fmt.Errorf("%w at t = %g (after an integrator step)", ErrTerminated, t)
			}
			if enter {
				stats.StepEvents++
				if err := g.event(t, false); err != nil {
					return t, err
				}
				continue
			}
		}
		if timeEvent && last {
			stats.TimeEvents++
			if err := g.event(t, false); err != nil {
				return t, err
			}
		}
	}
	return t, nil
}

// initialStep guesses a first step from the states' and derivatives'
// sizes (Hairer, Nørsett and Wanner II.4): one that changes the states by
// about 1 % of their scale.
func (g *integrator) initialStep(span float64) float64 {
	d0, d1 := 0.0, 0.0
	for i := range g.x {
		sc := float64(g.rtol*g.nominal[i]) + float64(g.rtol*math.Abs(g.x[i]))
		d0 += float64((g.x[i] / sc) * (g.x[i] / sc))
		d1 += float64((g.dx[i] / sc) * (g.dx[i] / sc))
	}
	h := 1e-6
	if d0 > 1e-10 && d1 > 1e-10 {
		h = 0.01 * math.Sqrt(d0/d1)
	}
	return max(min(h, span), 1e-12*span)
}

// attempt takes a step of h from (t, x) to tNew into xNew, the derivative
// there into k[6], and returns the estimated error relative to the
// tolerance (≤ 1: accept).
func (g *integrator) attempt(t, h, tNew float64) (float64, error) {
	x, xs, k := g.x, g.xs, g.k
	if g.n == 0 {
		return 0, g.rhs(tNew, g.xNew, k[6])
	}
	for i := range x {
		xs[i] = x[i] + float64(h*a21*k[0][i])
	}
	if err := g.rhs(t+float64(c2*h), xs, k[1]); err != nil {
		return 0, err
	}
	for i := range x {
		xs[i] = x[i] + float64(h*(float64(a31*k[0][i])+float64(a32*k[1][i])))
	}
	if err := g.rhs(t+float64(c3*h), xs, k[2]); err != nil {
		return 0, err
	}
	for i := range x {
		xs[i] = x[i] + float64(h*(float64(a41*k[0][i])+float64(a42*k[1][i])+float64(a43*k[2][i])))
	}
	if err := g.rhs(t+float64(c4*h), xs, k[3]); err != nil {
		return 0, err
	}
	for i := range x {
		xs[i] = x[i] + float64(h*(float64(a51*k[0][i])+float64(a52*k[1][i])+float64(a53*k[2][i])+float64(a54*k[3][i])))
	}
	if err := g.rhs(t+float64(c5*h), xs, k[4]); err != nil {
		return 0, err
	}
	for i := range x {
		xs[i] = x[i] + float64(h*(float64(a61*k[0][i])+float64(a62*k[1][i])+float64(a63*k[2][i])+float64(a64*k[3][i])+float64(a65*k[4][i])))
	}
	if err := g.rhs(tNew, xs, k[5]); err != nil {
		return 0, err
	}
	for i := range x {
		g.xNew[i] = x[i] + float64(h*(float64(a71*k[0][i])+float64(a73*k[2][i])+float64(a74*k[3][i])+float64(a75*k[4][i])+float64(a76*k[5][i])))
	}
	if err := g.rhs(tNew, g.xNew, k[6]); err != nil {
		return 0, err
	}
	sum := 0.0
	for i := range x {
		e := h * (float64(e1*k[0][i]) + float64(e3*k[2][i]) + float64(e4*k[3][i]) + float64(e5*k[4][i]) + float64(e6*k[5][i]) + float64(e7*k[6][i]))
		sc := float64(g.rtol*g.nominal[i]) + float64(g.rtol*max(math.Abs(x[i]), math.Abs(g.xNew[i])))
		sum += float64((e / sc) * (e / sc))
	}
	return math.Sqrt(sum / float64(g.n)), nil
}

// prepareDense computes the coefficients of the interpolant over the
// step just taken.
func (g *integrator) prepareDense(h float64) {
	k, r := g.k, g.dense
	for i := range g.x {
		diff := g.xNew[i] - g.x[i]
		bspl := float64(h*k[0][i]) - diff
		r[0][i] = g.x[i]
		r[1][i] = diff
		r[2][i] = bspl
		r[3][i] = diff - float64(h*k[6][i]) - bspl
		r[4][i] = h * (float64(d1*k[0][i]) + float64(d3*k[2][i]) + float64(d4*k[3][i]) + float64(d5*k[4][i]) + float64(d6*k[5][i]) + float64(d7*k[6][i]))
	}
}

// interpolate writes the state at the fraction theta of the step.
func (g *integrator) interpolate(theta float64, out []float64) {
	r, s := g.dense, 1-theta
	for i := range out {
		out[i] = r[0][i] + float64(theta*(r[1][i]+float64(s*(r[2][i]+float64(theta*(r[3][i]+float64(s*r[4][i])))))))
	}
}

// locate finds the first instant in the step from t to tNew at which an
// indicator changes domain, by bisection on the dense output, and leaves
// the instance and the integrator's state there. The instant returned is
// the end of the last bracket: the indicators have changed there.
func (g *integrator) locate(t, h, tNew float64) (float64, error) {
	g.prepareDense(h)
	lo, hi := t, tNew
	for hi-lo > eventTolerance(hi) {
		mid := lo + float64((hi-lo)/2) // (hi-lo)·0.5: a product
		if mid <= lo || mid >= hi {
			break
		}
		g.interpolate((mid-t)/h, g.xProbe)
		if err := g.rhsState(mid, g.xProbe); err != nil {
			return 0, err
		}
		if err := g.indicators(g.zProbe); err != nil {
			return 0, err
		}
		if crossed(g.z, g.zProbe) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if hi == tNew {
		copy(g.x, g.xNew)
	} else {
		g.interpolate((hi-t)/h, g.x)
	}
	return hi, g.rhsState(hi, g.x)
}

// rhsState sets time and states without asking for derivatives.
func (g *integrator) rhsState(t float64, x []float64) error {
	if err := g.setTime(t); err != nil {
		return err
	}
	if g.n == 0 {
		return nil
	}
	return g.me.SetContinuousStates(x)
}
