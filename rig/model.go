package rig

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/plant"
)

// modelEnd is one part of a cut model exchanging frames with the network:
// at each exchange step it samples the variables it sends and encodes them,
// it takes up each frame it receives (the value holds until the next), and
// it integrates from one exchange to the next.
type modelEnd struct {
	it            *plant.Integrator
	send, receive plant.Codec
	substeps      int
	out, in       []float64
	payload       []byte

	framesOut, framesIn, badFrames uint64
}

func newModelEnd(part *plant.Part, bm *profiles.BenchModel, send, receive plant.Codec) (*modelEnd, error) {
	it, err := plant.NewIntegrator(part, bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	return &modelEnd{it: it, send: send, receive: receive, substeps: int(bm.Exchange / bm.Step),
		out: make([]float64, len(part.Out())), in: make([]float64, len(part.In())), payload: make([]byte, 0, 256)}, nil
}

// frame samples the part and encodes what it sends. The payload is reused
// by the next call.
func (m *modelEnd) frame() []byte {
	m.it.Sample()
	for i := range m.out {
		m.out[i] = m.it.Out(i)
	}
	m.payload = m.send.Append(m.payload[:0], m.out)
	m.framesOut++
	return m.payload
}

// take decodes a received frame into the held inputs; a frame that does
// not decode is counted and changes nothing.
func (m *modelEnd) take(payload []byte) {
	if err := m.receive.Decode(payload, m.in); err != nil {
		m.badFrames++
		return
	}
	for i, v := range m.in {
		m.it.SetIn(i, v)
	}
	m.framesIn++
}

// advance integrates to the next exchange.
func (m *modelEnd) advance() {
	for range m.substeps {
		m.it.Advance()
	}
}

// ModelSummary is what a model endpoint did.
type ModelSummary struct {
	Endpoint    string  `json:"endpoint"`
	Model       string  `json:"model"`
	Cut         string  `json:"cut"`
	Solver      string  `json:"solver"`
	ExchangeS   float64 `json:"exchange_s"`
	StepS       float64 `json:"step_s"`
	Exchanges   uint64  `json:"exchanges"`
	FramesOut   uint64  `json:"frames_out"`
	FramesIn    uint64  `json:"frames_in"`
	BadFrames   uint64  `json:"bad_frames"`
	Unconverged uint64  `json:"unconverged_steps"`
	// Hardware is the hardware part's side, when sim stands in for it.
	Hardware *ModelEndSummary `json:"hardware,omitempty"`
	// Output compares the model's output of interest with the uncut
	// model run alongside without delay (sim only).
	Output *OutputError `json:"output,omitempty"`
	// StepLateness is how late exchanges started after their time, and
	// Overruns how many started after the next one was due (run only).
	StepLateness *emulator.DelaySummary `json:"step_lateness_s,omitempty"`
	Overruns     uint64                 `json:"overruns,omitempty"`
}

// ModelEndSummary is the frames of the hardware part's stand-in.
type ModelEndSummary struct {
	FramesOut uint64 `json:"frames_out"`
	FramesIn  uint64 `json:"frames_in"`
	BadFrames uint64 `json:"bad_frames"`
}

// OutputError is how far the cut model strays from the uncut one.
type OutputError struct {
	Signal   string  `json:"signal"`
	Peak     float64 `json:"peak"`      // largest |value| of the uncut model
	MaxError float64 `json:"max_error"` // largest |cut − uncut|
	RMSError float64 `json:"rms_error"`
	// OfPeak is MaxError/Peak.
	OfPeak float64 `json:"max_error_of_peak"`
}

// coSim is a model endpoint in virtual time. The hardware is not there,
// so the model's hardware part stands in for it, with the same codec; the
// uncut model runs alongside as the reference.
type coSim struct {
	name         string
	bm           *profiles.BenchModel
	sim, hw      *modelEnd
	ideal        *plant.Integrator
	toHW, fromHW int // flows, or -1
	next         time.Duration
	exchanges    uint64
	output       int // signal index of the output of interest, or -1
	outputSide   *plant.Integrator
	peak, maxErr float64
	sumSq        float64
}

func newCoSim(name string, bm *profiles.BenchModel, toHW, fromHW int) (*coSim, error) {
	sim, err := newModelEnd(bm.Simulated, bm, bm.Send, bm.Receive)
	if err != nil {
		return nil, err
	}
	hw, err := newModelEnd(bm.Hardware, bm, bm.Receive, bm.Send)
	if err != nil {
		return nil, err
	}
	ideal, err := plant.NewIntegrator(bm.Whole(), bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	cs := &coSim{name: name, bm: bm, sim: sim, hw: hw, ideal: ideal, toHW: toHW, fromHW: fromHW, output: -1}
	if bm.Output != "" {
		cs.output = bm.SignalIndex(bm.Output)
		cs.outputSide = sim.it
		for _, s := range bm.Hardware.Produces() {
			if s == bm.Output {
				cs.outputSide = hw.it
			}
		}
	}
	return cs, nil
}

// receiver is the part a flow's frames go to.
func (cs *coSim) receiver(flow int) *modelEnd {
	switch flow {
	case cs.toHW:
		return cs.hw
	case cs.fromHW:
		return cs.sim
	}
	return nil
}

// compare samples the reference and accumulates the output's error.
func (cs *coSim) compare() {
	cs.ideal.Sample()
	if cs.output < 0 {
		return
	}
	ref := cs.ideal.Signal(cs.output)
	e := cs.outputSide.Signal(cs.output) - ref
	cs.peak = max(cs.peak, math.Abs(ref))
	cs.maxErr = max(cs.maxErr, math.Abs(e))
	cs.sumSq += e * e
}

func (cs *coSim) summary() ModelSummary {
	s := ModelSummary{
		Endpoint: cs.name, Model: cs.bm.Name, Cut: cs.bm.Cut, Solver: string(cs.bm.Solver),
		ExchangeS: cs.bm.Exchange.Seconds(), StepS: cs.bm.Step.Seconds(), Exchanges: cs.exchanges,
		FramesOut: cs.sim.framesOut, FramesIn: cs.sim.framesIn, BadFrames: cs.sim.badFrames,
		Unconverged: cs.sim.it.Unconverged(),
		Hardware:    &ModelEndSummary{FramesOut: cs.hw.framesOut, FramesIn: cs.hw.framesIn, BadFrames: cs.hw.badFrames},
	}
	if cs.output >= 0 && cs.exchanges > 0 {
		o := &OutputError{Signal: cs.bm.Output, Peak: cs.peak, MaxError: cs.maxErr, RMSError: math.Sqrt(cs.sumSq / float64(cs.exchanges))}
		if cs.peak > 0 {
			o.OfPeak = cs.maxErr / cs.peak
		}
		s.Output = o
	}
	return s
}

// modelFrames hands the frames of model flows to the part they go to.
type modelFrames map[int]*modelEnd

func (m modelFrames) Finished(f *emulator.Frame) {
	if end := m[f.Flow]; end != nil && f.Status.Arrived() {
		end.take(f.Payload)
	}
}

// signalWriter writes the model signals as CSV: a row per exchange, with
// each model endpoint's signals as its simulated part sees them
// (NAME.signal), as the hardware's stand-in sees them (NAME.hardware.signal)
// and in the uncut model (NAME.ideal.signal).
type signalWriter struct {
	w       *bufio.Writer
	columns []signalColumn
	row     []byte
	err     error
}

type signalColumn struct {
	it *plant.Integrator
	k  int
}

func newSignalWriter(w io.Writer, models []*coSim) *signalWriter {
	sw := &signalWriter{w: bufio.NewWriterSize(w, 64<<10)}
	header := []byte("t")
	add := func(prefix string, it *plant.Integrator, names []string) {
		for _, n := range names {
			header = append(header, ',')
			header = append(header, prefix...)
			header = append(header, n...)
			sw.columns = append(sw.columns, signalColumn{it, it.Part().Plant().SignalIndex(n)})
		}
	}
	for _, cs := range models {
		sim, hw := cs.bm.Simulated, cs.bm.Hardware
		add(cs.name+".", cs.sim.it, append(sim.Produces(), sim.In()...))
		add(cs.name+".hardware.", cs.hw.it, append(hw.Produces(), hw.In()...))
		add(cs.name+".ideal.", cs.ideal, cs.bm.Whole().Produces())
	}
	header = append(header, '\n')
	_, sw.err = sw.w.Write(header)
	return sw
}

// write adds the row for time t; the integrators were sampled at t.
func (sw *signalWriter) write(t time.Duration) {
	if sw.err != nil {
		return
	}
	b := AppendSeconds(sw.row[:0], t)
	for _, c := range sw.columns {
		b = append(b, ',')
		b = strconv.AppendFloat(b, c.it.Signal(c.k), 'g', -1, 64)
	}
	b = append(b, '\n')
	sw.row = b
	_, sw.err = sw.w.Write(b)
}

func (sw *signalWriter) flush() error {
	if sw.err != nil {
		return sw.err
	}
	return sw.w.Flush()
}

// modelFlows finds the flows a model endpoint sends and receives on.
func modelFlows(b *profiles.LoadedBench, p *profiles.Loaded, name string) (toHW, fromHW int) {
	toHW, fromHW = -1, -1
	for i, flow := range b.Bind.Names {
		bind := b.Bind.Values[i]
		if string(bind.From) == name {
			toHW = p.Flows.Index(flow)
		}
		if string(bind.To) == name {
			fromHW = p.Flows.Index(flow)
		}
	}
	return toHW, fromHW
}

// errNoModels is returned when sim is given a bench without a model.
var errNoModels = fmt.Errorf("the bench has no model endpoint; in sim the profile's traffic stands in for hardware, so a bench matters only for the models it cuts")
