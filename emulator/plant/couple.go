package plant

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
	"github.com/hilrig/hilrig/emulator/suggest"

	"gonum.org/v1/gonum/mat"
)

// Linearization is a part as a linear state-space system around its
// initial state: dx/dt = A·x + B·w, y = C·x + D·w, with w its model inputs
// and then the signals it receives (Inputs), and y every signal it produces
// (Outputs), all as deviations from the initial values.
type Linearization struct {
	A, B, C, D *mat.Dense
	Inputs     []int // signal indices
	Outputs    []int
	Linear     bool // the part is linear: the matrices are exact
	n          int
}

// Linearize computes the part's state-space matrices from its equations by
// central differences around the initial state. For linear blocks a
// difference of ±1 is exact, so a linear part's matrices are its own. A
// sampled block is seen between its hits: its state and outputs held.
func (pt *Part) Linearize() *Linearization {
	ev := newEvaluator(pt)
	n := pt.n
	l := &Linearization{Inputs: append(slices.Clone(pt.external), pt.in...), Outputs: pt.produces, Linear: true, n: n}
	for _, s := range pt.subs {
		l.Linear = l.Linear && pt.plant.subs[s].Linear != nil
	}
	m, p := len(l.Inputs), len(l.Outputs)
	x0 := make([]float64, n)
	pt.initialState(x0)
	w0 := pt.plant.initialSignals()
	l.A, l.B = mat.NewDense(max(n, 1), max(n, 1), nil), mat.NewDense(max(n, 1), max(m, 1), nil)
	l.C, l.D = mat.NewDense(max(p, 1), max(n, 1), nil), mat.NewDense(max(p, 1), max(m, 1), nil)
	fp, fm, yp, ym := make([]float64, n), make([]float64, n), make([]float64, p), make([]float64, p)
	eval := func(x, w, f, y []float64) {
		copy(ev.sig, w)
		ev.derivative(0, x, f)
		for i, k := range l.Outputs {
			y[i] = ev.sig[k]
		}
	}
	step := func(v float64) float64 {
		if l.Linear {
			return 1
		}
		return 1e-6 * max(1, math.Abs(v))
	}
	// difference fills column j of df and dy with the central difference
	// for a change of the k-th state (or input), all else at rest.
	difference := func(ofState bool, k int, df, dy *mat.Dense, j int) {
		x, w := slices.Clone(x0), slices.Clone(w0)
		v := w
		if ofState {
			v = x
		}
		at := v[k]
		h := step(at)
		v[k] = at + h
		eval(x, w, fp, yp)
		v[k] = at - h
		eval(x, w, fm, ym)
		for i := range fp {
			df.Set(i, j, (fp[i]-fm[i])/(2*h))
		}
		for i := range yp {
			dy.Set(i, j, (yp[i]-ym[i])/(2*h))
		}
	}
	for j := range n {
		difference(true, j, l.A, l.C, j)
	}
	for j, k := range l.Inputs {
		difference(false, k, l.B, l.D, j)
	}
	return l
}

// Response is the frequency response G(jω) = C·(jωI − A)⁻¹·B + D from the
// inputs at positions cols (in Inputs) to the outputs at rows (in
// Outputs). The complex solve is done in real arithmetic, on
// [−A −ωI; ωI −A]·[Xr; Xi] = [B; 0], by the solvers' own LU.
func (l *Linearization) Response(omega float64, rows, cols []int) ([][]complex128, error) {
	n := l.n
	g := make([][]complex128, len(rows))
	for i := range g {
		g[i] = make([]complex128, len(cols))
	}
	// x[c] is [Xr; Xi] for the input at cols[c].
	x := make([][]float64, len(cols))
	if n > 0 {
		big := newLUFactors(2 * n)
		for i := range n {
			for j := range n {
				a := l.A.At(i, j)
				*big.at(i, j) = -a
				*big.at(n+i, n+j) = -a
			}
			*big.at(i, n+i) = -omega
			*big.at(n+i, i) = omega
		}
		big.factorise()
		if big.singular {
			return nil, fmt.Errorf("at %g rad/s: jωI − A is singular (a mode without damping at this frequency)", omega)
		}
		for c, col := range cols {
			x[c] = make([]float64, 2*n)
			for i := range n {
				x[c][i] = l.B.At(i, col)
			}
			big.solve(x[c])
		}
	}
	for r, row := range rows {
		for c, col := range cols {
			re, im := l.D.At(row, col), 0.0
			for k := range n {
				re += float64(l.C.At(row, k) * x[c][k])
				im += float64(l.C.At(row, k) * x[c][n+k])
			}
			g[r][c] = complex(re, im)
		}
	}
	return g, nil
}

// Analysis is paper 001's view of one cut in the frequency domain: how
// much a round-trip delay distorts the response of Output to Input, and
// how sensitive that response is to the hardware part.
type Analysis struct {
	Cut           string
	Input, Output string
	Delay         time.Duration // one way; the round trip is twice this
	Linear        bool          // false: the model was linearised at its initial state
	Omega         []float64     // rad/s
	// Distortion is Θ = (P − Rd)/Rd, with Rd the response without delay
	// and P the response with the hardware part's dynamics perturbed by
	// Δ = e^(−jω·2τ) (paper 001, equations 1–6).
	Distortion []complex128
	// Sensitivity is Sr = (∂Rd/Rd)/(∂Gr/Gr), the relative change of the
	// response for a relative change of the hardware dynamics (equation 7).
	Sensitivity []complex128
}

// LogSpace returns points from lo to hi, both included, evenly spaced in
// log scale, perDecade to a decade.
func LogSpace(lo, hi float64, perDecade int) []float64 {
	decades := detmath.Log10(hi / lo)
	n := int(math.Round(decades*float64(perDecade))) + 1
	out := make([]float64, n)
	for i := range out {
		out[i] = lo * detmath.Pow(10, decades*float64(i)/float64(n-1))
	}
	return out
}

// DB is a gain in decibels.
func DB(z complex128) float64 { return 20 * detmath.Log10(detmath.Abs(z)) }

// PeakDistortion is the largest |Θ| in dB and where it is.
func (a *Analysis) PeakDistortion() (db, omega float64) { return peak(a.Distortion, a.Omega) }

// PeakSensitivity is the largest |Sr| in dB and where it is.
func (a *Analysis) PeakSensitivity() (db, omega float64) { return peak(a.Sensitivity, a.Omega) }

func peak(zs []complex128, omega []float64) (db, at float64) {
	db = math.Inf(-1)
	for i, z := range zs {
		if d := DB(z); d > db {
			db, at = d, omega[i]
		}
	}
	return db, at
}

// Analyse computes the distortion and sensitivity of a cut at each
// frequency, for the response of a model output (computed by the part the
// rig simulates) to a model input (read by that part too). With one signal
// crossing each way these are paper 001's equations (6) and (8). With
// several, write the simulated part as [y1; y2] = [G11 G12; G21 G22]·[u1;
// u2] and the hardware part as u2 = δ·Gr·y2, δ a common perturbation of the
// hardware's dynamics; then the response is
//
//	T(δ) = G11 + G12·(I − δ·Gr·G22)⁻¹·δ·Gr·G21,
//
// Rd = T(1), P = T(Δ), and Sr = (dT/dδ at δ = 1)/Rd = G12·(I − Gr·G22)⁻²·Gr·G21/Rd,
// which reduce to (6) and (8) for scalars.
func Analyse(p *Plant, cut, input, output string, delay time.Duration, omegas []float64) (*Analysis, error) {
	sim, hw, err := p.Cut(cut)
	if err != nil {
		return nil, err
	}
	if sampled := append(sim.Sampled(), hw.Sampled()...); len(sampled) > 0 {
		return nil, fmt.Errorf("model %s has sampled blocks (%s): the frequency-domain analysis needs a continuous model", p.Name, strings.Join(sampled, ", "))
	}
	u1, y1 := p.SignalIndex(input), p.SignalIndex(output)
	switch {
	case u1 < 0 || p.producer[u1] >= 0:
		return nil, fmt.Errorf("%s is not an input of model %s (its inputs: %s)", input, p.Name, strings.Join(p.names(p.inputIndices()), ", "))
	case y1 < 0:
		return nil, fmt.Errorf("model %s has no signal %s%s", p.Name, output, suggest.DidYouMean(output, p.signals))
	case slices.Contains(hw.external, u1):
		return nil, fmt.Errorf("cut %s puts a reader of %s on the bench; the input must enter the part the rig simulates", cut, input)
	case !slices.Contains(sim.external, u1):
		return nil, fmt.Errorf("no subsystem the rig simulates at %s reads %s", cut, input)
	case !slices.Contains(sim.produces, y1):
		return nil, fmt.Errorf("%s is computed by %s, which cut %s puts on the bench; the output must be one the rig simulates", output, p.subs[p.producer[y1]].Name, cut)
	}
	ls, lh := sim.Linearize(), hw.Linearize()
	pos := func(list []int, k int) int { return slices.Index(list, k) }
	// The simulated part's inputs [u1, u2...] and outputs [y1, y2...].
	cols := []int{pos(ls.Inputs, u1)}
	for _, k := range sim.in {
		cols = append(cols, pos(ls.Inputs, k))
	}
	rows := []int{pos(ls.Outputs, y1)}
	for _, k := range sim.out {
		rows = append(rows, pos(ls.Outputs, k))
	}
	// The hardware part, from what it receives (the simulated part's y2)
	// to what it sends back (its u2).
	var hwCols, hwRows []int
	for _, k := range sim.out {
		hwCols = append(hwCols, pos(lh.Inputs, k))
	}
	for _, k := range sim.in {
		hwRows = append(hwRows, pos(lh.Outputs, k))
	}
	a := &Analysis{Cut: cut, Input: input, Output: output, Delay: delay, Linear: ls.Linear && lh.Linear, Omega: omegas}
	tau := delay.Seconds()
	for _, w := range omegas {
		g, err := ls.Response(w, rows, cols)
		if err != nil {
			return nil, err
		}
		gr, err := lh.Response(w, hwRows, hwCols)
		if err != nil {
			return nil, err
		}
		theta, sr, err := distortion(g, gr, detmath.Cis(-w*2*tau))
		if err != nil {
			return nil, fmt.Errorf("cut %s at %g rad/s: %w", cut, w, err)
		}
		// Numbers too large or too small for a float64 make NaN and
		// infinities, which have no decibels to rank.
		for _, v := range []struct {
			what string
			z    complex128
		}{{"distortion", theta}, {"sensitivity", sr}} {
			if !finite(real(v.z)) || !finite(imag(v.z)) {
				return nil, fmt.Errorf("cut %s at %.3g rad/s: the %s is %v, not a finite number: the model's numbers overflow (are its parameters extreme?)", cut, w, v.what, v.z)
			}
		}
		a.Distortion = append(a.Distortion, theta)
		a.Sensitivity = append(a.Sensitivity, sr)
	}
	return a, nil
}

func (p *Plant) inputIndices() []int {
	var out []int
	for k, pr := range p.producer {
		if pr < 0 {
			out = append(out, k)
		}
	}
	return out
}

// distortion evaluates Θ and Sr at one frequency from the simulated part's
// response g (row 0 and column 0 are y1 and u1; the rest y2 and u2) and
// the hardware's gr (u2 from y2), for the perturbation delta.
func distortion(g, gr [][]complex128, delta complex128) (theta, sr complex128, err error) {
	k2 := len(g) - 1    // signals sent to the hardware
	k1 := len(g[0]) - 1 // signals received from it
	// M = Gr·G22 (k1×k1) and N = Gr·G21 (k1×1).
	m := make([][]complex128, k1)
	nv := make([][]complex128, k1)
	for i := range k1 {
		m[i] = make([]complex128, k1)
		nv[i] = make([]complex128, 1)
		for j := range k1 {
			for l := range k2 {
				m[i][j] += detmath.Mul(gr[i][l], g[1+l][1+j])
			}
		}
		for l := range k2 {
			nv[i][0] += detmath.Mul(gr[i][l], g[1+l][0])
		}
	}
	response := func(d complex128) (complex128, [][]complex128, error) {
		// (I − d·M)·X = d·N
		lhs := make([][]complex128, k1)
		rhs := make([][]complex128, k1)
		for i := range k1 {
			lhs[i] = make([]complex128, k1)
			for j := range k1 {
				lhs[i][j] = detmath.Mul(-d, m[i][j])
			}
			lhs[i][i]++
			rhs[i] = []complex128{detmath.Mul(d, nv[i][0])}
		}
		x, err := complexSolve(lhs, rhs)
		if err != nil {
			return 0, nil, err
		}
		t := g[0][0]
		for j := range k1 {
			t += detmath.Mul(g[0][1+j], x[j][0])
		}
		return t, lhs, nil
	}
	rd, lhs1, err := response(1)
	if err != nil {
		return 0, 0, err
	}
	pd, _, err := response(delta)
	if err != nil {
		return 0, 0, err
	}
	if rd == 0 {
		return 0, 0, errors.New("the response without delay is zero")
	}
	// dT/dδ at 1 = G12·(I − M)⁻²·N: solve twice with I − M.
	y, err := complexSolve(lhs1, nv)
	if err == nil {
		y, err = complexSolve(lhs1, y)
	}
	if err != nil {
		return 0, 0, err
	}
	var dt complex128
	for j := range k1 {
		dt += detmath.Mul(g[0][1+j], y[j][0])
	}
	return detmath.Div(pd-rd, rd), detmath.Div(dt, rd), nil
}

// complexSolve solves A·X = B for complex A (n×n) and B (n×m) through the
// real system [Ar −Ai; Ai Ar]·[Xr; Xi] = [Br; Bi].
func complexSolve(a, b [][]complex128) ([][]complex128, error) {
	n, m := len(a), len(b[0])
	big := newLUFactors(2 * n)
	for i := range n {
		for j := range n {
			re, im := real(a[i][j]), imag(a[i][j])
			*big.at(i, j) = re
			*big.at(i, n+j) = -im
			*big.at(n+i, j) = im
			*big.at(n+i, n+j) = re
		}
	}
	big.factorise()
	if big.singular {
		return nil, errors.New("the coupled loop is singular here")
	}
	out := make([][]complex128, n)
	for i := range n {
		out[i] = make([]complex128, m)
	}
	x := make([]float64, 2*n)
	for j := range m {
		for i := range n {
			x[i], x[n+i] = real(b[i][j]), imag(b[i][j])
		}
		big.solve(x)
		for i := range n {
			out[i][j] = complex(x[i], x[n+i])
		}
	}
	return out, nil
}
