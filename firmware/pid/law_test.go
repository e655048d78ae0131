package pid

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestLawMatchesItsDifferenceEquations(t *testing.T) {
	// Kp 2, Ki 10/s, Kd 0.05 s, h 10 ms, Tf 20 ms, wide limits: the
	// textbook recursion by hand for three steps.
	l := Law{Gains: Gains{Kp: 2, Ki: 10, Kd: 0.05}, Period: 10 * time.Millisecond, FilterTime: 20 * time.Millisecond, Min: -100, Max: 100}
	h, tf := 0.01, 0.02
	ys := []float64{0, 0.1, 0.3}
	var i, d, yPrev float64
	for k, y := range ys {
		e := 1 - y
		if k > 0 {
			d = tf/(tf+h)*d - 0.05/(tf+h)*(y-yPrev)
		}
		want := 2*e + i + d
		i += 10 * h * e
		yPrev = y
		if got := l.Update(1, y); math.Abs(got-want) > 1e-12 {
			t.Fatalf("step %d: u %v, want %v", k, got, want)
		}
	}
}

func TestSetpointStepKicksOnlyTheProportionalTerm(t *testing.T) {
	l := Law{Gains: Gains{Kp: 1.5, Ki: 0, Kd: 2}, Period: time.Millisecond, Min: -1e9, Max: 1e9}
	for range 10 {
		l.Update(0, 0.25)
	}
	before := l.Output()
	after := l.Update(1, 0.25) // the setpoint steps by 1, the measurement holds
	// Derivative on the error would add Kd/h·Δr = 2000; on the
	// measurement it adds nothing.
	if d := after - before; math.Abs(d-1.5) > 1e-12 {
		t.Errorf("the output moved by %v on a unit setpoint step, want Kp = 1.5", d)
	}
	// A measurement step does move the derivative: by −Kd/h·Δy.
	if d := l.Update(1, 0.5) - after; math.Abs(d-(-1.5*0.25-2/0.001*0.25)) > 1e-9 {
		t.Errorf("a measurement step of 0.25 moved the output by %v", d)
	}
}

func TestOutputStaysWithinItsLimits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	l := Law{Gains: Gains{Kp: 3, Ki: 50, Kd: 0.1}, Period: time.Millisecond, FilterTime: time.Millisecond, Min: -2, Max: 5}
	for range 10000 {
		u := l.Update(r.NormFloat64()*10, r.NormFloat64()*10)
		if u < -2 || u > 5 {
			t.Fatalf("output %v outside [-2, 5]", u)
		}
	}
	if u := l.Update(math.NaN(), 0); u != l.Output() {
		t.Errorf("a NaN setpoint changed the output to %v", u)
	}
}

// TestAntiWindup checks back-calculation against its equilibrium. While
// the output is held at Max with error e, the integrator update
// I ← I + Ki·h·e + (h/Tt)·(u − v) settles where Ki·h·e = (h/Tt)·(v − u):
// the unsaturated output v exceeds the limit by exactly Ki·Tt·e, whatever
// the time spent saturated. So when the error reverses to e' the output
// leaves the limit in the first step if Kp·(e − e') > Ki·Tt·e. Without
// anti-windup the integrator keeps growing by Ki·h·e a step, and the
// output stays stuck at the limit for about I/(Ki·|e'|).
func TestAntiWindup(t *testing.T) {
	const kp, ki = 0.5, 1.0 // Ti = Kp/Ki = 0.5 s, and Tt = Ti without derivative action
	tt := kp / ki
	for _, tc := range []struct {
		name     string
		tracking time.Duration
		leaves   bool
	}{
		{"back-calculation", 0, true},
		{"none (Tt = 10⁶ s)", 1e6 * time.Second, false},
	} {
		l := Law{Gains: Gains{Kp: kp, Ki: ki}, Period: 10 * time.Millisecond, Min: -1, Max: 1, TrackingTime: tc.tracking}
		e := 10.0
		for range 2000 { // 20 s saturated; (1 − h/Tt)^2000 = 0.98^2000 ≈ 3e-18
			if u := l.Update(e, 0); u != 1 {
				t.Fatalf("%s: not saturated: %v", tc.name, u)
			}
		}
		if tc.leaves {
			v := kp*e + l.Integral()
			if over := v - 1; math.Abs(over-ki*tt*e) > 1e-9 {
				t.Errorf("%s: v exceeds the limit by %v, want Ki·Tt·e = %v", tc.name, over, ki*tt*e)
			}
		}
		// The error reverses to −1: Kp·(e − e') = 5.5 > Ki·Tt·e = 5.
		u := l.Update(-1, 0)
		if left := u < 1; left != tc.leaves {
			t.Errorf("%s: output %v after the reversal", tc.name, u)
		}
	}
}

func TestForgetDropsTheDerivativesHistory(t *testing.T) {
	l := Law{Gains: Gains{Kp: 1, Ki: 1, Kd: 1}, Period: time.Millisecond, Min: -1e9, Max: 1e9}
	l.Update(0, 0)
	l.Update(0, 1)
	i := l.Integral()
	l.Forget()
	// After an outage the measurement jumped from 1 to 5: no kick of
	// −Kd/h·4 = −4000, only P and I.
	if u, want := l.Update(0, 5), -5+i; math.Abs(u-want) > 1e-12 {
		t.Errorf("first output after Forget %v, want %v", u, want)
	}
}

func TestLawCheck(t *testing.T) {
	good := Law{Gains: Gains{Kp: 1}, Period: time.Millisecond, Min: -1, Max: 1}
	for _, tc := range []struct {
		name string
		edit func(*Law)
		want string
	}{
		{"good", func(*Law) {}, ""},
		{"reverse acting", func(l *Law) { l.Kp, l.Ki = -1, -2 }, ""},
		{"no period", func(l *Law) { l.Period = 0 }, "pid: the period must be positive"},
		{"limits crossed", func(l *Law) { l.Min = 2 }, "pid: the output's minimum exceeds its maximum"},
		{"NaN limit", func(l *Law) { l.Max = math.NaN() }, "pid: the output's minimum exceeds its maximum"},
		{"mixed signs", func(l *Law) { l.Ki = -1 }, "pid: gains must have one sign (all negative for a reverse-acting plant)"},
		{"infinite gain", func(l *Law) { l.Kd = math.Inf(1) }, "pid: gains must be finite"},
		{"negative filter", func(l *Law) { l.FilterTime = -1 }, "pid: the filter and tracking times must not be negative"},
	} {
		l := good
		tc.edit(&l)
		err := l.Check()
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
