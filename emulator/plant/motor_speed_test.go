package plant_test

import (
	"math"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
)

// stepResponse runs a model's uncut loop for d and returns its output of
// interest at each step of the integrator, after the setpoint steps at
// 100 ms.
func stepResponse(t *testing.T, overrides map[string]float64, d time.Duration) (out []float64, step time.Duration) {
	t.Helper()
	b, _ := plant.LookupBuiltin("motor-speed")
	m, err := b.Model(overrides)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plant.New(m)
	if err != nil {
		t.Fatal(err)
	}
	step = time.Millisecond
	it, err := plant.NewIntegrator(p.Whole(), plant.Trapezoidal, step)
	if err != nil {
		t.Fatal(err)
	}
	k := p.SignalIndex("wL")
	for it.Time() < d {
		it.Sample()
		if it.Time() >= 100*time.Millisecond {
			out = append(out, it.Signal(k))
		}
		it.Advance()
	}
	return out, step
}

// TestMotorSpeedIsWellDamped: with the default gains the PI cancels the
// motor's mechanical pole (Ti = J_eff·R/(K² + R·b_eff), J_eff = J +
// JL/N², b_eff = b + bL/N²: 22.7 ms against kp/ki = 22.9 ms), so the loop
// is an integrator, L(s) ≈ ωc/s with ωc = kp·G0/Ti, G0 = K/(K² + R·b_eff)/N
// the plant's gain from volts to the load's rad/s, and the closed loop
// is first order: no overshoot, and within 2 % of the setpoint after
// ln(50)/ωc. The sampling at 100 Hz (a lag of h/2 = 5 ms, 1.8° at ωc) and
// the shaft's resonance (162 rad/s, where |L| is 0.1) change that little:
// overshoot under 1 %, settling within 10 % of ln(50)/ωc, and no error
// left (integral action).
func TestMotorSpeedIsWellDamped(t *testing.T) {
	b, _ := plant.LookupBuiltin("motor-speed")
	par := map[string]float64{}
	for _, p := range b.Params {
		par[p.Name] = p.Value
	}
	beff := par["b"] + par["bL"]/(par["N"]*par["N"])
	g0 := par["K"] / (par["K"]*par["K"] + par["R"]*beff) / par["N"]
	ti := par["kp"] / par["ki"]
	wc := par["kp"] * g0 / ti
	out, step := stepResponse(t, nil, 3*time.Second)
	const r = 10
	peak, settled := 0.0, 0
	for i, y := range out {
		peak = max(peak, y)
		if math.Abs(y-r) > 0.02*r {
			settled = i + 1
		}
	}
	ts := time.Duration(settled) * step
	want := time.Duration(math.Log(50) / wc * 1e9)
	t.Logf("ωc %.2f rad/s; overshoot %.3f %%, settled in %v (first order: %v), final %.6f", wc, 100*(peak-r)/r, ts, want, out[len(out)-1])
	if peak > 1.01*r {
		t.Errorf("overshoot %.2f %%", 100*(peak-r)/r)
	}
	if math.Abs(float64(ts-want)) > 0.1*float64(want) {
		t.Errorf("settled in %v, want %v ± 10 %%", ts, want)
	}
	if final := out[len(out)-1]; math.Abs(final-r) > 1e-3 {
		t.Errorf("final speed %v", final)
	}
}

func TestMotorSpeedRefusesBadControllers(t *testing.T) {
	b, _ := plant.LookupBuiltin("motor-speed")
	for _, tc := range []struct {
		set  map[string]float64
		want string
	}{
		{map[string]float64{"rate": 0}, "model motor-speed: parameter rate = 0 Hz is out of range: must be 0 < x ≤ 1e+09 (sampling rate)"},
		{map[string]float64{"rate": 1e-6}, "model motor-speed: the controller's rate 1e-06 Hz is too slow: its period must be at most a day (86400 s)"},
		{map[string]float64{"umin": 1, "umax": -1}, "model motor-speed: umin 1 V exceeds umax -1 V"},
		{map[string]float64{"kd": -1}, "model motor-speed: the gains kp 0.04, ki 1.75 and kd -1 must have one sign"},
		{map[string]float64{"tf": -1}, "model motor-speed: parameter tf = -1 s is out of range: must be ≥ 0 (time constant)"},
	} {
		if _, err := b.Model(tc.set); err == nil || err.Error() != tc.want {
			t.Errorf("%v: %v, want %s", tc.set, err, tc.want)
		}
	}
	// dc-motor's parameters come first, as they are.
	motor, _ := plant.LookupBuiltin("dc-motor")
	for i, p := range motor.Params {
		if b.Params[i] != p {
			t.Errorf("parameter %d: %+v, dc-motor's is %+v", i, b.Params[i], p)
		}
	}
}
