package emulator

import (
	"math"
	"slices"
	"testing"
	"time"
	"unsafe"
)

// nearestRankMidpoint is the quantiles' definition written out on the raw
// values: the midpoint of the bucket of the nearest-rank q-quantile (the
// smallest value with at least q of the values at or below it), negative
// values counting as zero.
func nearestRankMidpoint(values []time.Duration, q float64) time.Duration {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	n := len(sorted)
	rank := min(max(int(math.Ceil(q*float64(n))), 1), n)
	low, width := bucketRange(bucketOf(uint64(max(sorted[rank-1], 0))))
	return time.Duration(low + (width-1)/2)
}

// TestHistogramRepresentations records the same durations however they
// are held (a few distinct buckets as pairs, many as a dense run, a run
// widened downwards and upwards) and checks every quantile against the
// definition, and that a window following it sees the same.
func TestHistogramRepresentations(t *testing.T) {
	r := NewStream(3, "histogram")
	cases := []struct {
		name   string
		values func(i int) time.Duration
		n      int
	}{
		{"one value", func(int) time.Duration { return 6 * ms }, 1000},
		{"a few values", func(i int) time.Duration { return time.Duration(i%5) * ms }, 1000},
		{"runs of a value", func(i int) time.Duration { return time.Duration(i/7%40) * 90 * time.Microsecond }, 2000},
		{"exactly sparseBuckets", func(i int) time.Duration { return time.Duration(i%sparseBuckets) * 40 * time.Microsecond }, 640},
		{"spread: dense", func(int) time.Duration { return time.Duration(r.Exp(float64(20 * ms))) }, 20_000},
		{"falling: widened below", func(i int) time.Duration { return time.Second - time.Duration(i)*37*time.Microsecond }, 20_000},
		{"rising: widened above", func(i int) time.Duration { return time.Duration(i) * 37 * time.Microsecond }, 20_000},
		{"negative and tiny", func(i int) time.Duration { return time.Duration(i%700) - 100 }, 3000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h DelayHistogram
			var w DelayWindow
			var values []time.Duration
			for i := range c.n {
				d := c.values(i)
				values = append(values, d)
				h.Record(d)
				if i == c.n/2 {
					w.Look(&h) // the window then holds the second half only
				}
			}
			w.Look(&h)
			// The histogram clamps the midpoint to its exact min and max; the
			// window, which knows no exact extremes, does not.
			lowest, highest := max(slices.Min(values), 0), max(slices.Max(values), 0)
			second := values[c.n/2+1:]
			for _, q := range []float64{0, 0.001, 0.1, 0.25, 0.5, 0.9, 0.99, 0.999, 1} {
				if got, want := h.Quantile(q), min(max(nearestRankMidpoint(values, q), lowest), highest); got != want {
					t.Errorf("q%v: %v, want %v", q, got, want)
				}
				if got, want := w.Quantile(q), nearestRankMidpoint(second, q); got != want {
					t.Errorf("window q%v: %v, want %v", q, got, want)
				}
			}
			if w.Count() != uint64(c.n-c.n/2-1) {
				t.Errorf("window holds %d, want %d", w.Count(), c.n-c.n/2-1)
			}
		})
	}
}

// TestHistogramMemory: a histogram's memory follows how many distinct
// buckets it holds (8 bytes each while few) and then their span, not the
// size of the durations (issue 10: a flow's delays near 6 ms cost 88 KB).
func TestHistogramMemory(t *testing.T) {
	bytes := func(h *DelayHistogram) uintptr {
		return uintptr(cap(h.sparse))*unsafe.Sizeof(bucketCount{}) + uintptr(cap(h.dense))*8
	}
	for _, delay := range []time.Duration{6 * ms, 20 * ms, 10 * time.Second, time.Hour} {
		var h DelayHistogram
		for i := range 100 {
			h.Record(delay + time.Duration(i%3)*time.Microsecond)
		}
		if b := bytes(&h); b > 8*8 {
			t.Errorf("%v: %d bytes for 3 distinct buckets", delay, b)
		}
	}
	// Many distinct values over one octave: dense, 2^histogramSubBits
	// buckets at most, and half as many again of room.
	var h DelayHistogram
	for i := range 100_000 {
		h.Record(10*ms + time.Duration(i)*50*time.Nanosecond)
	}
	if b, most := bytes(&h), uintptr(8*(1<<histogramSubBits)*3/2+8); len(h.dense) == 0 || b > most {
		t.Errorf("one octave: %d bytes (dense %d buckets), want at most %d", b, len(h.dense), most)
	}
}

// TestPerFlowStateIsSmall: what the engine keeps for a flow, beyond its
// frames in flight, stays under issue 10's 2 KB (it was 67 KB for these
// flows, 88 KB of them a delay histogram indexed from 0 ns).
func TestPerFlowStateIsSmall(t *testing.T) {
	if perFlow := retainedPerFlow(t, manyFlows(5000), 2*time.Second); perFlow > 2048 {
		t.Errorf("%.0f bytes a flow, want at most 2048", perFlow)
	}
}
