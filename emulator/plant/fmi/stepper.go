package fmi

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Config is how a Stepper runs an FMU.
type Config struct {
	Kind Kind // CS or ME
	// Experiment is the start time and, when not zero, the stop time and
	// tolerance passed to the FMU. For Model Exchange the tolerance is
	// also the integrator's relative tolerance (DefaultTolerance when
	// zero).
	Experiment Experiment
	// Params are values set before initialisation, by signal name:
	// parameters, and variables whose start value may be changed.
	Params map[string]float64
	// Inputs and Outputs name what Set takes and Outputs gives, in order;
	// nil means every input, or every output, of a numeric type (an
	// array's elements each).
	Inputs, Outputs []string
	// Initial are the inputs' values at the start time, for the
	// initialisation; nil: their start values.
	Initial []float64
}

// DefaultTolerance is the Model Exchange integrator's relative tolerance
// when neither the caller nor the FMU gives one.
const DefaultTolerance = 1e-6

// maxEventIterations bounds an event iteration: an FMU that asks for new
// discrete states this many times at one instant is in a loop.
const maxEventIterations = 1000

// Stats counts what a Stepper did.
type Stats struct {
	Steps       uint64 // communication steps
	SolverSteps uint64 // Model Exchange: accepted integrator steps
	Rejected    uint64 // Model Exchange: steps refused by the error control
	StateEvents uint64 // Model Exchange: events located by their indicators
	TimeEvents  uint64
	StepEvents  uint64 // asked for by fmi*CompletedIntegratorStep
	InputEvents uint64 // a discrete input changed
}

// Stepper runs an instance at communication steps: the inputs Set before
// a step are the FMU's inputs over it, and the outputs are read after it.
// It drives the instance through the FMI state machine: instantiated →
// initialisation → stepping (Co-Simulation) or event and continuous-time
// modes (Model Exchange) → terminated → freed. It allocates nothing per
// step. A Stepper is not safe for concurrent use.
type Stepper struct {
	d        *Description
	inst     Instance
	cs       CoSimulation
	me       *integrator
	kind     Kind
	t        float64
	ins      []Signal
	outs     []Signal
	in       []float64 // held inputs
	out      []float64 // the outputs as of t
	inCh     *channels // Co-Simulation: every input
	contCh   *channels // Model Exchange: the continuous inputs,
	discCh   *channels // and the discrete ones, set in event mode
	contIdx  []int     // indices into in
	discIdx  []int
	contBuf  []float64
	discBuf  []float64
	lastDisc []float64 // the discrete inputs as the FMU has them
	outCh    *channels
	dirty    bool // inputs set since the last step
	err      error
	phase    phase
	stats    Stats
}

// phase is where an instance is in FMI's state machine, as far as the
// Stepper's calls take it.
type phase int

const (
	instantiated phase = iota
	initialising
	running // Co-Simulation's step mode; Model Exchange's event and continuous-time modes
	freed
)

// NewStepper instantiates nothing: it takes an instance just made, sets
// the parameters, initialises it at the experiment's start time with the
// initial inputs, and reads the outputs there. On error the instance has
// been freed.
func NewStepper(d *Description, inst Instance, cfg Config) (*Stepper, error) {
	s := &Stepper{d: d, inst: inst, kind: cfg.Kind, t: cfg.Experiment.Start}
	if err := s.start(cfg); err != nil {
		s.err = err
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Stepper) start(cfg Config) (err error) {
	d, inst := s.d, s.inst
	switch cfg.Kind {
	case CS:
		cs, ok := inst.(CoSimulation)
		if !ok || d.Interface(CS) == nil {
			return errors.New("the FMU does not offer Co-Simulation")
		}
		s.cs = cs
	case ME:
		me, ok := inst.(ModelExchange)
		if !ok || d.Interface(ME) == nil {
			return errors.New("the FMU does not offer Model Exchange")
		}
		s.me = newIntegrator(d, me, cfg.Experiment.Tolerance)
	default:
		return fmt.Errorf("no interface %v to step", cfg.Kind)
	}
	if s.ins, err = s.signals(cfg.Inputs, Input, "input"); err != nil {
		return err
	}
	if s.outs, err = s.signals(cfg.Outputs, Output, "output"); err != nil {
		return err
	}
	s.in, s.out = make([]float64, len(s.ins)), make([]float64, len(s.outs))
	for i, sig := range s.ins {
		if v := &d.Variables[sig.Variable]; sig.Element < len(v.Start) {
			s.in[i] = v.Start[sig.Element]
		}
	}
	if cfg.Initial != nil {
		if len(cfg.Initial) != len(s.ins) {
			return fmt.Errorf("%d initial values for %d inputs", len(cfg.Initial), len(s.ins))
		}
		copy(s.in, cfg.Initial)
	}
	if err := s.checkInputs(); err != nil {
		return err
	}
	s.outCh = newChannels(d, s.outs)
	if s.kind == CS {
		s.inCh = newChannels(d, s.ins)
	} else {
		var cont, disc []Signal
		for i, sig := range s.ins {
			if sig.Continuous {
				cont, s.contIdx = append(cont, sig), append(s.contIdx, i)
			} else {
				disc, s.discIdx = append(disc, sig), append(s.discIdx, i)
			}
		}
		s.contCh, s.discCh = newChannels(d, cont), newChannels(d, disc)
		s.contBuf, s.discBuf = make([]float64, len(cont)), make([]float64, len(disc))
		s.lastDisc = make([]float64, len(disc))
		s.me.writeDiscrete = func() error { return s.discCh.write(s.inst, s.discBuf) }
	}
	if err := s.setParams(cfg.Params); err != nil {
		return err
	}
	if err := inst.EnterInitializationMode(cfg.Experiment); err != nil {
		return err
	}
	s.phase = initialising
	if err := s.writeInputs(true); err != nil {
		return err
	}
	if err := inst.ExitInitializationMode(); err != nil {
		return err
	}
	s.phase = running
	if s.me != nil {
		// Model Exchange leaves initialisation in event mode.
		if err := s.me.start(s.t); err != nil {
			return err
		}
	}
	if err := s.readOutputs("after initialisation"); err != nil {
		return err
	}
	return nil
}

// signals resolves the names of inputs or outputs, or lists every one of
// a numeric type when names is nil.
func (s *Stepper) signals(names []string, causality Causality, what string) ([]Signal, error) {
	d := s.d
	if names == nil {
		var out []Signal
		idx := d.Outputs
		if causality == Input {
			idx = nil
			for i := range d.Variables {
				if d.Variables[i].Causality == Input {
					idx = append(idx, i)
				}
			}
		}
		for _, k := range idx {
			if d.Variables[k].Type.Numeric() {
				out = append(out, d.elements(k)...)
			}
		}
		return out, nil
	}
	sigs, err := d.Signals(names)
	if err != nil {
		return nil, err
	}
	for _, sig := range sigs {
		v := &d.Variables[sig.Variable]
		switch {
		case !v.Type.Numeric():
			return nil, fmt.Errorf("%s is a %s variable: hilrig carries numbers only", sig.Name, v.TypeName)
		case causality == Input && v.Causality != Input:
			return nil, fmt.Errorf("%s is not an input (its causality is %s)", sig.Name, v.Causality)
		}
	}
	return sigs, nil
}

// setParams sets parameters and start values before initialisation.
func (s *Stepper) setParams(params map[string]float64) error {
	if len(params) == 0 {
		return nil
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names) // the same calls in the same order, run after run
	sigs, err := s.d.Signals(names)
	if err != nil {
		return err
	}
	values := make([]float64, 0, len(sigs))
	for _, name := range names {
		for range s.mustSignals(name) {
			values = append(values, params[name])
		}
	}
	for i, sig := range sigs {
		v := &s.d.Variables[sig.Variable]
		switch {
		case !v.Type.Numeric():
			return fmt.Errorf("%s is a %s variable: hilrig sets numbers only", sig.Name, v.TypeName)
		case v.Causality == StructuralParameter:
			return fmt.Errorf("%s is a structural parameter (it sizes arrays): hilrig runs an FMU with the sizes its description gives", sig.Name)
		case v.Variability == Constant:
			return fmt.Errorf("%s is a constant", sig.Name)
		case v.Causality == CalculatedParameter || v.Causality == Independent || v.Initial == Calculated ||
			(v.Causality == Output || v.Causality == Local) && v.Initial == "":
			return fmt.Errorf("%s is computed by the FMU (causality %s): it cannot be set", sig.Name, v.Causality)
		}
		if err := sig.check(values[i], s.d.Version); err != nil {
			return err
		}
	}
	return newChannels(s.d, sigs).write(s.inst, values)
}

func (s *Stepper) mustSignals(name string) []Signal {
	sigs, _ := s.d.Signals([]string{name})
	return sigs
}

// InputSignals are what Set takes, in order.
func (s *Stepper) InputSignals() []Signal { return s.ins }

// OutputSignals are what Outputs gives, in order.
func (s *Stepper) OutputSignals() []Signal { return s.outs }

// Time is the communication point reached.
func (s *Stepper) Time() float64 { return s.t }

// Stats counts the steps and events so far.
func (s *Stepper) Stats() Stats { return s.stats }

// Set holds the inputs (in InputSignals order) from now until the next
// Set: the next Step gives them to the FMU. Values a type cannot hold are
// refused by that Step.
func (s *Stepper) Set(values []float64) {
	copy(s.in, values)
	s.dirty = true
}

// Outputs copies the outputs at the current time into dst.
func (s *Stepper) Outputs(dst []float64) { copy(dst, s.out) }

// Step advances to the communication point to. An FMU's error, an
// output that is not a number, or an input its type cannot hold is
// returned, and every later Step returns it again. The FMU asking to end
// the simulation is an error wrapping ErrTerminated; Time and Outputs are
// then where it ended.
func (s *Stepper) Step(to float64) error {
	if s.err != nil {
		return s.err
	}
	if s.phase != running {
		return errors.New("the FMU has been freed")
	}
	if !(to > s.t) {
		return fmt.Errorf("a step to %g from %g: the time must increase", to, s.t)
	}
	var err error
	if s.kind == CS {
		err = s.stepCS(to)
	} else {
		err = s.stepME(to)
	}
	if err != nil && !errors.Is(err, ErrTerminated) {
		s.err = err
		return err
	}
	// An FMU that ends the simulation leaves its outputs at the time it
	// reached: they are read, and the step returns its ending.
	s.stats.Steps++
	if rerr := s.readOutputs(""); rerr != nil {
		err = rerr
	}
	s.err = err
	return err
}

func (s *Stepper) stepCS(to float64) error {
	if err := s.writeInputs(false); err != nil {
		return err
	}
	from := s.t
	terminate, reached, err := s.cs.DoStep(from, to-from)
	if err != nil {
		return err
	}
	if terminate {
		if reached > from && reached <= to {
			s.t = reached
		}
		return fmt.Errorf("%w at t = %g (in the step from %g to %g)", ErrTerminated, s.t, from, to)
	}
	s.t = to
	return nil
}

func (s *Stepper) stepME(to float64) error {
	if s.dirty {
		if err := s.checkInputs(); err != nil {
			return err
		}
		discrete := false
		for i, k := range s.discIdx {
			s.discBuf[i] = s.in[k]
			discrete = discrete || s.discBuf[i] != s.lastDisc[i]
		}
		for i, k := range s.contIdx {
			s.contBuf[i] = s.in[k]
		}
		if err := s.contCh.write(s.inst, s.contBuf); err != nil {
			return err
		}
		s.dirty = false
		if discrete {
			// Discrete inputs change in event mode, and their change is an
			// event.
			s.stats.InputEvents++
			err := s.me.event(s.t, true)
			copy(s.lastDisc, s.discBuf)
			if err != nil {
				return err
			}
		} else if err := s.me.restart(s.t); err != nil {
			return err
		}
	}
	t, err := s.me.advance(s.t, to, &s.stats)
	s.t = t
	return err
}

// writeInputs gives the held inputs to the FMU: all of them in
// initialisation, where every input may be set, and in Co-Simulation.
func (s *Stepper) writeInputs(initialising bool) error {
	if len(s.ins) == 0 || !initialising && !s.dirty {
		return nil
	}
	if err := s.checkInputs(); err != nil {
		return err
	}
	s.dirty = false
	if s.kind == CS {
		return s.inCh.write(s.inst, s.in)
	}
	for i, k := range s.contIdx {
		s.contBuf[i] = s.in[k]
	}
	for i, k := range s.discIdx {
		s.discBuf[i] = s.in[k]
	}
	copy(s.lastDisc, s.discBuf)
	if err := s.contCh.write(s.inst, s.contBuf); err != nil {
		return err
	}
	return s.discCh.write(s.inst, s.discBuf)
}

func (s *Stepper) checkInputs() error {
	for i := range s.ins {
		if err := s.ins[i].check(s.in[i], s.d.Version); err != nil {
			return fmt.Errorf("input %w", err)
		}
	}
	return nil
}

// readOutputs reads the outputs and refuses one that is not a number.
func (s *Stepper) readOutputs(when string) error {
	if err := s.outCh.read(s.inst, s.out); err != nil {
		return err
	}
	for i, v := range s.out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if when == "" {
				when = fmt.Sprintf("at t = %g", s.t)
			}
			return &OutputError{Signal: s.outs[i].Name, Value: v, Time: s.t, When: when}
		}
	}
	return nil
}

// OutputError is an output that is not a finite number.
type OutputError struct {
	Signal string
	Value  float64
	Time   float64
	When   string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("the output %s is %g %s", e.Signal, e.Value, e.When)
}

// Err is the error that stopped the stepping, or nil.
func (s *Stepper) Err() error { return s.err }

// Close ends the simulation: it terminates a running instance unless an
// error of the FMU stopped it (FMI allows only freeing then), and frees it
// unless the error was fatal (FMI allows no call at all then). It returns
// Terminate's error.
func (s *Stepper) Close() error {
	if s.phase == freed {
		return nil
	}
	defer func() { s.phase = freed }()
	var ce *CallError
	fmuFailed := errors.As(s.err, &ce) && ce.Status >= Error
	if fmuFailed && ce.Status == Fatal {
		return nil
	}
	var err error
	if s.phase == running && !fmuFailed {
		err = s.inst.Terminate()
	}
	if !IsFatal(err) {
		s.inst.Free()
	}
	return err
}
