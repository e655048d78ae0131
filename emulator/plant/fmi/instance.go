package fmi

import (
	"errors"
	"fmt"
	"strings"
)

// Instance is an instantiated FMU: the calls every interface shares. An
// implementation makes the FMU's C calls (rig/fmu, in the rig's process),
// or forwards them to a process of its own, or is a model in Go
// (fmitest). Values are float64 whatever the variable's type; the
// caller passes only values the type can hold (a whole number in range
// for an integer, 0 or 1 for a Boolean). An array contributes all its
// elements, in order, to values.
type Instance interface {
	// Get reads variables of one type.
	Get(t Type, vrs []ValueReference, values []float64) error
	// Set writes variables of one type.
	Set(t Type, vrs []ValueReference, values []float64) error
	// EnterInitializationMode starts the experiment (FMI 2: after
	// fmi2SetupExperiment). Zero Stop or Tolerance are not given.
	EnterInitializationMode(e Experiment) error
	ExitInitializationMode() error
	Terminate() error
	// Free releases the instance. It is not called after an FMU's fatal
	// error, after which FMI allows no call at all.
	Free()
}

// CoSimulation is an instance of the Co-Simulation interface.
type CoSimulation interface {
	Instance
	// DoStep advances from the communication point t by h to reached,
	// t + h unless terminate: the FMU asking to end the simulation (FMI 2:
	// fmi2Discard with fmi2Terminated, at fmi2LastSuccessfulTime; FMI 3:
	// terminateSimulation, at lastSuccessfulTime).
	DoStep(t, h float64) (terminate bool, reached float64, err error)
}

// ModelExchange is an instance of the Model Exchange interface.
type ModelExchange interface {
	Instance
	EnterEventMode() error
	// UpdateDiscreteStates is one step of event iteration (FMI 2:
	// fmi2NewDiscreteStates).
	UpdateDiscreteStates() (EventInfo, error)
	EnterContinuousTimeMode() error
	SetTime(t float64) error
	SetContinuousStates(x []float64) error
	GetContinuousStates(x []float64) error
	// GetDerivatives is FMI 3's fmi3GetContinuousStateDerivatives.
	GetDerivatives(dx []float64) error
	GetEventIndicators(z []float64) error
	GetNominalsOfContinuousStates(nominals []float64) error
	CompletedIntegratorStep(noSetFMUStatePriorToCurrentPoint bool) (enterEventMode, terminate bool, err error)
}

// EventInfo is what an event iteration step reports.
type EventInfo struct {
	// DiscreteStatesNeedUpdate (FMI 2: newDiscreteStatesNeeded) asks for
	// another step of the iteration.
	DiscreteStatesNeedUpdate          bool
	TerminateSimulation               bool
	NominalsOfContinuousStatesChanged bool
	ValuesOfContinuousStatesChanged   bool
	NextEventTimeDefined              bool
	NextEventTime                     float64
}

// Status is what an FMI function returns.
type Status int

const (
	OK Status = iota
	Warning
	Discard
	Error
	Fatal
	Pending // FMI 2 only: an asynchronous step not yet done
)

var statusNames = [...]string{"OK", "Warning", "Discard", "Error", "Fatal", "Pending"}

// Name is the status as the standard names it: fmi2Error, fmi3Fatal.
func (s Status) Name(v Version) string {
	name := fmt.Sprintf("status %d", int(s))
	if s >= 0 && int(s) < len(statusNames) {
		name = statusNames[s]
	}
	return fmt.Sprintf("fmi%d%s", v, name)
}

// CallError is an FMI function that did not succeed, with what the FMU
// logged last.
type CallError struct {
	Function string // fmi2DoStep
	Version  Version
	Status   Status
	// Log is the FMU's last messages, oldest first.
	Log []string
	// Detail says more than the status, where the importer knows more:
	// "returned NULL" for an instantiation.
	Detail string
}

func (e *CallError) Error() string {
	var b strings.Builder
	b.WriteString(e.Function)
	if e.Detail != "" {
		b.WriteString(" " + e.Detail)
	} else {
		b.WriteString(" returned " + e.Status.Name(e.Version))
	}
	switch len(e.Log) {
	case 0:
		b.WriteString(" (the FMU logged nothing)")
	case 1:
		b.WriteString("; the FMU logged: " + e.Log[0])
	default:
		b.WriteString("; the FMU's last messages:")
		for _, l := range e.Log {
			b.WriteString("\n  " + l)
		}
	}
	return b.String()
}

// IsFatal reports whether err is an FMU's fatal error, after which FMI
// allows no further call to it.
func IsFatal(err error) bool {
	var ce *CallError
	return errors.As(err, &ce) && ce.Status == Fatal
}

// ErrTerminated is the FMU asking to end the simulation.
var ErrTerminated = errors.New("the FMU ended the simulation")
