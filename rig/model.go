package rig

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
)

// modelEnd is one part of a cut model exchanging frames with the network:
// at each exchange step it samples the variables it sends and encodes them,
// it takes up each frame it receives (the value holds until the next), and
// it integrates from one exchange to the next.
type modelEnd struct {
	it            *plant.Integrator
	send, receive wire.Codec
	substeps      int
	out, in       []float64
	payload       []byte

	framesOut, framesIn, badFrames uint64
}

func newModelEnd(part *plant.Part, bm *profiles.BenchModel, send, receive wire.Codec) (*modelEnd, error) {
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
func (m *modelEnd) take(payload []byte) error {
	if err := m.receive.Decode(payload, m.in); err != nil {
		m.badFrames++
		return err
	}
	for i, v := range m.in {
		m.it.SetIn(i, v)
	}
	m.framesIn++
	return nil
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
	// model run alongside: in sim with the stand-in for the hardware, in a
	// real run when the rig simulates the output (its hardware part then
	// being the model's, not the bench's).
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
	// OfPeak is MaxError/Peak; absent when the uncut output stays at
	// zero (a regulation error, say), where only MaxError means anything.
	OfPeak float64 `json:"max_error_of_peak,omitempty"`
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
// hardware part computes it (hw is nil in a real run: then there is
// nothing to compare).
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

func (r *reference) summary() *OutputError {
	if r.output < 0 || r.samples == 0 {
		return nil
	}
	o := &OutputError{Signal: r.name, Peak: r.peak, MaxError: r.maxErr, RMSError: math.Sqrt(r.sumSq / float64(r.samples))}
	if r.peak > 1e-6*r.maxErr {
		o.OfPeak = r.maxErr / r.peak
	}
	return o
}

// coSim is a model endpoint in virtual time. The hardware is not there,
// so the model's hardware part stands in for it, with the same codec; the
// uncut model runs alongside as the reference.
type coSim struct {
	name         string
	bm           *profiles.BenchModel
	sim, hw      *modelEnd
	ref          *reference
	toHW, fromHW int // flows, or -1
	next         time.Duration
	exchanges    uint64
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
	ref, err := newReference(bm, sim.it, hw.it)
	if err != nil {
		return nil, err
	}
	return &coSim{name: name, bm: bm, sim: sim, hw: hw, ref: ref, toHW: toHW, fromHW: fromHW}, nil
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

func (cs *coSim) summary() ModelSummary {
	return ModelSummary{
		Endpoint: cs.name, Model: cs.bm.Name, Cut: cs.bm.Cut, Solver: string(cs.bm.Solver),
		ExchangeS: cs.bm.Exchange.Seconds(), StepS: cs.bm.Step.Seconds(), Exchanges: cs.exchanges,
		FramesOut: cs.sim.framesOut, FramesIn: cs.sim.framesIn, BadFrames: cs.sim.badFrames,
		Unconverged: cs.sim.it.Unconverged(),
		Hardware:    &ModelEndSummary{FramesOut: cs.hw.framesOut, FramesIn: cs.hw.framesIn, BadFrames: cs.hw.badFrames},
		Output:      cs.ref.summary(),
	}
}

// modelFrames hands the frames of model flows to the part they go to.
type modelFrames map[int]*modelEnd

func (m modelFrames) Finished(f *emulator.Frame) {
	if end := m[f.Flow]; end != nil && f.Status.Arrived() {
		end.take(f.Payload)
	}
}

// signalColumns are the columns of a signals file: a row per exchange,
// with each model endpoint's signals as its simulated part sees them
// (NAME.signal), in sim as the hardware's stand-in sees them
// (NAME.hardware.signal), and in the uncut model run alongside
// (NAME.ideal.signal).
type signalColumns struct {
	header  []byte
	columns []signalColumn
}

type signalColumn struct {
	it *plant.Integrator
	k  int
}

func (sc *signalColumns) add(prefix string, it *plant.Integrator, names []string) {
	for _, n := range names {
		sc.header = append(sc.header, ',')
		sc.header = append(sc.header, prefix...)
		sc.header = append(sc.header, n...)
		sc.columns = append(sc.columns, signalColumn{it, it.Part().Plant().SignalIndex(n)})
	}
}

// addModel adds a model's columns: its simulated part, the stand-in for
// its hardware part if there is one, and the uncut model.
func (sc *signalColumns) addModel(name string, bm *profiles.BenchModel, sim, hw, ideal *plant.Integrator) {
	if sc.header == nil {
		sc.header = []byte("t")
	}
	sc.add(name+".", sim, append(bm.Simulated.Produces(), bm.Simulated.In()...))
	if hw != nil {
		sc.add(name+".hardware.", hw, append(bm.Hardware.Produces(), bm.Hardware.In()...))
	}
	sc.add(name+".ideal.", ideal, bm.Whole().Produces())
}

// collect reads the current values, as of the integrators' last Sample.
func (sc *signalColumns) collect(dst []float64) {
	for i, c := range sc.columns {
		dst[i] = c.it.Signal(c.k)
	}
}

func appendSignalRow(b []byte, t time.Duration, values []float64) []byte {
	b = AppendSeconds(b, t)
	for _, v := range values {
		b = append(b, ',')
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
	}
	return append(b, '\n')
}

// signalWriter writes the signals file of a sim run as it goes.
type signalWriter struct {
	*signalColumns
	w      *bufio.Writer
	values []float64
	row    []byte
	err    error
}

func newSignalWriter(w io.Writer, models []*coSim) *signalWriter {
	sc := &signalColumns{}
	for _, cs := range models {
		sc.addModel(cs.name, cs.bm, cs.sim.it, cs.hw.it, cs.ref.ideal)
	}
	sw := &signalWriter{signalColumns: sc, w: bufio.NewWriterSize(w, 64<<10), values: make([]float64, len(sc.columns))}
	_, sw.err = sw.w.Write(append(sc.header, '\n'))
	return sw
}

// write adds the row for time t; the integrators were sampled at t.
func (sw *signalWriter) write(t time.Duration) {
	if sw.err != nil {
		return
	}
	sw.collect(sw.values)
	sw.row = appendSignalRow(sw.row[:0], t, sw.values)
	_, sw.err = sw.w.Write(sw.row)
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
