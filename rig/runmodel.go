package rig

import (
	"io"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// modelEndpoint is a model endpoint of a real-time run. It has no thread of
// its own: the executor steps it at its exchange times, on the executor's
// clock, and hands it the frames the network delivers to it (Write), so the
// model's time is the wall clock's.
type modelEndpoint struct {
	name string
	bm   *profiles.BenchModel
	end  *modelEnd
	ref  *reference
	flow int // the flow it sends on, or -1
	// sampled is called after each exchange's sample, for the signals
	// file.
	sampled func(t time.Duration)

	next      time.Duration // the next exchange
	exchanges uint64
	late      emulator.DelayHistogram
	overruns  uint64
}

var (
	_ drivers.Endpoint = (*modelEndpoint)(nil)
	_ drivers.Counter  = (*modelEndpoint)(nil)
)

func newModelEndpoint(name string, bm *profiles.BenchModel) (*modelEndpoint, error) {
	end, err := newModelEnd(bm.Simulated, bm, bm.Send, bm.Receive)
	if err != nil {
		return nil, err
	}
	ref, err := newReference(bm, end.it, nil)
	if err != nil {
		return nil, err
	}
	return &modelEndpoint{name: name, bm: bm, end: end, ref: ref, flow: -1}, nil
}

func (m *modelEndpoint) Name() string                                 { return m.name }
func (m *modelEndpoint) Start(drivers.Clock, drivers.Sink, int) error { return nil }
func (m *modelEndpoint) Stop() error                                  { return nil }

// Write takes up a frame from the hardware; a frame that does not decode
// is counted as bad and changes nothing.
func (m *modelEndpoint) Write(payload []byte) error { return m.end.take(payload) }

func (m *modelEndpoint) Counts() drivers.Counts {
	return drivers.Counts{FramesIn: m.end.framesOut, FramesOut: m.end.framesIn, BadFrames: m.end.badFrames}
}

// exchange runs the exchanges due by now: it samples the model and sends
// what crosses the cut into the network, then integrates to the next
// exchange. Behind by more than one exchange (an overrun), it integrates
// through the missed ones, so that model time keeps up with the clock, and
// sends only the newest sample.
func (m *modelEndpoint) exchange(net *emulator.Network, now time.Duration) {
	if m.next > now {
		return
	}
	m.late.Record(now - m.next)
	for m.next <= now {
		last := m.next+m.bm.Exchange > now
		switch {
		case last && m.flow >= 0:
			net.Inject(m.flow, m.end.frame())
		case !last:
			m.overruns++
			fallthrough
		default:
			m.end.it.Sample()
		}
		m.ref.compare()
		if m.sampled != nil {
			m.sampled(m.next)
		}
		m.end.advance()
		m.ref.advance()
		m.exchanges++
		m.next += m.bm.Exchange
	}
}

func (m *modelEndpoint) summary() ModelSummary {
	return ModelSummary{
		Endpoint: m.name, Model: m.bm.Name, Cut: m.bm.Cut, Solver: string(m.bm.Solver),
		ExchangeS: m.bm.Exchange.Seconds(), StepS: m.bm.Step.Seconds(), Exchanges: m.exchanges,
		FramesOut: m.end.framesOut, FramesIn: m.end.framesIn, BadFrames: m.end.badFrames,
		Unconverged: m.end.it.Unconverged(), StepLateness: m.late.Summarize(), Overruns: m.overruns,
		Output: m.ref.summary(),
	}
}

// signalRecord is a row of a run's signals file.
type signalRecord struct {
	t      time.Duration
	values []float64
}

// startSignals writes the model endpoints' signals from a goroutine of its
// own; each exchange fills a row with every model's latest values.
func startSignals(w io.Writer, models []*modelEndpoint) *asyncWriter[signalRecord] {
	sc := &signalColumns{}
	for _, m := range models {
		sc.addModel(m.name, m.bm, m.end.it, nil, m.ref.ideal)
	}
	width := len(sc.columns)
	sw := newAsyncWriter(w, string(sc.header), 1<<14,
		func(r *signalRecord) { r.values = make([]float64, width) },
		func(b []byte, r *signalRecord) []byte { return appendSignalRow(b, r.t, r.values) })
	record := func(t time.Duration) {
		if slot := sw.next(); slot != nil {
			slot.t = t
			sc.collect(slot.values)
			sw.publish()
		}
	}
	for _, m := range models {
		m.sampled = record
	}
	return sw
}
