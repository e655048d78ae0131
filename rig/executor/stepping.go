package executor

import (
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/supervisor"
)

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

// SetStepping makes the model step on data and be supervised, as st says.
// Call it before the run starts.
func (m *Model) SetStepping(st Stepping) error {
	m.stepping = st
	if st.Replies && m.hw != nil {
		m.hw.replies = true
		m.hw.replySteps = m.hw.substeps * int64(max(m.spec.SendEvery, 1))
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

// onData reports whether the rig's part steps on data rather than at the
// exchange instants.
func (m *Model) onData() bool { return m.wait != nil && m.stepping.Wait }

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
