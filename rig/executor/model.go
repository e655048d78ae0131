package executor

import (
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/supervisor"
)

// Model is a model endpoint: the part of a cut model the rig simulates
// and, in virtual time, a stand-in for the hardware's part (the hardware
// is not there), with the uncut model alongside as the reference. The
// executor steps the stand-in and the reference at the model's exchange
// instants on its clock, as the hardware's own time goes. The rig's part
// steps with them (Stepping hold) or on data (Stepping wait), and a
// supervisor may watch it keep pace.
type Model struct {
	name     string
	spec     *ModelSpec
	failed   error // an FMU's failure (fail)
	sim, hw  *Part // hw is nil when the hardware is real
	ref      *reference
	exchange time.Duration

	next      time.Duration // the next exchange instant on the clock
	exchanges uint64
	overruns  uint64
	late      emulator.DelayHistogram

	stepping Stepping
	wait     *dataStepping // nil: neither steps on data nor is supervised

	traceIndex int32 // its supervisor's rows in the trace

	sends, takes []string // the variables crossing the cut, each way
}

// NewModel makes the model endpoint name of a bench, as spec says (its
// stepping too). toHardware and fromHardware are the flows it sends and
// receives on (-1: none). With
// standIn the hardware's part is simulated too, sending on fromHardware
// and receiving from toHardware; Egress then names both parts.
func NewModel(name string, spec *ModelSpec, toHardware, fromHardware int, standIn bool) (*Model, error) {
	sim, err := NewPart(spec.Simulated, spec, spec.Send, spec.Receive)
	if err != nil {
		return nil, err
	}
	sim.flow = toHardware
	m := &Model{name: name, spec: spec, sim: sim, exchange: spec.Exchange, sends: spec.Simulated.Out(), takes: spec.Simulated.In()}
	sim.model, sim.role = m, "the rig's part"
	var hwIt *plant.Integrator
	if standIn {
		if m.hw, err = NewPart(spec.Hardware, spec, spec.Receive, spec.Send); err != nil {
			return nil, err
		}
		m.hw.flow = fromHardware
		m.hw.model, m.hw.role = m, "the hardware's stand-in"
		hwIt = m.hw.it
	}
	if m.ref, err = newReference(spec, sim.it, hwIt); err != nil {
		return nil, err
	}
	if spec.Stepping != nil {
		if err := m.SetStepping(*spec.Stepping); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Name is the endpoint's name in the bench.
func (m *Model) Name() string { return m.name }

// SetPeer says which wire link follows the endpoint the model's part
// receives from (codec wire): the times its messages are stamped with are
// mapped to the rig's clock through that link's estimate of the device's
// clock. Without a peer, a model with a stand-in shares its sender's clock
// (virtual time), and one without knows nothing of it.
func (m *Model) SetPeer(l *WireLink) {
	if w := m.sim.wire; w != nil {
		w.peer = l
	}
}

// setClock makes the model's wire messages carry the executor's time now.
func (m *Model) setClock(now func() time.Duration) {
	for _, p := range []*Part{m.sim, m.hw} {
		if p != nil && p.wire != nil {
			p.wire.send.Clock = now
		}
	}
	if w := m.sim.wire; w != nil && m.hw != nil {
		w.sameClock = true // the stand-in stamps with the executor's time too
	}
}

// Simulated is the rig's part, the egress of the flow from the hardware.
func (m *Model) Simulated() Egress { return m.sim }

// StandIn is the hardware's simulated part, the egress of the flow to the
// hardware; nil when the hardware is real.
func (m *Model) StandIn() Egress {
	if m.hw == nil {
		return nil
	}
	return m.hw
}

// start begins the exchanges at now; the model's own time starts then too,
// or with its first message when it steps on data.
func (m *Model) start(now time.Duration) {
	m.next = now
	if d := m.wait; d != nil {
		if m.onData() {
			d.waitSince, d.blocked = now, true // for its first message
		} else {
			d.begin(now)
		}
	}
}

// send puts what crosses the cut into the network at an exchange instant;
// an exchange that is not the newest one due (the executor fell behind)
// sends nothing and is an overrun.
func (m *Model) send(x *Executor, newest bool) {
	if !newest {
		m.overruns++
		return
	}
	if every := uint64(m.spec.SendEvery); every > 1 && m.exchanges%every != 0 {
		return
	}
	if !m.onData() && m.sim.flow >= 0 {
		m.sendCommand(x)
	}
	if m.hw != nil && m.hw.flow >= 0 && !m.hw.replies {
		if payload, ok := m.hw.frame(x); ok {
			x.net.Inject(m.hw.flow, payload)
		}
	}
}

// sendCommand sends what the rig's part sends across the cut, unless its
// supervisor has it in shadow. Then, with safe values, it sends those
// instead: a frame sent (in the trace, the flow's sent and the part's
// frames_out) counted as safe_sent; without, it sends nothing and counts
// the message as skipped, with a suppressed row in the trace. Each message
// generated is so sent, safe or not, or skipped. A part that has diverged
// generates nothing.
func (m *Model) sendCommand(x *Executor) {
	if !m.sim.sample(x) {
		if m.Continued() {
			x.net.Inject(m.sim.flow, m.sim.frameOf(m.spec.Failure.Safe))
		}
		return
	}
	d := m.wait
	if d != nil {
		d.generated++
		if d.sup != nil && (d.sup.Flagged() || d.alarm.Load()) && d.sup.Config().OnOutOfSync == supervisor.Shadow {
			if d.safe != nil {
				d.safeSent++
				x.net.Inject(m.sim.flow, m.sim.frameOf(d.safe))
				return
			}
			if d.sup.InDisruptedEpisode() {
				d.skippedDisrupted++
			} else {
				d.skipped++
			}
			x.eventRow(m, record.Suppressed)
			return
		}
	}
	x.net.Inject(m.sim.flow, m.sim.encode())
}

// sample reads the parts' signals as of now, after the frames that arrived
// at the exchange instant were taken up, and compares with the reference.
func (m *Model) sample(x *Executor) {
	if !m.onData() {
		m.sim.sample(x)
	}
	if m.hw != nil {
		m.hw.sample(x)
	}
	m.ref.compare()
	if r := m.ref; r.ideal != nil && !r.divergedIdeal {
		if what := r.ideal.NonFinite(); what != "" {
			r.divergedIdeal = true
			m.diverge(x, "the uncut reference", what)
		}
	}
}

// advance integrates the parts that step on the clock to the next
// exchange.
func (m *Model) advance() {
	if !m.onData() {
		m.sim.Advance()
	}
	if m.hw != nil && !m.hw.replies {
		m.hw.Advance()
	}
	m.ref.advance()
	m.exchanges++
	m.next += m.exchange
	if m.wait != nil && !m.onData() {
		m.wait.hNow.Store(int64(m.next - m.wait.start))
	}
}

// h is the rig's part's simulated time since the start.
func (m *Model) h() time.Duration {
	if m.onData() {
		return m.wait.h
	}
	return m.next - m.wait.start
}
