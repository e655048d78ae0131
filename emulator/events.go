package emulator

import "time"

type eventKind uint8

const (
	evEmit       eventKind = iota // a flow's source emits its next frame
	evSerialiser                  // a hop's serialiser asked to be woken (a frame sent, a station to move on)
	evExit                        // a frame leaves a hop after propagation
	evApply                       // a schedule entry takes effect
	evRevert                      // a schedule entry's duration ends
	evStart                       // a flow's source reaches its start time
)

// Event classes order simultaneous events: schedule changes at t act on
// every frame event at t, whatever order they were queued in. Control
// events (the schedule's, a source's start) carry their rank among each
// other, given by the schedule as written (pushControl); frame events are
// ordered as they were queued.
const (
	classControl uint64 = 0
	classTraffic uint64 = 1 << 63
)

// An event has four fields, no more: the compiler keeps a struct of up to
// four in registers, and copies a larger one through memory, where storing
// it field by field and loading it back whole stalled each push (a third of
// a run's time with five fields, the kind a field of its own).
type event struct {
	at    time.Duration
	order uint64 // class bit, then insertion counter: unique, so ties are deterministic
	frame *Frame
	// ref is the kind in the low kindBits and, above them, the index of
	// the hop, flow or schedule entry it concerns (at most maxIndexed, which
	// New enforces: as many flows would take over 100 GB anyway).
	ref uint32
}

// kindBits are the bits of an event's ref that hold its kind.
const kindBits = 3

// maxIndexed is the most hops, flows or schedule entries a network takes:
// an event names one in the bits of ref above its kind.
const maxIndexed = 1<<(32-kindBits) - 1

func (e *event) kind() eventKind { return eventKind(e.ref & (1<<kindBits - 1)) }

func (e *event) index() int { return int(e.ref >> kindBits) }

func (a *event) before(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.order < b.order
}

// eventQueue is a binary min-heap of events by value; it never boxes events
// in interfaces, so pushing and popping allocate nothing once it has grown.
type eventQueue struct {
	items   []event
	counter uint64
}

func (q *eventQueue) len() int { return len(q.items) }

func (q *eventQueue) peek() *event { return &q.items[0] }

// push queues a frame event (class classTraffic) of the given kind at at,
// for the hop or flow index or the frame f, and returns its order, which
// tells it from every other event.
func (q *eventQueue) push(at time.Duration, kind eventKind, index int, f *Frame) uint64 {
	q.counter++
	order := classTraffic | q.counter
	q.insert(event{at: at, order: order, frame: f, ref: uint32(index)<<kindBits | uint32(kind)})
	return order
}

// pushControl queues a control event of the given kind at at, for the
// schedule entry or flow index, of the given rank (below 2^63, and unique
// among control events).
func (q *eventQueue) pushControl(at time.Duration, kind eventKind, index int, rank uint64) {
	q.insert(event{at: at, order: classControl | rank, ref: uint32(index)<<kindBits | uint32(kind)})
}

// insert and pop move a hole through the heap instead of swapping, so each
// level costs one copy of an event rather than three.
func (q *eventQueue) insert(e event) {
	q.items = append(q.items, e)
	i := len(q.items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !e.before(&q.items[parent]) {
			break
		}
		q.items[i] = q.items[parent]
		i = parent
	}
	q.items[i] = e
}

func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	e := q.items[last]
	q.items[last] = event{}
	q.items = q.items[:last]
	if last == 0 {
		return top
	}
	i := 0
	for {
		child := 2*i + 1
		if child >= last {
			break
		}
		if r := child + 1; r < last && q.items[r].before(&q.items[child]) {
			child = r
		}
		if !q.items[child].before(&e) {
			break
		}
		q.items[i] = q.items[child]
		i = child
	}
	q.items[i] = e
	return top
}
