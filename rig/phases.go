package rig

import (
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// PhaseSummary is what happened to the frames sent during a named phase of
// the schedule.
type PhaseSummary struct {
	Name    string                 `json:"name"`
	Windows [][2]float64           `json:"windows_s"` // [from, to) in seconds
	Flows   []emulator.FlowSummary `json:"flows"`
}

// phaseRecorder keeps per-phase counters: a frame belongs to every phase
// whose windows contain the time it was sent.
type phaseRecorder struct {
	phases []profiles.Phase
	names  []string
	stats  [][]emulator.FlowStats // [phase][flow]
}

var _ emulator.Observer = (*phaseRecorder)(nil)

func newPhaseRecorder(phases []profiles.Phase, flowNames []string) *phaseRecorder {
	r := &phaseRecorder{phases: phases, names: flowNames}
	for range phases {
		r.stats = append(r.stats, make([]emulator.FlowStats, len(flowNames)))
	}
	return r
}

func (r *phaseRecorder) Finished(f *emulator.Frame) {
	for i, p := range r.phases {
		if inWindows(p.Windows, f.Sent) {
			st := &r.stats[i][f.Flow]
			if !f.Copy {
				st.Sent++
			}
			st.Record(f)
		}
	}
}

func inWindows(ws []profiles.Window, t time.Duration) bool {
	for _, w := range ws {
		if t >= w.From && t < w.To {
			return true
		}
	}
	return false
}

func (r *phaseRecorder) summary() []PhaseSummary {
	var out []PhaseSummary
	for i, p := range r.phases {
		ps := PhaseSummary{Name: p.Name}
		for _, w := range p.Windows {
			ps.Windows = append(ps.Windows, [2]float64{w.From.Seconds(), w.To.Seconds()})
		}
		for j, name := range r.names {
			ps.Flows = append(ps.Flows, r.stats[i][j].Summary(name))
		}
		out = append(out, ps)
	}
	return out
}

// observers hands each finished frame to several observers.
type observers []emulator.Observer

func (o observers) Finished(f *emulator.Frame) {
	for _, x := range o {
		x.Finished(f)
	}
}
