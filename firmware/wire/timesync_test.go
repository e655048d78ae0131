package wire

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestTimeSampleOffsetAndDelay(t *testing.T) {
	// The remote clock is 1 s ahead; the request takes 3 ms, the answer
	// 5 ms, the remote side turns round in 1 ms.
	ms := time.Millisecond
	s := TimeSample{T1: 10 * ms, T2: 1013 * ms, T3: 1014 * ms, T4: 19 * ms}
	// The offset is off by half the asymmetry, (3 − 5)/2 ms.
	if s.Offset() != 999*ms || s.Delay() != 8*ms {
		t.Errorf("offset %v, delay %v; want 999ms, 8ms", s.Offset(), s.Delay())
	}
	var c ClockEstimator
	if c.Ready() || c.Add(TimeSample{T1: 5, T2: 0, T3: 0, T4: 4}) || c.Add(TimeSample{T1: 0, T2: 5, T3: 4, T4: 9}) || c.Add(TimeSample{T1: 0, T2: 0, T3: 9, T4: 1}) {
		t.Error("an exchange running backwards was taken")
	}
	c.Add(s)
	if !c.Ready() || c.Offset(0) != 999*ms || c.Offset(time.Hour) != 999*ms || c.Drift() != 0 {
		t.Errorf("one exchange: offset %v, drift %v", c.Offset(0), c.Drift())
	}
	if got := c.ToLocal(c.ToRemote(123456789)); got != 123456789 {
		t.Errorf("to remote and back: %d", got)
	}
}

// clockSim is a remote clock reading off0 + (1+rho)·l at local time l,
// and a link whose one-way delays are base plus a uniform draw from
// [0, width) each way, independently.
type clockSim struct {
	off0        time.Duration
	rho         float64
	base, width time.Duration
	r           *rand.Rand
}

func (c clockSim) remote(l time.Duration) time.Duration {
	return c.off0 + l + time.Duration(c.rho*float64(l))
}

func (c clockSim) local(r time.Duration) time.Duration {
	return time.Duration(float64(r-c.off0) / (1 + c.rho))
}

func (c clockSim) delay() time.Duration { return c.base + time.Duration(c.r.Int64N(int64(c.width))) }

// exchange runs a time sync started at local time l1, with extra delay on
// the request (a queue).
func (c clockSim) exchange(l1, extra time.Duration) TimeSample {
	t2 := c.remote(l1 + c.delay() + extra)
	t3 := t2 + 500*time.Microsecond
	return TimeSample{T1: l1, T2: t2, T3: t3, T4: c.local(t3) + c.delay()}
}

// TestClockEstimatorFindsOffsetAndDrift checks the fit against the
// statistics of least squares. Each exchange's offset errs by e =
// (d_up − d_down)/2 with the delays independent and uniform of width w:
// Var e = 2·(w²/12)/4 = w²/24. Over n exchanges at times t, the slope's
// standard error is σ_e/√Σ(t−t̄)² and the line's at a time t' is
// σ_e·√(1/n + (t'−t̄)²/Σ(t−t̄)²). Both must hold within 5 σ.
func TestClockEstimatorFindsOffsetAndDrift(t *testing.T) {
	for _, tc := range []struct {
		name  string
		off0  time.Duration
		rho   float64
		width time.Duration
	}{
		{"a crystal 200 ppm fast", 1234567800 * time.Nanosecond, 200e-6, 100 * time.Microsecond},
		{"an RC oscillator 1 % slow, behind", -5 * time.Second, -0.01, 300 * time.Microsecond},
		{"the same clock", 0, 0, 50 * time.Microsecond},
	} {
		sim := clockSim{off0: tc.off0, rho: tc.rho, base: time.Millisecond, width: tc.width, r: rand.New(rand.NewPCG(7, 8))}
		var c ClockEstimator
		const every = 100 * time.Millisecond
		var times []float64
		for k := range 3 * ClockWindow { // the window slides: only the last ClockWindow count
			l1 := time.Second + time.Duration(k)*every
			s := sim.exchange(l1, 0)
			if !c.Add(s) {
				t.Fatalf("%s: exchange %d refused", tc.name, k)
			}
			times = append(times, float64(s.T1+(s.T4-s.T1)/2))
		}
		times = times[len(times)-ClockWindow:]
		n := float64(len(times))
		var mean, sxx float64
		for _, x := range times {
			mean += x / n
		}
		for _, x := range times {
			sxx += (x - mean) * (x - mean)
		}
		sigmaE := float64(tc.width) / math.Sqrt(24)
		if d, tol := c.Drift()-tc.rho, 5*sigmaE/math.Sqrt(sxx); math.Abs(d) > tol {
			t.Errorf("%s: drift %.3g, want %.3g ± %.2g", tc.name, c.Drift(), tc.rho, tol)
		}
		// The offset a little after the last exchange, and the one-way
		// delay of a message sent then.
		at := time.Duration(times[len(times)-1]) + 50*time.Millisecond
		tol := 5 * sigmaE * math.Sqrt(1/n+(float64(at)-mean)*(float64(at)-mean)/sxx)
		if d := float64(c.Offset(at) - (sim.remote(at) - at)); math.Abs(d) > tol {
			t.Errorf("%s: offset off by %.0f ns, tolerance %.0f ns", tc.name, d, tol)
		}
		if d := float64(c.OneWayDelay(sim.remote(at), at+2*time.Millisecond) - 2*time.Millisecond); math.Abs(d) > tol+1 {
			t.Errorf("%s: one-way delay off by %.0f ns, tolerance %.0f ns", tc.name, d, tol)
		}
		if back := c.ToLocal(c.ToRemote(at)); back < at-1 || back > at+1 {
			t.Errorf("%s: %v to remote and back is %v", tc.name, at, back)
		}
	}
}

// TestClockEstimatorLeavesOutQueuedExchanges: a request held 20 ms in a
// queue biases its exchange's offset by +10 ms; three of 32 move the
// plain fit's line by about 3·10/32 ≈ 1 ms (more or less at the window's
// end, as their times tilt the slope), twenty times the tolerance of a
// fit without them (about 40 µs here), and MaxExcessDelay leaves them out.
func TestClockEstimatorLeavesOutQueuedExchanges(t *testing.T) {
	sim := clockSim{off0: time.Second, rho: 100e-6, base: time.Millisecond, width: 100 * time.Microsecond, r: rand.New(rand.NewPCG(9, 10))}
	plain, filtered := ClockEstimator{}, ClockEstimator{MaxExcessDelay: 500 * time.Microsecond}
	var last time.Duration
	for k := range ClockWindow {
		extra := time.Duration(0)
		if k%10 == 5 {
			extra = 20 * time.Millisecond
		}
		last = time.Duration(k) * 100 * time.Millisecond
		s := sim.exchange(last, extra)
		plain.Add(s)
		filtered.Add(s)
	}
	truth := sim.remote(last) - last
	// The filtered fit's tolerance as in the test above, with 29 exchanges.
	// (t'−t̄)²/Σ(t−t̄)² at the window's end is about (1.55 s)²/20.3 s².
	tol := 5 * float64(sim.width) / math.Sqrt(24) * math.Sqrt(1/29.0+0.12)
	if d := float64(filtered.Offset(last) - truth); math.Abs(d) > tol {
		t.Errorf("filtered: offset off by %.0f ns, tolerance %.0f", d, tol)
	}
	if d := float64(plain.Offset(last) - truth); math.Abs(d) < 10*tol {
		t.Errorf("unfiltered: offset off by only %.0f ns; the queued exchanges did not bias it, so the test tests nothing", d)
	}
}

func TestClockEstimatorReset(t *testing.T) {
	c := ClockEstimator{MaxExcessDelay: time.Millisecond}
	c.Add(TimeSample{T1: 0, T2: 5, T3: 6, T4: 1})
	c.Reset()
	if c.Ready() || c.Exchanges() != 0 || c.MaxExcessDelay != time.Millisecond {
		t.Errorf("after Reset: ready %v, %d exchanges, max excess %v", c.Ready(), c.Exchanges(), c.MaxExcessDelay)
	}
	c.Add(TimeSample{T1: 100, T2: 10, T3: 10, T4: 100})
	if off := c.Offset(100); off != -90 {
		t.Errorf("offset %v, want -90ns (the new exchange's alone)", off)
	}
}
