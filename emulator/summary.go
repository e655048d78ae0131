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
	Delivered uint64            `json:"delivered"`
	Dropped   map[string]uint64 `json:"dropped"`
	InFlight  uint64            `json:"in_flight"`
	LossRate  float64           `json:"loss_rate"`
	Delay     *DelaySummary     `json:"delay_s,omitempty"`
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
	Max  float64 `json:"max"`
}

// HopSummary is one hop's outcome.
type HopSummary struct {
	Name            string            `json:"name"`
	Frames          uint64            `json:"frames"`
	Dropped         map[string]uint64 `json:"dropped"`
	PeakQueueBytes  int64             `json:"peak_queue_bytes"`
	PeakQueueFrames int               `json:"peak_queue_frames"`
	PeakHeldFrames  int               `json:"peak_held_frames"`
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
		fl := &n.flows[i]
		st := &fl.stats
		dropped, total := dropCounts(&st.Status)
		fs := FlowSummary{
			Name:      fl.name,
			Sent:      st.Sent,
			Delivered: st.Status[Delivered],
			Dropped:   dropped,
			InFlight:  st.Status[InFlight],
		}
		if st.Sent > 0 {
			fs.LossRate = float64(total) / float64(st.Sent)
		}
		if h := &st.Delay; h.Count() > 0 {
			fs.Delay = &DelaySummary{
				Min:  seconds(h.Min()),
				Mean: seconds(h.Mean()),
				P50:  seconds(h.Quantile(0.50)),
				P95:  seconds(h.Quantile(0.95)),
				P99:  seconds(h.Quantile(0.99)),
				Max:  seconds(h.Max()),
			}
		}
		sum.Flows = append(sum.Flows, fs)
	}
	for i := range n.hops {
		h := &n.hops[i]
		dropped, _ := dropCounts(&h.stats.Dropped)
		sum.Hops = append(sum.Hops, HopSummary{
			Name:            h.name,
			Frames:          h.stats.Frames,
			Dropped:         dropped,
			PeakQueueBytes:  h.waiting.peakBytes,
			PeakQueueFrames: h.waiting.peakFrames,
			PeakHeldFrames:  h.held.peakFrames,
		})
	}
	return sum
}

// FlowStats returns a flow's counters.
func (n *Network) FlowStats(flowIndex int) *FlowStats { return &n.flows[flowIndex].stats }
