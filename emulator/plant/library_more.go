package plant

import (
	"fmt"
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
)

func init() {
	register(&Builtin{
		Name:        "dc-motor",
		Description: "A DC motor driving a load through a gear and a compliant shaft, from its terminal voltage: the classic bench plant, stiff through its winding's inductance.",
		Source: "motor: University of Michigan, Control Tutorials for MATLAB and Simulink, DC Motor Position: System Modeling (J, b, K, R, L); " +
			"gear, shaft and load: stated choices",
		Params: []Param{
			{"J", 3.2284e-6, "kg·m²", "rotor inertia", positive("inertia")},
			{"b", 3.5077e-6, "N·m·s", "rotor viscous friction", nonNegative("friction")},
			{"K", 0.0274, "N·m/A", "torque constant (and back-EMF constant, V·s/rad)", positive("motor constant")},
			{"R", 4, "Ω", "winding resistance", positive("resistance")},
			{"L", 2.75e-6, "H", "winding inductance", positive("inductance")},
			{"N", 10, "", "gear ratio, motor turns per load turn", positive("gear ratio")},
			{"JL", 1e-4, "kg·m²", "load inertia", positive("inertia")},
			{"bL", 1e-4, "N·m·s", "load viscous friction", nonNegative("friction")},
			{"ks", 2, "N·m/rad", "shaft stiffness, at the load", nonNegative("stiffness")},
			{"bs", 1e-3, "N·m·s", "shaft damping, at the load", nonNegative("damping")},
		},
		build: dcMotor,
	})
	register(&Builtin{
		Name:        "two-link-arm",
		Description: "A two-link arm in a vertical plane, driven by joint torques, and the PID controller that makes it track a reference at 1 kHz.",
		Source: "paper 002 (Sanz & Urquia, SIMPAT 2022), Tables 1 and 2: link lengths and masses, motor and gear inertia, friction, PID gains and saturation; " +
			"paper 002's robot is a parallel one, this is a serial arm with its numbers; the PID is continuous, its derivative filtered at the 1 ms sample time",
		Params: []Param{
			{"L1", 0.3, "m", "upper link (arm) length", positive("length")},
			{"L2", 0.7, "m", "lower link (forearm) length", positive("length")},
			{"m1", 0.82, "kg", "upper link mass", positive("mass")},
			{"m2", 0.14, "kg", "lower link mass", positive("mass")},
			{"mp", 5.5, "kg", "tool and load at the tip (0.5 + 5 kg)", nonNegative("mass")},
			{"I1", 0.0188, "kg·m²", "upper link inertia about its joint", positive("inertia")},
			{"Jm", 0.37e-4, "kg·m²", "motor inertia", positive("inertia")},
			{"Jg", 9.09e-4, "kg·m²", "gear inertia", positive("inertia")},
			{"nu", 5, "", "gear reduction ratio", positive("gear ratio")},
			{"Fs", 3, "N·m", "dry friction (smoothed over 0.01 rad/s)", nonNegative("friction")},
			{"Fv", 0.5, "N·m·s", "viscous friction", nonNegative("friction")},
			{"g", 9.81, "m/s²", "gravity", nonNegative("gravity")},
			{"Kc", 2000, "N·m/rad", "proportional gain", anyFinite("gain")},
			{"Ti", 300, "s", "integral time", positive("time constant")},
			{"Td", 0.05, "s", "derivative time", nonNegative("time constant")},
			{"Tf", 0.001, "s", "derivative filter (the sample time)", positive("time constant")},
			{"sat", 50, "N·m", "torque saturation", nonNegative("torque limit")},
		},
		build: twoLinkArm,
	})
	register(&Builtin{
		Name:        "platoon",
		Description: "A platoon of a lead vehicle and its followers on a highway; the lead broadcasts its position, speed and acceleration, and accelerates from 17.9 to 25.9 m/s.",
		Source: "paper 003 (Lin et al., NPC 2012), Section 5.1: vehicle coefficients (Kd, τ, dm, m), control coefficients, the lead's profile (jerk 2 m/s³, peak 2 m/s²); " +
			"vehicle dynamics of Sheikholeslam & Desoer; the control law is a reconstruction, stated in hilrig's documentation, since paper 003 cites it without giving it",
		Params: []Param{
			{"n", 15, "", "followers", Domain{Kind: "count", Min: 1, Max: maxFollowers, Whole: true}},
			{"spacing", 10, "m", "desired distance between vehicles", nonNegative("distance")},
			{"v0", 17.9, "m/s", "initial speed", anyFinite("speed")},
			{"Kd", 0.3, "kg/m", "aerodynamic drag coefficient", nonNegative("drag coefficient")},
			{"tau", 0.2, "s", "engine time constant", positive("time constant")},
			{"dm", 5, "N", "mechanical drag", nonNegative("drag")},
			{"m", 1464, "kg", "vehicle mass", positive("mass")},
			{"ca1", 15, "", "first follower: relative acceleration gain", anyFinite("gain")},
			{"cv1", 74, "1/s", "first follower: relative speed gain", anyFinite("gain")},
			{"cp1", 120, "1/s²", "first follower: spacing gain", anyFinite("gain")},
			{"ka1", -3.03, "", "first follower: lead acceleration gain", anyFinite("gain")},
			{"kv1", -0.05, "1/s", "first follower: lead speed gain", anyFinite("gain")},
			{"ca", 5, "", "followers: relative acceleration gain", anyFinite("gain")},
			{"cv", 49, "1/s", "followers: relative speed gain", anyFinite("gain")},
			{"cp", 120, "1/s²", "followers: spacing gain", anyFinite("gain")},
			{"ka", 10, "", "followers: lead acceleration gain", anyFinite("gain")},
			{"kv", 25, "1/s", "followers: lead speed gain", anyFinite("gain")},
		},
		build: platoon,
	})
	register(&Builtin{
		Name:        "bicycle",
		Description: "A small wheeled robot as a kinematic bicycle with lagging speed and steering, and a driver that steers it onto the x axis.",
		Source: "paper 004 (Frasheri et al., RAS 2023), Section 5: the kinematic bicycle approximating the Desktop Robotti, at 0.16 m/s; " +
			"wheelbase, lags, steering limit and driver gains are stated choices",
		Params: []Param{
			{"L", 0.3, "m", "wheelbase", positive("length")},
			{"tv", 0.3, "s", "speed lag", positive("time constant")},
			{"td", 0.1, "s", "steering lag", positive("time constant")},
			{"dmax", 0.5, "rad", "steering limit (short of π/2, where tan δ is infinite)", Domain{Kind: "angle", Min: 0, Max: math.Pi / 2, MaxOpen: true}},
			{"ky", 2, "rad/m", "driver: lateral offset gain", anyFinite("gain")},
			{"kpsi", 1.5, "", "driver: heading gain", anyFinite("gain")},
			{"y0", 0.2, "m", "initial lateral offset", anyFinite("position")},
		},
		build: bicycle,
	})
}

// dcMotor: the armature L·di/dt = V − R·i − K·ωm and rotor J·dωm/dt =
// K·i − b·ωm − τg, where τg is the gear's torque back on the motor. The
// shaft twist φ = θm/N − θL gives the load side torque τs = ks·φ + bs·(ωm/N
// − ωL), so JL·dωL/dt = τs − bL·ωL and τg = τs/N.
func dcMotor(p params) Model {
	J, b, K, R, L := p["J"], p["b"], p["K"], p["R"], p["L"]
	N, JL, bL, ks, bs := p["N"], p["JL"], p["bL"], p["ks"], p["bs"]
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "motor", States: []string{"i", "wm"}, Inputs: []string{"V", "tau_gear"}, Outputs: []string{"wm", "current"},
				Linear: &LTI{
					A: dense([]float64{-R / L, -K / L}, []float64{K / J, -b / J}),
					B: dense([]float64{1 / L, 0}, []float64{0, -1 / J}),
					C: dense([]float64{0, 1}, []float64{1, 0}),
				},
			},
			{
				Name: "gear", States: []string{"twist", "wL", "thetaL"}, Inputs: []string{"wm"}, Outputs: []string{"tau_gear", "wL", "thetaL"},
				Linear: &LTI{
					A: dense([]float64{0, -1, 0}, []float64{ks / JL, -(bs + bL) / JL, 0}, []float64{0, 1, 0}),
					B: dense([]float64{1 / N}, []float64{bs / (N * JL)}, []float64{0}),
					C: dense([]float64{ks / N, -bs / N, 0}, []float64{0, 1, 0}, []float64{0, 0, 1}),
					D: dense([]float64{bs / (N * N)}, []float64{0}, []float64{0}),
				},
			},
		},
		Inputs: []Input{{Name: "V", Stimulus: Step{Time: 100 * time.Millisecond, To: 1}}},
		Cuts: []Cut{
			{Name: "motor", Hardware: []string{"motor"}, Description: "at the shaft: the motor and its drive on the bench, the rig emulates gear and load (a dynamometer)"},
			{Name: "load", Hardware: []string{"gear"}, Description: "at the shaft: gear and load on the bench, the rig emulates the motor"},
		},
		Output: "wL",
	}
}

// twoLinkArm: M(q)·q̈ + C(q, q̇)·q̇ + G(q) + F(q̇) = τ for a serial arm
// with q1 the upper link's angle from the horizontal and q2 the elbow's,
// uniform links, the load at the tip, and each joint's motor and gear
// inertia ν²·(Jm + Jg) on the diagonal. Friction is Fs·tanh(q̇/0.01) +
// Fv·q̇: sign(q̇) smoothed, so that the implicit solver's Newton
// iterations see a derivative.
func twoLinkArm(p params) Model {
	L1, L2, m1, m2, mp, I1 := p["L1"], p["L2"], p["m1"], p["m2"], p["mp"], p["I1"]
	Jr := p["nu"] * p["nu"] * (p["Jm"] + p["Jg"])
	Fs, Fv, g := p["Fs"], p["Fv"], p["g"]
	lc2, I2 := L2/2, m2*L2*L2/12
	arm := func(_ float64, x, u, dx []float64) {
		q1, q2, w1, w2 := x[0], x[1], x[2], x[3]
		// Every product rounded before it is added (detmath's doc).
		c2, s2 := detmath.Cos(q2), detmath.Sin(q2)
		m11 := I1 + float64(m2*(float64(L1*L1)+float64(lc2*lc2)+float64(2*L1*lc2*c2))) + I2 + float64(mp*(float64(L1*L1)+float64(L2*L2)+float64(2*L1*L2*c2))) + Jr
		m12 := float64(m2*(float64(lc2*lc2)+float64(L1*lc2*c2))) + I2 + float64(mp*(float64(L2*L2)+float64(L1*L2*c2)))
		m22 := float64(m2*lc2*lc2) + I2 + float64(mp*L2*L2) + Jr
		h := float64((float64(m2*lc2) + float64(mp*L2)) * L1 * s2)
		g1 := float64((float64(m1*L1/2)+float64((m2+mp)*L1))*g*detmath.Cos(q1)) + float64((float64(m2*lc2)+float64(mp*L2))*g*detmath.Cos(q1+q2))
		g2 := float64((float64(m2*lc2) + float64(mp*L2)) * g * detmath.Cos(q1+q2))
		f1 := float64(Fs*detmath.Tanh(w1/0.01)) + float64(Fv*w1)
		f2 := float64(Fs*detmath.Tanh(w2/0.01)) + float64(Fv*w2)
		r1 := u[0] + float64(h*(float64(2*w1*w2)+float64(w2*w2))) - g1 - f1
		r2 := u[1] - float64(h*w1*w1) - g2 - f2
		det := float64(m11*m22) - float64(m12*m12)
		dx[0], dx[1] = w1, w2
		dx[2] = (float64(m22*r1) - float64(m12*r2)) / det
		dx[3] = (float64(m11*r2) - float64(m12*r1)) / det
	}
	Kc, Ti, Td, Tf, sat := p["Kc"], p["Ti"], p["Td"], p["Tf"], p["sat"]
	// The PID on each joint: e = q_ref − q, dI/dt = e, and the derivative
	// Td·(e − f)/Tf through the filter df/dt = (e − f)/Tf.
	pid := func(x, u, y []float64) {
		for j := range 2 {
			e := u[j] - u[2+j]
			y[j] = max(-sat, min(sat, Kc*(e+x[j]/Ti+Td*(e-x[2+j])/Tf)))
		}
	}
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "arm", States: []string{"q1", "q2", "w1", "w2"}, Inputs: []string{"tau1", "tau2"}, Outputs: []string{"q1", "q2"},
				Initial: []float64{-math.Pi / 2, 0, 0, 0},
				Equations: &Equations{
					Derivative: arm,
					Output:     func(_ float64, x, _, y []float64) { y[0], y[1] = x[0], x[1] },
				},
			},
			{
				Name: "controller", States: []string{"I1", "I2", "f1", "f2"}, Inputs: []string{"q1_ref", "q2_ref", "q1", "q2"}, Outputs: []string{"tau1", "tau2"},
				Equations: &Equations{
					Derivative: func(_ float64, x, u, dx []float64) {
						for j := range 2 {
							e := u[j] - u[2+j]
							dx[j] = e
							dx[2+j] = (e - x[2+j]) / Tf
						}
					},
					Output:      func(_ float64, x, u, y []float64) { pid(x, u, y) },
					Feedthrough: true,
				},
			},
		},
		Inputs: []Input{
			{Name: "q1_ref", Stimulus: Sine{Amplitude: 0.5, Offset: -math.Pi / 2, Period: 4 * time.Second}},
			{Name: "q2_ref", Stimulus: Sine{Amplitude: 0.3, Period: 4 * time.Second}},
		},
		Cuts:   []Cut{{Name: "controller", Hardware: []string{"controller"}, Description: "the controller under test on the bench; the rig simulates the arm"}},
		Output: "q1",
	}
}

// maxFollowers bounds the platoon: each follower adds three states, and
// the implicit solver's Newton matrix, dense, costs up to the cube of the
// states to factorise. Paper 003 has fifteen; a hundred (300 states) took
// 1.4 s for 10 s of hilrig sim at 10 ms steps where fifteen took 0.17 s
// (a 2-core VM), and a thousand would take some thousand times as long.
const maxFollowers = 100

// platoon: each follower i has the longitudinal dynamics of Sheikholeslam
// and Desoer, dx/dt = v, dv/dt = a, da/dt = −(2Kd/m)·v·a − (a + Kd·v²/m +
// dm/m)/τ + c/(τ·m), and the engine command c = m·u + Kd·v² + dm + 2τ·Kd·v·a
// that makes τ·da/dt + a = u exactly. Its synthetic input, with εi =
// x(i−1) − xi − spacing, is
//
//	ui = u(i−1) + ca·ε̈i + cv·ε̇i + cp·εi + kv·(v0 − vi) + ka·(a0 − ai),
//
// with the first follower's gains for i = 1; the lead's u0 is its own
// τ·da0/dt + a0. The lead follows a jerk profile.
func platoon(p params) Model {
	n := int(p["n"]) // a whole number from 1 to maxFollowers
	spacing, v0 := p["spacing"], p["v0"]
	Kd, tau, dm, m := p["Kd"], p["tau"], p["dm"], p["m"]
	gains := func(i int) (ca, cv, cp, ka, kv float64) {
		if i == 1 {
			return p["ca1"], p["cv1"], p["cp1"], p["ka1"], p["kv1"]
		}
		return p["ca"], p["cv"], p["cp"], p["ka"], p["kv"]
	}
	// follow walks the followers from the lead's broadcast (u[0:4] = x0,
	// v0, a0, u0), handing each its spacing error and synthetic input.
	follow := func(x, u []float64, each func(i int, eps, ui float64)) {
		xp, vp, ap, up := u[0], u[1], u[2], u[3]
		for i := 1; i <= n; i++ {
			xi, vi, ai := x[3*(i-1)], x[3*(i-1)+1], x[3*(i-1)+2]
			ca, cv, cp, ka, kv := gains(i)
			eps := xp - xi - spacing
			ui := up + float64(ca*(ap-ai)) + float64(cv*(vp-vi)) + float64(cp*eps) + float64(kv*(u[1]-vi)) + float64(ka*(u[2]-ai))
			each(i-1, eps, ui)
			xp, vp, ap, up = xi, vi, ai, ui
		}
	}
	var states, outputs []string
	initial := make([]float64, 0, 3*n)
	for i := 1; i <= n; i++ {
		states = append(states, fmt.Sprintf("x%d", i), fmt.Sprintf("v%d", i), fmt.Sprintf("a%d", i))
		outputs = append(outputs, fmt.Sprintf("e%d", i))
		initial = append(initial, -float64(i)*spacing, v0, 0)
	}
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "lead", States: []string{"x0", "v0", "a0"}, Inputs: []string{"jerk"}, Outputs: []string{"x0", "v0", "a0", "u0"},
				Initial: []float64{0, v0, 0},
				Equations: &Equations{
					Derivative: func(_ float64, x, u, dx []float64) { dx[0], dx[1], dx[2] = x[1], x[2], u[0] },
					Output: func(_ float64, x, u, y []float64) {
						y[0], y[1], y[2], y[3] = x[0], x[1], x[2], x[2]+float64(tau*u[0])
					},
					Feedthrough: true,
				},
			},
			{
				Name: "followers", States: states, Inputs: []string{"x0", "v0", "a0", "u0"}, Outputs: outputs, Initial: initial,
				Equations: &Equations{
					Derivative: func(_ float64, x, u, dx []float64) {
						follow(x, u, func(i int, _, ui float64) {
							v, a := x[3*i+1], x[3*i+2]
							c := float64(m*ui) + float64(Kd*v*v) + dm + float64(2*tau*Kd*v*a)
							dx[3*i] = v
							dx[3*i+1] = a
							dx[3*i+2] = float64(-(2*Kd/m)*v*a) - (a+Kd*v*v/m+dm/m)/tau + c/(tau*m)
						})
					},
					Output: func(_ float64, x, u, y []float64) {
						follow(x, u, func(i int, eps, _ float64) { y[i] = eps })
					},
					Feedthrough: true,
				},
			},
		},
		Inputs: []Input{{Name: "jerk", Stimulus: Steps{{0, 2}, {time.Second, 0}, {4 * time.Second, -2}, {5 * time.Second, 0}}}},
		Cuts:   []Cut{{Name: "lead", Hardware: []string{"lead"}, Description: "the lead vehicle on the bench, broadcasting its state; the rig simulates the followers"}},
		Output: "e1",
	}
}

// bicycle: the kinematic bicycle about the rear axle, dx/dt = v·cos ψ,
// dy/dt = v·sin ψ, dψ/dt = v·tan δ/L, with speed and steering following
// their commands through first-order lags. The driver steers onto the x
// axis: δcmd = −ky·y − kψ·ψ, within ±dmax.
func bicycle(p params) Model {
	L, tv, td, dmax, ky, kpsi := p["L"], p["tv"], p["td"], p["dmax"], p["ky"], p["kpsi"]
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "robot", States: []string{"x", "y", "psi", "v", "delta"}, Inputs: []string{"v_cmd", "delta_cmd"}, Outputs: []string{"x", "y", "psi"},
				Initial: []float64{0, p["y0"], 0, 0, 0},
				Equations: &Equations{
					Derivative: func(_ float64, s, u, ds []float64) {
						psi, v, delta := s[2], s[3], s[4]
						ds[0] = v * detmath.Cos(psi)
						ds[1] = v * detmath.Sin(psi)
						ds[2] = v * detmath.Tan(delta) / L
						ds[3] = (u[0] - v) / tv
						ds[4] = (u[1] - delta) / td
					},
					Output: func(_ float64, s, _, y []float64) { y[0], y[1], y[2] = s[0], s[1], s[2] },
				},
			},
			{
				Name: "driver", Inputs: []string{"speed", "y", "psi"}, Outputs: []string{"v_cmd", "delta_cmd"},
				Equations: &Equations{
					Output: func(_ float64, _, u, y []float64) {
						y[0] = u[0]
						y[1] = max(-dmax, min(dmax, float64(-ky*u[1])-float64(kpsi*u[2])))
					},
					Feedthrough: true,
				},
			},
		},
		Inputs: []Input{{Name: "speed", Stimulus: Constant(0.16)}},
		Cuts:   []Cut{{Name: "robot", Hardware: []string{"robot"}, Description: "the robot on the bench (the physical twin); the rig simulates its driver (the digital twin's side)"}},
		Output: "y",
	}
}
