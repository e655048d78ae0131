package emulator

import "time"

// Summary is a run's outcome per flow and per hop. Times are in seconds.
type Summary struct {
	Seed     uint64        `json:"seed"`
	Duration float64       `json:"duration_s"`
	Flows    []FlowSummary `json:"flows"`
	Hops     []HopSummary  `json:"hops"`
}

// FlowSummary is one flow's outcome.
type FlowSummary struct {
	Name      string            `json:"name"`
	Sent      uint64            `json:"sent"`
	Delivered uint64            `json:"delivered"` // including corrupted
	Corrupted uint64            `json:"corrupted"`
	Dropped   map[string]uint64 `json:"dropped"`
	InFlight  uint64            `json:"in_flight"`
	LossRate  float64           `json:"loss_rate"`
	// Extra copies made by duplication: delivered, and dropped or in flight.
	Duplicates     uint64        `json:"duplicates"`
	DuplicatesLost uint64        `json:"duplicates_lost"`
	LossBursts     *BurstSummary `json:"loss_bursts,omitempty"`
	Delay          *DelaySummary `json:"delay_s,omitempty"`
}

// BurstSummary is the observed distribution of loss-burst lengths: runs of
// consecutive frames of the flow lost by a hop's loss model.
type BurstSummary struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean"`
	Max   int     `json:"max"`
	// Lengths counts the runs of each length, shortest first; the entry of
	// length MaxLossBurst (100) counts runs of 100 frames or more.
	Lengths []BurstCount `json:"lengths"`
}

// BurstCount is how many loss bursts had a length.
type BurstCount struct {
	Length int    `json:"length"`
	Count  uint64 `json:"count"`
}

// DelaySummary describes the one-way delay of delivered frames. Quantiles
// are within QuantileRelError of the exact value; min, mean and max are
// exact.
type DelaySummary struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
}

// Summarize describes the durations in h, or returns nil if it is empty.
func (h *DelayHistogram) Summarize() *DelaySummary {
	if h.Count() == 0 {
		return nil
	}
	return &DelaySummary{
		Min:  seconds(h.Min()),
		Mean: seconds(h.Mean()),
		P50:  seconds(h.Quantile(0.50)),
		P95:  seconds(h.Quantile(0.95)),
		P99:  seconds(h.Quantile(0.99)),
		P999: seconds(h.Quantile(0.999)),
		Max:  seconds(h.Max()),
	}
}

// HopSummary is one hop's outcome.
type HopSummary struct {
	Name            string            `json:"name"`
	Frames          uint64            `json:"frames"`
	Dropped         map[string]uint64 `json:"dropped"`
	Duplicated      uint64            `json:"duplicated"`
	Corrupted       uint64            `json:"corrupted"`
	PeakQueueBytes  int64             `json:"peak_queue_bytes"`
	PeakQueueFrames int               `json:"peak_queue_frames"`
	PeakHeldFrames  int               `json:"peak_held_frames"`
	// Bus is a shared bus's channel and stations.
	Bus *BusSummary `json:"bus,omitempty"`
}

func seconds(d time.Duration) float64 { return d.Seconds() }

func dropCounts(counts *[numStatus]uint64) (m map[string]uint64, total uint64) {
	m = map[string]uint64{}
	for s := range numStatus {
		if s.Dropped() {
			m[s.String()] = counts[s]
			total += counts[s]
		}
	}
	return m, total
}

// Summary returns the outcome so far.
func (n *Network) Summary() Summary {
	sum := Summary{Seed: n.seed, Duration: seconds(n.now)}
	for i := range n.flows {
		sum.Flows = append(sum.Flows, n.flows[i].sentStats().Summary(n.flows[i].name))
	}
	for i := range n.hops {
		h := &n.hops[i]
		dropped, _ := dropCounts(&h.stats.Dropped)
		hs := HopSummary{
			Name:           h.name,
			Frames:         h.stats.Frames,
			Dropped:        dropped,
			Duplicated:     h.stats.Duplicated,
			Corrupted:      h.stats.Corrupted,
			PeakHeldFrames: h.outage.held.peakFrames,
		}
		hs.PeakQueueBytes, hs.PeakQueueFrames = h.serialiser.Peak()
		if b, ok := h.serialiser.(*bus); ok {
			hs.Bus = b.summary(n.now)
		}
		sum.Hops = append(sum.Hops, hs)
	}
	return sum
}

// Summary summarises a flow's counters.
func (st *FlowStats) Summary(name string) FlowSummary {
	dropped, total := dropCounts(&st.Status)
	fs := FlowSummary{
		Name:           name,
		Sent:           st.Sent,
		Delivered:      st.Status[Delivered] + st.Status[Corrupted],
		Corrupted:      st.Status[Corrupted],
		Dropped:        dropped,
		InFlight:       st.Status[InFlight],
		Duplicates:     st.Duplicates,
		DuplicatesLost: st.DuplicatesLost,
		LossBursts:     st.burstSummary(),
	}
	if st.Sent > 0 {
		fs.LossRate = float64(total) / float64(st.Sent)
	}
	fs.Delay = st.Delay.Summarize()
	return fs
}

func (s *FlowStats) burstSummary() *BurstSummary {
	if s.LossBursts == nil {
		return nil
	}
	b := &BurstSummary{Mean: s.MeanLossBurst(), Max: s.longestLossBurst}
	for i, c := range s.LossBursts {
		if c > 0 {
			b.Lengths = append(b.Lengths, BurstCount{Length: i + 1, Count: c})
			b.Count += c
		}
	}
	if b.Count == 0 {
		return nil
	}
	return b
}

// FlowStats returns a flow's counters.
func (n *Network) FlowStats(flowIndex int) *FlowStats { return n.flows[flowIndex].sentStats() }
