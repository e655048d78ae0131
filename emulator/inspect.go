package emulator

import (
	"math"
	"time"
)

// Read-only views of a running network for live telemetry: what a hop
// holds now, and the delays recorded since the last look. They allocate
// nothing once their destinations have grown to size, so an executor can
// call them on its real-time thread.

// HopState is a hop as it is now.
type HopState struct {
	Name        string
	Params      HopParams
	QueueBytes  int64 // waiting for the serialiser (not the frame being sent)
	QueueFrames int
	Sending     bool // a frame is being serialised
	HeldFrames  int  // held by an outage in hold mode
	HeldBytes   int64
	Outage      OutageMode
	// Changes counts the changes made to Params (by the schedule or by
	// hand): equal counts, equal parameters.
	Changes uint64
}

// NumHops is how many hops the network has.
func (n *Network) NumHops() int { return len(n.hops) }

// HopNow returns hop i's parameters and what it holds now.
func (n *Network) HopNow(i int) HopState {
	h := &n.hops[i]
	s := HopState{
		Name: h.name, Params: h.HopParams,
		HeldFrames: h.outage.held.len(), HeldBytes: h.outage.held.bytes, Outage: h.outage.mode, Changes: h.changes,
	}
	s.QueueBytes, s.QueueFrames, s.Sending = h.serialiser.Holding()
	return s
}

// DelayWindow follows a DelayHistogram and describes, at each Look, the
// durations recorded since the previous one: what a live plot shows. Its
// quantiles are as exact as the histogram's; its Max is the upper bound
// of the largest one's bucket.
type DelayWindow struct {
	prev  DelayHistogram // the histogram at the previous look
	delta []bucketDelta  // the buckets that gained since, in order
	n     uint64
	sum   float64
}

type bucketDelta struct {
	bucket int
	count  uint64
}

// Look brings the window up to h: from now on it describes what h
// recorded since the previous look (everything, at the first). A window
// follows one histogram.
func (w *DelayWindow) Look(h *DelayHistogram) {
	w.delta = w.delta[:0]
	for b, c := range h.buckets {
		if was := w.prev.count(b); c != was {
			w.delta = append(w.delta, bucketDelta{b, c - was})
		}
	}
	w.n, w.sum = h.n-w.prev.n, h.sum-w.prev.sum
	w.prev.copyFrom(h)
}

// Count is how many durations the window holds.
func (w *DelayWindow) Count() uint64 { return w.n }

// Mean is their mean.
func (w *DelayWindow) Mean() time.Duration {
	if w.n == 0 {
		return 0
	}
	return time.Duration(math.Round(w.sum / float64(w.n)))
}

// Max is the upper bound of the largest one's bucket.
func (w *DelayWindow) Max() time.Duration {
	if w.n == 0 {
		return 0
	}
	low, width := bucketRange(w.delta[len(w.delta)-1].bucket)
	return time.Duration(low + width - 1)
}

// Quantile is the nearest-rank q-quantile of the window's durations,
// within QuantileRelError.
func (w *DelayWindow) Quantile(q float64) time.Duration {
	if w.n == 0 {
		return 0
	}
	rank := min(max(uint64(math.Ceil(q*float64(w.n))), 1), w.n)
	var seen uint64
	for _, d := range w.delta {
		if seen += d.count; seen >= rank {
			low, width := bucketRange(d.bucket)
			return time.Duration(low + (width-1)/2)
		}
	}
	return w.Max()
}

// AddCountsAtMost adds to out[i] how many of the window's durations are
// at most bounds[i], for ascending bounds: summed over every look, the
// cumulative buckets of a Prometheus histogram. A bound inside a bucket
// counts the whole bucket: a duration up to QuantileRelError·bound above
// it may be counted.
func (w *DelayWindow) AddCountsAtMost(bounds []time.Duration, out []uint64) {
	var seen uint64
	i := 0
	for k, b := range bounds {
		for last := bucketOf(uint64(max(b, 0))); i < len(w.delta) && w.delta[i].bucket <= last; i++ {
			seen += w.delta[i].count
		}
		out[k] += seen
	}
}

// Sum is the total of the recorded durations (a float64 sum, rounded).
func (h *DelayHistogram) Sum() time.Duration { return time.Duration(math.Round(h.sum)) }
