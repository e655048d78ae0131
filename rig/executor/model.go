package executor

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
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
func NewPart(part *plant.Part, bm *profiles.BenchModel, send, receive wire.Codec) (*Part, error) {
	it, err := plant.NewIntegrator(part, bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	p := &Part{it: it, send: send, receive: receive, substeps: int64(bm.Exchange / bm.Step), flow: -1,
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

// Model is a model endpoint: the part of a cut model the rig simulates
// and, in virtual time, a stand-in for the hardware's part (the hardware
// is not there), with the uncut model alongside as the reference. The
// executor steps the stand-in and the reference at the model's exchange
// instants on its clock, as the hardware's own time goes. The rig's part
// steps with them (Stepping hold) or on data (Stepping wait), and a
// supervisor may watch it keep pace.
type Model struct {
	name     string
	bm       *profiles.BenchModel
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

// Stepping is what a model endpoint's parts step on.
type Stepping struct {
	// Replies makes the hardware's stand-in (virtual time) send at once in
	// answer to each frame it receives, rather than at every exchange: a
	// controller answering each measurement.
	Replies bool
	// Wait steps the part only when an input valid for the step has
	// arrived (paper 004's Eq. 1): a message stamped T with
	// h+Δh−MaxAge ≤ T ≤ h+Δh. Without Wait the part steps at every
	// exchange instant on the input it last received (a zero-order hold).
	Wait    bool
	MaxAge  time.Duration
	Timeout time.Duration // waiting longer for valid data stops the run
	// NominalDelay is how long a message takes from the device to the
	// rig: a message is stamped with the time it entered the rig less
	// this (the device sends no timestamp of its own).
	NominalDelay time.Duration
	// StepCost is how long a step of the model takes to compute, in
	// virtual time: it bounds how fast the model catches up, and the
	// part's time moves to the step's target when it ends. In real time
	// a step takes what it takes.
	StepCost time.Duration
	// Supervisor, when set, watches the discrepancy between the part's
	// simulated time and the clock.
	Supervisor *supervisor.Config
	// Safe, with a Shadow supervisor, are the values the part sends while
	// out of sync instead of sending nothing: frames sent, counted as
	// sent and as SafeSent, in place of the model's commands.
	Safe []float64
}

// dataStepping is the state of a part that steps on data, and of its
// supervisor.
type dataStepping struct {
	inbox      *supervisor.Inbox
	h          time.Duration // the part's simulated time since the start
	start      time.Duration // the clock's time at h = 0
	started    bool          // stepping on data: its first message has come
	busyUntil  time.Duration // when the step being computed ends (virtual time) or ended (real)
	waitSince  time.Duration // when the part began waiting for data, or -1
	current    time.Duration // timestamp of the data last taken up
	hasCurrent bool
	blocked    bool // waiting for valid data, not for the clock
	sup        *supervisor.Supervisor
	nextCheck  time.Duration
	safe       []float64 // the values sent while in shadow, or nil

	// computing is the length of the step being computed, 0 when none;
	// target is the part's time once it has ended.
	computing, target time.Duration

	generated, skipped, skippedDisrupted uint64
	safeSent                             uint64 // of the messages sent, those with the safe values
	gapSteps                             uint64 // steps through a gap in the data

	// For the watchdog of a real-time run, on another goroutine: the
	// part's time, and an alarm it raised (at alarmAt, with alarmDiff).
	hNow               atomic.Int64
	startNs            atomic.Int64 // start, once started
	startedNow         atomic.Bool
	alarm              atomic.Bool
	alarmAt, alarmDiff atomic.Int64
}

// begin starts the model's time at t (the clock's time at h = 0).
func (d *dataStepping) begin(t time.Duration) {
	d.start, d.started, d.nextCheck = t, true, t
	d.startNs.Store(int64(t))
	d.startedNow.Store(true)
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
	m := &Model{name: name, bm: bm, sim: sim, exchange: bm.Exchange, sends: bm.Simulated.Out(), takes: bm.Simulated.In()}
	sim.model, sim.role = m, "the rig's part"
	var hwIt *plant.Integrator
	if standIn {
		if m.hw, err = NewPart(bm.Hardware, bm, bm.Receive, bm.Send); err != nil {
			return nil, err
		}
		m.hw.flow = fromHardware
		m.hw.model, m.hw.role = m, "the hardware's stand-in"
		hwIt = m.hw.it
	}
	if m.ref, err = newReference(bm, sim.it, hwIt); err != nil {
		return nil, err
	}
	return m, nil
}

// SetStepping makes the model step on data and be supervised, as st says.
// Call it before the run starts.
func (m *Model) SetStepping(st Stepping) error {
	m.stepping = st
	if st.Replies && m.hw != nil {
		m.hw.replies = true
		m.hw.replySteps = m.hw.substeps * int64(max(m.bm.SendEvery, 1))
	}
	if !st.Wait && st.Supervisor == nil {
		return nil
	}
	if st.Wait && st.MaxAge <= 0 {
		return fmt.Errorf("%s: stepping on data needs a positive maxage", m.name)
	}
	if st.Wait && len(m.sim.in) == 0 {
		return fmt.Errorf("%s: its part receives nothing from the hardware to step on", m.name)
	}
	d := &dataStepping{waitSince: -1, nextCheck: -1}
	if st.Wait {
		d.inbox = supervisor.NewInbox(256, len(m.sim.in))
		m.sim.inbox, m.sim.nominal, m.sim.data = d.inbox, st.NominalDelay, d
	}
	if st.Supervisor != nil {
		var err error
		if d.sup, err = supervisor.New(*st.Supervisor, m.exchange); err != nil {
			return fmt.Errorf("%s: supervisor: %w", m.name, err)
		}
	}
	if st.Safe != nil {
		if len(st.Safe) != len(m.sim.out) {
			return fmt.Errorf("%s: %d safe values for %d outputs", m.name, len(st.Safe), len(m.sim.out))
		}
		// Encoded as each is sent: a wire message's number and stamp are
		// its own.
		d.safe = slices.Clone(st.Safe)
	}
	m.wait = d
	return nil
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

// onData reports whether the rig's part steps on data rather than at the
// exchange instants.
func (m *Model) onData() bool { return m.wait != nil && m.stepping.Wait }

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
	if every := uint64(m.bm.SendEvery); every > 1 && m.exchanges%every != 0 {
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
	if r := m.ref; !r.divergedIdeal {
		if what := r.ideal.NonFinite(); what != "" {
			r.divergedIdeal = true
			m.diverge(x, "the uncut reference", what)
		}
	}
}

// diverge tells the run that a part of the model (role) has a state or
// signal that is not a finite number (what): an event at the instant, and
// a failure that stops the run, as a device lost does. The part sends
// nothing more; a trace, signals and summary are complete up to the
// instant, and say so.
func (m *Model) diverge(x *Executor, role, what string) {
	now := x.net.Now()
	x.notify(now, "model_diverged", fmt.Sprintf("%s: in %s, %s: the model is unstable as it runs, or took a value that is not a number", m.name, role, what), true)
	if x.failure == nil {
		x.failure = fmt.Errorf("model %s diverged at %v: in %s, %s", m.name, now, role, what)
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

// stepOnData takes the step the data allows by now, one per call: the
// next when this one has been computed (in virtual time a step costs
// StepCost of the clock; in real time what it takes). It returns an error
// when the run must stop: no valid data for the timeout, or a Stop
// supervisor out of sync.
//
// A step takes up its input and sends its command when it begins, and
// the part's time becomes the step's target when it ends: t_diff after
// the step is the clock then less the new time (paper 004's
// tdiff(now_after_step), seed-specs §1.4), and until then the checks see
// the part's time before the step. A step that ends ends in the turn of
// that instant, before anything else the model does in it: its flag's
// change comes before the next command is sent.
func (m *Model) stepOnData(x *Executor, now time.Duration) error {
	d := m.wait
	if !d.started {
		if m.stepping.Timeout > 0 && now-d.waitSince >= m.stepping.Timeout {
			return fmt.Errorf("model %s: no data for %v since the start: stopping", m.name, m.stepping.Timeout)
		}
		return nil
	}
	if err := m.endStep(x, now); err != nil {
		return err
	}
	if d.busyUntil > now {
		return nil // computing a step
	}
	flagged := d.sup != nil && d.sup.Flagged()
	lag := now - d.start - d.h // how far the part may step without running ahead
	newest, _ := d.inbox.Newest()
	jump := 1
	if d.sup != nil {
		jump = d.sup.Config().Jump
	}
	if !d.hasCurrent {
		d.current = newest
	}
	step := supervisor.StepSize(m.exchange, jump, flagged, newest, d.current, lag)
	if step > lag {
		d.blocked = false
		return nil // the part is where the clock is
	}
	target := d.h + step
	values, t, ok := d.inbox.Valid(target, m.stepping.MaxAge)
	if !ok && newest > target {
		// A message newer than the target has arrived, and messages
		// arrive in order: none valid for the target will come (the
		// device fell silent, or they were lost). Step through the
		// gap on the data last taken up, rather than wait for ever.
		values, t, ok = nil, d.current, true
		d.gapSteps++
	}
	if !ok {
		d.blocked = true
		if d.waitSince < 0 {
			d.waitSince = now
		}
		if m.stepping.Timeout > 0 && now-d.waitSince >= m.stepping.Timeout {
			return fmt.Errorf("model %s: no valid data for %v (maxage %v): stopping", m.name, m.stepping.Timeout, m.stepping.MaxAge)
		}
		return nil
	}
	d.waitSince = -1
	d.current, d.hasCurrent = t, true
	m.sim.apply(values) // nothing, through a gap
	if m.sim.flow >= 0 {
		m.sendCommand(x)
	} else {
		m.sim.sample(x)
	}
	m.sim.it.AdvanceBy(step) // whole solver steps: a jump stays within the solver's stability limit
	d.computing, d.target = step, target
	if x.real {
		// The step took what it took: it ended now, and the next turn,
		// at once, ends it (the frames of this turn have its instant).
		d.busyUntil = x.clock.Now()
		return nil
	}
	d.busyUntil = now + m.stepping.StepCost
	return m.endStep(x, now) // at once if it costs nothing
}

// endStep ends the step being computed if it is done by now, at the
// instant it was done.
func (m *Model) endStep(x *Executor, now time.Duration) error {
	if d := m.wait; d.computing > 0 && d.busyUntil <= now {
		return m.stepped(x, d.busyUntil)
	}
	return nil
}

// stepped ends the step being computed at end: the part's time is its
// target, and the supervisor takes the discrepancy it left.
func (m *Model) stepped(x *Executor, end time.Duration) error {
	d := m.wait
	step := d.computing
	d.computing = 0
	d.h = d.target
	d.hNow.Store(int64(d.h))
	if d.sup == nil {
		return nil
	}
	// The step belongs to the episode it ends in; then the discrepancy it
	// left may end that episode.
	tdiff := end - d.start - d.h
	d.sup.Stepped(step, tdiff, x.disrupted(end))
	return m.observe(x, end, tdiff)
}

// check computes the discrepancy between steps, at the check interval,
// and takes up an alarm the watchdog raised. A step that ends now ends
// first: a check at that instant sees the part's time after it.
func (m *Model) check(x *Executor, now time.Duration) error {
	d := m.wait
	if d == nil || d.sup == nil || !d.started {
		return nil
	}
	if err := m.endStep(x, now); err != nil {
		return err
	}
	// Only an alarm seen is cleared: the watchdog may raise one at any
	// moment, and it raises none while one is up.
	if d.alarm.Load() {
		if !d.sup.Flagged() {
			if err := m.observe(x, time.Duration(d.alarmAt.Load()), time.Duration(d.alarmDiff.Load())); err != nil {
				return err
			}
		}
		d.alarm.Store(false)
	}
	if now < d.nextCheck {
		return nil
	}
	for d.nextCheck <= now {
		d.nextCheck += d.sup.Config().Check
	}
	return m.observe(x, now, now-d.start-m.h())
}

// observe hands t_diff to the supervisor and acts on a change of its flag.
func (m *Model) observe(x *Executor, now, tdiff time.Duration) error {
	d := m.wait
	if d.sup.Flagged() && x.disrupted(now) {
		d.sup.Disrupted()
	}
	switch d.sup.Observe(now, tdiff) {
	case supervisor.OutOfSync:
		if x.disrupted(now) {
			d.sup.Disrupted()
		}
		x.notify(now, "out_of_sync", m.outOfSync(tdiff), !d.alarm.Load())
		m.flagRow(x, now, record.OutOfSync)
		if d.sup.Config().OnOutOfSync == supervisor.Stop {
			return fmt.Errorf("model %s out of sync: t_diff %v > theta_safe %v", m.name, tdiff.Round(time.Microsecond), d.sup.Config().ThetaSafe)
		}
	case supervisor.BackInSync:
		x.notify(now, "in_sync", fmt.Sprintf("%s: t_diff %v", m.name, tdiff.Round(time.Microsecond)), true)
		m.flagRow(x, now, record.InSync)
	}
	return nil
}

// flagRow writes the trace's row of a change of the supervisor's flag at
// at, the instant of its event (the watchdog's alarm, in real time, is
// earlier than the turn that takes it up).
func (m *Model) flagRow(x *Executor, at time.Duration, status emulator.Status) {
	if x.trace != nil {
		x.trace.Add(record.TraceRow{Sent: at, Recv: -1, Due: -1, Flow: m.traceIndex, Status: status})
	}
}

func (m *Model) outOfSync(tdiff time.Duration) string {
	return fmt.Sprintf("%s: t_diff %v > theta_safe %v", m.name, tdiff.Round(time.Microsecond), m.wait.sup.Config().ThetaSafe)
}

// watch is the watchdog of a real-time run: on a goroutine of its own it
// computes t_diff every check interval from the part's time, so that a
// step that takes long (a model too slow for its exchange) does not delay
// the alarm; it tells at once and leaves the flag to the executor's next
// turn. It returns when done is closed.
func (m *Model) watch(clock Clock, tell func(record.Event), done <-chan struct{}) {
	d := m.wait
	tick := time.NewTicker(d.sup.Config().Check)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if !d.startedNow.Load() {
			continue
		}
		now := clock.Now()
		tdiff := now - time.Duration(d.startNs.Load()) - time.Duration(d.hNow.Load())
		if tdiff > d.sup.Config().ThetaSafe && !d.sup.FlaggedNow() && !d.alarm.Load() {
			d.alarmAt.Store(int64(now))
			d.alarmDiff.Store(int64(tdiff))
			d.alarm.Store(true)
			if tell != nil {
				tell(record.Event{AtS: now.Seconds(), Kind: "out_of_sync", Detail: m.outOfSync(tdiff)})
			}
		}
	}
}

// deadline is when the model next needs the executor: its next exchange
// instant, its supervisor's next check, and for a part that steps on data,
// the end of the step it is computing, the instant the clock lets it step
// again, or, waiting for data, every event of the engine (each may deliver
// it a message) and the timeout.
func (m *Model) deadline(x *Executor, now time.Duration) time.Duration {
	next := min(x.end, m.next)
	d := m.wait
	if d == nil {
		return next
	}
	if d.sup != nil && d.started {
		next = min(next, d.nextCheck)
	}
	if !m.onData() {
		return next
	}
	switch {
	case d.computing > 0 || d.busyUntil > now:
		next = min(next, d.busyUntil)
	case d.blocked:
		if e, ok := x.net.NextEvent(); ok {
			next = min(next, e)
		}
		if m.stepping.Timeout > 0 {
			next = min(next, d.waitSince+m.stepping.Timeout)
		}
	default:
		next = min(next, d.start+d.h+m.exchange)
	}
	return next
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
	if w := m.sim.wire; w != nil {
		s.Wire = w.summary()
	}
	if late {
		s.StepLateness, s.Overruns = m.late.Summarize(), m.overruns
	}
	if d := m.wait; d != nil {
		s.Stepping = "hold"
		if m.onData() {
			s.Stepping = "wait"
			s.SimTimeS = d.h.Seconds()
			s.Timestamps = m.sim.timestamps(m.stepping.NominalDelay)
		}
		s.Messages = &record.MessageCounts{Generated: d.generated, Skipped: d.skipped, SkippedDisruption: d.skippedDisrupted, SafeSent: d.safeSent}
		s.GapSteps = d.gapSteps
		if d.sup != nil {
			s.Sync = syncSummary(d.sup, m.exchange)
		}
	}
	return s
}

func syncSummary(sup *supervisor.Supervisor, dh time.Duration) *record.SyncSummary {
	cfg := sup.Config()
	out := &record.SyncSummary{
		ThetaSafeS: cfg.ThetaSafe.Seconds(), CheckS: cfg.Check.Seconds(), Jump: cfg.Jump,
		OnOutOfSync: cfg.OnOutOfSync.String(), OutOfSync: sup.Flagged(), PeakTDiffS: sup.Peak().Seconds(),
	}
	for _, ep := range sup.Episodes() {
		es := record.EpisodeSummary{StartS: ep.Start.Seconds(), PeakTDiffS: ep.Peak.Seconds(), Steps: ep.Steps, Disrupted: ep.Disrupted}
		if ep.End >= 0 {
			end := ep.End.Seconds()
			es.EndS = &end
		}
		for k, n := range ep.StepSizes {
			if n > 0 {
				es.StepSizes = append(es.StepSizes, record.StepCount{StepS: (time.Duration(k+1) * dh).Seconds(), Count: n})
			}
		}
		out.Episodes = append(out.Episodes, es)
	}
	for k, n := range sup.ViolatingRuns() {
		if n > 0 {
			out.ViolatingRuns = append(out.ViolatingRuns, record.RunCount{Steps: k + 1, Count: n})
		}
	}
	return out
}

// progress is the model's line of the live snapshot.
func (m *Model) progress() record.ModelProgress {
	mp := record.ModelProgress{Endpoint: m.name, Exchanges: m.exchanges, Overruns: m.overruns, FramesOut: m.sim.framesOut, FramesIn: m.sim.framesIn}
	if ref := m.ref; ref.output >= 0 {
		mp.Output, mp.Value, mp.Ideal = ref.name, ref.cut.Signal(ref.output), ref.ideal.Signal(ref.output)
		mp.Peak, mp.MaxError = ref.peak, ref.maxErr
	}
	for i, name := range m.sends {
		if mp.NCut < record.MaxCut {
			mp.Cut[mp.NCut] = record.CutValue{Name: name, Value: m.sim.it.Out(i), ToHardware: true}
			mp.NCut++
		}
	}
	for i, name := range m.takes {
		if mp.NCut < record.MaxCut {
			mp.Cut[mp.NCut] = record.CutValue{Name: name, Value: m.sim.it.In(i)}
			mp.NCut++
		}
	}
	return mp
}

// reference runs the uncut model alongside a cut one, with the same
// solver and step, and measures how far the cut one's output of interest
// strays from it: the distortion the cut, the exchange and the network
// cause together.
type reference struct {
	ideal               *plant.Integrator
	substeps            int64
	output              int               // signal index, or -1
	cut                 *plant.Integrator // the integrator computing the output in the cut run
	name                string
	peak, maxErr, sumSq float64
	samples             uint64
	diverged            float64 // run time (s) the cut output stopped being finite; −1: it did not
	divergedIdeal       bool    // the uncut model has, and the run was told
}

// newReference compares the output as computed by sim, or by hw when the
// hardware part computes it (hw is nil when the hardware is real: then
// there is nothing to compare).
func newReference(bm *profiles.BenchModel, sim, hw *plant.Integrator) (*reference, error) {
	ideal, err := plant.NewIntegrator(bm.Whole(), bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	r := &reference{ideal: ideal, substeps: int64(bm.Exchange / bm.Step), output: -1, name: bm.Output, diverged: -1}
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
	if math.IsNaN(e) || math.IsInf(e, 0) {
		if r.diverged < 0 {
			r.diverged = r.ideal.Time().Seconds()
		}
		return
	}
	r.peak = max(r.peak, math.Abs(ref))
	r.maxErr = max(r.maxErr, math.Abs(e))
	r.sumSq += float64(e * e) // not fused: the same sum on every machine (emulator/detmath)
	r.samples++
}

func (r *reference) advance() {
	for range r.substeps {
		r.ideal.Advance()
	}
}

func (r *reference) summary() *record.OutputError {
	if r.output < 0 || r.samples == 0 {
		// Without a sample of finite numbers there is no error to say
		// (a peak and error of 0 would say there was none): a model that
		// diverged at once is told by its event and the run's stop.
		return nil
	}
	o := &record.OutputError{Signal: r.name, Peak: r.peak, MaxError: r.maxErr}
	if r.samples > 0 {
		o.RMSError = math.Sqrt(r.sumSq / float64(r.samples))
	}
	if r.diverged >= 0 {
		o.DivergedS = &r.diverged
	}
	if r.peak > 1e-6*r.maxErr {
		o.OfPeak = r.maxErr / r.peak
	}
	return o
}
