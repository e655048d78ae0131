package emulator

import (
	"math"
	"strconv"
	"time"
)

// Status is what happened to a frame.
type Status uint8

// Frame statuses. InFlight is the zero value: a frame that has not reached
// the end of its route (yet).
const (
	InFlight Status = iota
	Delivered
	QueueDrop
	OutageDrop
	LossDrop
	Corrupted     // delivered with flipped bits
	Duplicate     // a copy made by a hop, delivered
	CollisionDrop // dropped by a shared bus after its last attempt
	numStatus
)

var statusNames = [numStatus]string{
	InFlight:      "in_flight",
	Delivered:     "delivered",
	QueueDrop:     "queue_drop",
	OutageDrop:    "outage_drop",
	LossDrop:      "loss_drop",
	Corrupted:     "corrupted",
	Duplicate:     "duplicate",
	CollisionDrop: "collision_drop",
}

func (s Status) String() string {
	if s < numStatus {
		return statusNames[s]
	}
	return "status(" + strconv.Itoa(int(s)) + ")"
}

// Dropped reports whether the status is a drop reason.
func (s Status) Dropped() bool {
	return s == QueueDrop || s == OutageDrop || s == LossDrop || s == CollisionDrop
}

// Arrived reports whether the frame reached the end of its route.
func (s Status) Arrived() bool { return s == Delivered || s == Corrupted || s == Duplicate }

// Frame is the unit that crosses the emulated network. Its timestamps travel
// with it: Sent is when it entered the first hop, Done when it was delivered
// (when it is due at the far end of its flow's egress line, if the flow has
// a Lead: the Observer then gets it that much earlier) or dropped.
//
// Frames belong to the Network's pool: an Observer may read a frame only
// while Finished runs, and must copy what it wants to keep.
type Frame struct {
	Flow    int    // index of the flow in Config.Flows
	Seq     uint64 // per-flow sequence number, from 0
	Size    int    // bytes, without per-hop overhead
	Payload []byte // the real bytes, or nil for a synthetic frame
	Sent    time.Duration
	Done    time.Duration
	Status  Status
	Hop     int  // index of the hop it is in, or where it was dropped
	Copy    bool // made by a hop's duplication; Seq is the original's

	pos       int           // position in the flow's route
	corrupted bool          // some bit was flipped on the way
	due       time.Duration // when it is due out of its current hop
	id        uint32        // its number in its network's pool, for ever
}

// framePool recycles frames so the steady state allocates nothing. It
// numbers the frames it makes, so that an event names its frame without a
// pointer (see event).
type framePool struct {
	free []*Frame
	all  []*Frame // by number
}

func (p *framePool) get() *Frame {
	if n := len(p.free); n > 0 {
		f := p.free[n-1]
		p.free = p.free[:n-1]
		return f
	}
	if uint64(len(p.all)) > math.MaxUint32 {
		// As many frames at once would take 400 GB: memory runs out first.
		panic("emulator: more than 2^32 frames in flight")
	}
	f := &Frame{id: uint32(len(p.all))}
	p.all = append(p.all, f)
	return f
}

func (p *framePool) put(f *Frame) {
	payload := f.Payload[:0]
	*f = Frame{Payload: payload, id: f.id}
	p.free = append(p.free, f)
}

// fifo is a ring buffer of frames; it grows to the largest backlog seen and
// then stops allocating.
type fifo struct {
	buf        []*Frame
	head, n    int
	bytes      int64
	peakBytes  int64
	peakFrames int
}

func (q *fifo) len() int { return q.n }

func (q *fifo) push(f *Frame) {
	if q.n == len(q.buf) {
		q.grow()
	}
	q.buf[(q.head+q.n)%len(q.buf)] = f
	q.n++
	q.bytes += int64(f.Size)
	q.peakBytes = max(q.peakBytes, q.bytes)
	q.peakFrames = max(q.peakFrames, q.n)
}

func (q *fifo) pop() *Frame {
	f := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	q.bytes -= int64(f.Size)
	return f
}

func (q *fifo) grow() {
	buf := make([]*Frame, max(16, 2*len(q.buf)))
	for i := range q.n {
		buf[i] = q.buf[(q.head+i)%len(q.buf)]
	}
	q.buf, q.head = buf, 0
}
