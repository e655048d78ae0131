package emulator

import (
	"math"
	"math/bits"
	"time"
)

// FlowStats counts a flow's frames by fate and summarises the one-way delay
// of the delivered ones, in memory that does not grow with the run.
type FlowStats struct {
	Sent           uint64
	Status         [numStatus]uint64 // the source's frames by final status
	Delay          DelayHistogram    // one-way delay of the source's arrived frames
	Duplicates     uint64            // copies delivered
	DuplicatesLost uint64            // copies dropped or still in flight

	// LossBursts[k] counts runs of k+1 consecutive frames lost by a hop's
	// loss model (the last entry counts longer runs too); lossBurstSum is
	// the total length, for the exact mean.
	LossBursts       [MaxLossBurst]uint64
	lossBurstSum     uint64
	longestLossBurst int
}

// MaxLossBurst is the longest loss burst counted on its own; longer bursts
// are counted in the last bucket.
const MaxLossBurst = 100

// Record counts a finished frame: its fate, and its delay if it arrived.
// The network records every frame of a flow; an Observer can keep its own
// FlowStats for a subset (a phase, say). Record does not count Sent.
func (s *FlowStats) Record(f *Frame) {
	if f.Copy {
		if f.Status == Duplicate {
			s.Duplicates++
		} else {
			s.DuplicatesLost++
		}
		return
	}
	s.Status[f.Status]++
	if f.Status.Arrived() {
		s.Delay.Record(f.Done - f.Sent)
	}
}

func (s *FlowStats) recordLossBurst(length int) {
	s.LossBursts[min(length, MaxLossBurst)-1]++
	s.lossBurstSum += uint64(length)
	s.longestLossBurst = max(s.longestLossBurst, length)
}

// MeanLossBurst is the mean length of the loss bursts seen, in frames.
func (s *FlowStats) MeanLossBurst() float64 {
	var n uint64
	for _, c := range s.LossBursts {
		n += c
	}
	if n == 0 {
		return 0
	}
	return float64(s.lossBurstSum) / float64(n)
}

// histogramSubBits sets the histogram's resolution: durations below
// 2^histogramSubBits ns are exact, longer ones fall in buckets whose width is
// at most 2^−histogramSubBits of their value, and quantiles report a
// bucket's midpoint, so they are within 2^−(histogramSubBits+1) ≈ 0.1 %.
const histogramSubBits = 9

// QuantileRelError is the largest relative error of DelayHistogram.Quantile.
const QuantileRelError = 1.0 / (1 << (histogramSubBits + 1))

// DelayHistogram is a log-linear histogram of durations with exact count,
// min, max and mean.
type DelayHistogram struct {
	counts   []uint64
	n        uint64
	sum      float64
	min, max time.Duration
}

func bucketOf(v uint64) int {
	if v < 1<<histogramSubBits {
		return int(v)
	}
	shift := bits.Len64(v) - histogramSubBits - 1
	return shift<<histogramSubBits + int(v>>shift)
}

// bucketRange returns the smallest value in bucket i and the bucket's width.
func bucketRange(i int) (low, width uint64) {
	if i < 1<<histogramSubBits {
		return uint64(i), 1
	}
	shift := i>>histogramSubBits - 1
	mantissa := uint64(i - shift<<histogramSubBits)
	return mantissa << shift, 1 << shift
}

// Record adds one duration; negative durations count as zero.
func (h *DelayHistogram) Record(d time.Duration) {
	d = max(d, 0)
	i := bucketOf(uint64(d))
	if i >= len(h.counts) {
		h.counts = append(h.counts, make([]uint64, i+1-len(h.counts)+len(h.counts)/2)...)
	}
	h.counts[i]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if h.n == 0 || d > h.max {
		h.max = d
	}
	h.n++
	h.sum += float64(d)
}

// Count returns the number of recorded durations.
func (h *DelayHistogram) Count() uint64 { return h.n }

// Min, Max and Mean are exact.
func (h *DelayHistogram) Min() time.Duration { return h.min }
func (h *DelayHistogram) Max() time.Duration { return h.max }
func (h *DelayHistogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(math.Round(h.sum / float64(h.n)))
}

// Quantile returns the nearest-rank q-quantile (the smallest recorded value
// with at least q of the values at or below it), within QuantileRelError.
func (h *DelayHistogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			low, width := bucketRange(i)
			mid := time.Duration(low + (width-1)/2)
			return min(max(mid, h.min), h.max)
		}
	}
	return h.max
}
