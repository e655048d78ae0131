package wire

import "time"

// Arrival says how a message's number relates to those before it.
type Arrival uint8

// The arrivals.
const (
	InOrder   Arrival = iota // the next number (or the first message seen)
	AfterGap                 // numbers were skipped: frames missed
	Duplicate                // a number already received
	Late                     // a number skipped before, arriving after later ones
	Restarted                // the sender started again: number 0, far behind, or a number seen before with another time
)

var arrivalNames = [...]string{"in order", "after a gap", "duplicate", "late", "restarted"}

func (a Arrival) String() string {
	if int(a) >= len(arrivalNames) {
		return "unknown"
	}
	return arrivalNames[a]
}

// LinkStats count what a Tracker received from one sender.
type LinkStats struct {
	Messages   uint64 // well-formed messages, whatever their number
	CRCErrors  uint64 // frames whose CRC did not match
	Malformed  uint64 // other frames that are no message: too short, unknown version or type, payload unfit
	Gaps       uint64 // times numbers were skipped
	Missed     uint64 // numbers skipped and not received since: frames missed
	Duplicates uint64
	Late       uint64 // received out of order, after later numbers
	Restarts   uint64
}

// window is how far back (in numbers) a Tracker remembers which messages
// it received, and when each was sent, to tell a duplicate from a late
// one and both from a restart. A number further back than that means the
// sender restarted without saying so.
const window = 64

// A Tracker follows the messages of one sender (one endpoint's incoming
// stream): it parses each frame, counts what was wrong with it, and
// classifies its number against the ones before. It allocates nothing.
//
// A sender restarted when its number is 0 (after a higher one), more
// than window numbers behind, or one already received but stamped with
// another time: a duplicate is a copy of the message, with its time, so
// a number seen before with a new time is a new message from a sender
// that started again (and whose message 0 was lost, or was itself 0). A
// sender restarted with its message 0 lost, and stamping each number
// with the very time it did before (a virtual clock replayed from the
// same start), looks like duplicates until it passes its old numbers.
type Tracker struct {
	stats   LinkStats
	started bool
	highest uint32 // the highest number received
	seen    uint64 // bit i: the number i before highest was received
	depth   uint32 // how many numbers up to highest the tracker has followed (at most window)
	head    uint32 // times[head] is highest's
	times   [window]time.Duration
	last    Header
	lastAt  time.Duration
}

// Receive parses a frame's payload and tracks it. The message is valid
// when err is nil, whatever the arrival; a Duplicate or Late one is stale,
// and a controller would drop it.
func (t *Tracker) Receive(body []byte, at time.Duration) (Message, Arrival, error) {
	m, err := Parse(body)
	switch err {
	case nil:
	case ErrCRC:
		t.stats.CRCErrors++
		return m, InOrder, err
	default:
		t.stats.Malformed++
		return m, InOrder, err
	}
	return m, t.Observe(m.Header, at), nil
}

// distance is how many numbers seq is after highest (negative: before),
// counted as a sender numbers: 0 is skipped when the numbers wrap
// (0xFFFFFFFF is followed by 1).
func distance(highest, seq uint32) int32 {
	d := int32(seq - highest)
	switch {
	case d > 0 && seq < highest: // forwards across the wrap
		d--
	case d < 0 && seq > highest: // backwards across the wrap
		d++
	}
	return d
}

// Observe tracks a message already parsed, received at at. A time request
// or response is counted but not classified (InOrder): it is outside its
// sender's numbered stream (see Sender).
func (t *Tracker) Observe(h Header, at time.Duration) Arrival {
	t.stats.Messages++
	if !numbered(h.Type) {
		return InOrder
	}
	// A sender numbers from 0 when it starts, so a 0 is a restart, unless
	// it is the 0 this stream began with (followed, so still in the
	// window): a copy of it or its late arrival, told apart below.
	if !t.started || h.Seq == 0 && t.highest != 0 && (t.highest >= window || t.highest >= t.depth) {
		return t.restart(h, at)
	}
	d := distance(t.highest, h.Seq)
	switch {
	case d <= -window:
		return t.restart(h, at)
	case d > 0:
		arrival := InOrder
		if d > 1 {
			t.stats.Gaps++
			t.stats.Missed += uint64(d - 1)
			arrival = AfterGap
		}
		if d >= window {
			t.seen = 1
		} else {
			t.seen = t.seen<<uint(d) | 1
		}
		t.depth = min(window, t.depth+uint32(d))
		t.head = (t.head + uint32(d)) % window
		t.times[t.head] = h.Time
		t.highest = h.Seq
		t.last, t.lastAt = h, at
		return arrival
	}
	back := uint32(-d)
	slot := (t.head + window - back) % window
	bit := uint64(1) << back
	if t.seen&bit != 0 {
		if t.times[slot] != h.Time {
			return t.restart(h, at) // not a copy: a new message of that number
		}
		t.stats.Duplicates++
		return Duplicate
	}
	t.seen |= bit
	t.times[slot] = h.Time
	t.stats.Late++
	if back < t.depth { // skipped after the tracker started: it was counted missed
		t.stats.Missed--
	}
	return Late
}

// restart starts following the sender afresh at h: Restarted, or InOrder
// for the first message.
func (t *Tracker) restart(h Header, at time.Duration) Arrival {
	arrival := InOrder
	if t.started {
		t.stats.Restarts++
		arrival = Restarted
	}
	t.started, t.highest, t.seen, t.depth, t.head = true, h.Seq, 1, 1, 0
	t.times[0] = h.Time
	t.last, t.lastAt = h, at
	return arrival
}

// Stats are the counts so far.
func (t *Tracker) Stats() LinkStats { return t.stats }

// Last is the header of the newest message (the highest number) and when
// it arrived; ok is false before the first. The rig's one-way delay from
// a device is at less the sender's time mapped to the rig's clock (see
// ClockEstimator.OneWayDelay).
func (t *Tracker) Last() (h Header, at time.Duration, ok bool) {
	return t.last, t.lastAt, t.started
}
