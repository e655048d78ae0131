package fmi

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
)

// Steps is what a Block needs of whatever steps its FMU: a Stepper in this
// process, or one in a child process of the rig.
type Steps interface {
	Set(values []float64)
	Step(to float64) error
	Outputs(dst []float64)
}

// A Block is an FMU as a sampled subsystem of a plant model, so that it
// goes wherever a model goes: cut at a coupling point, its inputs and
// outputs crossing the emulated network as any model's signals do. At
// each hit, every Period from time 0, it gives the outputs the FMU has
// then (held until the next hit), and steps the FMU over the period with
// the inputs it has at the hit. What steps the FMU is attached before the
// model runs (Attach); until then, as when a plant model is only checked,
// the block gives the outputs' start values.
//
// A step that fails (an FMU's error, an output that is not a number, a
// step over its budget, the FMU's process gone) fails the block: its
// outputs are NaN from then on, the plant's integrator reports the failure
// (plant.Equations.Failure), and the FMU is stepped no more.
type Block struct {
	name     string
	inputs   []string // the plant's names of its inputs (SignalName)
	outputs  []string // and of its outputs
	period   time.Duration
	start    []float64 // the outputs' start values
	steps    Steps
	out, in  []float64
	err      error
	fmuNames [2][]string // the FMU's own names of the inputs and outputs
}

// NewBlock makes a block of the FMU described by d, named name in its
// plant, reading inputs and giving outputs (values of d, each named as
// Description.Value takes it), acting every period. In the plant, the
// block's signals go by their SignalName.
func NewBlock(d *Description, name string, inputs, outputs []string, period time.Duration) (*Block, error) {
	b := &Block{name: name, period: period}
	for i, list := range [][]string{inputs, outputs} {
		for _, n := range list {
			s, err := d.Value(n)
			if err != nil {
				return nil, err
			}
			b.fmuNames[i] = append(b.fmuNames[i], s.Name)
			if i == 0 {
				b.inputs = append(b.inputs, SignalName(s.Name))
				continue
			}
			b.outputs = append(b.outputs, SignalName(s.Name))
			v := d.Variables[s.Variable]
			start := 0.0
			if s.Element < len(v.Start) {
				start = v.Start[s.Element]
			}
			b.start = append(b.start, start)
		}
	}
	b.out = make([]float64, len(b.outputs))
	b.in = make([]float64, len(b.inputs))
	copy(b.out, b.start)
	return b, nil
}

// FMUInputs and FMUOutputs are the block's inputs and outputs as the FMU
// names them, in order: what steps it sets and gives (Attach).
func (b *Block) FMUInputs() []string  { return slices.Clone(b.fmuNames[0]) }
func (b *Block) FMUOutputs() []string { return slices.Clone(b.fmuNames[1]) }

// Start is the outputs' start values, in order.
func (b *Block) Start() []float64 { return slices.Clone(b.start) }

// Attach makes s step the block's FMU from now on: its inputs and
// outputs are the block's, in their order, and it stands at time 0.
func (b *Block) Attach(s Steps) {
	b.steps, b.err = s, nil
	s.Outputs(b.out)
}

// Err is why the block failed, or nil.
func (b *Block) Err() error { return b.err }

// Subsystem is the block as a plant subsystem, without states.
func (b *Block) Subsystem() plant.Subsystem {
	return plant.Subsystem{
		Name: b.name, Inputs: b.inputs, Outputs: b.outputs,
		Equations: &plant.Equations{
			Period:  b.period,
			Output:  b.output,
			Update:  b.update,
			Failure: b.Err,
		},
	}
}

func (b *Block) output(_ float64, _, _, y []float64) { copy(y, b.out) }

func (b *Block) update(t float64, _, u, _ []float64) {
	if b.steps == nil || b.err != nil {
		return
	}
	b.steps.Set(u)
	if err := b.steps.Step(t + b.period.Seconds()); err != nil {
		b.fail(fmt.Errorf("at t = %g s: %w", t, err))
		return
	}
	b.steps.Outputs(b.out)
}

// fail fails the block: its outputs are not numbers from now on.
func (b *Block) fail(err error) {
	b.err = err
	for i := range b.out {
		b.out[i] = math.NaN()
	}
}
