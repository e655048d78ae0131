package record

import (
	"slices"
	"sync"
	"time"
)

// Monitor shows a run in progress to another goroutine: a live status
// line, a dashboard. The executor publishes into it ten times a second of
// its clock, so reading it costs the real-time thread nothing more.
type Monitor struct {
	mu   sync.Mutex
	snap Snapshot
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

// PublishEvery is how often, in the run's time, the executor publishes.
const PublishEvery = 100 * time.Millisecond

// Snapshot returns a copy of the latest state.
func (m *Monitor) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.snap
	s.Flows = slices.Clone(s.Flows)
	s.Models = slices.Clone(s.Models)
	return s
}

// Publish lets fill update the snapshot in place; fill reuses its slices,
// so that publishing allocates only the first time.
func (m *Monitor) Publish(fill func(*Snapshot)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fill(&m.snap)
}
