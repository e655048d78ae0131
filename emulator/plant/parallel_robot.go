package plant

import (
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
)

func init() {
	register(&Builtin{
		Name: "parallel-robot",
		Description: "Paper 002's pick-and-place robot: two arms hung from the ceiling, joined by their forearms at a travelling plate that carries a load, " +
			"moving in the X–Z plane, and the discrete PID at 1 kHz that makes the plate follow an ellipse; the angles go to the controller and the torques come back.",
		Source: "paper 002 (Sanz & Urquia, SIMPAT 2022), Section 6: the geometry (Eqs. 1–2), the dynamics' terms (Eqs. 3–11), Table 1 " +
			"(xp, L, l, m1, m2, m3, ml, Jmot, Jred, I, Fs, Fv, nu, g), the reference path (Eqs. 12–13), the PID (Eqs. 14–17) and Table 2 (Kc, Ti, Td, Ts, sat); " +
			"choices: the start (0, −0.6) m, the path's own start, taken by paper 002's reference code [6] too (the paper's (0, −0.38) is out of reach: 0.393 m from each motor, under l − L = 0.4 m); " +
			"gravity pulls the plate down like the arms (Eq. 11's g = (0, −g) added to ẍ would pull it up); the arm's weight acts at rG = L/2 (Eq. 6's m1·g·cos q has no lever arm); " +
			"dry friction Fs·tanh(q̇/vs) for sign(q̇), so the solvers see a derivative; the arms bend outwards, the plate hangs below the elbows; " +
			"Eq. 16 (garbled) read as D = (e_n − e_{n−1})/Ts; the PID's state starts at zero",
		Params: []Param{
			{"xp", 0.1, "m", "motor joints at (±xp, 0)", nonNegative("distance")},
			{"L", 0.3, "m", "arm length", positive("length")},
			{"l", 0.7, "m", "forearm length", positive("length")},
			{"m1", 0.82, "kg", "arm mass", positive("mass")},
			{"m2", 0.14, "kg", "forearm mass (half at the elbow, half at the plate)", positive("mass")},
			{"m3", 0.5, "kg", "travelling plate mass", positive("mass")},
			{"ml", 5, "kg", "load mass", nonNegative("mass")},
			{"Jmot", 0.37e-4, "kg·m²", "motor inertia", positive("inertia")},
			{"Jred", 9.09e-4, "kg·m²", "gear inertia", positive("inertia")},
			{"I", 0.0188, "kg·m²", "arm inertia about its joint", positive("inertia")},
			{"Fs", 3, "N·m", "dry friction", nonNegative("friction")},
			{"Fv", 0.5, "N·m·s", "viscous friction", nonNegative("friction")},
			{"nu", 5, "", "gear reduction ratio", positive("gear ratio")},
			{"g", 9.81, "m/s²", "gravity", nonNegative("gravity")},
			{"Kc", 2000, "N·m/rad", "PID proportional gain", anyFinite("gain")},
			{"Ti", 300, "s", "PID integral time", positive("time constant")},
			{"Td", 0.05, "s", "PID derivative time", nonNegative("time constant")},
			{"Ts", 0.001, "s", "PID sample time, from 1 ns to a day", Domain{Kind: "sample time", Min: 1e-9, Max: maxSamplePeriod}},
			{"sat", 50, "N·m", "torque saturation", nonNegative("torque limit")},
			{"rG", 0.15, "m", "arm's centre of mass from its joint (choice: L/2)", nonNegative("distance")},
			{"vs", 0.01, "rad/s", "dry friction's smoothing speed (choice)", positive("speed")},
			{"x0", 0, "m", "plate's start, x (choice: the path's start)", anyFinite("position")},
			{"z0", -0.6, "m", "plate's start, z (choice: the path's start)", anyFinite("position")},
		},
		check: checkParallelRobot,
		build: parallelRobot,
	})
}

// fiveBar is the robot's closed chain: the motor joints P1 = (xp, 0) and
// P2 = (−xp, 0), arms of length L to the elbows
//
//	E1 = (xp + L·cos q1, −L·sin q1),  E2 = (−xp − L·cos q2, −L·sin q2),
//
// and forearms of length l from the elbows to the plate p = (x, z): paper
// 002's Eqs. 1–2, |p − E1| = |p − E2| = l. z points up, so the plate hangs
// at z < 0 and a positive angle lowers its arm. Of the two ways each arm
// can bend and the two ways the plate can hang, the robot works with the
// elbows outside the motors and the plate below the elbows, and never
// leaves that branch without passing a singular pose.
type fiveBar struct{ xp, L, l float64 }

// inverse gives the angles that put the plate at (x, z): Eq. 1 is
// dx·cos q − dz·sin q = k with (dx, dz) = p − P1 and k = (|p − P1|² + L² −
// l²)/(2L), that is |p − P1|·cos(q + atan2(dz, dx)) = k, whose outward
// solution is q = −atan2(dz, dx) − acos(k/|p − P1|). Eq. 2 is Eq. 1 seen
// in a mirror (x → −x). ok is false where an arm cannot reach.
func (k fiveBar) inverse(x, z float64) (q1, q2 float64, ok bool) {
	arm := func(dx, dz float64) (float64, bool) {
		r := detmath.Hypot(dx, dz)
		c := (float64(r*r) + float64(k.L*k.L) - float64(k.l*k.l)) / (2 * k.L * r)
		if !(math.Abs(c) <= 1) {
			return math.NaN(), false
		}
		return -detmath.Atan2(dz, dx) - detmath.Acos(c), true
	}
	q1, ok1 := arm(x-k.xp, z)
	q2, ok2 := arm(-x-k.xp, z)
	return q1, q2, ok1 && ok2
}

// robotPose is the chain at some angles and rates: what the robot's
// equations need, computed once per evaluation.
type robotPose struct {
	e1x, e1z, e2x, e2z float64 // elbows
	x, z               float64 // plate
	u1x, u1z, u2x, u2z float64 // forearms, elbow to plate
	// J is the plate's velocity per joint rate, ṗ = J·q̇, row-major.
	j11, j12, j21, j22 float64
	ok                 bool
}

// pose solves the chain forward: the plate is where the circles of radius
// l about the elbows meet, below the line between them. With m their
// midpoint, v = E2 − E1 and d = |v|, that is p = m + √(l² − d²/4)·n, n the
// unit normal (−vz, vx)/d, which points down while E1 is right of E2.
//
// Differentiating |p − Ei|² = l² gives ui·ṗ = ui·Ei'·q̇i, ui = p − Ei and
// Ei' = dEi/dqi: U·ṗ = D·q̇ with U's rows u1, u2 and D = diag(u1·E1',
// u2·E2'), so J = U⁻¹·D. (Paper 002 writes the same as ẋ = −Jx⁻¹·Jq·q̇,
// Jx = ∂φ/∂x = 2U, Jq = ∂φ/∂q = −2D.) ok is false at a singular pose: the
// elbows too far apart or together (no plate), the forearms parallel (U
// singular).
func (k fiveBar) pose(q1, q2 float64) (p robotPose) {
	// Every product rounded before it is added (detmath's doc).
	s1, c1 := detmath.Sincos(q1)
	s2, c2 := detmath.Sincos(q2)
	p.e1x, p.e1z = k.xp+float64(k.L*c1), float64(-k.L*s1)
	p.e2x, p.e2z = -k.xp-float64(k.L*c2), float64(-k.L*s2)
	vx, vz := p.e2x-p.e1x, p.e2z-p.e1z
	d2 := float64(vx*vx) + float64(vz*vz)
	h2 := float64(k.l*k.l) - float64(d2/4) // a division by 4 is a product, as fusable
	if !(h2 > 0) || d2 == 0 {
		return p
	}
	s := math.Sqrt(h2 / d2)
	p.x = float64((p.e1x+p.e2x)/2) - float64(s*vz)
	p.z = float64((p.e1z+p.e2z)/2) + float64(s*vx)
	p.u1x, p.u1z = p.x-p.e1x, p.z-p.e1z
	p.u2x, p.u2z = p.x-p.e2x, p.z-p.e2z
	det := float64(p.u1x*p.u2z) - float64(p.u1z*p.u2x)
	if det == 0 {
		return p
	}
	// E1' = L·(−sin q1, −cos q1), E2' = L·(sin q2, −cos q2).
	d1 := k.L * (float64(-p.u1x*s1) - float64(p.u1z*c1))
	dd2 := k.L * (float64(p.u2x*s2) - float64(p.u2z*c2))
	p.j11, p.j12 = p.u2z*d1/det, -p.u1z*dd2/det
	p.j21, p.j22 = -p.u2x*d1/det, p.u1x*dd2/det
	p.ok = true
	return p
}

// checkParallelRobot refuses a start out of the robot's reach, such as
// paper 002's printed (0, −0.38) m.
func checkParallelRobot(p params) *ParamError {
	k := fiveBar{p["xp"], p["L"], p["l"]}
	q1, q2, ok := k.inverse(p["x0"], p["z0"])
	if !ok || !k.pose(q1, q2).ok {
		return paramError([]string{"x0", "z0", "xp", "L", "l"}, "the start (x0, z0) = (%g, %g) m is out of the robot's reach: each forearm's end must lie between l − L = %g m and l + L = %g m of its motor at (±%g, 0), and the plate below the elbows",
			p["x0"], p["z0"], p["l"]-p["L"], p["l"]+p["L"], p["xp"])
	}
	return nil
}

// parallelRobot: the robot in its actuated joints. The chain has two
// degrees of freedom, so the angles q = (q1, q2) and their rates are its
// state, and the plate follows from them (pose): the closed chain holds
// at every instant by construction, where integrating x and z with the
// angles (paper 002's DAE, Eqs. 1–8) would let it drift.
//
// The dynamics are paper 002's torque balance Γ = Γred + Γfric + Γarm +
// Γfarm + Γtplate (Eqs. 3–8), derived again from the energy so as to fix
// its signs and units. Per joint, the motor and gear turn at ν·q̇ (Γred),
// the arm turns about its joint (I), half of each forearm rides on its
// elbow and half on the plate; the plate and load, M = m2 + m3 + ml, move
// with ṗ = J·q̇. So
//
//	T = ½·A·|q̇|² + ½·M·|J·q̇|²,  A = ν²·(Jmot + Jred) + I + ½·m2·L²
//	V = −(m1·rG + ½·m2·L)·g·(sin q1 + sin q2) + M·g·z
//
// and Lagrange's equations give
//
//	(A·I₂ + M·JᵀJ)·q̈ = Γ − Γfric(q̇) + G(q) − M·Jᵀ·(J̇·q̇ + (0, g))
//
// with G_i = (m1·rG + ½·m2·L)·g·cos q_i the weight of arm and elbow, and
// Jᵀ·M·(p̈ + (0, g)) Eq. 8's Γtplate: the force the forearms must put on
// the plate, mapped to the joints by the transpose of the velocity
// Jacobian (virtual work). J̇·q̇ comes from differentiating ui·u̇i = 0
// once more: ui·p̈ = ui·Ei'·q̈i + ui·Ei”·q̇i² − |u̇i|², so p̈ = J·q̈ + U⁻¹·c,
// ci = ui·Ei”·q̇i² − |u̇i|², u̇i = ṗ − Ei'·q̇i.
//
// The controller is Eqs. 14–17 as a sampled block: every Ts it reads the
// angles, computes the torques and holds them. It reads the reference
// angles from the planner, which solves Eqs. 1–2 for the path's point
// (inverse), as paper 002's controller does. The path is the model's
// inputs x_d and z_d (Eqs. 12–13), so both sides of a cut read it without
// sending it, and tracking measures the plate's distance from it.
func parallelRobot(p params) Model {
	k := fiveBar{p["xp"], p["L"], p["l"]}
	L, m1, m2, g := p["L"], p["m1"], p["m2"], p["g"]
	M := m2 + p["m3"] + p["ml"]
	A := float64(p["nu"]*p["nu"]*(p["Jmot"]+p["Jred"])) + p["I"] + float64(0.5*m2*L*L)
	weight := (float64(m1*p["rG"]) + float64(0.5*m2*L)) * g
	Fs, Fv, vs := p["Fs"], p["Fv"], p["vs"]
	robot := func(_ float64, s, u, ds []float64) {
		q1, q2, w1, w2 := s[0], s[1], s[2], s[3]
		ps := k.pose(q1, q2)
		ds[0], ds[1] = w1, w2
		if !ps.ok {
			// A singular pose: no equations of motion hold there. NaN
			// makes the run's signals say so rather than carry on.
			ds[2], ds[3] = math.NaN(), math.NaN()
			return
		}
		s1, c1 := detmath.Sincos(q1)
		s2, c2 := detmath.Sincos(q2)
		vx := float64(ps.j11*w1) + float64(ps.j12*w2)
		vz := float64(ps.j21*w1) + float64(ps.j22*w2)
		// u̇i = ṗ − Ei'·q̇i, and ci = ui·Ei''·q̇i² − |u̇i|² with E1'' =
		// L·(−cos q1, sin q1), E2'' = L·(cos q2, sin q2).
		du1x, du1z := vx+float64(L*s1*w1), vz+float64(L*c1*w1)
		du2x, du2z := vx-float64(L*s2*w2), vz+float64(L*c2*w2)
		cc1 := float64(L*(float64(-ps.u1x*c1)+float64(ps.u1z*s1))*w1*w1) - (float64(du1x*du1x) + float64(du1z*du1z))
		cc2 := float64(L*(float64(ps.u2x*c2)+float64(ps.u2z*s2))*w2*w2) - (float64(du2x*du2x) + float64(du2z*du2z))
		det := float64(ps.u1x*ps.u2z) - float64(ps.u1z*ps.u2x)
		// The plate's acceleration beyond J·q̈, U⁻¹·c, and gravity.
		ax := (float64(ps.u2z*cc1) - float64(ps.u1z*cc2)) / det
		az := (float64(-ps.u2x*cc1)+float64(ps.u1x*cc2))/det + g
		r1 := u[0] - float64(Fs*detmath.Tanh(w1/vs)) - float64(Fv*w1) + float64(weight*c1) - float64(M*(float64(ps.j11*ax)+float64(ps.j21*az)))
		r2 := u[1] - float64(Fs*detmath.Tanh(w2/vs)) - float64(Fv*w2) + float64(weight*c2) - float64(M*(float64(ps.j12*ax)+float64(ps.j22*az)))
		m11 := A + float64(M*(float64(ps.j11*ps.j11)+float64(ps.j21*ps.j21)))
		m12 := M * (float64(ps.j11*ps.j12) + float64(ps.j21*ps.j22))
		m22 := A + float64(M*(float64(ps.j12*ps.j12)+float64(ps.j22*ps.j22)))
		dm := float64(m11*m22) - float64(m12*m12)
		ds[2] = (float64(m22*r1) - float64(m12*r2)) / dm
		ds[3] = (float64(m11*r2) - float64(m12*r1)) / dm
	}
	robotOut := func(_ float64, s, _, y []float64) {
		ps := k.pose(s[0], s[1])
		if !ps.ok {
			ps.x, ps.z = math.NaN(), math.NaN()
		}
		y[0], y[1], y[2], y[3] = s[0], s[1], ps.x, ps.z
		y[4] = float64(ps.j11*s[2]) + float64(ps.j12*s[3])
		y[5] = float64(ps.j21*s[2]) + float64(ps.j22*s[3])
	}
	Kc, Ti, Td, sat := p["Kc"], p["Ti"], p["Td"], p["sat"]
	ts := time.Duration(math.Round(p["Ts"] * 1e9))
	Ts := ts.Seconds()
	// The PID's state is I_{n−1} and e_{n−1} per joint; at sample n, e_n =
	// q_d,n − q_n, I_n = I_{n−1} + Ts·e_{n−1}, D_n = (e_n − e_{n−1})/Ts and
	// Γ_n = clamp(Kc·(e_n + I_n/Ti + Td·D_n), ±sat).
	pid := func(_ float64, x, u, y []float64) {
		for j := range 2 {
			e := u[j] - u[2+j]
			i := x[j] + float64(Ts*x[2+j])
			y[j] = max(-sat, min(sat, Kc*(e+i/Ti+Td*(e-x[2+j])/Ts)))
		}
	}
	pidUpdate := func(_ float64, x, u, next []float64) {
		for j := range 2 {
			next[j] = x[j] + float64(Ts*x[2+j])
			next[2+j] = u[j] - u[2+j]
		}
	}
	q1, q2, _ := k.inverse(p["x0"], p["z0"])
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "robot", States: []string{"q1", "q2", "w1", "w2"}, Inputs: []string{"tau1", "tau2"},
				Outputs:   []string{"q1", "q2", "x", "z", "vx", "vz"},
				Initial:   []float64{q1, q2, 0, 0},
				Equations: &Equations{Derivative: robot, Output: robotOut},
			},
			{
				Name: "planner", Inputs: []string{"x_d", "z_d"}, Outputs: []string{"q1_d", "q2_d"},
				Equations: &Equations{
					Output: func(_ float64, _, u, y []float64) {
						y[0], y[1], _ = k.inverse(u[0], u[1]) // NaN out of reach
					},
					Feedthrough: true,
				},
			},
			{
				Name: "controller", States: []string{"I1", "I2", "e1", "e2"}, Inputs: []string{"q1_d", "q2_d", "q1", "q2"},
				Outputs:   []string{"tau1", "tau2"},
				Equations: &Equations{Output: pid, Update: pidUpdate, Period: ts, Feedthrough: true},
			},
			{
				Name: "tracking", Inputs: []string{"x", "z", "x_d", "z_d"}, Outputs: []string{"ex", "ez", "track_err"},
				Equations: &Equations{
					Output: func(_ float64, _, u, y []float64) {
						y[0], y[1] = u[0]-u[2], u[1]-u[3]
						y[2] = detmath.Hypot(y[0], y[1])
					},
					Feedthrough: true,
				},
			},
		},
		Inputs: []Input{
			// Eqs. 12–13: x_d = −0.35·sin(πt/2), z_d = −0.7 + 0.1·cos(πt/2).
			{Name: "x_d", Stimulus: Sine{Amplitude: -0.35, Period: 4 * time.Second}},
			{Name: "z_d", Stimulus: Sine{Amplitude: 0.1, Offset: -0.7, Period: 4 * time.Second, Phase: math.Pi / 2}},
		},
		Cuts: []Cut{
			{Name: "controller", Hardware: []string{"planner", "controller"}, Description: "paper 002's bus: the controller on the bench gets the angles q1, q2 and sends the torques tau1, tau2; the rig simulates the robot"},
			{Name: "robot", Hardware: []string{"robot", "tracking"}, Description: "the robot on the bench sends its angles and gets the torques; the rig runs the planner and the PID"},
		},
		Output: "track_err",
	}
}
