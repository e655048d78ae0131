// Package pid is a reference controller under test: a discrete PID at a
// fixed rate that reads measurements and sends commands over the rig wire
// protocol, holds its last command and raises a fault flag when the
// measurements stop, the safe behaviour a real controller must show.
//
// The control law is Åström and Hägglund's computer implementation (in
// Åström & Murray, Feedback Systems, chapter "PID Control", section
// "Implementation"): derivative on the
// measurement, so a setpoint step kicks only the proportional term; a
// first-order filter on the derivative; output limits; and anti-windup by
// back-calculation, which bleeds the integrator by how far the output is
// saturated, with tracking time Tt.
package pid

import (
	"errors"
	"math"
	"time"
)

// Gains are the parallel-form gains: u = Kp·e + Ki·∫e dt − Kd·dy/dt.
type Gains struct{ Kp, Ki, Kd float64 }

// Law is the discrete control law. Set its fields, then call Update once
// a period. Its zero state is at rest.
type Law struct {
	Gains
	Period   time.Duration // the sampling period h
	Min, Max float64       // output limits
	// FilterTime is the derivative filter's time constant Tf (0: none):
	// D(s) = −Kd·s/(1 + s·Tf)·Y(s).
	FilterTime time.Duration
	// TrackingTime is the anti-windup tracking time Tt. 0 chooses
	// √(Ti·Td), or Ti without derivative action (Ti = Kp/Ki, Td =
	// Kd/Kp), as Åström and Hägglund suggest; never less than the
	// period.
	TrackingTime time.Duration

	i, d, yPrev float64
	primed      bool // yPrev holds a measurement
	u           float64
}

// Check says what is wrong with the law's settings.
func (l *Law) Check() error {
	switch {
	case l.Period <= 0:
		return errors.New("pid: the period must be positive")
	case !(l.Min <= l.Max):
		return errors.New("pid: the output's minimum exceeds its maximum")
	case math.IsNaN(l.Kp+l.Ki+l.Kd) || math.IsInf(l.Kp, 0) || math.IsInf(l.Ki, 0) || math.IsInf(l.Kd, 0):
		return errors.New("pid: gains must be finite")
	case min(l.Kp, l.Ki, l.Kd) < 0 && max(l.Kp, l.Ki, l.Kd) > 0:
		return errors.New("pid: gains must have one sign (all negative for a reverse-acting plant)")
	case l.FilterTime < 0 || l.TrackingTime < 0:
		return errors.New("pid: the filter and tracking times must not be negative")
	}
	return nil
}

// tracking is Tt in seconds.
func (l *Law) tracking() float64 {
	h := l.Period.Seconds()
	tt := l.TrackingTime.Seconds()
	if tt == 0 {
		switch {
		case l.Kp == 0:
			tt = h // pure integral action: track at once
		case l.Kd == 0:
			tt = l.Kp / l.Ki
		default:
			tt = math.Sqrt(l.Kd / l.Ki) // √(Ti·Td) = √(Kp/Ki · Kd/Kp)
		}
	}
	return max(tt, h)
}

// Update takes the setpoint r and the measurement y of this period and
// returns the output u, within [Min, Max]. A NaN in either leaves the
// state as it was and returns the last output.
func (l *Law) Update(r, y float64) float64 {
	if math.IsNaN(r) || math.IsNaN(y) {
		return l.u
	}
	h := l.Period.Seconds()
	tf := l.FilterTime.Seconds()
	e := r - y
	if l.primed {
		// Backward difference of the filtered derivative:
		// D ← Tf/(Tf+h)·D − Kd/(Tf+h)·(y − y_prev).
		l.d = float64(tf/(tf+h)*l.d) - float64(l.Kd/(tf+h)*(y-l.yPrev))
	}
	// Each product is rounded before it is added, so that the law gives
	// the same bits on the device as in the rig (wire's doc).
	v := float64(l.Kp*e) + l.i + l.d
	u := min(max(v, l.Min), l.Max)
	if l.Ki != 0 {
		l.i += float64(l.Ki*h*e) + float64(h/l.tracking()*(u-v))
	}
	l.yPrev, l.primed, l.u = y, true, u
	return u
}

// Output is the last output.
func (l *Law) Output() float64 { return l.u }

// Integral is the integrator's state.
func (l *Law) Integral() float64 { return l.i }

// Forget drops the derivative's history, keeping the integrator: after
// an outage the next measurement is not differenced against a stale one.
func (l *Law) Forget() { l.d, l.primed = 0, false }
