package emulator

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// FlowStats counts a flow's frames by fate and summarises the one-way delay
// of the delivered ones, in memory that does not grow with the run.
//
// What Record updates for a delivered frame comes first, on one cache line
// of a flow's state (see flow): the delay's count, sum, extremes and its
// latest bucket, and Status[Delivered].
type FlowStats struct {
	Delay  DelayHistogram    // one-way delay of the source's arrived frames
	Status [numStatus]uint64 // the source's frames by final status
	// Sent counts the frames made. A network's flows count them as their
	// sequence numbers, on the line making a frame reads anyway, and
	// Network.FlowStats and Summary bring Sent up to date.
	Sent           uint64
	Duplicates     uint64 // copies delivered
	DuplicatesLost uint64 // copies dropped or still in flight

	// LossBursts[k] counts runs of k+1 consecutive frames lost by a hop's
	// loss model (the last entry counts longer runs too); nil until the
	// first, so that a flow without loss does not carry 800 bytes of zeros.
	// lossBurstSum is the total length, for the exact mean.
	LossBursts       *[MaxLossBurst]uint64
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
	if s.LossBursts == nil {
		s.LossBursts = new([MaxLossBurst]uint64)
	}
	s.LossBursts[min(length, MaxLossBurst)-1]++
	s.lossBurstSum += uint64(length)
	s.longestLossBurst = max(s.longestLossBurst, length)
}

// MeanLossBurst is the mean length of the loss bursts seen, in frames.
func (s *FlowStats) MeanLossBurst() float64 {
	if s.LossBursts == nil {
		return 0
	}
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
// min, max and mean. Its memory follows the spread of what it holds, not the
// durations' size, because every flow has one: up to sparseBuckets distinct
// buckets are kept as (bucket, count) pairs, more as a dense run of counts
// from the smallest bucket seen to the largest. (Counts indexed from bucket
// 0 cost 88 KB for delays of 6 ms, whatever the number of frames: issue 10.)
//
// A flow's frames often take the same time, so the latest bucket's count
// is kept apart, in the histogram itself (hot), and added to the pairs or
// counts (behind a pointer, in other memory) only when a duration falls in
// another bucket: recording such a run touches the histogram's 48 bytes
// alone, where looking the bucket up among the pairs missed the caches
// once a frame with 10 000 flows (issue 21).
type DelayHistogram struct {
	n        uint64
	sum      float64
	min, max time.Duration
	hot      bucketCount // counted apart from store
	store    *histogramStore
}

// histogramStore is a histogram's counts but those of its hot bucket.
type histogramStore struct {
	dense  []uint64      // counts of buckets lo, lo+1, …
	sparse []bucketCount // in bucket order; nil once dense
	lo     int
}

// bucketCount is a bucket of a sparse histogram; 8 bytes, where the dense
// form takes 8 bytes for every bucket in the span.
type bucketCount struct{ bucket, count uint32 }

// sparseBuckets is how many distinct buckets a histogram holds as pairs
// (512 B) before it turns dense: beyond it the pairs' insertion cost grows,
// and delays spread over more than 64 buckets fill much of their span.
const sparseBuckets = 64

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
	h.add(bucketOf(uint64(d)))
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if h.n == 0 || d > h.max {
		h.max = d
	}
	h.n++
	h.sum += float64(d)
}

func (h *DelayHistogram) add(b int) {
	if int(h.hot.bucket) == b && h.hot.count < math.MaxUint32 {
		h.hot.count++
		return
	}
	if h.hot.count > 0 {
		if h.store == nil {
			h.store = new(histogramStore)
		}
		h.store.add(int(h.hot.bucket), uint64(h.hot.count))
	}
	h.hot = bucketCount{uint32(b), 1}
}

// add adds c to bucket b's count.
func (s *histogramStore) add(b int, c uint64) {
	if len(s.dense) > 0 {
		if b < s.lo || b >= s.lo+len(s.dense) {
			s.widen(b)
		}
		s.dense[b-s.lo] += c
		return
	}
	i, found := s.find(b)
	switch {
	case found && uint64(s.sparse[i].count)+c <= math.MaxUint32:
		s.sparse[i].count += uint32(c)
	case !found && len(s.sparse) < sparseBuckets:
		s.sparse = slices.Insert(s.sparse, i, bucketCount{uint32(b), uint32(c)})
	default:
		s.makeDense()
		s.add(b, c)
	}
}

// find returns where bucket b is, or would be inserted, in the sparse pairs.
func (s *histogramStore) find(b int) (int, bool) {
	lo, hi := 0, len(s.sparse)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if int(s.sparse[mid].bucket) < b {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(s.sparse) && int(s.sparse[lo].bucket) == b
}

func (s *histogramStore) makeDense() {
	first, last := int(s.sparse[0].bucket), int(s.sparse[len(s.sparse)-1].bucket)
	s.lo, s.dense = first, make([]uint64, last-first+1)
	for _, e := range s.sparse {
		s.dense[int(e.bucket)-first] = uint64(e.count)
	}
	s.sparse = nil
}

// widen extends the dense run to bucket b and half its length again beyond,
// so that a delay drifting one way widens it a logarithmic number of times.
func (s *histogramStore) widen(b int) {
	lo, hi := s.lo, s.lo+len(s.dense)
	room := len(s.dense) / 2
	if b < lo {
		lo = max(0, b-room)
	} else {
		hi = b + 1 + room
	}
	dense := make([]uint64, hi-lo)
	copy(dense[s.lo-lo:], s.dense)
	s.lo, s.dense = lo, dense
}

// count returns bucket b's count in the store.
func (s *histogramStore) count(b int) uint64 {
	if s == nil {
		return 0
	}
	if i := b - s.lo; i >= 0 && i < len(s.dense) {
		return s.dense[i]
	}
	if i, found := s.find(b); found {
		return uint64(s.sparse[i].count)
	}
	return 0
}

// buckets yields the non-empty buckets in order, with their counts: the
// store's, and the hot bucket's count added where it belongs.
func (h *DelayHistogram) buckets(yield func(bucket int, count uint64) bool) {
	hot, hotCount := int(h.hot.bucket), uint64(h.hot.count)
	if s := h.store; s != nil {
		for _, e := range s.sparse {
			if !h.yieldWithHot(yield, int(e.bucket), uint64(e.count), &hotCount) {
				return
			}
		}
		for i, c := range s.dense {
			if c > 0 && !h.yieldWithHot(yield, s.lo+i, c, &hotCount) {
				return
			}
		}
	}
	if hotCount > 0 {
		yield(hot, hotCount)
	}
}

// yieldWithHot yields bucket b of the store with count c, after the hot
// bucket if it comes first, or with its count added if it is b; once
// yielded, *hotCount is 0.
func (h *DelayHistogram) yieldWithHot(yield func(int, uint64) bool, b int, c uint64, hotCount *uint64) bool {
	if hot := int(h.hot.bucket); *hotCount > 0 && hot <= b {
		if hot == b {
			c += *hotCount
		} else if !yield(hot, *hotCount) {
			return false
		}
		*hotCount = 0
	}
	return yield(b, c)
}

// count returns bucket b's count.
func (h *DelayHistogram) count(b int) uint64 {
	c := h.store.count(b)
	if int(h.hot.bucket) == b {
		c += uint64(h.hot.count)
	}
	return c
}

// copyFrom makes h a copy of src, reusing h's memory.
func (h *DelayHistogram) copyFrom(src *DelayHistogram) {
	store := h.store
	*h = *src
	h.store = store
	if src.store == nil {
		if store != nil {
			store.sparse, store.dense, store.lo = store.sparse[:0], store.dense[:0], 0
		}
		return
	}
	if store == nil {
		h.store = new(histogramStore)
	}
	h.store.sparse = append(h.store.sparse[:0], src.store.sparse...)
	h.store.dense = append(h.store.dense[:0], src.store.dense...)
	h.store.lo = src.store.lo
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
	for i, c := range h.buckets {
		seen += c
		if seen >= rank {
			low, width := bucketRange(i)
			mid := time.Duration(low + (width-1)/2)
			return min(max(mid, h.min), h.max)
		}
	}
	return h.max
}
