package executor

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/record"
)

// TimeSyncEvery is how often the rig asks a wire endpoint's device for its
// time; PeerSyncEvery how often it asks a peer it watches (another rig,
// WatchPeer), whose offset two sites' traces are joined by: ten times as
// many exchanges fill the estimator's window in 3.2 s rather than 32, for
// 52 bytes each way every 100 ms beside 500 messages a second.
const (
	TimeSyncEvery = time.Second
	PeerSyncEvery = 100 * time.Millisecond
)

// A WireLink follows an endpoint whose frames are rig wire protocol
// messages (codec wire), on the executor's thread: it parses every frame
// the endpoint sends as it enters the rig (the frame is forwarded as it
// is all the same: the rig emulates a network, and the far end checks
// what arrives), counts what was wrong with it, and turns the changes of
// the device's heartbeat into events. Once a second it sends the device a
// time request directly (not through the emulated network) and keeps the
// answer, so that it knows the device's clock and can measure the one-way
// delay of every message from the stamp the device put on it. When the
// endpoint is another rig (two sites) it also answers that rig's time
// requests (AnswerTimeRequests) and watches that it is still there
// (WatchPeer). Nothing it does per frame allocates.
type WireLink struct {
	name      string
	requests  drivers.Writer // where time requests go, or nil
	syncEvery time.Duration
	trace     int32 // its event rows in the trace

	tracker        wire.Tracker
	clock          wire.ClockEstimator
	nextRequest    time.Duration
	asks           [4]time.Duration // the last requests' times
	askedSince     int              // requests sent since the start or the device's restart
	exchangesAsked uint64           // requests sent
	exchanges      uint64
	body           []byte

	heard      bool
	status     wire.Status
	commanded  bool // a plant node's safe flag has been down since the start
	heartbeats uint64

	delay     emulator.DelayHistogram
	lastDelay time.Duration

	// answers: the endpoint is another rig (its frames go to a model,
	// which cannot answer), and the link answers its time requests
	// itself, at once, on the executor's clock.
	answers  bool
	answered uint64

	// The peer's watch (WatchPeer): lost after silence for longer than
	// peerTimeout (0: not watched), which stops the run when stopOnLoss.
	peerTimeout time.Duration
	stopOnLoss  bool
	heardAny    bool
	lastHeard   time.Duration
	lost        bool
	losses      uint64
}

// WatchPeer watches the endpoint's peer, once it has been heard: silent
// for longer than timeout, it is lost, an event peer_lost at the instant
// the timeout ran out (and, when stop, a failure that ends the run, its
// files complete to the instant); heard again, it is back (peer_back).
// It asks the peer's time every PeerSyncEvery, and keeps the exchanges
// within PeerSyncExcess of the quickest.
func (l *WireLink) WatchPeer(timeout time.Duration, stop bool) {
	l.peerTimeout, l.stopOnLoss, l.syncEvery = timeout, stop, PeerSyncEvery
	l.clock.MaxExcessDelay = PeerSyncExcess
}

// PeerSyncExcess is TimeSyncExcess for a peer rig: both ends stamp a time
// message as their reader takes it in and answer it at once, at
// real-time priority, so that an exchange 200 µs slower than the
// quickest in the window waited in a queue on one side, and would bias
// the offset by up to half that. Over a link whose round trip varies by
// more (the Internet), fewer exchanges are kept: the quickest, as NTP's
// clock filter keeps.
const PeerSyncExcess = 200 * time.Microsecond

// watch loses the peer if it has been silent past its timeout by now, and
// returns when it will be if nothing arrives meanwhile.
func (l *WireLink) watch(x *Executor, now time.Duration) time.Duration {
	if l.peerTimeout <= 0 || !l.heardAny || l.lost {
		return math.MaxInt64
	}
	due := l.lastHeard + l.peerTimeout
	if now < due {
		return due
	}
	l.lost = true
	l.losses++
	then := "the run goes on, the model taking the last values received (on_peer_lost: continue)"
	if l.stopOnLoss {
		then = "the run stops (on_peer_lost: stop)"
	}
	l.event(x, due, record.PeerLost, "peer_lost", fmt.Sprintf("the peer is lost: nothing from it for %v since its last message at %.6f s; %s", l.peerTimeout, l.lastHeard.Seconds(), then))
	if l.stopOnLoss && x.failure == nil {
		x.failure = fmt.Errorf("%s: the peer was lost at %.6f s: nothing from it for %v", l.name, due.Seconds(), l.peerTimeout)
	}
	return math.MaxInt64
}

// heardFrom notes a message from the peer, which is back if it was lost.
func (l *WireLink) heardFrom(x *Executor, at time.Duration) {
	l.heardAny = true
	l.lastHeard = max(l.lastHeard, at)
	if l.lost {
		l.lost = false
		l.event(x, at, record.PeerBack, "peer_back", "the peer is back: a message from it again")
	}
}

// AnswerTimeRequests makes the link answer the time requests that arrive
// from its endpoint, rather than forward them: the endpoint is another
// rig, the peer of a loop between two sites, whose requests would
// otherwise reach a model that does not answer, and which syncs with this
// rig's clock through the answers. An answer is written directly to the
// endpoint, not through the emulated network, as the rig's own requests
// are, so that both directions of an exchange cross only the real link.
func (l *WireLink) AnswerTimeRequests() { l.answers = true }

// NewWireLink follows the wire endpoint name. Its time requests are
// written to requests (the endpoint's device, or the player of the
// endpoint); nil sends none, and then no one-way delay is measured.
func NewWireLink(name string, requests drivers.Writer) *WireLink {
	l := &WireLink{name: name, requests: requests, syncEvery: TimeSyncEvery, body: make([]byte, 0, wire.Overhead)}
	l.clock.MaxExcessDelay = TimeSyncExcess
	return l
}

// TimeSyncExcess is how much longer than the quickest in the window a
// time exchange may take and still count: one that took longer waited
// somewhere (a busy reader, a preempted device), which biases its offset
// by half the wait.
const TimeSyncExcess = time.Millisecond

// Name is the endpoint's.
func (l *WireLink) Name() string { return l.name }

// take follows a frame the endpoint sent, which arrived at at. It reports
// whether the frame was the answer to the rig's own time request, which
// is not forwarded.
func (l *WireLink) take(x *Executor, payload []byte, at time.Duration) (consumed bool) {
	m, arrival, err := l.tracker.Receive(payload, at)
	if err != nil {
		return false // counted; the far end will see it as it is
	}
	if arrival == wire.Restarted {
		l.restarted(x, at)
	}
	l.heardFrom(x, at)
	if m.Type == wire.TimeRequest && l.answers && l.requests != nil {
		l.answer(x, m.Time, at)
		return true
	}
	if m.Type == wire.TimeResponse && l.asked(m.TimeReply().Requested) {
		if l.clock.Add(m.TimeSample(at)) {
			l.exchanges++
		}
		return true
	}
	if l.clock.Ready() {
		l.lastDelay = l.clock.OneWayDelay(m.Time, at)
		l.delay.Record(l.lastDelay)
	}
	if m.Type == wire.Heartbeat {
		l.heartbeats++
		l.heartbeat(x, m.Status(), at)
	}
	return false
}

// restarted starts afresh with a device whose numbering started again:
// its clock started again too, so the estimate of it and the requests
// asked before (which the old run may still answer) are forgotten, and
// one is asked at once; until it answers no one-way delay is measured
// and its stamps map to nothing (toRig), rather than through the old
// clock. Its status starts afresh too: a plant node starts safe, and its
// first command is no recovery.
func (l *WireLink) restarted(x *Executor, at time.Duration) {
	l.clock.Reset()
	l.asks = [len(l.asks)]time.Duration{}
	l.askedSince = 0
	l.nextRequest = 0 // sync sends one at once
	l.heard, l.commanded = false, false
	l.event(x, at, record.DeviceRestarted, "device_restarted", "its numbering started again: the device restarted")
}

// asked reports whether the rig sent a time request at t1 (on its clock)
// lately: an answer echoing it is the rig's, where the device's answer to
// its peer's request, relayed by the rig, echoes the peer's clock.
func (l *WireLink) asked(t1 time.Duration) bool {
	for _, t := range l.asks[:min(l.askedSince, len(l.asks))] {
		if t == t1 {
			return true
		}
	}
	return false
}

// sync sends a time request if one is due by now, and returns when the
// next one is. In real time the request is stamped as it is written, not
// with the turn's now: the exchanges run before it, and a stamp that much
// early would bias the offset by half as much.
func (l *WireLink) sync(x *Executor, now time.Duration) time.Duration {
	if l.requests == nil {
		return math.MaxInt64
	}
	if now >= l.nextRequest {
		l.nextRequest = now + l.syncEvery
		t1 := now
		if x.real {
			t1 = max(now, x.clock.Now())
		}
		l.asks[l.askedSince%len(l.asks)] = t1
		l.askedSince++
		l.exchangesAsked++
		var s wire.Sender // the rig's requests are outside any numbered stream
		l.body = s.TimeRequest(l.body[:0], t1)
		if tw, ok := l.requests.(TimedWriter); ok {
			tw.WriteAt(l.body, t1)
		} else {
			l.requests.Write(l.body) // a device that is away misses this one
		}
	}
	return l.nextRequest
}

// answer answers a time request sent at t1 (the peer's clock) that
// arrived at at: T2 is its arrival, T3 now.
func (l *WireLink) answer(x *Executor, t1, at time.Duration) {
	now := max(x.clock.Now(), at)
	var s wire.Sender // outside any numbered stream, as the rig's requests are
	l.body = s.TimeResponse(l.body[:0], now, wire.TimeReply{Requested: t1, Received: at})
	l.answered++
	if tw, ok := l.requests.(TimedWriter); ok {
		tw.WriteAt(l.body, now)
	} else {
		l.requests.Write(l.body) // a peer that is away misses this one
	}
}

// heartbeat records the changes of the device's status as events and
// trace rows. A plant node starts safe, before its first command: that is
// no watchdog trip, nor is the first command clearing it.
func (l *WireLink) heartbeat(x *Executor, st wire.Status, at time.Duration) {
	was := l.status
	if !l.heard {
		l.heard, l.status = true, st
		was = st &^ wire.StatusFault // a fault at the first heartbeat is news; safe is the start
	}
	l.status = st
	if changed := was ^ st; changed&wire.StatusFault != 0 {
		if st&wire.StatusFault != 0 {
			l.event(x, at, record.FaultRaised, "fault_raised", "its controller raised its fault flag: no measurement reached it within its timeout (at start-up: none yet), and it holds its last command")
		} else {
			l.event(x, at, record.FaultCleared, "fault_cleared", "its controller cleared its fault flag: measurements again")
		}
	}
	if changed := was ^ st; changed&wire.StatusSafe != 0 {
		switch {
		case st&wire.StatusSafe == 0 && !l.commanded:
			l.commanded = true // the first command, not a recovery
		case st&wire.StatusSafe != 0:
			l.event(x, at, record.WatchdogTripped, "watchdog_tripped", "its plant node's watchdog drove the outputs to their safe levels: commands stopped")
		default:
			l.event(x, at, record.WatchdogCleared, "watchdog_cleared", "its plant node is commanded again")
		}
	}
}

func (l *WireLink) event(x *Executor, at time.Duration, row emulator.Status, kind, what string) {
	x.notify(at, kind, l.name+": "+what, true)
	if x.trace != nil {
		x.trace.Add(record.TraceRow{Sent: at, Recv: -1, Due: -1, Flow: l.trace, Status: row})
	}
}

// toRig maps a time the device stamped to the rig's clock, once its clock
// is known.
func (l *WireLink) toRig(sent time.Duration) (time.Duration, bool) {
	if !l.clock.Ready() {
		return 0, false
	}
	return l.clock.ToLocal(sent), true
}

// Summary is the link's account so far, at the rig's time now.
func (l *WireLink) Summary(now time.Duration) *record.WireSummary {
	s := wireSummary(l.tracker.Stats(), &l.delay)
	s.TimeExchanges, s.Heartbeats = l.exchanges, l.heartbeats
	s.TimeRequestsAnswered, s.PeerLost = l.answered, l.losses
	if l.clock.Ready() {
		offset, drift := l.clock.Offset(now).Seconds(), l.clock.Drift()
		s.ClockOffsetS, s.ClockDrift = &offset, &drift
	}
	if l.heard {
		s.Status = statusWords(l.status)
	}
	return s
}

// progress is the link's line of the live snapshot.
func (l *WireLink) progress() record.WireProgress {
	st := l.tracker.Stats()
	return record.WireProgress{
		Name: l.name, Messages: st.Messages, CRCErrors: st.CRCErrors, Malformed: st.Malformed,
		Missed: st.Missed, Duplicates: st.Duplicates, Late: st.Late, Restarts: st.Restarts,
		Heard: l.heard, Fault: l.status&wire.StatusFault != 0, Safe: l.status&wire.StatusSafe != 0,
		ClockKnown: l.clock.Ready(), OneWay: l.lastDelay,
	}
}

func wireSummary(st wire.LinkStats, delay *emulator.DelayHistogram) *record.WireSummary {
	return &record.WireSummary{
		Messages: st.Messages, CRCErrors: st.CRCErrors, Malformed: st.Malformed, Gaps: st.Gaps, Missed: st.Missed,
		Duplicates: st.Duplicates, Late: st.Late, Restarts: st.Restarts, OneWayDelay: delay.Summarize(),
	}
}

// statusWords is a heartbeat's status for the summary.
func statusWords(st wire.Status) string {
	var words []string
	if st&wire.StatusFault != 0 {
		words = append(words, "fault")
	}
	if st&wire.StatusSafe != 0 {
		words = append(words, "safe")
	}
	if rest := st &^ (wire.StatusFault | wire.StatusSafe); rest != 0 {
		words = append(words, fmt.Sprintf("0x%04x", uint16(rest)))
	}
	if len(words) == 0 {
		return "ok"
	}
	return strings.Join(words, ", ")
}

// partWire is a model part's side of the wire protocol: its own copies of
// the bench's codecs (the one it sends with numbers its messages, the one
// it receives with tracks the sender's), and how the times its messages
// were stamped with map to the rig's clock.
type partWire struct {
	send, recv *wire.Protocol
	// peer follows the device the part receives from; sameClock says the
	// sender is the stand-in, on the executor's clock. With neither, the
	// sender's clock is unknown.
	peer      *WireLink
	sameClock bool

	delay               emulator.DelayHistogram
	bySender, byIngress uint64 // messages stamped with each (stepping on data)
}

// newPartWire gives p its own copies of its codecs when they are the wire
// protocol (nil otherwise): a Protocol holds one side's numbering or
// tracking, and the bench's are shared by the parts it makes.
func newPartWire(p *Part) *partWire {
	send, ok1 := p.send.(*wire.Protocol)
	recv, ok2 := p.receive.(*wire.Protocol)
	if !ok1 || !ok2 {
		return nil
	}
	w := &partWire{send: &wire.Protocol{Layout: send.Layout, Sends: send.Sends}, recv: &wire.Protocol{Layout: recv.Layout, Sends: recv.Sends}}
	p.send, p.receive = w.send, w.recv
	return w
}

// receive takes in a message that arrived at at, and measures its one-way
// delay when its sender's clock is known.
func (w *partWire) receive(payload []byte, at time.Duration, values []float64) error {
	err := w.recv.Receive(payload, at, values)
	if err == nil || err == wire.ErrNoValues {
		if t, ok := w.senderTime(); ok {
			w.delay.Record(at - t)
		}
	}
	return err
}

// senderTime is when the last message taken was sent, on the rig's clock,
// if that can be known.
func (w *partWire) senderTime() (time.Duration, bool) {
	h := w.recv.Last()
	switch {
	case w.peer != nil:
		return w.peer.toRig(h.Time)
	case w.sameClock:
		return h.Time, true
	}
	return 0, false
}

func (w *partWire) summary() *record.WireSummary {
	return wireSummary(w.recv.Tracker.Stats(), &w.delay)
}

// timestamps says what the part's messages were stamped with, for the
// summary (stepping on data).
func (p *Part) timestamps(nominal time.Duration) string {
	ingress := "ingress"
	if nominal > 0 {
		ingress = fmt.Sprintf("ingress less a nominal delay of %v", nominal)
	}
	switch w := p.wire; {
	case w == nil || w.bySender == 0:
		return ingress
	case w.byIngress == 0:
		return "sender"
	default:
		return fmt.Sprintf("sender (%d messages), after %d stamped %s while the device's clock was not known", w.bySender, w.byIngress, ingress)
	}
}
