package record

import (
	"slices"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// PhaseSummary is what happened to the frames sent during a named phase of
// the schedule.
type PhaseSummary struct {
	Name    string       `json:"name"`
	Windows [][2]float64 `json:"windows_s"` // [from, to) in seconds
	// WindowsNotListed counts the windows beyond the first MaxListedWindows
	// (a phase that recurs every millisecond has a million an hour).
	WindowsNotListed int64                  `json:"windows_not_listed,omitempty"`
	Flows            []emulator.FlowSummary `json:"flows"`
}

// MaxListedWindows is how many of a phase's windows its summary lists.
const MaxListedWindows = 1000

// Phases keeps per-phase counters: a frame belongs to every phase whose
// windows contain the time it was sent.
type Phases struct {
	phases []profiles.Phase
	names  []string
	stats  [][]emulator.FlowStats // [phase][flow]
	owned  bool                   // phases is a copy of the profile's, to Mark
}

var _ emulator.Observer = (*Phases)(nil)

// NewPhases counts the frames of the named flows in each phase.
func NewPhases(phases []profiles.Phase, flowNames []string) *Phases {
	r := &Phases{phases: phases, names: flowNames}
	for range phases {
		r.stats = append(r.stats, make([]emulator.FlowStats, len(flowNames)))
	}
	return r
}

// Finished counts a finished frame in the phases it was sent in.
func (r *Phases) Finished(f *emulator.Frame) {
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
		if w.Contains(t) {
			return true
		}
	}
	return false
}

// Mark adds the window [from, to) to the phase named name, which is made
// if it is new: a phase marked while the run goes on (the live API). Call
// it from the goroutine that runs the executor.
func (r *Phases) Mark(name string, from, to time.Duration) {
	if !r.owned { // the profile's phases are not the run's to change
		r.phases = slices.Clone(r.phases)
		for i := range r.phases {
			r.phases[i].Windows = slices.Clone(r.phases[i].Windows)
		}
		r.owned = true
	}
	i := slices.IndexFunc(r.phases, func(p profiles.Phase) bool { return p.Name == name })
	if i < 0 {
		i = len(r.phases)
		r.phases = append(r.phases, profiles.Phase{Name: name})
		r.stats = append(r.stats, make([]emulator.FlowStats, len(r.names)))
	}
	r.phases[i].Windows = append(r.phases[i].Windows, profiles.Window{From: from, To: to})
}

// Active reports whether t falls in a window of any phase.
func (r *Phases) Active(t time.Duration) bool {
	for _, p := range r.phases {
		if inWindows(p.Windows, t) {
			return true
		}
	}
	return false
}

// Summary is the counters of every phase the run reached by end, the
// instant it stopped, with the windows as they were: cut at end, and
// those that would have begun after it left out. A phase the run never
// reached is not in it: its counts would read as zeros measured.
func (r *Phases) Summary(end time.Duration) []PhaseSummary {
	var out []PhaseSummary
	for i, p := range r.phases {
		ps := PhaseSummary{Name: p.Name}
		reached := false
		for _, w := range p.Windows {
			for k := range startedBy(w, end) {
				reached = true
				if len(ps.Windows) == MaxListedWindows {
					ps.WindowsNotListed += startedBy(w, end) - k
					break
				}
				o := w.Occurrence(k)
				ps.Windows = append(ps.Windows, [2]float64{o.From.Seconds(), min(o.To, end).Seconds()})
			}
		}
		if !reached {
			continue
		}
		for j, name := range r.names {
			ps.Flows = append(ps.Flows, r.stats[i][j].Summary(name))
		}
		out = append(out, ps)
	}
	return out
}

// startedBy is how many of w's intervals began before end.
func startedBy(w profiles.Window, end time.Duration) int64 {
	return profiles.StartedBefore(w.From, w.Every, w.Occurrences(), end)
}
