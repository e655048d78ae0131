package emulator

import (
	"math"
	"slices"
	"testing"
	"time"
)

// markovLoss returns the long-run loss rate L of a Markov-modulated loss
// process and the asymptotic variance σ²∞ of its sample loss rate:
// a frame in state i is lost with probability e[i], the chain moves by the
// transition matrix P, and
//
//	L   = Σ πᵢ eᵢ
//	σ²∞ = L(1−L) + 2 Σ_{k≥1} Σᵢ πᵢ ēᵢ (Pᵏ ē)ᵢ,   ē = e − L,
//
// (losses are independent given the states, so their covariance at lag k
// is that of e(S₀) and e(Sₖ)). The sample loss rate of n frames is then
// within z999·√(σ²∞/n) of L with probability 0.999.
func markovLoss(P [][]float64, e []float64) (L, variance float64) {
	k := len(P)
	pi := make([]float64, k)
	pi[0] = 1
	for range 100_000 { // power iteration for the stationary distribution
		next := make([]float64, k)
		for i := range k {
			for j := range k {
				next[j] += pi[i] * P[i][j]
			}
		}
		pi = next
	}
	for i := range k {
		L += pi[i] * e[i]
	}
	variance = L * (1 - L)
	v := make([]float64, k)
	for i := range k {
		v[i] = e[i] - L
	}
	ebar := slices.Clone(v)
	for range 10_000 {
		next := make([]float64, k)
		for i := range k {
			for j := range k {
				next[i] += P[i][j] * v[j]
			}
		}
		v = next
		var cov float64
		for i := range k {
			cov += pi[i] * ebar[i] * v[i]
		}
		variance += 2 * cov
	}
	return L, variance
}

func lossRun(m LossModel, n int, seed uint64) (rate float64, lost []bool) {
	r := NewStream(seed, "loss test")
	var state lossState
	lost = make([]bool, n)
	count := 0
	for i := range lost {
		lost[i] = m.lose(&state, r)
		if lost[i] {
			count++
		}
	}
	return float64(count) / float64(n), lost
}

func TestGilbertElliottLossRate(t *testing.T) {
	tests := []GilbertElliott{
		{P: 0.01, R: 0.2, LossBad: 0.9, LossGood: 0.001}, // the example
		{P: 0.05, R: 0.95, LossBad: 1, LossGood: 0},      // netem defaults for p = 5 %
		{P: 0.002, R: 0.1, LossBad: 0.5, LossGood: 0.01},
	}
	const n = 1_000_000
	for _, m := range tests {
		// The closed form of the issue: [r(1−k) + p(1−h)]/(p + r).
		want := (m.R*m.LossGood + m.P*m.LossBad) / (m.P + m.R)
		if got := m.LossRate(); math.Abs(got-want) > 1e-15 {
			t.Errorf("%+v: LossRate %v, want %v", m, got, want)
		}
		L, variance := markovLoss([][]float64{{1 - m.P, m.P}, {m.R, 1 - m.R}}, []float64{m.LossGood, m.LossBad})
		if math.Abs(L-want) > 1e-9 {
			t.Fatalf("stationary loss %v ≠ closed form %v", L, want)
		}
		got, _ := lossRun(m, n, 1)
		tol := z999 * math.Sqrt(variance/n)
		if math.Abs(got-want) > tol {
			t.Errorf("%+v: lost %.5f of %d frames, want %.5f ± %.5f", m, got, n, want, tol)
		}
	}
}

func TestGilbertElliottBadSojourn(t *testing.T) {
	// With loss only in Bad (1−h = 1, 1−k = 0), loss bursts are the stays in
	// Bad: geometric with mean 1/r and variance (1−r)/r². The mean of m
	// bursts is within z999·√((1−r)/(r²m)) of 1/r.
	m := GilbertElliott{P: 0.02, R: 0.25, LossBad: 1}
	_, lost := lossRun(m, 2_000_000, 2)
	var bursts []int
	run := 0
	for _, l := range lost {
		if l {
			run++
		} else if run > 0 {
			bursts = append(bursts, run)
			run = 0
		}
	}
	var sum float64
	for _, b := range bursts {
		sum += float64(b)
	}
	mean := sum / float64(len(bursts))
	tol := z999 * math.Sqrt((1-m.R)/(m.R*m.R*float64(len(bursts))))
	if math.Abs(mean-1/m.R) > tol {
		t.Errorf("mean bad sojourn %.4f frames over %d bursts, want %.4f ± %.4f", mean, len(bursts), 1/m.R, tol)
	}
}

func TestMarkov4LossRate(t *testing.T) {
	tests := []Markov4{
		{P13: 0.01, P31: 0.8, P32: 0.05, P23: 0.3, P14: 0.005}, // the example
		{P13: 0.03, P31: 0.97, P32: 0, P23: 1, P14: 0},         // netem defaults for p13 = 3 %
		{P13: 0.002, P31: 0.3, P32: 0.4, P23: 0.2, P14: 0.01},
	}
	const n = 1_000_000
	for _, m := range tests {
		// Closed form from the balance equations: π4 = p14·π1,
		// π3 = (p13/p31)·π1, π2 = (p32/p23)·π3.
		pi1 := 1 / (1 + m.P14 + m.P13/m.P31 + m.P13*m.P32/(m.P23*m.P31))
		want := pi1 * (m.P13/m.P31 + m.P14)
		if got := m.LossRate(); math.Abs(got-want) > 1e-12 {
			t.Errorf("%+v: LossRate %v, want %v", m, got, want)
		}
		P := [][]float64{
			{1 - m.P13 - m.P14, 0, m.P13, m.P14},
			{0, 1 - m.P23, m.P23, 0},
			{m.P31, m.P32, 1 - m.P31 - m.P32, 0},
			{1, 0, 0, 0},
		}
		L, variance := markovLoss(P, []float64{0, 0, 1, 1})
		if math.Abs(L-want) > 1e-9 {
			t.Fatalf("stationary loss %v ≠ closed form %v", L, want)
		}
		got, _ := lossRun(m, n, 3)
		tol := z999 * math.Sqrt(variance/n)
		if math.Abs(got-want) > tol {
			t.Errorf("%+v: lost %.5f, want %.5f ± %.5f", m, got, want, tol)
		}
	}
}

func TestMarkov4DegenerateLossRate(t *testing.T) {
	// Once in a burst the chain never leaves it (p31 = 0) and alternates 2↔3
	// with p23 = p32 = 1: half the frames are lost in the long run.
	if got := (Markov4{P13: 0.1, P32: 1, P23: 1}).LossRate(); math.Abs(got-0.5) > 1e-3 {
		t.Errorf("trapped burst: loss rate %v, want 0.5", got)
	}
	// No way out of state 3 at all: everything is lost in the long run.
	if got := (Markov4{P13: 0.1}).LossRate(); math.Abs(got-1) > 1e-3 {
		t.Errorf("absorbing loss: loss rate %v, want 1", got)
	}
}

// normalQuantile is Φ⁻¹(q).
func normalQuantile(q float64) float64 { return math.Sqrt2 * math.Erfinv(2*q-1) }

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// checkCDF compares the fraction of draws at or below x with F(x): a
// binomial proportion, within z999·√(F(1−F)/n).
func checkCDF(t *testing.T, name string, draws []float64, points []float64, F func(float64) float64) {
	t.Helper()
	sorted := slices.Clone(draws)
	slices.Sort(sorted)
	n := float64(len(sorted))
	for _, x := range points {
		below, _ := slices.BinarySearch(sorted, math.Nextafter(x, math.Inf(1)))
		got, want := float64(below)/n, F(x)
		if tol := z999 * math.Sqrt(want*(1-want)/n); math.Abs(got-want) > tol+1/n {
			t.Errorf("%s: P(X ≤ %.4g) = %.5f, want %.5f ± %.5f", name, x, got, want, tol)
		}
	}
}

func drawAll(d DelayDist, n int, seed uint64) []float64 {
	r := NewStream(seed, "jitter test")
	out := make([]float64, n)
	for i := range out {
		out[i] = d.draw(r)
	}
	return out
}

func meanVariance(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs))
}

func TestJitterDistributions(t *testing.T) {
	const n = 200_000
	quantiles := []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}

	t.Run("uniform", func(t *testing.T) {
		s := 3e6 // 3 ms
		xs := drawAll(Uniform{Spread: 3 * time.Millisecond}, n, 1)
		mean, variance := meanVariance(xs)
		// Mean 0, variance s²/3, fourth central moment s⁴/5: the sample
		// variance has standard deviation √((s⁴/5 − s⁴/9)/n).
		checkMoment(t, "mean", mean, 0, math.Sqrt(s*s/3/n))
		checkMoment(t, "variance", variance, s*s/3, math.Sqrt((s*s*s*s/5-s*s*s*s/9)/n))
		var points []float64
		for _, q := range quantiles {
			points = append(points, s*(2*q-1))
		}
		checkCDF(t, "uniform", xs, points, func(x float64) float64 { return (x + s) / (2 * s) })
		if lo, hi := slices.Min(xs), slices.Max(xs); lo < -s || hi > s {
			t.Errorf("draws in [%v, %v], outside ±%v", lo, hi, s)
		}
	})

	t.Run("normal", func(t *testing.T) {
		sigma := 2e6
		xs := drawAll(Normal{Sigma: 2 * time.Millisecond}, n, 2)
		mean, variance := meanVariance(xs)
		// The sample variance of normal draws has standard deviation σ²√(2/n).
		checkMoment(t, "mean", mean, 0, sigma/math.Sqrt(n))
		checkMoment(t, "variance", variance, sigma*sigma, sigma*sigma*math.Sqrt(2.0/n))
		var points []float64
		for _, q := range quantiles {
			points = append(points, sigma*normalQuantile(q))
		}
		checkCDF(t, "normal", xs, points, func(x float64) float64 { return normalCDF(x / sigma) })
	})

	t.Run("pareto", func(t *testing.T) {
		// Mean 3 ms, σ 1 ms: α = 1 + √10 ≈ 4.16 > 4, so the fourth moment is
		// finite and the sample variance obeys the central limit theorem.
		d := Pareto{Mean: 3 * time.Millisecond, Sigma: time.Millisecond}
		xm, alpha := d.params()
		raw := func(k float64) float64 { return alpha * math.Pow(xm, k) / (alpha - k) } // E[X^k]
		m := raw(1)
		mu4 := raw(4) - 4*m*raw(3) + 6*m*m*raw(2) - 3*m*m*m*m
		if math.Abs(m-3e6) > 1 || math.Abs(raw(2)-m*m-1e12) > 1e3 {
			t.Fatalf("α %v, xm %v give mean %v and variance %v", alpha, xm, m, raw(2)-m*m)
		}
		xs := drawAll(d, n, 3)
		mean, variance := meanVariance(xs)
		checkMoment(t, "mean", mean, 3e6, 1e6/math.Sqrt(n))
		checkMoment(t, "variance", variance, 1e12, math.Sqrt((mu4-1e24)/n))
		var points []float64
		for _, q := range quantiles {
			points = append(points, xm*math.Pow(1-q, -1/alpha)) // F⁻¹(q)
		}
		checkCDF(t, "pareto", xs, points, func(x float64) float64 { return 1 - math.Pow(xm/x, alpha) })
		if lo := slices.Min(xs); lo < xm {
			t.Errorf("a draw %v below the scale %v", lo, xm)
		}
	})

	t.Run("paretonormal", func(t *testing.T) {
		// X = μ + σ(Z + 3P)/√10 with Z normal and P a standardised Pareto of
		// shape 3, independent. P has no fourth moment, so the sample
		// variance has no normal limit; instead the CDF is checked against
		// F(x) = ∫₀¹ Φ(√10·(x−μ)/σ − 3·P(u)) du, integrated numerically over
		// the Pareto's quantiles P(u) = ((1−u)^(−1/3) − 1.5)/√0.75.
		mu, sigma := 2e6, 1e6
		xs := drawAll(ParetoNormal{Mean: 2 * time.Millisecond, Sigma: time.Millisecond}, n, 4)
		mean, _ := meanVariance(xs)
		checkMoment(t, "mean", mean, mu, sigma/math.Sqrt(n))
		F := func(x float64) float64 {
			const steps = 20000
			var sum float64
			for i := range steps {
				u := (float64(i) + 0.5) / steps
				p := (math.Pow(1-u, -1.0/3) - 1.5) / math.Sqrt(0.75)
				sum += normalCDF(math.Sqrt(10)*(x-mu)/sigma - 3*p)
			}
			return sum / steps
		}
		checkCDF(t, "paretonormal", xs, []float64{0, 1e6, 1.5e6, 2e6, 2.5e6, 3e6, 5e6}, F)
	})

	t.Run("empirical", func(t *testing.T) {
		samples := []time.Duration{10, 20, 20, 30, 100}
		xs := drawAll(NewEmpirical(samples), n, 5)
		// Each sample is drawn with probability 1/5: 20 with 2/5.
		F := func(x float64) float64 {
			k := 0
			for _, s := range samples {
				if float64(s) <= x {
					k++
				}
			}
			return float64(k) / float64(len(samples))
		}
		checkCDF(t, "empirical", xs, []float64{10, 20, 30, 99}, F)
		for _, x := range xs {
			if !slices.Contains(samples, time.Duration(x)) {
				t.Fatalf("drew %v, not a sample", x)
			}
		}
	})
}

func checkMoment(t *testing.T, what string, got, want, sd float64) {
	t.Helper()
	if tol := z999 * sd; math.Abs(got-want) > tol {
		t.Errorf("%s %.6g, want %.6g ± %.3g", what, got, want, tol)
	}
}

func TestJitterCorrelation(t *testing.T) {
	// AR(1) with coefficient ρ: the sample lag-1 autocorrelation of n values
	// has standard deviation ≈ √((1−ρ²)/n) (Bartlett), and the marginal
	// keeps the distribution's mean and variance.
	const n = 200_000
	for _, rho := range []float64{0.5, 0.9, -0.3} {
		j := Jitter{Dist: Normal{Sigma: 2 * time.Millisecond}, Correlation: rho}
		var s jitterState
		r := NewStream(6, "ar1")
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = j.next(&s, r)
		}
		mean, variance := meanVariance(xs)
		var c1 float64
		for i := 1; i < n; i++ {
			c1 += (xs[i] - mean) * (xs[i-1] - mean)
		}
		r1 := c1 / float64(n) / variance
		if tol := z999 * math.Sqrt((1-rho*rho)/n); math.Abs(r1-rho) > tol {
			t.Errorf("ρ = %v: lag-1 autocorrelation %.4f ± %.4f", rho, r1, tol)
		}
		// The variance estimate of a correlated series is noisier by a factor
		// (1+ρ²)/(1−ρ²): σ²√(2(1+ρ²)/((1−ρ²)n)).
		sd := 4e12 * math.Sqrt(2*(1+rho*rho)/((1-rho*rho)*n))
		checkMoment(t, "variance", variance, 4e12, sd)
	}
}

func TestCorruptionRates(t *testing.T) {
	const frames = 100_000
	tests := []struct {
		name string
		c    Corruption
		size int
		// probability that a frame is hit, and expected flips per hit frame
		hit, flipsPerFrame float64
	}{
		// Each of the 8n bits flips with probability BER: a frame is hit with
		// probability 1−(1−BER)^(8n), and 8n·BER bits flip on average.
		{"ber 1e-4, 100 B", Corruption{BER: 1e-4}, 100, 1 - math.Pow(1-1e-4, 800), 800 * 1e-4},
		{"ber 1e-4, 1000 B", Corruption{BER: 1e-4}, 1000, 1 - math.Pow(1-1e-4, 8000), 8000 * 1e-4},
		{"ber 1e-6, 1500 B", Corruption{BER: 1e-6}, 1500, 1 - math.Pow(1-1e-6, 12000), 12000 * 1e-6},
		{"one bit in 1 % of frames", Corruption{FrameP: 0.01}, 200, 0.01, 0.01},
	}
	for _, tc := range tests {
		r := NewStream(7, tc.name)
		hits, flips := 0, 0
		original := make([]byte, tc.size)
		for i := range original {
			original[i] = byte(i * 37)
		}
		f := &Frame{Size: tc.size, Payload: make([]byte, tc.size)}
		for range frames {
			copy(f.Payload, original)
			hit := tc.c.apply(f, r)
			diff := 0
			for i := range original {
				diff += popcount(original[i] ^ f.Payload[i])
			}
			if hit != (diff > 0) {
				t.Fatalf("%s: apply reported %v but %d bits differ", tc.name, hit, diff)
			}
			if tc.c.FrameP > 0 && diff > 1 {
				t.Fatalf("%s: %d bits flipped, want one", tc.name, diff)
			}
			if hit {
				hits++
			}
			flips += diff
		}
		got := float64(hits) / frames
		if tol := z999 * math.Sqrt(tc.hit*(1-tc.hit)/frames); math.Abs(got-tc.hit) > tol {
			t.Errorf("%s: %.5f of frames hit, want %.5f ± %.5f", tc.name, got, tc.hit, tol)
		}
		// Flips per frame: binomial(8n, BER), variance 8n·BER(1−BER) ≤ mean.
		perFrame := float64(flips) / frames
		if tol := z999 * math.Sqrt(tc.flipsPerFrame/frames); math.Abs(perFrame-tc.flipsPerFrame) > tol {
			t.Errorf("%s: %.5f flips per frame, want %.5f ± %.5f", tc.name, perFrame, tc.flipsPerFrame, tol)
		}
	}
}

func popcount(b byte) int {
	n := 0
	for ; b != 0; b &= b - 1 {
		n++
	}
	return n
}

func TestLossModelSequences(t *testing.T) {
	// Degenerate probabilities make the chains deterministic, which pins the
	// documented order of events.
	tests := []struct {
		name string
		m    LossModel
		want []bool
	}{
		// Gilbert–Elliott decides a frame's fate by the state it finds, then
		// moves: starting in Good and alternating, the first frame passes.
		{"gilbert alternating", GilbertElliott{P: 1, R: 1, LossBad: 1}, []bool{false, true, false, true, false}},
		{"gilbert stays bad", GilbertElliott{P: 1, LossBad: 1}, []bool{false, true, true, true, true}},
		// The 4-state model moves first and a frame takes the fate of the
		// state it enters: 1→3 (lost), 3→1, 1→3, ...
		{"markov4 burst of one", Markov4{P13: 1, P31: 1}, []bool{true, false, true, false}},
		// 1→4 is an isolated loss and 4→1 always.
		{"markov4 isolated", Markov4{P14: 1}, []bool{true, false, true, false}},
		// 1→3, then 3→2→3→2: lost, passed, lost, ...
		{"markov4 inside a burst", Markov4{P13: 1, P32: 1, P23: 1}, []bool{true, false, true, false, true}},
		{"random 0", Bernoulli{P: 0}, []bool{false, false, false}},
		{"random 1", Bernoulli{P: 1}, []bool{true, true, true}},
	}
	for _, tc := range tests {
		_, got := lossRun(tc.m, len(tc.want), 1)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
