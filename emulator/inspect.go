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
}

// NumHops is how many hops the network has.
func (n *Network) NumHops() int { return len(n.hops) }

// HopNow returns hop i's parameters and what it holds now.
func (n *Network) HopNow(i int) HopState {
	h := &n.hops[i]
	s := HopState{
		Name: h.name, Params: h.HopParams,
		QueueBytes: h.waiting.bytes, QueueFrames: h.waiting.len(), Sending: h.sending != nil,
		HeldFrames: h.held.len(), HeldBytes: h.held.bytes, Outage: h.outage,
	}
	if h.bus != nil {
		s.QueueBytes, s.QueueFrames, s.Sending = h.bus.holding()
	}
	return s
}

// DelayWindow follows a DelayHistogram and describes, at each Look, the
// durations recorded since the previous one: what a live plot shows. Its
// quantiles are as exact as the histogram's; its Max is the upper bound
// of the largest one's bucket.
type DelayWindow struct {
	prev        []uint64 // the histogram's counts at the previous look
	prevN       uint64
	prevSum     float64
	delta       []uint64 // what changed since; zero outside [first, last]
	first, last int
	n           uint64
	sum         float64
}

// Look brings the window up to h: from now on it describes what h
// recorded since the previous look (everything, at the first). A window
// follows one histogram.
func (w *DelayWindow) Look(h *DelayHistogram) {
	n := len(h.counts)
	w.prev, w.delta = grow(w.prev, n), grow(w.delta, n)
	if w.n > 0 {
		clear(w.delta[w.first : w.last+1])
	}
	w.first, w.last = -1, -1
	// Most buckets did not change: compare, and write only those that did.
	counts, prev, delta := h.counts, w.prev[:n], w.delta[:n]
	for i, c := range counts {
		if c != prev[i] {
			delta[i], prev[i] = c-prev[i], c
			if w.first < 0 {
				w.first = i
			}
			w.last = i
		}
	}
	w.n, w.sum = h.n-w.prevN, h.sum-w.prevSum
	w.prevN, w.prevSum = h.n, h.sum
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
	low, width := bucketRange(w.last)
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
	for i := w.first; i <= w.last; i++ {
		if seen += w.delta[i]; seen >= rank {
			low, width := bucketRange(i)
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
	if w.n == 0 {
		return
	}
	var seen uint64
	i := w.first
	for k, b := range bounds {
		for last := min(bucketOf(uint64(max(b, 0))), w.last); i <= last; i++ {
			seen += w.delta[i]
		}
		out[k] += seen
	}
}

// grow extends s with zeros to length n, reusing its memory when it can.
func grow(s []uint64, n int) []uint64 {
	if old := len(s); cap(s) >= n {
		s = s[:n]
		clear(s[min(old, n):])
		return s
	}
	return append(s, make([]uint64, n-len(s))...)
}

// Sum is the total of the recorded durations (a float64 sum, rounded).
func (h *DelayHistogram) Sum() time.Duration { return time.Duration(math.Round(h.sum)) }
