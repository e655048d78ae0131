package rig

import (
	"io"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// SimOptions override a profile for one virtual-time run.
type SimOptions struct {
	Duration time.Duration // 0: the profile's
	Seed     *uint64       // nil: the profile's
	Trace    io.Writer     // nil: no trace
}

// SimSummary is what `hilrig sim` prints.
type SimSummary struct {
	Profile string `json:"profile"`
	emulator.Summary
	Phases []PhaseSummary `json:"phases,omitempty"`
}

// Sim runs a profile in virtual time, as fast as the CPU allows.
func Sim(p *profiles.Loaded, opt SimOptions) (SimSummary, error) {
	cfg := p.Config
	if opt.Seed != nil {
		cfg.Seed = *opt.Seed
	}
	duration := p.RunDuration()
	if opt.Duration > 0 {
		duration = opt.Duration
	}
	var trace *TraceWriter
	var obs observers
	if opt.Trace != nil {
		traced := make([]bool, len(cfg.Flows))
		for i := range traced {
			traced[i] = p.Traced(i)
		}
		trace = NewTraceWriter(opt.Trace, p.Flows.Names, traced)
		obs = append(obs, trace)
	}
	var phases *phaseRecorder
	if len(p.Phases()) > 0 {
		phases = newPhaseRecorder(p.Phases(), p.Flows.Names)
		obs = append(obs, phases)
	}
	var observer emulator.Observer
	switch len(obs) {
	case 0:
	case 1:
		observer = obs[0]
	default:
		observer = obs
	}
	n, err := emulator.New(cfg, observer)
	if err != nil {
		return SimSummary{}, err
	}
	n.Run(duration)
	if trace != nil {
		if err := trace.Flush(); err != nil {
			return SimSummary{}, err
		}
	}
	s := SimSummary{Profile: p.Name, Summary: n.Summary()}
	if phases != nil {
		s.Phases = phases.summary()
	}
	return s, nil
}
