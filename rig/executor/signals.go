package executor

import (
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/profiles"
)

// SignalPart is what a column of the signals file reads.
type SignalPart uint8

// The parts a model endpoint records.
const (
	RigPart     SignalPart = iota // the part the rig simulates: NAME.SIGNAL
	StandInPart                   // the hardware's stand-in (virtual time): NAME.hardware.SIGNAL
	IdealPart                     // the uncut model run alongside: NAME.ideal.SIGNAL
	TimePart                      // the rig's part's own time and its discrepancy: NAME.sim_time, NAME.t_diff
)

// ModelSignal is one column of a model endpoint's signals.
type ModelSignal struct {
	Column string // as the header names it
	Signal string // the model's signal, or sim_time or t_diff
	Part   SignalPart
	// Seconds: the column is a time, in seconds (sim_time, t_diff); the
	// model's signals carry no unit.
	Seconds bool
}

// The time columns of a part that keeps its own time.
const (
	SimTimeSignal = "sim_time" // the part's simulated time since its start
	TDiffSignal   = "t_diff"   // the clock's time since the start less sim_time
)

// ModelSignals lists the columns model endpoint name writes to the signals
// file, in the order it writes them: for the part the rig simulates, then
// (standIn: the hardware's part stands in for the device, in virtual time)
// the hardware's, each what the part computes, what it receives across the
// cut and the model inputs it reads (their stimulus at the row's time);
// then the uncut model's signals and inputs (but for an FMU's); then, when the part keeps its
// own time (it steps on data or is supervised, HasOwnTime), its time and
// t_diff. It is what the executor records and what an expectation may
// name: both read it.
func ModelSignals(name string, bm *profiles.BenchModel, standIn, ownTime bool) []ModelSignal {
	var out []ModelSignal
	add := func(part SignalPart, prefix string, lists ...[]string) {
		for _, l := range lists {
			for _, s := range l {
				out = append(out, ModelSignal{Column: name + prefix + s, Signal: s, Part: part})
			}
		}
	}
	add(RigPart, ".", bm.Simulated.Produces(), bm.Simulated.In(), bm.Simulated.External())
	if standIn {
		add(StandInPart, ".hardware.", bm.Hardware.Produces(), bm.Hardware.In(), bm.Hardware.External())
	}
	if bm.FMU == nil { // an FMU is not run twice: it has no uncut reference
		whole := bm.Whole()
		add(IdealPart, ".ideal.", whole.Produces(), whole.External())
	}
	if ownTime {
		for _, s := range []string{SimTimeSignal, TDiffSignal} {
			out = append(out, ModelSignal{Column: name + "." + s, Signal: s, Part: TimePart, Seconds: true})
		}
	}
	return out
}

// HasOwnTime reports whether a bench model's part keeps its own time, as
// the executor's model does once given the bench's stepping (SetStepping):
// it steps on data, or a supervisor watches it.
func HasOwnTime(st *profiles.Stepping) bool {
	return st != nil && (st.Wait || st.Supervisor != nil)
}

// signalColumns appends the model's signal columns (ModelSignals) to names
// and what reads them to cols.
func (m *Model) signalColumns(names []string, cols []signalColumn) ([]string, []signalColumn) {
	for _, s := range ModelSignals(m.name, m.bm, m.hw != nil, m.wait != nil) {
		var c signalColumn
		switch s.Part {
		case RigPart:
			c.it = m.sim.it
		case StandInPart:
			c.it = m.hw.it
		case IdealPart:
			c.it = m.ref.ideal
		case TimePart:
			c.model, c.k = m, simTime
			if s.Signal == TDiffSignal {
				c.k = tdiff
			}
		}
		if c.it != nil {
			c.k = c.it.Part().Plant().SignalIndex(s.Signal)
		}
		names = append(names, s.Column)
		cols = append(cols, c)
	}
	return names, cols
}

// signalColumn reads a signal of an integrator, or (model set) the
// model's time or discrepancy.
type signalColumn struct {
	it    *plant.Integrator
	model *Model
	k     int
}

const (
	simTime = iota
	tdiff
)

func (c signalColumn) read(now time.Duration) float64 {
	if c.model == nil {
		return c.it.Signal(c.k)
	}
	h := c.model.h()
	if c.k == simTime {
		return h.Seconds()
	}
	return (now - c.model.wait.start - h).Seconds()
}
