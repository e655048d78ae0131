package emulator

import (
	"math"
	"slices"
	"testing"
	"time"
)

// z999 is the two-sided 99.9 % point of the standard normal: a sample mean
// of n draws with standard deviation σ lies within z999·σ/√n of the true
// mean with probability 0.999. Streams are seeded, so each test is
// deterministic; the bound says how tight the check is, not how often it
// flakes.
const z999 = 3.2905

type moments struct{ mean, variance float64 }

func sampleMoments(n int, draw func() float64) moments {
	var sum, sumSq float64
	for range n {
		x := draw()
		sum += x
		sumSq += x * x
	}
	mean := sum / float64(n)
	return moments{mean, sumSq/float64(n) - mean*mean}
}

func checkMean(t *testing.T, what string, got moments, mean, sd float64, n int) {
	t.Helper()
	tol := z999 * sd / math.Sqrt(float64(n))
	if math.Abs(got.mean-mean) > tol {
		t.Errorf("%s: sample mean %.5g, want %.5g ± %.3g", what, got.mean, mean, tol)
	}
}

func TestStreamDistributions(t *testing.T) {
	const n = 200_000
	s := NewStream(1, "test")

	u := sampleMoments(n, s.Float64)
	checkMean(t, "uniform", u, 0.5, math.Sqrt(1.0/12), n)

	e := sampleMoments(n, func() float64 { return s.Exp(2) })
	checkMean(t, "exponential(mean 2)", e, 2, 2, n)

	z := sampleMoments(n, s.Normal)
	checkMean(t, "normal", z, 0, 1, n)
	// The sample variance of normal draws has standard deviation √(2/n)·σ².
	if tol := z999 * math.Sqrt(2.0/n); math.Abs(z.variance-1) > tol {
		t.Errorf("normal: sample variance %.5f, want 1 ± %.4f", z.variance, tol)
	}

	// Pareto(xm 1, α 3): mean α·xm/(α−1) = 1.5, variance α·xm²/((α−1)²(α−2)) = 0.75.
	p := sampleMoments(n, func() float64 { return s.Pareto(1, 3) })
	checkMean(t, "pareto(1, 3)", p, 1.5, math.Sqrt(0.75), n)
}

func TestStreamsAreIndependentOfEachOther(t *testing.T) {
	a, b := NewStream(1, "flow", "a", "traffic"), NewStream(1, "flow", "b", "traffic")
	a2 := NewStream(1, "flow", "a", "traffic")
	same := 0
	for range 1000 {
		x, y := a.Uint64(), b.Uint64()
		if x == y {
			same++
		}
		if x != a2.Uint64() {
			t.Fatal("the same (seed, parts) gave a different stream")
		}
	}
	if same > 0 {
		t.Errorf("streams for different owners agreed %d times in 1000", same)
	}
	if NewStream(1, "ab", "c").Uint64() == NewStream(1, "a", "bc").Uint64() {
		t.Error("parts are not separated when deriving a stream")
	}
}

func TestPeriodDraws(t *testing.T) {
	const n = 100_000
	s := NewStream(3, "periods")
	draws := func(p Period) moments {
		return sampleMoments(n, func() float64 { return p.draw(s).Seconds() })
	}
	if got := (Period{Mean: 3 * time.Second}).draw(s); got != 3*time.Second {
		t.Errorf("constant period drew %v", got)
	}
	checkMean(t, "exponential period", draws(Period{Kind: Exponential, Mean: 3 * time.Second}), 3, 3, n)
	// Pareto with mean 3 s and α 2.5: xm = 3·1.5/2.5 = 1.8 s,
	// variance = xm²·α/((α−1)²(α−2)) = 7.2 s².
	checkMean(t, "pareto period", draws(Period{Kind: ParetoPeriod, Mean: 3 * time.Second, Shape: 2.5}), 3, math.Sqrt(7.2), n)
}

func TestPoissonCount(t *testing.T) {
	// 500 B at 1 Mbit/s: λ = 250 frames/s. In T = 200 s the count is
	// Poisson(λT = 50000), standard deviation √50000 ≈ 224.
	cfg := oneHop(HopParams{})
	cfg.Seed = 11
	cfg.Flows[0].Traffic = Poisson{Rate: Mbitps, Size: 500}
	n := mustNew(t, cfg, nil)
	n.Run(200 * time.Second)
	got := float64(n.FlowStats(0).Sent)
	if tol := z999 * math.Sqrt(50000); math.Abs(got-50000) > tol {
		t.Errorf("%v frames in 200 s, want 50000 ± %.0f", got, tol)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	s := NewStream(5, "histogram")
	var h DelayHistogram
	values := make([]time.Duration, 50_000)
	for i := range values {
		// Log-uniform from 100 ns to 10 s: every bucket width is exercised.
		values[i] = time.Duration(math.Exp(math.Log(100) + s.Float64()*math.Log(1e8)))
		h.Record(values[i])
	}
	slices.Sort(values)
	if h.Min() != values[0] || h.Max() != values[len(values)-1] || h.Count() != uint64(len(values)) {
		t.Fatalf("min/max/count %v %v %v", h.Min(), h.Max(), h.Count())
	}
	for _, q := range []float64{0.001, 0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1} {
		rank := int(math.Ceil(q * float64(len(values))))
		exact := values[rank-1]
		got := h.Quantile(q)
		if rel := math.Abs(float64(got-exact)) / float64(exact); rel > QuantileRelError {
			t.Errorf("q%.3f = %v, exact %v: relative error %.2g > %.2g", q, got, exact, rel, QuantileRelError)
		}
	}
	var small DelayHistogram
	for _, v := range []time.Duration{3, 1, 2} {
		small.Record(v)
	}
	if small.Quantile(0.5) != 2 || small.Mean() != 2 {
		t.Errorf("small values are exact: median %v, mean %v", small.Quantile(0.5), small.Mean())
	}
}

// TestEventQueueOrder runs the queue as a run does, each event queued
// after the one being handled: they come out by time, control events
// before traffic events at the same time, each class in its order (rank or
// queueing), each with the kind and index it was queued with, up to the
// largest index an event holds.
func TestEventQueueOrder(t *testing.T) {
	var q eventQueue
	s := NewStream(9, "heap")
	kinds := []eventKind{evEmit, evSerialiser, evExit, evApply, evRevert, evStart}
	const maxIndex = 1<<(32-kindBits) - 1
	type queued struct {
		kind  eventKind
		index int
	}
	sent := map[uint64]queued{} // by order
	var now event
	check := func(e event) {
		if e.before(&now) {
			t.Fatalf("popped %v/%x after %v/%x", e.at, e.order, now.at, now.order)
		}
		if e.at == now.at && now.order&classTraffic != 0 && e.order&classTraffic == 0 {
			t.Fatal("a control event came after a traffic event at the same time")
		}
		if want := sent[e.order]; e.kind() != want.kind || e.index() != want.index {
			t.Fatalf("event queued as kind %d of %d came out as kind %d of %d", want.kind, want.index, e.kind(), e.index())
		}
		now = e
	}
	for i := range 20000 {
		want := queued{kinds[i%len(kinds)], int(s.Uint64() % (maxIndex + 1))}
		if i%10 == 0 {
			want.index = maxIndex
		}
		at := now.at + 1 + time.Duration(s.Uint64()%50)
		if i%7 == 0 {
			q.pushControl(at, want.kind, want.index, uint64(i)) // the rank is the order
			sent[uint64(i)] = want
		} else {
			sent[q.push(at, want.kind, want.index, 0)] = want
		}
		if i%3 == 0 { // the queue grows, to some thousands
			check(q.pop())
		}
	}
	for q.len() > 0 {
		check(q.pop())
	}
}

func TestTransmitTime(t *testing.T) {
	tests := []struct {
		bytes int64
		rate  Rate
		want  time.Duration
	}{
		{1000, 4 * Mbitps, 2 * time.Millisecond},
		{1000, 100 * Mbitps, 80 * time.Microsecond},
		{1, 1, 8 * time.Second},
		{MaxFrameSize, 1, time.Duration(MaxFrameSize) * 8 * time.Second},
		{1000, 3 * Mbitps, 2666666}, // rounded down; the remainder is carried
	}
	for _, tc := range tests {
		if got, _ := transmitTime(tc.bytes, tc.rate, 0); got != tc.want {
			t.Errorf("%d B at %v: %v, want %v", tc.bytes, tc.rate, got, tc.want)
		}
	}
}

// TestTransmitCacheIsTransmitTime: the cache gives transmitTime's time
// and remainder, bit for bit, whether the size and rate repeat (a busy
// link carrying its remainder) or change, and for any carry.
func TestTransmitCacheIsTransmitTime(t *testing.T) {
	s := NewStream(3, "transmit")
	sizes := []int64{1, 100, 1000, 1500, MaxFrameSize}
	rates := []Rate{1, 3 * Mbitps, 4 * Mbitps, 7_777_777, Gbitps, 1 << 62}
	var c transmitCache
	var carry uint64
	for i := range 200_000 {
		size, rate := sizes[s.Intn(len(sizes))], rates[s.Intn(len(rates))]
		if i%4 != 0 { // mostly the same frame again, as on a busy link
			size, rate = c.nbytes, c.rate
		}
		switch {
		case c.rate == 0:
			carry = 0
		case i%97 == 0: // any carry, a remainder at this rate or not
			carry = s.Uint64() % (2 * uint64(rate))
		case rate != c.rate:
			carry = 0
		}
		if rate == 0 {
			size, rate = sizes[0], rates[0]
		}
		wantD, wantRem := transmitTime(size, rate, carry)
		gotD, gotRem := c.time(size, rate, carry)
		if gotD != wantD || gotRem != wantRem {
			t.Fatalf("%d B at %v carrying %d: %v rem %d, want %v rem %d", size, rate, carry, gotD, gotRem, wantD, wantRem)
		}
		carry = gotRem
	}
}
