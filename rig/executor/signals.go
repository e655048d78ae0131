package executor

import (
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
)

// signalColumns appends the model's signal columns to names and what reads
// them to cols: its simulated part (NAME.signal), the stand-in for its
// hardware part (NAME.hardware.signal) and the uncut model
// (NAME.ideal.signal).
func (m *Model) signalColumns(names []string, cols []signalColumn) ([]string, []signalColumn) {
	add := func(prefix string, it *plant.Integrator, signals []string) {
		for _, n := range signals {
			names = append(names, prefix+n)
			cols = append(cols, signalColumn{it: it, k: it.Part().Plant().SignalIndex(n)})
		}
	}
	add(m.name+".", m.sim.it, append(m.bm.Simulated.Produces(), m.bm.Simulated.In()...))
	if m.hw != nil {
		add(m.name+".hardware.", m.hw.it, append(m.bm.Hardware.Produces(), m.bm.Hardware.In()...))
	}
	add(m.name+".ideal.", m.ref.ideal, m.bm.Whole().Produces())
	if m.wait != nil {
		// The part's own time and its discrepancy with the clock.
		names = append(names, m.name+".sim_time", m.name+".t_diff")
		cols = append(cols, signalColumn{model: m, k: simTime}, signalColumn{model: m, k: tdiff})
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
