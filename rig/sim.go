package rig

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// SimOptions override a profile for one virtual-time run.
type SimOptions struct {
	Duration time.Duration // 0: the profile's
	Seed     *uint64       // nil: the profile's
	Trace    io.Writer     // nil: no trace
	// Bench, when set, co-simulates its model endpoints: each model's
	// simulated part and, standing in for the hardware, its hardware part,
	// with their frames crossing the emulated network.
	Bench   *profiles.LoadedBench
	Signals io.Writer // the model signals as CSV; nil: none
}

// SimSummary is what `hilrig sim` prints.
type SimSummary struct {
	Profile string `json:"profile"`
	emulator.Summary
	Phases []PhaseSummary `json:"phases,omitempty"`
	Models []ModelSummary `json:"models,omitempty"`
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
	var models []*coSim
	if opt.Bench != nil {
		if len(opt.Bench.Models) == 0 {
			return SimSummary{}, errNoModels
		}
		frames := modelFrames{}
		cfg.Flows = slices.Clone(cfg.Flows)
		for _, name := range opt.Bench.Endpoints.Names {
			bm := opt.Bench.Models[name]
			if bm == nil {
				continue
			}
			toHW, fromHW := modelFlows(opt.Bench, p, name)
			cs, err := newCoSim(name, bm, toHW, fromHW)
			if err != nil {
				return SimSummary{}, fmt.Errorf("%s: %w", name, err)
			}
			for _, f := range []int{toHW, fromHW} {
				if f >= 0 {
					cfg.Flows[f].Traffic = nil // the model is the source
					frames[f] = cs.receiver(f)
				}
			}
			models = append(models, cs)
		}
		obs = append(obs, frames)
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
	var signals *signalWriter
	if opt.Signals != nil && len(models) > 0 {
		signals = newSignalWriter(opt.Signals, models)
	}
	coSimulate(n, models, duration, signals)
	n.Run(duration)
	if signals != nil {
		if err := signals.flush(); err != nil {
			return SimSummary{}, err
		}
	}
	if trace != nil {
		if err := trace.Flush(); err != nil {
			return SimSummary{}, err
		}
	}
	s := SimSummary{Profile: p.Name, Summary: n.Summary()}
	for _, cs := range models {
		s.Models = append(s.Models, cs.summary())
	}
	if phases != nil {
		s.Phases = phases.summary()
	}
	return s, nil
}

// coSimulate steps the models and the network together in virtual time, on
// one clock. At each exchange time t, the network first delivers what
// arrives by t; then each model part samples and sends what crosses its
// cut; frames that arrive at once (no delay) are delivered; and the parts
// integrate to their next exchange with what they hold. A value received
// between two exchanges is thus taken up at the next, as on the rig.
func coSimulate(n *emulator.Network, models []*coSim, end time.Duration, signals *signalWriter) {
	for {
		t := end
		for _, cs := range models {
			t = min(t, cs.next)
		}
		if t >= end {
			return
		}
		n.Advance(t)
		for _, cs := range models {
			if cs.next != t {
				continue
			}
			if cs.toHW >= 0 {
				n.Inject(cs.toHW, cs.sim.frame())
			}
			if cs.fromHW >= 0 {
				n.Inject(cs.fromHW, cs.hw.frame())
			}
		}
		n.Advance(t)
		for _, cs := range models {
			if cs.next != t {
				continue
			}
			cs.sim.it.Sample()
			cs.hw.it.Sample()
			cs.ref.compare()
		}
		if signals != nil {
			signals.write(t)
		}
		for _, cs := range models {
			if cs.next != t {
				continue
			}
			cs.sim.advance()
			cs.hw.advance()
			cs.ref.advance()
			cs.exchanges++
			cs.next += cs.bm.Exchange
		}
	}
}
