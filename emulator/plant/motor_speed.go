package plant

import (
	"math"
	"time"
)

func init() {
	// dc-motor's parameters, then the controller's. Files initialise in
	// the order of their names: library_more.go's dc-motor is there.
	motor, ok := builtins["dc-motor"]
	if !ok {
		panic("plant: motor-speed is registered before dc-motor")
	}
	ps := append(motor.Params[:len(motor.Params):len(motor.Params)],
		Param{"rate", 100, "Hz", "controller: sampling rate (the reference PID firmware's default); its period is from 1 ns to a day", Domain{Kind: "sampling rate", Min: 0, MinOpen: true, Max: 1e9}},
		Param{"kp", 0.04, "V·s/rad", "controller: proportional gain", anyFinite("gain")},
		Param{"ki", 1.75, "V/rad", "controller: integral gain (Ti = kp/ki = 22.9 ms, the motor's mechanical time constant)", anyFinite("gain")},
		Param{"kd", 0, "V·s²/rad", "controller: derivative gain, on the measurement", anyFinite("gain")},
		Param{"tf", 0, "s", "controller: derivative filter time constant", nonNegative("time constant")},
		Param{"tt", 0, "s", "controller: anti-windup tracking time (0: √(Ti·Td), or Ti without derivative action)", nonNegative("time constant")},
		Param{"umin", -12, "V", "controller: lowest voltage", anyFinite("voltage")},
		Param{"umax", 12, "V", "controller: highest voltage", anyFinite("voltage")},
	)
	register(&Builtin{
		Name: "motor-speed",
		Description: "A speed loop: the dc-motor's motor, gear and load, a setpoint for the load's speed, and the discrete PI controller " +
			"that drives the motor's voltage, as the reference PID firmware does; the controller is the hardware at its cut.",
		Source: "motor, gear and load: dc-motor's; controller: the reference PID firmware's law (firmware/pid: Åström and Hägglund's discrete PID, " +
			"derivative on the measurement with a first-order filter, output limits, back-calculation anti-windup), written out here, so that the stand-in " +
			"for the firmware runs the firmware's very law; default gains: a PI with Ti the motor's mechanical time constant, crossing over at about 6 rad/s " +
			"with some 85° of phase margin (firmware/cmd/pid matches them with --rate 100 --kp 0.04 --ki 1.75 --min -12 --max 12 --sample-layout f64le,f64le --setpoint-field 2)",
		Params: ps,
		build:  motorSpeed,
		check: func(p params) *ParamError {
			switch {
			case 1/p["rate"] > maxSamplePeriod:
				return paramError([]string{"rate"}, "the controller's rate %g Hz is too slow: its period must be at most a day (%g s)", p["rate"], maxSamplePeriod)
			case !(p["umin"] <= p["umax"]):
				return paramError([]string{"umin", "umax"}, "umin %g V exceeds umax %g V", p["umin"], p["umax"])
			case min(p["kp"], p["ki"], p["kd"]) < 0 && max(p["kp"], p["ki"], p["kd"]) > 0:
				return paramError([]string{"kp", "ki", "kd"}, "the gains kp %g, ki %g and kd %g must have one sign", p["kp"], p["ki"], p["kd"])
			}
			return nil
		},
	})
}

// maxSamplePeriod is the longest sample period, in seconds, a built-in's
// controller takes: a day, beyond any controller's, and well within the
// range of a time.Duration (292 years), which its period must fit.
const maxSamplePeriod = 86400.0

// motorSpeed: dc-motor's motor and gear (with the load), a reference that
// passes the setpoint r through (so that it crosses the cut with the
// speed, as a sample's second field), and the controller as a sampled
// block at the firmware's rate. The controller is firmware/pid's Law,
// step for step: with e = r − y at a hit,
//
//	D ← Tf/(Tf+h)·D − Kd/(Tf+h)·(y − y_prev)   (not at the first hit)
//	v = Kp·e + I + D,  u = min(max(v, umin), umax)
//	I ← I + Ki·h·e + h/Tt·(u − v)             (when Ki ≠ 0)
//
// its state I, D, y_prev and whether y_prev holds a measurement. The law
// is written here rather than imported: emulator/plant depends on nothing
// of the firmware's. tests/firmware_test.go holds the two equal.
func motorSpeed(p params) Model {
	m := dcMotor(p)
	h := 1 / p["rate"]
	period := time.Duration(math.Round(1e9 / p["rate"]))
	kp, ki, kd, tf := p["kp"], p["ki"], p["kd"], p["tf"]
	lo, hi := p["umin"], p["umax"]
	tt := p["tt"]
	if tt == 0 {
		switch {
		case kp == 0:
			tt = h
		case kd == 0:
			tt = kp / ki
		default:
			tt = math.Sqrt(kd / ki)
		}
	}
	tt = max(tt, h)
	// law computes the output at a hit and, given next, the state after.
	law := func(x, u, out, next []float64) {
		r, y := u[0], u[1]
		e := r - y
		d := x[1]
		if x[3] != 0 {
			d = float64(tf/(tf+h)*d) - float64(kd/(tf+h)*(y-x[2]))
		}
		v := float64(kp*e) + x[0] + d
		w := min(max(v, lo), hi)
		if out != nil {
			out[0] = w
		}
		if next != nil {
			next[0] = x[0]
			if ki != 0 {
				next[0] += float64(ki*h*e) + float64(h/tt*(w-v))
			}
			next[1], next[2], next[3] = d, y, 1
		}
	}
	m.Subsystems = append(m.Subsystems,
		Subsystem{
			Name: "reference", Inputs: []string{"setpoint"}, Outputs: []string{"r"},
			Equations: &Equations{Output: func(_ float64, _, u, y []float64) { y[0] = u[0] }, Feedthrough: true},
		},
		Subsystem{
			Name: "controller", States: []string{"I", "D", "y_prev", "primed"}, Inputs: []string{"r", "wL"}, Outputs: []string{"V"},
			Equations: &Equations{
				Output:      func(_ float64, x, u, y []float64) { law(x, u, y, nil) },
				Update:      func(_ float64, x, u, next []float64) { law(x, u, nil, next) },
				Period:      period,
				Feedthrough: true,
			},
		},
	)
	m.Inputs = []Input{{Name: "setpoint", Stimulus: Step{Time: 100 * time.Millisecond, To: 10}}}
	m.Cuts = []Cut{{Name: "controller", Hardware: []string{"controller"},
		Description: "the controller on the bench (the reference PID firmware, or a lab's own) gets the load's speed wL and the setpoint r, and sends the motor's voltage V; the rig simulates motor, gear, load and setpoint"}}
	m.Output = "wL"
	return m
}
