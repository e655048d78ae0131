// Package fmitest has FMUs written in Go, for testing what steps an FMU
// without native code: a bouncing ball (a state event at every bounce), a
// first-order lag with a continuous and a discrete input, and a counter
// that time events advance. Each comes with its model description, and
// its Instance implements fmi.CoSimulation and fmi.ModelExchange while
// holding its caller to FMI's state machine: a call in a mode where the
// standard does not allow it fails, names the mode, and is kept in
// Violations.
package fmitest

import (
	"fmt"
	"math"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// Model is an FMU in Go.
type Model struct {
	Name        string
	Description *fmi.Description
	XML         string // its modelDescription.xml
	new         func() equations
}

// equations is a model's behaviour.
type equations interface {
	get(vr fmi.ValueReference) (float64, bool)
	set(vr fmi.ValueReference, v float64) bool
	states() []*float64
	derivatives(t float64, dx []float64)
	indicators(t float64, z []float64)
	// update is the model's discrete step at an event at t.
	update(t float64) fmi.EventInfo
	// internalStep is the Co-Simulation solver's fixed step.
	internalStep() float64
}

func mustParse(name, xml string, eqs func() equations) *Model {
	d, err := fmi.Parse([]byte(xml))
	if err != nil {
		panic(fmt.Sprintf("fmitest: %s: %v", name, err))
	}
	return &Model{Name: name, Description: d, XML: xml, new: eqs}
}

// mode is where an Instance is in FMI's state machine.
type mode int

const (
	instantiated mode = iota
	initialization
	event
	continuousTime
	step
	terminated
	freed
)

var modeNames = [...]string{"Instantiated", "Initialization Mode", "Event Mode", "Continuous-Time Mode", "Step Mode", "Terminated", "freed"}

// Instance is an instance of a Model, for one interface.
type Instance struct {
	m    *Model
	kind fmi.Kind
	eq   equations
	mode mode
	time float64
	// Violations are the calls made where FMI does not allow them.
	Violations []string
	// EventTimes are the instants of every event the instance handled
	// (one per event, however many iteration steps it took).
	EventTimes []float64
	// Calls counts the calls by function name.
	Calls      map[string]int
	fail       map[string]failure
	newEvent   bool // an event mode entered and not yet updated
	nextEvent  float64
	dx, z0, z1 []float64  // Co-Simulation's scratch
	xs         []*float64 // the states
}

type failure struct {
	call   int
	status fmi.Status
}

var (
	_ fmi.CoSimulation  = (*Instance)(nil)
	_ fmi.ModelExchange = (*Instance)(nil)
)

// Instantiate makes an instance of the model for one interface.
func (m *Model) Instantiate(kind fmi.Kind) *Instance {
	eq := m.new()
	return &Instance{m: m, kind: kind, eq: eq, xs: eq.states(), Calls: map[string]int{}, fail: map[string]failure{}, time: m.Description.Experiment.Start}
}

// FailAt makes the call-th call (from 1) of a function (by its Go
// method name: "DoStep", "GetDerivatives") fail with status.
func (in *Instance) FailAt(function string, call int, status fmi.Status) {
	in.fail[function] = failure{call, status}
}

// call checks that function may be called in the current mode.
func (in *Instance) call(function string, allowed ...mode) error {
	in.Calls[function]++
	if in.mode == freed {
		panic("fmitest: " + function + " called on a freed instance")
	}
	ok := false
	for _, m := range allowed {
		ok = ok || in.mode == m
	}
	if !ok {
		msg := fmt.Sprintf("%s called in %s", function, modeNames[in.mode])
		in.Violations = append(in.Violations, msg)
		return &fmi.CallError{Function: function, Version: in.m.Description.Version, Status: fmi.Error, Log: []string{msg}}
	}
	if f, ok := in.fail[function]; ok && f.call == in.Calls[function] {
		return &fmi.CallError{Function: function, Version: in.m.Description.Version, Status: f.status, Log: []string{"failing as asked"}}
	}
	return nil
}

var anyLive = []mode{instantiated, initialization, event, continuousTime, step, terminated}

func (in *Instance) Get(t fmi.Type, vrs []fmi.ValueReference, values []float64) error {
	if err := in.call("Get", initialization, event, continuousTime, step, terminated); err != nil {
		return err
	}
	if len(values) != len(vrs) {
		return in.fault("Get", "%d values for %d value references (fmitest has no arrays)", len(values), len(vrs))
	}
	for i, vr := range vrs {
		v, ok := in.eq.get(vr)
		if !ok {
			return in.fault("Get", "no variable has the value reference %d", vr)
		}
		values[i] = v
	}
	return nil
}

func (in *Instance) Set(t fmi.Type, vrs []fmi.ValueReference, values []float64) error {
	if err := in.call("Set", instantiated, initialization, event, continuousTime, step); err != nil {
		return err
	}
	for i, vr := range vrs {
		k := in.variable(vr)
		if k < 0 {
			return in.fault("Set", "no variable has the value reference %d", vr)
		}
		v := &in.m.Description.Variables[k]
		if in.mode == continuousTime && v.Variability != fmi.Continuous {
			msg := fmt.Sprintf("Set of the %s %s %s in Continuous-Time Mode", v.Variability, v.Causality, v.Name)
			in.Violations = append(in.Violations, msg)
			return in.fault("Set", "%s", msg)
		}
		if !in.eq.set(vr, values[i]) {
			return in.fault("Set", "the variable %s cannot be set", v.Name)
		}
	}
	return nil
}

func (in *Instance) variable(vr fmi.ValueReference) int {
	for i, v := range in.m.Description.Variables {
		if v.ValueReference == vr {
			return i
		}
	}
	return -1
}

func (in *Instance) fault(function, format string, args ...any) error {
	return &fmi.CallError{Function: function, Version: in.m.Description.Version, Status: fmi.Error, Log: []string{fmt.Sprintf(format, args...)}}
}

func (in *Instance) EnterInitializationMode(e fmi.Experiment) error {
	if err := in.call("EnterInitializationMode", instantiated); err != nil {
		return err
	}
	in.mode, in.time = initialization, e.Start
	return nil
}

func (in *Instance) ExitInitializationMode() error {
	if err := in.call("ExitInitializationMode", initialization); err != nil {
		return err
	}
	if in.kind == fmi.ME {
		in.mode, in.newEvent = event, true
	} else {
		in.mode = step
		in.EventTimes = append(in.EventTimes, in.time)
		if info := in.eq.update(in.time); info.NextEventTimeDefined {
			in.nextEvent = info.NextEventTime
		}
		n, nz := len(in.xs), in.m.Description.NumberOfEventIndicators
		in.dx, in.z0, in.z1 = make([]float64, n), make([]float64, nz), make([]float64, nz)
	}
	return nil
}

func (in *Instance) Terminate() error {
	if err := in.call("Terminate", event, continuousTime, step); err != nil {
		return err
	}
	in.mode = terminated
	return nil
}

func (in *Instance) Free() {
	in.call("Free", anyLive...)
	in.mode = freed
}

// DoStep integrates with a fixed internal step, handling an event at the
// end of each internal step where an indicator changed domain or a time
// event fell (as simple co-simulation FMUs do).
func (in *Instance) DoStep(t, h float64) (bool, float64, error) {
	if err := in.call("DoStep", step); err != nil {
		return false, t, err
	}
	if math.Abs(t-in.time) > 1e-9*max(1, math.Abs(t)) {
		return false, t, in.fault("DoStep", "the communication point %g is not the FMU's time %g", t, in.time)
	}
	end := t + h
	dt := in.eq.internalStep()
	xs := in.xs
	dx, z0, z1 := in.dx, in.z0, in.z1
	in.eq.indicators(in.time, z0)
	for in.time < end-float64(1e-12*max(1, math.Abs(end))) {
		step := min(dt, end-in.time)
		in.eq.derivatives(in.time, dx)
		for i, x := range xs {
			*x += float64(step * dx[i])
		}
		in.time += step
		in.eq.indicators(in.time, z1)
		crossed := false
		for i := range z0 {
			crossed = crossed || (z0[i] > 0) != (z1[i] > 0)
		}
		if crossed || in.nextEvent > 0 && in.time >= in.nextEvent-1e-12 {
			in.EventTimes = append(in.EventTimes, in.time)
			info := in.eq.update(in.time)
			in.nextEvent = 0
			if info.NextEventTimeDefined {
				in.nextEvent = info.NextEventTime
			}
			if info.TerminateSimulation {
				return true, in.time, nil
			}
		}
		in.eq.indicators(in.time, z0)
	}
	in.time = end
	return false, end, nil
}

func (in *Instance) EnterEventMode() error {
	if err := in.call("EnterEventMode", continuousTime); err != nil {
		return err
	}
	in.mode, in.newEvent = event, true
	return nil
}

func (in *Instance) UpdateDiscreteStates() (fmi.EventInfo, error) {
	if err := in.call("UpdateDiscreteStates", event); err != nil {
		return fmi.EventInfo{}, err
	}
	if in.newEvent {
		in.EventTimes = append(in.EventTimes, in.time)
		in.newEvent = false
	}
	return in.eq.update(in.time), nil
}

func (in *Instance) EnterContinuousTimeMode() error {
	if err := in.call("EnterContinuousTimeMode", event); err != nil {
		return err
	}
	in.mode = continuousTime
	return nil
}

func (in *Instance) SetTime(t float64) error {
	if err := in.call("SetTime", event, continuousTime); err != nil {
		return err
	}
	in.time = t
	return nil
}

func (in *Instance) SetContinuousStates(x []float64) error {
	if err := in.call("SetContinuousStates", continuousTime); err != nil {
		return err
	}
	for i, p := range in.xs {
		*p = x[i]
	}
	return nil
}

func (in *Instance) GetContinuousStates(x []float64) error {
	if err := in.call("GetContinuousStates", initialization, event, continuousTime, terminated); err != nil {
		return err
	}
	for i, p := range in.xs {
		x[i] = *p
	}
	return nil
}

func (in *Instance) GetDerivatives(dx []float64) error {
	if err := in.call("GetDerivatives", initialization, event, continuousTime, terminated); err != nil {
		return err
	}
	in.eq.derivatives(in.time, dx)
	return nil
}

func (in *Instance) GetEventIndicators(z []float64) error {
	if err := in.call("GetEventIndicators", initialization, event, continuousTime, terminated); err != nil {
		return err
	}
	in.eq.indicators(in.time, z)
	return nil
}

func (in *Instance) GetNominalsOfContinuousStates(nominals []float64) error {
	if err := in.call("GetNominalsOfContinuousStates", instantiated, event, continuousTime, terminated); err != nil {
		return err
	}
	for i := range nominals {
		nominals[i] = 1
	}
	return nil
}

func (in *Instance) CompletedIntegratorStep(bool) (bool, bool, error) {
	if err := in.call("CompletedIntegratorStep", continuousTime); err != nil {
		return false, false, err
	}
	return false, false, nil
}

// Time is the instance's time.
func (in *Instance) Time() float64 { return in.time }
