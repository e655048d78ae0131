package fmu

import (
	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// Model is an FMU stepped at communication points, in the rig's process
// (*InProcess) or in a child process (*Isolated): the calls of
// fmi.Stepper, whose documentation says what each does, and the FMU's
// log.
type Model interface {
	Description() *fmi.Description
	InputSignals() []fmi.Signal
	OutputSignals() []fmi.Signal
	Set(values []float64)
	Step(to float64) error
	Outputs(dst []float64)
	Time() float64
	Stats() fmi.Stats
	Err() error
	Log() *Log
	// Close ends the FMU (an isolated one's process too); the unit's
	// Close removes its files.
	Close() error
}

var _ Model = (*InProcess)(nil)

// InProcess is an FMU stepped in the rig's process: the fastest, and
// nothing stands between the FMU's faults and the rig.
type InProcess struct {
	*fmi.Stepper
	unit *Unit
	inst Instance
}

func (m *InProcess) Description() *fmi.Description { return m.unit.Description }
func (m *InProcess) Log() *Log                     { return m.inst.Log() }

// Start instantiates the FMU for cfg.Kind and starts stepping it as cfg
// says (fmi.NewStepper): in a child process when opts.Isolate, else in
// this one.
func (u *Unit) Start(cfg fmi.Config, opts Options) (Model, error) {
	if opts.Isolate {
		m, err := u.startIsolated(cfg, opts)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	inst, err := u.Instantiate(cfg.Kind, opts)
	if err != nil {
		return nil, err
	}
	s, err := fmi.NewStepper(u.Description, inst, cfg)
	if err != nil {
		return nil, err
	}
	return &InProcess{Stepper: s, unit: u, inst: inst}, nil
}
