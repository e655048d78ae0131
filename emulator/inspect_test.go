package emulator

import (
	"testing"
	"time"
)

// TestDelayWindow describes each interval's durations on their own: the
// second interval's quantiles know nothing of the first's.
func TestDelayWindow(t *testing.T) {
	var h DelayHistogram
	var w DelayWindow
	// Quantiles are within QuantileRelError; Max is the upper bound of its
	// bucket (2^18 ns wide at 200 ms, by bucketOf).
	within := func(got, want time.Duration) bool {
		return float64(abs(got-want)) <= QuantileRelError*float64(want)+1
	}
	for range 100 {
		h.Record(10 * ms)
	}
	w.Look(&h)
	if w.Count() != 100 || !within(w.Quantile(0.5), 10*ms) || w.Mean() != 10*ms {
		t.Fatalf("first interval: %d, p50 %v", w.Count(), w.Quantile(0.5))
	}
	for i := range 10 {
		h.Record(time.Duration(200+i) * ms)
	}
	w.Look(&h)
	if w.Count() != 10 || !within(w.Quantile(0.5), 204*ms) || !within(w.Quantile(1), 209*ms) {
		t.Errorf("second interval: %d, p50 %v, max %v", w.Count(), w.Quantile(0.5), w.Quantile(1))
	}
	if w.Mean() != 204500*time.Microsecond || h.Sum() != 1000*ms+2045*ms {
		t.Errorf("second interval's mean %v, the histogram's sum %v", w.Mean(), h.Sum())
	}
	if w.Max() < 209*ms || w.Max() > 209*ms+(1<<18) {
		t.Errorf("second interval's max %v", w.Max())
	}
	w.Look(&h)
	if w.Count() != 0 || w.Quantile(0.99) != 0 || w.Max() != 0 {
		t.Errorf("an empty interval: %d, p99 %v", w.Count(), w.Quantile(0.99))
	}
	if allocs := testing.AllocsPerRun(100, func() { h.Record(5 * ms); w.Look(&h) }); allocs != 0 {
		t.Errorf("%v allocations per look", allocs)
	}
}

func abs(d time.Duration) time.Duration { return max(d, -d) }

// TestCountsAtMost sums the windows' counts under each bound: over every
// look, the histogram's cumulative buckets.
func TestCountsAtMost(t *testing.T) {
	var h DelayHistogram
	var w DelayWindow
	bounds := []time.Duration{0, ms, 10 * ms, 100 * ms, time.Second}
	out := make([]uint64, len(bounds))
	for _, batch := range [][]time.Duration{{0, 1 * ms, 2 * ms}, {}, {2 * ms, 50 * ms, 3 * time.Second}} {
		for _, d := range batch {
			h.Record(d)
		}
		w.Look(&h)
		w.AddCountsAtMost(bounds, out)
	}
	want := []uint64{1, 2, 4, 5, 5}
	for i := range want {
		if out[i] != want[i] {
			t.Fatalf("counts at most %v: %v, want %v", bounds, out, want)
		}
	}
}

// TestHopNow sees a bottleneck's queue fill: frames of 1000 B every
// millisecond into a 4 Mbit/s hop take 2 ms each to send, so after n
// frames one is being sent and about n/2 wait.
func TestHopNow(t *testing.T) {
	n := mustNew(t, Config{
		Hops:  []HopConfig{{Name: "bottleneck", HopParams: HopParams{Rate: 4 * Mbitps, Delay: 5 * ms}}},
		Flows: []FlowConfig{{Name: "f", Route: []int{0}}},
	}, nil)
	payload := make([]byte, 1000)
	for i := range 10 {
		n.Advance(time.Duration(i) * ms)
		n.Inject(0, payload)
	}
	s := n.HopNow(0)
	if n.NumHops() != 1 || s.Name != "bottleneck" || s.Params.Rate != 4*Mbitps || !s.Sending || s.QueueFrames != 5 || s.QueueBytes != 5000 || s.Outage != NoOutage {
		t.Errorf("%+v", s)
	}
}
