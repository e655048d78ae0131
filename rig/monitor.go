package rig

import (
	"slices"
	"sync"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// Monitor shows a run in progress to another goroutine: a live status
// line, a dashboard. The executor publishes into it ten times a second, so
// reading it costs the real-time thread nothing more.
type Monitor struct {
	mu   sync.Mutex
	snap Snapshot
	last time.Duration
}

// Snapshot is a run as of Time since it started.
type Snapshot struct {
	Time   time.Duration
	Flows  []FlowProgress
	Models []ModelProgress
}

// FlowProgress is a flow so far.
type FlowProgress struct {
	Name                   string
	Sent, Arrived, Dropped uint64
	DelayP50, DelayP99     time.Duration
}

// ModelProgress is a model endpoint so far.
type ModelProgress struct {
	Endpoint                                 string
	Output                                   string  // its output of interest
	Value                                    float64 // the output now
	Ideal                                    float64 // the uncut model's output now
	Peak                                     float64 // largest |Ideal| so far
	MaxError                                 float64 // largest |Value − Ideal| so far
	Exchanges, Overruns, FramesOut, FramesIn uint64
}

// Snapshot returns a copy of the latest state.
func (m *Monitor) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.snap
	s.Flows = slices.Clone(s.Flows)
	s.Models = slices.Clone(s.Models)
	return s
}

const publishEvery = 100 * time.Millisecond

// publish copies the run's state, at most every publishEvery; it reuses
// its slices, so it allocates only the first time.
func (m *Monitor) publish(r *runner, now time.Duration, names []string) {
	if now-m.last < publishEvery && m.last > 0 {
		return
	}
	m.last = now
	m.mu.Lock()
	defer m.mu.Unlock()
	m.snap.Time = now
	m.snap.Flows = m.snap.Flows[:0]
	for i, name := range names {
		st := r.net.FlowStats(i)
		arrived := st.Status[emulator.Delivered] + st.Status[emulator.Corrupted]
		dropped := st.Status[emulator.QueueDrop] + st.Status[emulator.OutageDrop] + st.Status[emulator.LossDrop]
		fp := FlowProgress{Name: name, Sent: st.Sent, Arrived: arrived, Dropped: dropped}
		if st.Delay.Count() > 0 {
			fp.DelayP50, fp.DelayP99 = st.Delay.Quantile(0.5), st.Delay.Quantile(0.99)
		}
		m.snap.Flows = append(m.snap.Flows, fp)
	}
	m.snap.Models = m.snap.Models[:0]
	for _, me := range r.models {
		mp := ModelProgress{Endpoint: me.name, Exchanges: me.exchanges, Overruns: me.overruns, FramesOut: me.end.framesOut, FramesIn: me.end.framesIn}
		if ref := me.ref; ref.output >= 0 {
			mp.Output, mp.Value, mp.Ideal = ref.name, ref.cut.Signal(ref.output), ref.ideal.Signal(ref.output)
			mp.Peak, mp.MaxError = ref.peak, ref.maxErr
		}
		m.snap.Models = append(m.snap.Models, mp)
	}
}
