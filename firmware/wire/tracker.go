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
	Restarted                // the sender started again: number 0, or far behind
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
// it received, to tell a duplicate from a late one. A number further back
// than that means the sender restarted without saying so.
const window = 64

// A Tracker follows the messages of one sender (one endpoint's incoming
// stream): it parses each frame, counts what was wrong with it, and
// classifies its number against the ones before. It allocates nothing.
type Tracker struct {
	stats   LinkStats
	started bool
	highest uint32 // the highest number received
	seen    uint64 // bit i: highest−i was received
	depth   uint32 // how many numbers up to highest the tracker has followed (at most window)
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

// Observe tracks a message already parsed, received at at. A time request
// or response is counted but not classified (InOrder): it is outside its
// sender's numbered stream (see Sender).
func (t *Tracker) Observe(h Header, at time.Duration) Arrival {
	t.stats.Messages++
	if !numbered(h.Type) {
		return InOrder
	}
	d := int32(h.Seq - t.highest)
	switch {
	case !t.started || h.Seq == 0 && t.highest != 0 || d <= -window:
		arrival := InOrder
		if t.started {
			t.stats.Restarts++
			arrival = Restarted
		}
		t.started, t.highest, t.seen, t.depth = true, h.Seq, 1, 1
		t.last, t.lastAt = h, at
		return arrival
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
		t.highest = h.Seq
		t.last, t.lastAt = h, at
		return arrival
	case d == 0:
		t.stats.Duplicates++
		return Duplicate
	}
	back := uint32(-d)
	bit := uint64(1) << back
	if t.seen&bit != 0 {
		t.stats.Duplicates++
		return Duplicate
	}
	t.seen |= bit
	t.stats.Late++
	if back < t.depth { // skipped after the tracker started: it was counted missed
		t.stats.Missed--
	}
	return Late
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
