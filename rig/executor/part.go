package executor

import (
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/supervisor"
)

// Part is one part of a cut model exchanging frames with the network: at
// each exchange it samples the variables it sends and encodes them, it
// takes up each frame it receives (the value holds until the next), and it
// integrates from one exchange to the next. The rig's side of a cut, the
// stand-in for the hardware's side in virtual time and a virtual device
// outside the rig all step with it.
type Part struct {
	it            *plant.Integrator
	send, receive wire.Codec
	substeps      int64 // solver steps an exchange; int is 32 bits on arm and 386
	out, in       []float64
	payload       []byte
	flow          int // the flow it sends on, or -1
	// inbox, when set, keeps what arrives for a model that steps on data,
	// each message stamped with its ingress time less nominal.
	inbox   *supervisor.Inbox
	nominal time.Duration
	// replies: sends at once in answer to each frame it takes up, not at
	// the exchanges.
	replies    bool
	replySteps int64         // solver steps a reply advances the part by
	data       *dataStepping // its model's, when it steps on data
	// wire is set when the codec is the wire protocol.
	wire *partWire
	// model is the endpoint the part belongs to, role which part it is
	// there, for the news that it diverged; diverged is what of it first
	// stopped being a finite number, "" while none has.
	model    *Model
	role     string
	diverged string

	framesOut, framesIn, badFrames uint64
}

// NewPart steps part with the bench model's solver, step and exchange,
// encoding what it sends with send and decoding what it receives with
// receive.
func NewPart(part *plant.Part, spec *ModelSpec, send, receive wire.Codec) (*Part, error) {
	it, err := plant.NewIntegrator(part, spec.Solver, spec.Step)
	if err != nil {
		return nil, err
	}
	p := &Part{it: it, send: send, receive: receive, substeps: int64(spec.Exchange / spec.Step), flow: -1,
		out: make([]float64, len(part.Out())), in: make([]float64, len(part.In())), payload: make([]byte, 0, 256)}
	p.wire = newPartWire(p)
	return p, nil
}

// sample samples the part and reports whether its states and signals are
// all finite numbers. The first time one is not, the part has diverged:
// its model tells the run (an event, and the run fails), and from then on
// the part sends nothing, as a device that is gone sends nothing, rather
// than NaN or infinities the hardware would take for values.
func (p *Part) sample(x *Executor) bool {
	p.it.Sample()
	if p.diverged != "" {
		return false
	}
	if what := p.it.NonFinite(); what != "" {
		p.diverged = what
		p.model.diverge(x, p.role, what)
		return false
	}
	return true
}

// frame samples the part and encodes what it sends; false when the part
// has diverged and sends nothing. The payload is reused by the next call.
func (p *Part) frame(x *Executor) ([]byte, bool) {
	if !p.sample(x) {
		return nil, false
	}
	return p.encode(), true
}

// encode encodes what the part sends as of its last sample.
func (p *Part) encode() []byte {
	for i := range p.out {
		p.out[i] = p.it.Out(i)
	}
	return p.frameOf(p.out)
}

// frameOf encodes values as the part's next frame, in the payload Frame
// uses, without sampling the part: the safe values of a model in shadow.
// A wire message is numbered and stamped now, as every other.
func (p *Part) frameOf(values []float64) []byte {
	p.payload = p.send.Append(p.payload[:0], values)
	p.framesOut++
	return p.payload
}

// Take decodes a received frame into the held inputs; a frame that does
// not decode is counted and changes nothing.
func (p *Part) Take(payload []byte) error { return p.take(payload, 0) }

// take is Take of a frame that arrived at at.
func (p *Part) take(payload []byte, at time.Duration) error {
	if err := p.decode(payload, at, p.in); err != nil {
		return err
	}
	for i, v := range p.in {
		p.it.SetIn(i, v)
	}
	p.framesIn++
	return nil
}

// decode decodes a frame that arrived at at into values; one that does
// not decode is counted bad. A wire message without values (a heartbeat)
// or stale (a duplicate, a late one) is not bad, but decodes nothing.
func (p *Part) decode(payload []byte, at time.Duration, values []float64) error {
	var err error
	if p.wire != nil {
		err = p.wire.receive(payload, at, values)
	} else {
		err = p.receive.Decode(payload, values)
	}
	if err != nil && err != wire.ErrNoValues && err != wire.ErrStale {
		p.badFrames++
	}
	return err
}

// Advance integrates to the next exchange.
func (p *Part) Advance() {
	for range p.substeps {
		p.it.Advance()
	}
}

// deliver makes a part the egress of the flow it receives: a frame it
// cannot decode is delivered all the same, and counted by the part. A part
// that steps on data keeps the frame's values for the step they are valid
// for, stamped with the time the frame entered the rig less the nominal
// delay from the device, on the model's time (zero at its first message).
func (p *Part) deliver(x *Executor, f *emulator.Frame) bool {
	if p.inbox == nil {
		if p.replies && p.framesIn > 0 {
			// A replying part is stepped by what it receives, one
			// sender's period a frame: from the sample it answered last,
			// on that sample, to this one. Its sampled blocks so update
			// as they would without the network, wherever the network
			// put the samples.
			for range p.replySteps {
				p.it.Advance()
			}
		}
		if p.take(f.Payload, f.Done) == nil && p.replies && p.flow >= 0 {
			// Answered at the instant the frame arrived; the engine takes
			// the answer up as an event of this same instant.
			if payload, ok := p.frame(x); ok {
				x.net.Inject(p.flow, payload)
			}
		}
		return true
	}
	if p.decode(f.Payload, f.Done, p.inbox.Slot()) != nil {
		return true
	}
	at := p.stamp(f)
	if !p.data.started {
		// The model's time starts with its data, as paper 004 aligns the
		// twin's time with the physical twin's timestamps: a device that
		// starts late is not the model falling behind.
		p.data.begin(at)
	}
	p.inbox.Put(at - p.data.start)
	p.framesIn++
	return true
}

// stamp is the time a message that steps the part is valid from: the
// time its sender stamped it with, on the rig's clock, when that is known
// (codec wire); otherwise the time it entered the rig less the nominal
// delay from the device.
func (p *Part) stamp(f *emulator.Frame) time.Duration {
	if p.wire != nil {
		if t, ok := p.wire.senderTime(); ok {
			p.wire.bySender++
			return t
		}
		p.wire.byIngress++
	}
	return f.Sent - p.nominal
}

// apply sets the inputs to values (a message the inbox chose).
func (p *Part) apply(values []float64) {
	for i, v := range values {
		p.it.SetIn(i, v)
	}
}

func (p *Part) endSummary() *record.ModelEndSummary {
	return &record.ModelEndSummary{FramesOut: p.framesOut, FramesIn: p.framesIn, BadFrames: p.badFrames}
}
