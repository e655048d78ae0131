package executor

import (
	"math"
	"slices"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/rig/record"
)

// reference runs the uncut model alongside a cut one, with the same
// solver and step, and measures how far the cut one's output of interest
// strays from it: the distortion the cut, the exchange and the network
// cause together.
type reference struct {
	ideal               *plant.Integrator
	substeps            int64
	output              int               // signal index, or -1
	cut                 *plant.Integrator // the integrator computing the output in the cut run
	name                string
	peak, maxErr, sumSq float64
	samples             uint64
	diverged            float64 // run time (s) the cut output stopped being finite; −1: it did not
	divergedIdeal       bool    // the uncut model has, and the run was told
}

// newReference compares the output as computed by sim, or by hw when the
// hardware part computes it (hw is nil when the hardware is real: then
// there is nothing to compare).
//
// Without spec.Reference (an FMU, whose state is its own and which
// cannot run twice in step) it has no ideal and compares nothing.
func newReference(spec *ModelSpec, sim, hw *plant.Integrator) (*reference, error) {
	if !spec.Reference {
		return &reference{output: -1, diverged: -1}, nil
	}
	ideal, err := plant.NewIntegrator(spec.Plant.Whole(), spec.Solver, spec.Step)
	if err != nil {
		return nil, err
	}
	r := &reference{ideal: ideal, substeps: int64(spec.Exchange / spec.Step), output: -1, name: spec.Output, diverged: -1}
	if spec.Output == "" {
		return r, nil
	}
	if slices.Contains(spec.Simulated.Produces(), spec.Output) {
		r.cut = sim
	} else {
		r.cut = hw
	}
	if r.cut != nil {
		r.output = spec.Plant.SignalIndex(spec.Output)
	}
	return r, nil
}

// compare samples the uncut model at the cut one's time and accumulates
// the output's error; the cut integrator was sampled already.
func (r *reference) compare() {
	if r.ideal == nil {
		return
	}
	r.ideal.Sample()
	if r.output < 0 {
		return
	}
	ref := r.ideal.Signal(r.output)
	e := r.cut.Signal(r.output) - ref
	if math.IsNaN(e) || math.IsInf(e, 0) {
		if r.diverged < 0 {
			r.diverged = r.ideal.Time().Seconds()
		}
		return
	}
	r.peak = max(r.peak, math.Abs(ref))
	r.maxErr = max(r.maxErr, math.Abs(e))
	r.sumSq += float64(e * e) // not fused: the same sum on every machine (emulator/detmath)
	r.samples++
}

func (r *reference) advance() {
	if r.ideal == nil {
		return
	}
	for range r.substeps {
		r.ideal.Advance()
	}
}

func (r *reference) summary() *record.OutputError {
	if r.output < 0 || r.samples == 0 {
		// Without a sample of finite numbers there is no error to say
		// (a peak and error of 0 would say there was none): a model that
		// diverged at once is told by its event and the run's stop.
		return nil
	}
	o := &record.OutputError{Signal: r.name, Peak: r.peak, MaxError: r.maxErr}
	if r.samples > 0 {
		o.RMSError = math.Sqrt(r.sumSq / float64(r.samples))
	}
	if r.diverged >= 0 {
		o.DivergedS = &r.diverged
	}
	if r.peak > 1e-6*r.maxErr {
		o.OfPeak = r.maxErr / r.peak
	}
	return o
}
