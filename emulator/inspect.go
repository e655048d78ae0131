package emulator

import "time"

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
	return HopState{
		Name: h.name, Params: h.HopParams,
		QueueBytes: h.waiting.bytes, QueueFrames: h.waiting.len(), Sending: h.sending != nil,
		HeldFrames: h.held.len(), HeldBytes: h.held.bytes, Outage: h.outage,
	}
}

// Delta makes into the histogram of what h recorded since prev was last
// brought up to date, and brings prev up to h: called at each look with
// the same prev, it describes the durations of each interval. into's
// quantiles are as exact as h's; its Min and Max are the bounds of the
// buckets they fall in, and its Mean is exact but for rounding. prev must
// hold nothing but what Delta put there, and neither may be h.
func (h *DelayHistogram) Delta(prev, into *DelayHistogram) {
	into.counts = grow(into.counts, len(h.counts)) // every entry is written below
	prev.counts = grow(prev.counts, len(h.counts))
	first, last := -1, -1
	for i, c := range h.counts {
		d := c - prev.counts[i]
		into.counts[i] = d
		if d != 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	copy(prev.counts, h.counts)
	into.n, into.sum = h.n-prev.n, h.sum-prev.sum
	prev.n, prev.sum, prev.min, prev.max = h.n, h.sum, h.min, h.max
	into.min, into.max = 0, 0
	if first >= 0 {
		low, _ := bucketRange(first)
		into.min = time.Duration(low)
		low, width := bucketRange(last)
		into.max = time.Duration(low + width - 1)
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

// CountsAtMost sets out[i] to how many recorded durations are at most
// bounds[i], for ascending bounds (the cumulative buckets of a Prometheus
// histogram). A bound that falls inside a bucket counts the whole bucket:
// a duration up to QuantileRelError·bound above it may be counted.
func (h *DelayHistogram) CountsAtMost(bounds []time.Duration, out []uint64) {
	var seen uint64
	i := 0
	for k, b := range bounds {
		last := bucketOf(uint64(max(b, 0)))
		for ; i <= last && i < len(h.counts); i++ {
			seen += h.counts[i]
		}
		out[k] = seen
	}
}
