package rig

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig/fmu"
	"github.com/hilrig/hilrig/rig/record"
)

// runningFMU is the FMU of a bench's FMU endpoint, started for a run.
type runningFMU struct {
	endpoint string
	unit     *fmu.Unit
	model    fmu.Model
	kind     fmi.Kind
	isolated bool
	// final is the summary taken as it closed.
	final *record.FMUSummary
}

// summary is what the FMU did, for its model's summary.
func (f runningFMU) summary() *record.FMUSummary {
	st := f.model.Stats()
	s := &record.FMUSummary{File: f.unit.Path, Interface: f.kind.String(), Isolated: f.isolated,
		Steps: st.Steps, SolverSteps: st.SolverSteps, Rejected: st.Rejected,
		Events: st.StateEvents + st.TimeEvents + st.StepEvents + st.InputEvents}
	if err := f.model.Err(); err != nil {
		s.Error = err.Error()
	}
	return s
}

// startFMUs starts the FMU of each FMU endpoint of b, in bench order, and
// attaches it to its block. It comes before the models are built: a
// part's integrator reads its blocks' outputs as it is made. On an error
// the FMUs started are closed. priority is an isolated FMU's process's
// SCHED_FIFO priority (0: normal).
func startFMUs(b *benchfile.LoadedBench, priority int) ([]runningFMU, error) {
	if b == nil {
		return nil, nil
	}
	var started []runningFMU
	for _, name := range b.Endpoints.Names {
		bm := b.Models[name]
		if bm == nil || bm.FMU == nil {
			continue
		}
		f := bm.FMU
		u, err := fmu.Open(f.File)
		if err != nil {
			closeFMUs(started)
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		m, err := u.Start(fmi.Config{
			Kind: f.Kind, Params: f.Params,
			Inputs: f.Block.FMUInputs(), Outputs: f.Block.FMUOutputs(),
		}, fmu.Options{Name: name, Isolate: f.Isolate, Budget: f.Budget, Priority: priority})
		if err != nil {
			u.Close()
			closeFMUs(started)
			return nil, fmt.Errorf("%s: starting the FMU %s: %w", name, f.File, err)
		}
		f.Block.Attach(m)
		started = append(started, runningFMU{endpoint: name, unit: u, model: m, kind: f.Kind, isolated: f.Isolate})
	}
	return started, nil
}

// closeFMUs ends the FMUs and removes their files, the last started
// first; it returns what went wrong, each error naming its endpoint (an
// FMU that failed in the run is not asked again why).
func closeFMUs(fmus []runningFMU) error {
	var errs []error
	for i, f := range slices.Backward(fmus) {
		fmus[i].final = f.summary()
		if f.model.Err() == nil {
			if err := f.model.Close(); err != nil {
				errs = append(errs, fmt.Errorf("%s: closing the FMU: %w", f.endpoint, err))
			}
		} else {
			f.model.Close()
		}
		if err := f.unit.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.endpoint, err))
		}
	}
	return errors.Join(errs...)
}
