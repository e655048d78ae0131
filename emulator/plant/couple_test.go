package plant

import (
	"math"
	"math/cmplx"
	"strings"
	"testing"
	"time"
)

// paperTheta is paper 001's closed form: its transfer functions (22) for
// CP1 and (25)–(26) for CP2 with Table 1's numbers, and the distortion (6)
// for Δ = e^(−2τs). It shares no code with Analyse.
func paperTheta(cut string, s complex128, tau float64) (theta, sr complex128) {
	const (
		b1, b2, b3 = 200e3, 30e3, 250.0
		k1, k2, k3 = 1e6, 275e3, 1.4e3
		m1, m2, m3 = 110.0, 900.0, 20.0
	)
	var g11, g12, g21, g22, gr complex128
	switch cut {
	case "CP1":
		den := s * (m1*s*s + (b1+b2)*s + k1 + k2)
		g11 = -(b1*s + k1) / den
		g12 = (m1*s*s + b1*s + k1) / den
		g21 = -(b1*s + k1) * (b2*s + k2) / den
		g22 = (b2*s + k2) * (m1*s*s + b1*s + k1) / den
		gr = -(m3*s*s + b3*s + k3) / (s * (m2*m3*s*s + b3*(m2+m3)*s + k3*(m2+m3)))
	case "CP2":
		d := m2*s*s*(m1*s*s+(b1+b2)*s+k1+k2) + (b2*s+k2)*(m1*s*s+b1*s+k1)
		g11 = -m2 * s * (b1*s + k1) / d
		g12 = (m1*s*s + b1*s + k1) / d
		g21 = (b1*s + k1) * (b2*s + k2) / d
		g22 = s * (m1*s*s + (b1+b2)*s + k1 + k2) / d
		gr = -m3 * s * (b3*s + k3) / (m3*s*s + b3*s + k3)
	}
	delta := cmplx.Exp(-2 * complex(tau, 0) * s)
	a := (g12*g21 - g11*g22) * gr
	theta = g12 * g21 * gr * (delta - 1) / ((1 - delta*g22*gr) * (g11 + a))
	sr = g12 * g21 * gr / ((1 - g22*gr) * (g11 + a))
	return theta, sr
}

// TestCouplingMatchesPaper001: Analyse, working from the quarter car's
// four blocks, agrees with the paper's own closed-form transfer functions
// at every frequency to 1e-6 relative.
func TestCouplingMatchesPaper001(t *testing.T) {
	p := quarterCarPlant(t)
	omegas := LogSpace(0.1, 1000, 50)
	for _, cut := range []string{"CP1", "CP2"} {
		a, err := Analyse(p, cut, "v0", "deflection", 20*time.Millisecond, omegas)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Linear {
			t.Error("the quarter car is linear")
		}
		worst := 0.0
		for i, w := range omegas {
			theta, sr := paperTheta(cut, complex(0, w), 0.02)
			worst = max(worst, cmplx.Abs(a.Distortion[i]-theta)/cmplx.Abs(theta), cmplx.Abs(a.Sensitivity[i]-sr)/cmplx.Abs(sr))
		}
		if worst > 1e-6 {
			t.Errorf("%s: relative difference from the paper's formulas up to %.3g", cut, worst)
		}
	}
}

// TestPaper001Figure8 is the paper's result: with τ = 20 ms the
// distortion of the deflection peaks at about 20 dB near 30 rad/s when the
// car is cut at CP1, and stays near or below −40 dB at every frequency at
// CP2. The paper reads these off its Figure 8; its own equations (6), (22),
// (25)–(27), evaluated exactly (paperTheta, on a fine grid), give 24.0 dB
// at 31.6 rad/s for CP1 and at most −38.3 dB for CP2. The tolerances are
// the figure's reading: 20 ± 5 dB between 25 and 40 rad/s for CP1, at most
// −35 dB for CP2, and CP2 below CP1 at every frequency. The CP1 peak's
// frequency is the time-domain oscillation's: 2π/ω ≈ 0.2 s.
func TestPaper001Figure8(t *testing.T) {
	p := quarterCarPlant(t)
	omegas := LogSpace(0.1, 1000, 50)
	cp1, err := Analyse(p, "CP1", "v0", "deflection", 20*time.Millisecond, omegas)
	if err != nil {
		t.Fatal(err)
	}
	cp2, err := Analyse(p, "CP2", "v0", "deflection", 20*time.Millisecond, omegas)
	if err != nil {
		t.Fatal(err)
	}
	db1, w1 := cp1.PeakDistortion()
	db2, w2 := cp2.PeakDistortion()
	t.Logf("CP1 peaks at %.1f dB at %.1f rad/s (period %.3f s); CP2 at %.1f dB at %.1f rad/s", db1, w1, 2*math.Pi/w1, db2, w2)
	if math.Abs(db1-20) > 5 || w1 < 25 || w1 > 40 {
		t.Errorf("CP1 peak %.1f dB at %.1f rad/s", db1, w1)
	}
	if db2 > -35 {
		t.Errorf("CP2 peak %.1f dB", db2)
	}
	for i := range omegas {
		if DB(cp2.Distortion[i]) >= DB(cp1.Distortion[i]) {
			t.Errorf("at %g rad/s CP2's distortion is not below CP1's", omegas[i])
			break
		}
	}
	s1, _ := cp1.PeakSensitivity()
	s2, _ := cp2.PeakSensitivity()
	for i := range omegas {
		if DB(cp2.Sensitivity[i]) >= DB(cp1.Sensitivity[i]) {
			t.Errorf("at %g rad/s CP2's sensitivity is not below CP1's (paper 001, Figure 9)", omegas[i])
			break
		}
	}
	t.Logf("peak sensitivity: CP1 %.1f dB, CP2 %.1f dB", s1, s2)
}

func TestAnalyseRefusesWhatItCannotAnalyse(t *testing.T) {
	p := quarterCarPlant(t)
	w := []float64{1}
	for _, tc := range []struct {
		cut, input, output, want string
	}{
		{"CP3", "v0", "deflection", "model quarter-car has no cut CP3; did you mean CP1? (its cuts: CP1, CP2)"},
		{"CP1", "v2", "deflection", "v2 is not an input of model quarter-car (its inputs: v0)"},
		{"CP1", "v0", "deflexion", "model quarter-car has no signal deflexion; did you mean deflection?"},
		{"CP1", "v0", "v3", "v3 is computed by seat, which cut CP1 puts on the bench; the output must be one the rig simulates"},
	} {
		if _, err := Analyse(p, tc.cut, tc.input, tc.output, 20*time.Millisecond, w); err == nil || err.Error() != tc.want {
			t.Errorf("%s %s %s: %v\nwant %s", tc.cut, tc.input, tc.output, err, tc.want)
		}
	}
}

func TestLogSpace(t *testing.T) {
	w := LogSpace(0.1, 1000, 50)
	if len(w) != 201 || w[0] != 0.1 || math.Abs(w[200]-1000) > 1e-9 || math.Abs(w[50]-1) > 1e-12 {
		t.Errorf("%d points, %g … %g, w[50] = %g", len(w), w[0], w[len(w)-1], w[50])
	}
}

// TestAnalyseRefusesNumbersThatOverflow: with each parameter in its domain
// but the tyre's damping and the suspension's stiffness at 1e308, the
// wheel's equations overflow and CP1's responses are NaN: Analyse says so
// rather than hand NaN to be ranked (whose decibels compare with nothing,
// so that couple ranked such a cut first at −Inf dB). With the seat's
// spring and damper gone (k3 = b3 = 0) nothing crosses CP2 back: its
// distortion and sensitivity are exactly zero, a result, not an error.
func TestAnalyseRefusesNumbersThatOverflow(t *testing.T) {
	omegas := LogSpace(0.1, 1000, 50)
	for _, tc := range []struct {
		params map[string]float64
		cut    string
		err    string
	}{
		{map[string]float64{"b1": 1e308, "k2": 1e308}, "CP1", "cut CP1 at 0.1 rad/s: the distortion is (NaN+NaNi), not a finite number"},
		{map[string]float64{"k3": 0, "b3": 0}, "CP2", ""},
	} {
		p, err := New(builtin(t, "quarter-car", tc.params))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Analyse(p, tc.cut, "v0", "deflection", 20*time.Millisecond, omegas)
		switch {
		case tc.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%v: %v, want %s", tc.params, err, tc.err)
			}
		case err != nil:
			t.Errorf("%v: %v", tc.params, err)
		default:
			for i := range omegas {
				if a.Distortion[i] != 0 || a.Sensitivity[i] != 0 {
					t.Fatalf("%v at %g rad/s: Θ %v, Sr %v; want 0", tc.params, omegas[i], a.Distortion[i], a.Sensitivity[i])
				}
			}
		}
	}
}
