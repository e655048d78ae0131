package executor

import (
	"math"
	"slices"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/record"
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
	substeps      int
	out, in       []float64
	payload       []byte
	flow          int // the flow it sends on, or -1

	framesOut, framesIn, badFrames uint64
}

// NewPart steps part with the bench model's solver, step and exchange,
// encoding what it sends with send and decoding what it receives with
// receive.
func NewPart(part *plant.Part, bm *profiles.BenchModel, send, receive wire.Codec) (*Part, error) {
	it, err := plant.NewIntegrator(part, bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	return &Part{it: it, send: send, receive: receive, substeps: int(bm.Exchange / bm.Step), flow: -1,
		out: make([]float64, len(part.Out())), in: make([]float64, len(part.In())), payload: make([]byte, 0, 256)}, nil
}

// Frame samples the part and encodes what it sends. The payload is reused
// by the next call.
func (p *Part) Frame() []byte {
	p.it.Sample()
	for i := range p.out {
		p.out[i] = p.it.Out(i)
	}
	p.payload = p.send.Append(p.payload[:0], p.out)
	p.framesOut++
	return p.payload
}

// Take decodes a received frame into the held inputs; a frame that does
// not decode is counted and changes nothing.
func (p *Part) Take(payload []byte) error {
	if err := p.receive.Decode(payload, p.in); err != nil {
		p.badFrames++
		return err
	}
	for i, v := range p.in {
		p.it.SetIn(i, v)
	}
	p.framesIn++
	return nil
}

// Advance integrates to the next exchange.
func (p *Part) Advance() {
	for range p.substeps {
		p.it.Advance()
	}
}

// deliver makes a part the egress of the flow it receives: a frame it
// cannot decode is delivered all the same, and counted by the part.
func (p *Part) deliver(_ *Executor, payload []byte) bool {
	p.Take(payload)
	return true
}

func (p *Part) endSummary() *record.ModelEndSummary {
	return &record.ModelEndSummary{FramesOut: p.framesOut, FramesIn: p.framesIn, BadFrames: p.badFrames}
}

// Model is a model endpoint: the part of a cut model the rig simulates
// and, in virtual time, a stand-in for the hardware's part (the hardware
// is not there), with the uncut model alongside as the reference. The
// executor steps it at its exchange instants.
type Model struct {
	name     string
	bm       *profiles.BenchModel
	sim, hw  *Part // hw is nil when the hardware is real
	ref      *reference
	exchange time.Duration

	next      time.Duration
	exchanges uint64
	overruns  uint64
	late      emulator.DelayHistogram
}

// NewModel makes the model endpoint name of a bench. toHardware and
// fromHardware are the flows it sends and receives on (-1: none). With
// standIn the hardware's part is simulated too, sending on fromHardware
// and receiving from toHardware; Egress then names both parts.
func NewModel(name string, bm *profiles.BenchModel, toHardware, fromHardware int, standIn bool) (*Model, error) {
	sim, err := NewPart(bm.Simulated, bm, bm.Send, bm.Receive)
	if err != nil {
		return nil, err
	}
	sim.flow = toHardware
	m := &Model{name: name, bm: bm, sim: sim, exchange: bm.Exchange}
	var hwIt *plant.Integrator
	if standIn {
		if m.hw, err = NewPart(bm.Hardware, bm, bm.Receive, bm.Send); err != nil {
			return nil, err
		}
		m.hw.flow = fromHardware
		hwIt = m.hw.it
	}
	if m.ref, err = newReference(bm, sim.it, hwIt); err != nil {
		return nil, err
	}
	return m, nil
}

// Name is the endpoint's name in the bench.
func (m *Model) Name() string { return m.name }

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

// send puts what crosses the cut into the network; an exchange that is
// not the newest one due (the executor fell behind) sends nothing and is
// an overrun.
func (m *Model) send(net *emulator.Network, newest bool) {
	if !newest {
		m.overruns++
		return
	}
	if m.sim.flow >= 0 {
		net.Inject(m.sim.flow, m.sim.Frame())
	}
	if m.hw != nil && m.hw.flow >= 0 {
		net.Inject(m.hw.flow, m.hw.Frame())
	}
}

// sample reads the parts' signals as of now, after the frames that arrived
// at the exchange instant were taken up, and compares with the reference.
func (m *Model) sample() {
	m.sim.it.Sample()
	if m.hw != nil {
		m.hw.it.Sample()
	}
	m.ref.compare()
}

// advance integrates every part to the next exchange.
func (m *Model) advance() {
	m.sim.Advance()
	if m.hw != nil {
		m.hw.Advance()
	}
	m.ref.advance()
	m.exchanges++
	m.next += m.exchange
}

// Summary is what the model did so far; late says whether to include the
// lateness of its exchanges (a real clock's).
func (m *Model) Summary(late bool) record.ModelSummary {
	s := record.ModelSummary{
		Endpoint: m.name, Model: m.bm.Name, Cut: m.bm.Cut, Solver: string(m.bm.Solver),
		ExchangeS: m.exchange.Seconds(), StepS: m.bm.Step.Seconds(), Exchanges: m.exchanges,
		FramesOut: m.sim.framesOut, FramesIn: m.sim.framesIn, BadFrames: m.sim.badFrames,
		Unconverged: m.sim.it.Unconverged(), Output: m.ref.summary(),
	}
	if m.hw != nil {
		s.Hardware = m.hw.endSummary()
	}
	if late {
		s.StepLateness, s.Overruns = m.late.Summarize(), m.overruns
	}
	return s
}

// signalColumns appends the model's signal columns to names and what reads
// them to cols: its simulated part (NAME.signal), the stand-in for its
// hardware part (NAME.hardware.signal) and the uncut model
// (NAME.ideal.signal).
func (m *Model) signalColumns(names []string, cols []signalColumn) ([]string, []signalColumn) {
	add := func(prefix string, it *plant.Integrator, signals []string) {
		for _, n := range signals {
			names = append(names, prefix+n)
			cols = append(cols, signalColumn{it, it.Part().Plant().SignalIndex(n)})
		}
	}
	add(m.name+".", m.sim.it, append(m.bm.Simulated.Produces(), m.bm.Simulated.In()...))
	if m.hw != nil {
		add(m.name+".hardware.", m.hw.it, append(m.bm.Hardware.Produces(), m.bm.Hardware.In()...))
	}
	add(m.name+".ideal.", m.ref.ideal, m.bm.Whole().Produces())
	return names, cols
}

type signalColumn struct {
	it *plant.Integrator
	k  int
}

// progress is the model's line of the live snapshot.
func (m *Model) progress() record.ModelProgress {
	mp := record.ModelProgress{Endpoint: m.name, Exchanges: m.exchanges, Overruns: m.overruns, FramesOut: m.sim.framesOut, FramesIn: m.sim.framesIn}
	if ref := m.ref; ref.output >= 0 {
		mp.Output, mp.Value, mp.Ideal = ref.name, ref.cut.Signal(ref.output), ref.ideal.Signal(ref.output)
		mp.Peak, mp.MaxError = ref.peak, ref.maxErr
	}
	return mp
}

// reference runs the uncut model alongside a cut one, with the same
// solver and step, and measures how far the cut one's output of interest
// strays from it: the distortion the cut, the exchange and the network
// cause together.
type reference struct {
	ideal               *plant.Integrator
	substeps            int
	output              int               // signal index, or -1
	cut                 *plant.Integrator // the integrator computing the output in the cut run
	name                string
	peak, maxErr, sumSq float64
	samples             uint64
}

// newReference compares the output as computed by sim, or by hw when the
// hardware part computes it (hw is nil when the hardware is real: then
// there is nothing to compare).
func newReference(bm *profiles.BenchModel, sim, hw *plant.Integrator) (*reference, error) {
	ideal, err := plant.NewIntegrator(bm.Whole(), bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	r := &reference{ideal: ideal, substeps: int(bm.Exchange / bm.Step), output: -1, name: bm.Output}
	if bm.Output == "" {
		return r, nil
	}
	if slices.Contains(bm.Simulated.Produces(), bm.Output) {
		r.cut = sim
	} else {
		r.cut = hw
	}
	if r.cut != nil {
		r.output = bm.SignalIndex(bm.Output)
	}
	return r, nil
}

// compare samples the uncut model at the cut one's time and accumulates
// the output's error; the cut integrator was sampled already.
func (r *reference) compare() {
	r.ideal.Sample()
	if r.output < 0 {
		return
	}
	ref := r.ideal.Signal(r.output)
	e := r.cut.Signal(r.output) - ref
	r.peak = max(r.peak, math.Abs(ref))
	r.maxErr = max(r.maxErr, math.Abs(e))
	r.sumSq += e * e
	r.samples++
}

func (r *reference) advance() {
	for range r.substeps {
		r.ideal.Advance()
	}
}

func (r *reference) summary() *record.OutputError {
	if r.output < 0 || r.samples == 0 {
		return nil
	}
	o := &record.OutputError{Signal: r.name, Peak: r.peak, MaxError: r.maxErr, RMSError: math.Sqrt(r.sumSq / float64(r.samples))}
	if r.peak > 1e-6*r.maxErr {
		o.OfPeak = r.maxErr / r.peak
	}
	return o
}
