package executor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
)

// An Egress is where the frames of a flow go when they arrive: a device
// (ToDevice), an endpoint played in software (ToEndpoint) or a model's part.
type Egress interface {
	// deliver hands over an arrived frame and reports whether it was
	// taken.
	deliver(x *Executor, f *emulator.Frame) bool
}

// ToEndpoint is the egress of an endpoint played in software, recorded as
// the recording's interface iface (-1: not recorded): the frame is written
// to it when the engine releases it.
func ToEndpoint(iface int, w drivers.Writer) Egress {
	return endpointEgress{w: w, iface: iface}
}

// ToDevice is the egress of device i (its index in the executor's ingress
// and in the recording): the frame is written to it when the engine
// releases it, and the lateness of that release is measured.
func ToDevice(i int, w drivers.Writer) Egress { return endpointEgress{w: w, iface: i, device: true} }

type endpointEgress struct {
	w      drivers.Writer
	iface  int // in the recording, or -1
	device bool
}

func (e endpointEgress) deliver(x *Executor, f *emulator.Frame) bool {
	if e.device {
		late := x.clock.Now() - x.net.Now()
		x.releaseLate.Record(late)
		x.load.late(late)
	}
	var err error
	if tw, ok := e.w.(TimedWriter); ok {
		err = tw.WriteAt(f.Payload, x.net.Now())
	} else {
		err = e.w.Write(f.Payload)
	}
	if err != nil {
		return false
	}
	if x.recording != nil && e.iface >= 0 {
		x.recording.Frame(e.iface, true, x.clock.Now(), f.Flow, f.Seq, f.Payload)
	}
	return true
}

// A TimedWriter is an endpoint played in software that wants to know when
// each frame reached it (the engine's time), as a device's UART would.
type TimedWriter interface {
	WriteAt(payload []byte, at time.Duration) error
}

// An Answerer is a Source that may inject frames between its instants, in
// answer to what it is written (a device answering a time request): the
// executor hands it its means to inject once, before the run.
type Answerer interface {
	Answer(inject func(flow int, payload []byte))
}

// A Source injects frames into flows at instants of its own, in virtual
// and in real time alike.
type Source interface {
	// Next is when it next wants to run (math.MaxInt64: never again).
	Next() time.Duration
	// Emit injects what is due by now; it is called when Next has come.
	Emit(now time.Duration, inject func(flow int, payload []byte))
}

// Config is what the executor runs: the network to build, where each
// flow's frames come from and go to, and what to record.
type Config struct {
	Network emulator.Config
	Clock   Clock
	End     time.Duration // the run stops at End
	// Egress is, per flow, where its frames go (nil: they end in the
	// engine, as cross traffic does).
	Egress []Egress
	// Ingress brings frames from endpoints, each feeding the flow FlowOf
	// gives for it (-1: none); Reconnects says, per endpoint, whether its
	// device may come back after it went away (otherwise that fails the
	// run). Nil in virtual time, where sources are the profile's
	// generators and the models.
	Ingress    *Ingress
	FlowOf     []int
	Reconnects []bool
	Endpoints  []string // their names, for messages
	Models     []*Model
	// Sources inject frames at instants of their own: a replayed
	// recording, a test's script. SourceInterfaces are, per source, its
	// interface in the recording (-1: not recorded).
	Sources          []Source
	SourceInterfaces []int
	// DeviceWire and SourceWire follow the wire protocol on the frames
	// that endpoints (per device, as FlowOf) and sources (per source)
	// send, for those with codec wire (nil for the others). Their event
	// rows in the trace come after the models', devices' first
	// (EventRowNames).
	DeviceWire, SourceWire []*WireLink

	// What to record; each may be nil.
	// Trace's names are the flows' and then the models' (for the rows
	// of their supervisors).
	Trace   *record.Trace
	Phases  *record.Phases
	Signals *record.Signals
	// Queues receives every QueueEvery what each hop holds: the bytes and
	// frames waiting for its serialiser and the frames an outage holds
	// (columns QueueColumns names).
	Queues     *record.Signals
	QueueEvery time.Duration
	Monitor    *record.Monitor
	// Recording keeps every frame read from a device and written to one.
	Recording *record.Recording
	// Notify, when set, hears of events as they happen (a supervisor's
	// alarm), to tell the user at once; it may be called from another
	// goroutine than the executor's.
	Notify func(record.Event)
}

// Executor is the loop. It is not safe for concurrent use: one goroutine
// (in real time, one locked thread) runs it, and the monitor is how other
// goroutines see it.
type Executor struct {
	clock   Clock
	real    bool
	net     *emulator.Network
	end     time.Duration
	egress  []Egress
	in      *Ingress
	flowOf  []int
	models  []*Model
	sources []Source
	injects []func(flow int, payload []byte) // per source
	wire    []*WireLink                      // per device, or nil
	wires   []*WireLink                      // every one, devices' then sources'
	spare   []byte                           // the buffer the ingress ring swaps frames into

	trace              *record.Trace
	phases             *record.Phases
	signals            *record.Signals
	queues             *record.Signals
	queueEvery, queued time.Duration
	recording          *record.Recording
	signalCol          []signalColumn
	monitor            *record.Monitor
	published          time.Duration
	publish            func(*record.Snapshot)
	flowNames          []string

	endpoints []endpointState
	tell      func(record.Event)
	failure   error // a participant's reason to stop the run

	posted postQueue
	events []record.Event

	ctx      context.Context
	pending  func() bool
	stopAt   time.Duration
	finished bool

	wakeLate, releaseLate emulator.DelayHistogram
	wakeups               uint64
	load                  loadMeter

	// handed is, per flow with an egress, what became of the frames the
	// engine delivered: the ones the egress would not take are
	// egress_drop in the summary, not delivered.
	handed []record.Handed
}

// endpointState is what the executor knows of an endpoint's device.
type endpointState struct {
	name       string
	reconnects bool
	resting    bool               // its reader rests, out of its share of the CPU
	restedAt   time.Duration      // when it last did
	gaps       [][2]time.Duration // a gap still open ends at -1
	failure    string             // why it stopped, or is away now
	device     string             // which device went away, for the news it is back
}

var _ emulator.Observer = (*Executor)(nil)

// New builds the network and the executor that runs it.
func New(cfg Config) (*Executor, error) {
	x := &Executor{
		clock: cfg.Clock, real: cfg.Clock.Real(), end: cfg.End, egress: cfg.Egress,
		in: cfg.Ingress, flowOf: cfg.FlowOf, models: cfg.Models, sources: cfg.Sources,
		trace: cfg.Trace, phases: cfg.Phases, signals: cfg.Signals, monitor: cfg.Monitor, recording: cfg.Recording,
		queues: cfg.Queues, queueEvery: cfg.QueueEvery,
		spare: make([]byte, 0, slotBytes), ctx: context.Background(), published: -record.PublishEvery,
		tell: cfg.Notify,
	}
	for i, m := range x.models {
		m.traceIndex = int32(len(cfg.Network.Flows) + i)
		m.setClock(x.netNow)
	}
	x.wire = cfg.DeviceWire
	for _, l := range slices.Concat(cfg.DeviceWire, cfg.SourceWire) {
		if l != nil {
			l.trace = int32(len(cfg.Network.Flows) + len(x.models) + len(x.wires))
			x.wires = append(x.wires, l)
		}
	}
	if len(x.egress) < len(cfg.Network.Flows) {
		x.egress = append(x.egress, make([]Egress, len(cfg.Network.Flows)-len(x.egress))...)
	}
	for _, f := range cfg.Network.Flows {
		x.flowNames = append(x.flowNames, f.Name)
	}
	x.handed = make([]record.Handed, len(cfg.Network.Flows))
	for i := range cfg.FlowOf {
		e := endpointState{reconnects: i < len(cfg.Reconnects) && cfg.Reconnects[i], name: fmt.Sprint("endpoint ", i)}
		if i < len(cfg.Endpoints) {
			e.name = cfg.Endpoints[i]
		}
		x.endpoints = append(x.endpoints, e)
	}
	if _, metered := cfg.Clock.(meteredClock); metered && x.in != nil && x.real {
		// The readers are threads of their own on the wall clock.
		x.in.meter(len(cfg.FlowOf))
	}
	for _, m := range x.models {
		_, x.signalCol = m.signalColumns(nil, x.signalCol)
	}
	x.pending = func() bool { return x.in != nil && x.in.pending() || x.posted.waiting.Load() || x.ctx.Err() != nil }
	x.publish = x.fillSnapshot
	for i := range x.sources {
		iface := -1
		if i < len(cfg.SourceInterfaces) {
			iface = cfg.SourceInterfaces[i]
		}
		var wl *WireLink
		if i < len(cfg.SourceWire) {
			wl = cfg.SourceWire[i]
		}
		x.injects = append(x.injects, func(flow int, payload []byte) {
			if wl != nil && wl.take(x, payload, x.net.Now()) || flow < 0 {
				return // the answer to the rig's time request, or a source that feeds nothing
			}
			seq := x.net.Inject(flow, payload)
			if x.recording != nil && iface >= 0 {
				x.recording.Frame(iface, false, x.net.Now(), flow, seq, payload)
			}
		})
		if a, ok := x.sources[i].(Answerer); ok {
			a.Answer(x.injects[i])
		}
	}
	// The executor watches the frames only when it has something to do
	// with them: a run with nothing to record or deliver (the summary
	// only) spares the engine a call per frame.
	var observer emulator.Observer
	if x.trace != nil || x.phases != nil || slices.ContainsFunc(x.egress, func(e Egress) bool { return e != nil }) {
		observer = x
	}
	var err error
	if x.net, err = emulator.New(cfg.Network, observer); err != nil {
		return nil, err
	}
	return x, nil
}

// QueueColumns names the columns of a queues file for hops: three per hop.
func QueueColumns(hops []string) []string {
	var names []string
	for _, h := range hops {
		names = append(names, h+".queue_bytes", h+".queue_frames", h+".held_frames")
	}
	return names
}

// sampleQueues writes a row of what each hop holds now.
func (x *Executor) sampleQueues(now time.Duration) {
	row := x.queues.Row(now)
	if row == nil {
		return
	}
	for i := range x.net.NumHops() {
		h := x.net.HopNow(i)
		row[3*i], row[3*i+1], row[3*i+2] = float64(h.QueueBytes), float64(h.QueueFrames), float64(h.HeldFrames)
	}
	x.queues.Publish()
}

// netNow is the engine's time: what the models' wire messages are stamped
// with (a method value, made once).
func (x *Executor) netNow() time.Duration { return x.net.Now() }

// EventRowNames are the names of the trace's rows that are events rather
// than frames, after the flows': the models' (their supervisors'), then
// the wire links' (their devices' heartbeats), devices' first.
func EventRowNames(models []*Model, deviceWire, sourceWire []*WireLink) []string {
	var names []string
	for _, m := range models {
		names = append(names, m.Name())
	}
	for _, l := range slices.Concat(deviceWire, sourceWire) {
		if l != nil {
			names = append(names, l.Name())
		}
	}
	return names
}

// SignalColumns names the columns of the models' signals, in the order
// the executor records them.
func SignalColumns(models []*Model) []string {
	var names []string
	for _, m := range models {
		names, _ = m.signalColumns(names, nil)
	}
	return names
}

// Network is the engine the executor drives.
func (x *Executor) Network() *emulator.Network { return x.net }

// Start starts the models' exchanges now, not when the clock did: opening
// devices took time that they would otherwise have to catch up as overruns.
func (x *Executor) Start() {
	now := x.clock.Now()
	for _, m := range x.models {
		m.start(now)
	}
}

// Run turns the loop until the end, until ctx is done, or until a device
// fails, and says which. The engine has then processed everything due
// before the instant it stopped; Finish reports what is still inside.
func (x *Executor) Run(ctx context.Context) (stopped string, err error) {
	x.ctx = ctx
	defer func() { x.ctx = context.Background() }()
	x.load.init(x.clock, x.clock.Now())
	for {
		if ctx.Err() != nil {
			return x.halt(min(x.clock.Now(), x.end), "interrupted", nil)
		}
		if err := x.deviceEvents(); err != nil {
			return x.halt(min(x.clock.Now(), x.end), "failed: "+err.Error(), err)
		}
		next, done := x.Step()
		if done {
			return x.halt(x.end, "duration", nil)
		}
		if err := x.failure; err != nil {
			return x.halt(min(x.clock.Now(), x.end), "failed: "+err.Error(), err)
		}
		if err := x.load.check(x); err != nil {
			return x.halt(min(x.clock.Now(), x.end), "failed: "+err.Error(), err)
		}
		x.wait(next)
	}
}

// halt stops the run at at and publishes its last snapshot: the one that
// observers show as the run's end (the periodic one may be PublishEvery
// old, or older on a loaded machine).
func (x *Executor) halt(at time.Duration, stopped string, err error) (string, error) {
	x.stopAt = at
	x.net.Advance(at - 1)
	if x.monitor != nil {
		x.monitor.Publish(func(s *record.Snapshot) { x.snapshotAt(s, at) })
	}
	return stopped, err
}

// Step is one turn of the loop: it injects the frames that arrived, lets
// the engine catch up with the clock, runs the model exchanges that are
// due, and publishes the snapshot. It returns the time of the next thing
// to do, or done once the clock has reached the end.
func (x *Executor) Step() (next time.Duration, done bool) {
	x.ingest()
	now := x.clock.Now()
	if now >= x.end {
		return 0, true
	}
	x.net.Advance(now)
	x.runPosted(now)
	x.exchange(now)
	next = x.end
	for _, l := range x.wires {
		next = min(next, l.sync(x, now), l.watch(x, now))
	}
	for i, src := range x.sources {
		if src.Next() <= now {
			src.Emit(now, x.injects[i])
			x.net.Advance(now) // what arrives at once
		}
		next = min(next, src.Next())
	}
	if x.queues != nil && x.queueEvery > 0 {
		if now >= x.queued {
			x.sampleQueues(now)
			for x.queued <= now {
				x.queued += x.queueEvery
			}
		}
		next = min(next, x.queued)
	}
	if x.monitor != nil {
		if now-x.published >= record.PublishEvery {
			x.published = now
			x.monitor.Publish(x.publish)
		}
		next = min(next, x.published+record.PublishEvery)
	}
	for _, m := range x.models {
		if m.wait != nil {
			x.stepOnData(m, now)
		}
		next = min(next, m.deadline(x, now))
	}
	if x.real {
		if e, ok := x.net.NextEvent(); ok {
			next = min(next, e)
		}
	}
	return next, false
}

// wait sleeps until next, or until something arrives; a wakeup for the
// deadline is measured.
func (x *Executor) wait(next time.Duration) {
	if !x.clock.Until(next, x.pending) && x.real {
		late := x.clock.Now() - next
		x.wakeups++
		x.wakeLate.Record(late)
		x.load.woke(late)
	}
}

// ingest injects the frames the endpoints read, each at the time it
// arrived.
func (x *Executor) ingest() {
	if x.in == nil {
		return
	}
	for {
		f, ok := x.in.pop(x.spare)
		if !ok {
			return
		}
		if l := x.wireOf(f.endpoint); l != nil && l.take(x, f.payload, f.at) {
			// The answer to the rig's own time request: not forwarded.
			if x.recording != nil {
				x.recording.Frame(f.endpoint, false, f.at, -1, 0, f.payload)
			}
		} else if flow := x.flowOf[f.endpoint]; flow >= 0 && f.at < x.end {
			x.net.Advance(f.at) // what was due before the frame arrived
			seq := x.net.Inject(flow, f.payload)
			if x.recording != nil {
				// When it entered the network: its stamp, or later if the
				// executor took it up after the engine had moved on.
				x.recording.Frame(f.endpoint, false, x.net.Now(), flow, seq, f.payload)
			}
		} else if x.recording != nil {
			x.recording.Frame(f.endpoint, false, f.at, -1, 0, f.payload)
		}
		x.spare = f.payload
	}
}

// wireOf is device i's wire link, or nil.
func (x *Executor) wireOf(i int) *WireLink {
	if i < len(x.wire) {
		return x.wire[i]
	}
	return nil
}

// exchange runs the model exchanges due by now, all models due at an
// instant together: each sends what crosses its cut, the frames that
// arrive at once are taken up, each samples its signals (one row of the
// signals file), and each integrates to its next exchange. Behind by more
// than one exchange (an overrun, in real time), a model integrates through
// the missed ones, so that its time keeps up with the clock, and sends only
// at the newest.
func (x *Executor) exchange(now time.Duration) {
	for _, m := range x.models {
		if m.next <= now && x.real { // a virtual clock is never late
			m.late.Record(now - m.next)
		}
	}
	for {
		t := x.end
		for _, m := range x.models {
			t = min(t, m.next)
		}
		if t > now || t >= x.end {
			return
		}
		for _, m := range x.models {
			if m.next == t {
				m.send(x, t+m.exchange > now)
			}
		}
		x.net.Advance(now)
		for _, m := range x.models {
			if m.next == t {
				m.sample(x)
			}
		}
		if x.signals != nil {
			if row := x.signals.Row(t); row != nil {
				for i, c := range x.signalCol {
					row[i] = c.read(now)
				}
				x.signals.Publish()
			}
		}
		for _, m := range x.models {
			if m.next == t {
				m.advance()
			}
		}
	}
}

// stepOnData steps a model's part on its data and checks its supervisor;
// a reason to stop the run is kept for Run.
func (x *Executor) stepOnData(m *Model, now time.Duration) {
	err := m.check(x, now)
	if err == nil && m.onData() {
		err = m.stepOnData(x, now)
	}
	if err != nil && x.failure == nil {
		x.failure = err
	}
}

// notify records an event and, unless the watchdog did already, tells
// the user at once.
func (x *Executor) notify(at time.Duration, kind, detail string, tell bool) {
	x.Event(at, kind, detail)
	if x.tell != nil && tell {
		x.tell(x.events[len(x.events)-1])
	}
}

// Watch starts, in real time, a watchdog for each supervised model on a
// goroutine of its own (see Model.watch); they end when done is closed.
func (x *Executor) Watch(done <-chan struct{}) {
	for _, m := range x.models {
		if m.wait != nil && m.wait.sup != nil {
			go m.watch(x.clock, x.tell, done)
		}
	}
}

// eventRow writes a supervisor's row to the trace.
func (x *Executor) eventRow(m *Model, status emulator.Status) {
	if x.trace != nil { // at the turn's instant, as the frames injected in it
		x.trace.Add(record.TraceRow{Sent: x.net.Now(), Recv: -1, Due: -1, Flow: m.traceIndex, Status: status})
	}
}

// disrupted reports whether a named phase of the schedule (a disruption
// of the network) is going on.
func (x *Executor) disrupted(now time.Duration) bool {
	return x.phases != nil && x.phases.Active(now)
}

// Finished hands an arrived frame to its egress and records the frame.
func (x *Executor) Finished(f *emulator.Frame) {
	if x.phases != nil {
		x.phases.Finished(f)
	}
	arrived := f.Status.Arrived()
	if f.Copy && !arrived {
		return // a copy that dies has no row: the rows are the frames the source sent, and the copies delivered
	}
	status, recv, due := f.Status, time.Duration(-1), time.Duration(-1)
	if arrived {
		recv, due = f.Done, f.Done
		if e := x.egress[f.Flow]; e != nil {
			taken := e.deliver(x, f)
			x.handed[f.Flow].Add(f, taken)
			switch {
			case !taken:
				status, recv = record.EgressDrop, -1
			case x.real:
				recv = x.clock.Now()
			}
		}
	}
	if x.trace != nil {
		x.trace.Add(record.TraceRow{Seq: f.Seq, Sent: f.Sent, Recv: recv, Due: due, Flow: int32(f.Flow), Size: int32(f.Size), Status: status})
	}
}

// deviceEvents records endpoints going away and coming back, and their
// notices (not reading, not reopened); a device that goes away without
// reconnecting fails the run.
func (x *Executor) deviceEvents() error {
	if x.in == nil {
		return nil
	}
	for len(x.in.events) > 0 {
		ev := <-x.in.events
		e := &x.endpoints[ev.endpoint]
		if !ev.gone {
			if n := len(e.gaps); n > 0 {
				e.gaps[n-1][1] = ev.at
				x.notify(ev.at, "device_back", e.device+": back after "+(ev.at-e.gaps[n-1][0]).Round(time.Millisecond).String()+" away", true)
			}
			e.failure = "" // an error is what the device still has
			continue
		}
		e.failure, e.device = ev.err.Error(), ev.err.Error()
		if de := (*drivers.DeviceError)(nil); errors.As(ev.err, &de) {
			e.device = de.Endpoint + " (" + de.Device + ")"
		}
		if !e.reconnects {
			return ev.err
		}
		e.gaps = append(e.gaps, [2]time.Duration{ev.at, -1})
		x.notify(ev.at, "device_gone", e.failure+"; the rig waits for it", true)
	}
	for _, ev := range x.in.takeNotices() {
		if gaps := x.endpoints[ev.endpoint].gaps; len(gaps) > 0 && gaps[len(gaps)-1][1] < 0 {
			x.endpoints[ev.endpoint].failure = ev.err.Error() // why it is still away
		}
		x.notify(ev.at, ev.notice, ev.err.Error(), true)
	}
	return nil
}

// Finish reports the frames still inside the network as in flight, at the
// instant the run stopped. Call it once the loop has returned and the
// devices are stopped.
func (x *Executor) Finish() {
	if !x.finished {
		x.finished = true
		x.net.Run(x.stopAt)
	}
}

// Summary is the network's, the models' and the endpoints' gaps and
// failures so far; the caller adds what the devices counted. A frame the
// engine delivered but its egress would not take is dropped as
// egress_drop, not delivered (in real time every flow's dropped has the
// entry; in virtual time only a flow that had one).
func (x *Executor) Summary() (emulator.Summary, []record.ModelSummary) {
	var models []record.ModelSummary
	for _, m := range x.models {
		s := m.Summary(x.real)
		if c := s.Messages; c != nil && m.sim.flow >= 0 {
			st, h := x.net.FlowStats(m.sim.flow), &x.handed[m.sim.flow]
			c.Sent = st.Sent
			c.Received = st.Status[emulator.Delivered] + st.Status[emulator.Corrupted] - h.Dropped
			c.Lost = st.Status[emulator.QueueDrop] + st.Status[emulator.OutageDrop] + st.Status[emulator.LossDrop] + h.Dropped
			c.InFlight = st.Status[emulator.InFlight]
		}
		models = append(models, s)
	}
	sum := x.net.Summary()
	for i := range sum.Flows {
		x.handed[i].Apply(&sum.Flows[i], x.real)
	}
	return sum, models
}

// WireSummary is a wire link's account so far (nil for none).
func (x *Executor) WireSummary(l *WireLink) *record.WireSummary {
	if l == nil {
		return nil
	}
	return l.Summary(x.net.Now())
}

// EndpointState is the gaps and the last failure of endpoint i, times in
// seconds; a device that never came back is away until the run's end.
func (x *Executor) EndpointState(i int) (gaps [][2]float64, failure string) {
	e := x.endpoints[i]
	for _, g := range e.gaps {
		if g[1] < 0 {
			g[1] = x.net.Now()
		}
		gaps = append(gaps, [2]float64{g[0].Seconds(), g[1].Seconds()})
	}
	return gaps, e.failure
}

// ReaderRest is how long endpoint i's reader thread rested, out of its
// share of the CPU.
func (x *Executor) ReaderRest(i int) time.Duration {
	if x.in == nil || i >= len(x.in.readers) {
		return 0
	}
	return time.Duration(x.in.readers[i].rested.Load())
}

// Timing fills in how well a real clock was kept: the wakeups and their
// lateness, and how late frames were released to their devices.
func (x *Executor) Timing(t *record.TimingSummary) {
	t.Wakeups = x.wakeups
	if s, ok := x.clock.(interface{ Start() time.Time }); ok {
		t.Started = s.Start().Format(time.RFC3339Nano)
	}
	t.WakeLateness = x.wakeLate.Summarize()
	t.ReleaseLateness = x.releaseLate.Summarize()
	if l := &x.load; l.clock != nil {
		if ran := x.clock.Now(); ran > 0 {
			t.Busy = min(1, float64(l.busy)/float64(ran))
		}
		t.Overloads, t.OverloadS, t.SpinShedS = l.episodes, l.overloadFor.Seconds(), l.shedFor.Seconds()
		t.SpinUsedS = l.clock.SpinWithin(l.spin).Seconds()
	}
	if x.in != nil {
		t.IngressDropped = x.in.Dropped()
	}
}

// postQueue carries work from other goroutines (a live API changing a hop)
// to the executor, which runs it between two of its events.
type postQueue struct {
	mu      sync.Mutex
	work    []func(x *Executor, now time.Duration)
	spare   []func(x *Executor, now time.Duration)
	waiting atomic.Bool
}

// Post runs f on the executor's goroutine at its next turn, between two
// events, with the engine at the time now; it is safe to call from any
// goroutine, and wakes a real clock's sleep. Work posted to a run that
// has ended never runs.
func (x *Executor) Post(f func(x *Executor, now time.Duration)) {
	x.posted.mu.Lock()
	x.posted.work = append(x.posted.work, f)
	x.posted.waiting.Store(true)
	x.posted.mu.Unlock()
	if w, ok := x.clock.(interface{ Wake() }); ok {
		w.Wake()
	}
}

func (x *Executor) runPosted(now time.Duration) {
	if !x.posted.waiting.Load() {
		return
	}
	x.posted.mu.Lock()
	work := x.posted.work
	x.posted.work, x.posted.spare = x.posted.spare[:0], work
	x.posted.waiting.Store(false)
	x.posted.mu.Unlock()
	for i, f := range work {
		f(x, now)
		work[i] = nil
	}
}

// Event records something that happened to the run at an instant of its
// clock (a change made by hand, a supervisor's alarm); events are kept
// for the summary. Not for the per-frame path: it may allocate.
func (x *Executor) Event(at time.Duration, kind, detail string) {
	e := record.Event{AtS: at.Seconds(), Kind: kind, Detail: detail}
	if s, ok := x.clock.(interface{ Start() time.Time }); ok {
		e.Wall = s.Start().Add(at).Format(time.RFC3339Nano)
	}
	x.events = append(x.events, e)
}

// Events returns the events recorded so far.
func (x *Executor) Events() []record.Event { return x.events }
