package emulator

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

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
// a run's time with five fields, the kind a field of its own). It holds no
// pointer, its frame being named by number: its 24 bytes move without a
// write barrier's check (an inserted event moves others), and the garbage
// collector has nothing to scan in the queues.
type event struct {
	at    time.Duration
	order uint64 // class bit, then insertion counter: unique, so ties are deterministic
	// ref is the kind in the low kindBits and, above them, the index of
	// the hop, flow or schedule entry it concerns (at most maxIndexed, which
	// New enforces: as many flows would take over 100 GB anyway).
	ref uint32
	// frame is an exit's frame, by its number in the network's pool
	// (framePool.all).
	frame uint32
}

// kindBits are the bits of an event's ref that hold its kind.
const kindBits = 3

// maxIndexed is the most hops, flows or schedule entries a network takes:
// an event names one in the bits of ref above its kind.
const maxIndexed = 1<<(32-kindBits) - 1

func (e *event) kind() eventKind { return eventKind(e.ref & (1<<kindBits - 1)) }

func (e *event) index() int { return int(e.ref >> kindBits) }

// earlier is the order of events, of either queue: by time, then by
// order, which is unique. It compares the two as one 128-bit number, time
// above order, without a branch: at < thanAt, or equal with the borrow of
// order - thanOrder. thanAt+1 overflows only at math.MaxInt64, which no
// time reaches (nothing saturates at it; MaxDuration is a third of it).
// Written at-borrow < thanAt, bottleneck.yaml's run took 1.5 M more
// instructions: the borrow overwrote the register of the event being
// inserted, reloaded at every step.
func earlier(at time.Duration, order uint64, thanAt time.Duration, thanOrder uint64) bool {
	_, borrow := bits.Sub64(order, thanOrder, 0)
	return at < thanAt+time.Duration(borrow)
}

func (a *event) before(b *event) bool { return earlier(a.at, a.order, b.at, b.order) }

// eventQueue is the run's pending events, earliest first. Most are in
// items, by value (never boxed in interfaces, so pushing and popping
// allocate nothing once it has grown): while they are few, as in most
// runs, a sorted run of events, and past sortedMost a binary min-heap (see
// sortedMost). The sources' next frames are in a radix queue of their
// own when there are many: a run has one pending per flow, tens of
// thousands with as many flows, where the heap's pop, sifting through 14
// levels of events scattered past the caches, took a third of the run
// (issue 21), while the frames in flight, which items keep, are as
// many as the traffic makes whatever the number of flows. All hold events
// with unique orders, so taking the earlier of their two heads pops every
// event in the same order as one heap would.
type eventQueue struct {
	// items[0] is the earliest event of the two forms alike. Sorted, items
	// is a window of run, with room on both sides to insert from whichever
	// end is nearer; a heap, it starts at index 0 of its array.
	items []event
	run   []event // the sorted run's whole array, of sortedRoom events or more; nil while a heap
	// heap is set while items is a heap: from more than sortedMost events,
	// or from when insertions into the sorted run moved too many events
	// (credit), until they are down to sortedAgain.
	heap bool
	// credit is how many events insertions into the sorted run may still
	// move beyond movesPerInsert each before it turns into a heap; it is
	// creditMost again whenever the run is recentred, after at least half
	// as many insertions as it holds. It is negative while items is a heap
	// too, so that one test sends an insertion to the heap.
	credit  int
	sources radixQueue
	counter uint64
	// sourcesApart sends the sources' events to the radix queue: for a
	// network of manySources or more (New), where they are most of the
	// events. With fewer, they are a few of items' entries, which the
	// frames in flight make deep anyway, and looking at a second queue's
	// head at every pop cost 3 % of a run of 10 flows.
	sourcesApart bool
}

// manySources is how many flows with a source a network has before their
// events are kept apart from items (see eventQueue.sourcesApart).
const manySources = 1000

// The sorted run's bounds. A sorted run pops its earliest event with no
// compare at all, where a heap's pop, through compares whose outcome no
// branch predictor can guess, cost 14 ns an event and a third of a
// dumbbell run's time (issue 21); a frame event is inserted from the
// nearer end (from the back, into a run of fromTheBackOnly or fewer), and
// most land near one (a serialiser's wake-up soon, a frame's exit after a
// hop's delay, behind the others). Insertion moves events one by
// one, so where events land in the middle the heap's logarithm wins: the
// run turns into a heap when its insertions have moved more than
// movesPerInsert events each, by creditMost in all between two
// recentrings (so that they move at most 2·movesPerInsert on average,
// whatever the schedule), or when it holds sortedMost; the heap turns
// sorted again at sortedAgain, low enough that sorting it costs less than
// the events pushed and popped since it turned. Sorted rather than a
// heap, the few hundred frames in flight of issue 21's many flows (100 000
// frames a second through two hops of 1 ms) took 43 % less of the run.
const (
	sortedMost  = 1024
	sortedAgain = 16
	sortedRoom  = 256 // the sorted run's array at first, four times the run's length after
	// fromTheBackOnly is the longest run into which an event is inserted
	// from the back wherever it lands: finding the nearer end and the room
	// before the run costs some 35 instructions, four events moved.
	fromTheBackOnly = 16
	movesPerInsert  = 32
	creditMost      = 64 * movesPerInsert
)

func (q *eventQueue) len() int { return len(q.items) + q.sources.n }

// nextAt returns the time of the earliest event, if any is queued.
func (q *eventQueue) nextAt() (time.Duration, bool) {
	s := q.sources.peek()
	if len(q.items) > 0 && (s == nil || q.items[0].before(s)) {
		return q.items[0].at, true
	}
	if s == nil {
		return 0, false
	}
	return s.at, true
}

// push queues a frame event (class classTraffic) of the given kind at at,
// for the hop or flow index or, an exit, the frame numbered frame, and
// returns its order, which tells it from every other event. It is small
// enough to be inlined, so that a frame event costs one call, insert's.
func (q *eventQueue) push(at time.Duration, kind eventKind, index int, frame uint32) uint64 {
	q.counter++
	order := classTraffic | q.counter
	q.insert(at, order, kind, index, frame)
	return order
}

// pushControl queues a control event of the given kind at at, for the
// schedule entry or flow index, of the given rank (below 2^63, and unique
// among control events).
func (q *eventQueue) pushControl(at time.Duration, kind eventKind, index int, rank uint64) {
	q.insertControl(event{at: at, order: classControl | rank, ref: uint32(index)<<kindBits | uint32(kind)})
}

// pop removes and returns the earliest event; there must be one.
func (q *eventQueue) pop() event {
	e, _ := q.popEither(math.MaxInt64)
	return e
}

// popEither removes and returns the earliest event, of items or of the
// sources' queue, if there is one at or before t: it chooses once, where
// a peek and a pop would choose twice for every event of a run. A run's
// loop calls it only when the sources are apart, and pops items directly
// otherwise.
func (q *eventQueue) popEither(t time.Duration) (event, bool) {
	var s *event
	if q.sources.n > 0 {
		s = q.sources.peek()
	}
	if len(q.items) > 0 && (s == nil || q.items[0].before(s)) {
		if q.items[0].at > t {
			return event{}, false
		}
		return q.popItem(), true
	}
	if s == nil || s.at > t {
		return event{}, false
	}
	return q.sources.pop(), true
}

// frames calls put with the number of the frame of every queued exit.
func (q *eventQueue) frames(put func(frame uint32)) {
	for _, e := range q.items {
		if e.kind() == evExit {
			put(e.frame)
		}
	}
}

// clear drops every queued event, keeping the memory.
func (q *eventQueue) clear() {
	if q.heap {
		q.run, q.heap = q.items[:cap(q.items)], false
	}
	q.items, q.credit = q.run[len(q.run)/2:len(q.run)/2], creditMost
	q.sources.clear()
}

// insert queues a frame event e, newer than every event queued, pushed
// at at with order: a source's next frame in the sources' queue when they
// are apart, any other in items, in whichever form they are. Into a sorted
// run, it moves the events between e's place and the nearer end of the
// run one place out, and charges the run's credit with those past
// movesPerInsert. Which end is nearer is a guess from e's time alone, the
// cheapest: either way is correct. The loops work on a local copy of the
// slice, which the compiler keeps in registers, where q.items would be
// loaded again after every event moved.
//
// What most insertions do, into a sorted run with room at the end e is
// inserted from, is this function's straight path, with one test to leave
// it (the credit, negative for a heap too) and one for room at either
// end; the rest (a heap, recentring, turning into a heap) is insertSlow,
// out of the way of the registers. As e is the newest event, it goes
// after every event at its time, so the loops compare times alone, and
// a run of 16 events or fewer is entered from the back alone, where
// finding the nearer end and the room before the run costs as much as
// moving four events. bottleneck.yaml's 390 000 insertions, among 5
// events or so, took 139 instructions each with push and the queue's
// tests a call of their own, e spilled to the stack and a comparison of
// time and order at each step; 97 now.
func (q *eventQueue) insert(at time.Duration, order uint64, kind eventKind, index int, frame uint32) {
	e := event{at: at, order: order, ref: uint32(index)<<kindBits | uint32(kind), frame: frame}
	if kind == evEmit && q.sourcesApart && q.sources.admits(at) {
		q.sources.push(e)
		return
	}
	items := q.items
	n := len(items)
	if q.heapNext() || n == cap(items) {
		q.insertSlow(e)
		return
	}
	moved := 0
	if n > fromTheBackOnly && at < items[uint(n)/2].at {
		lo := cap(q.run) - cap(items) // the run's first event, in q.run
		if lo == 0 {
			q.insertSlow(e)
			return
		}
		items = q.run[lo-1 : lo+n]
		for moved < n && items[moved+1].at <= at {
			items[moved] = items[moved+1]
			moved++
		}
		items[moved] = e
		q.items = items
	} else {
		items = items[:n+1]
		i := n
		for i > 0 && at < items[i-1].at {
			items[i] = items[i-1]
			i--
		}
		items[i], moved = e, n-i
		// Only the length changes, which the compiler sees when the
		// slice is resliced in place: it stores no pointer, with no
		// write barrier's test.
		q.items = q.items[:n+1]
	}
	q.charge(moved)
}

// heapNext reports whether an insertion goes into the heap: items is
// one, or turns into one (see sortedMost).
func (q *eventQueue) heapNext() bool { return q.credit < 0 || len(q.items) == sortedMost }

// charge charges the sorted run's credit with an insertion's moves past
// movesPerInsert.
func (q *eventQueue) charge(moved int) {
	if moved > movesPerInsert {
		q.credit -= moved - movesPerInsert
	}
}

// insertSlow is insert where the sorted run is a heap or turns into one,
// or has no room at an end: the run is recentred, and e inserted again.
func (q *eventQueue) insertSlow(e event) {
	if q.heapNext() {
		q.insertHeap(e)
		return
	}
	q.recentre()
	q.insert(e.at, e.order, e.kind(), e.index(), e.frame)
}

// insertControl queues a control event. It goes before the frame events
// at its time and among the control events there by its rank, which
// insert's loops, comparing times alone, cannot place: it takes the way
// of the general case, rare enough (a schedule's entries, the sources'
// starts) not to need a fast one, a binary search of the sorted run and
// a copy of the events after e's place.
func (q *eventQueue) insertControl(e event) {
	if q.heapNext() {
		q.insertHeap(e)
		return
	}
	if len(q.items) == cap(q.items) {
		q.recentre()
	}
	n := len(q.items)
	i, _ := slices.BinarySearchFunc(q.items, e, byTime)
	items := q.items[:n+1]
	copy(items[i+1:], items[i:n])
	items[i] = e
	q.items = items
	q.charge(n - i)
}

// byTime orders events as earlier does, for the slices package: never
// equal, as orders are unique.
func byTime(a, b event) int {
	if a.before(&b) {
		return -1
	}
	return 1
}

// popItem removes and returns items' earliest event; there must be one.
func (q *eventQueue) popItem() event {
	if q.heap {
		return q.popHeap()
	}
	top := q.items[0]
	q.items = q.items[1:]
	return top
}

// recentre moves the sorted run to the middle of its array, which it
// makes at the first insertion: the run drifts as events are popped from
// its start and inserted at either end.
func (q *eventQueue) recentre() {
	n := len(q.items)
	if len(q.run) < max(sortedRoom, 2*n) {
		q.run = make([]event, max(sortedRoom, 4*n))
	}
	lo := (len(q.run) - n) / 2
	copy(q.run[lo:lo+n], q.items) // copy moves overlapping events right
	q.items, q.credit = q.run[lo:lo+n], creditMost
}

// toHeap turns the sorted run into a heap, which it already is, once it
// starts at its array's start. The heap owns the array from then on.
func (q *eventQueue) toHeap() {
	n := copy(q.run, q.items)
	q.items, q.run, q.heap, q.credit = q.run[:n], nil, true, -1
}

// toSorted turns the heap, of sortedAgain events, into a sorted run.
func (q *eventQueue) toSorted() {
	slices.SortFunc(q.items, byTime)
	q.run, q.heap = q.items[:cap(q.items)], false
	q.recentre()
}

// insertHeap and popHeap move a hole through the heap instead of swapping,
// so each level costs one copy of an event rather than three. The first
// event past sortedMost turns the sorted run into the heap.
func (q *eventQueue) insertHeap(e event) {
	if !q.heap {
		q.toHeap()
	}
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

func (q *eventQueue) popHeap() event {
	top := q.items[0]
	last := len(q.items) - 1
	e := q.items[last]
	q.items = q.items[:last]
	if last == sortedAgain {
		q.items[0] = e
		q.toSorted()
		return top
	}
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

// radixQueue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) of
// events that are never earlier than the last one it popped, as a source's
// next frame, queued at or after the time being handled, never is. An
// event is in the bucket of the highest bit in which its time differs from
// last's: pushing is an append, and popping when bucket 0 is empty takes
// the lowest non-empty bucket, whose earliest event becomes last, and
// spreads it into lower buckets. An event moves down at most 63 times, a
// few in practice, each a sequential append rather than a heap's scattered
// reads.
type radixQueue struct {
	// buckets[i] holds the events whose time's highest bit that differs
	// from last is bit i-1; buckets[0] those at last, in order, from head
	// on. A time is at most 2^63-1, so 64 buckets do.
	buckets  [64][]event
	head     int
	last     time.Duration
	nonEmpty uint64 // bit i: buckets[i] has events, for i > 0
	n        int
	// While bucket 0 is empty, the earliest event, when leastKnown, is
	// buckets[leastBucket][leastIndex]. Peeking finds it without moving
	// last, which only popping it does: a peek's last, past the time being
	// handled, would turn away the events queued before it.
	leastBucket, leastIndex int
	leastKnown              bool
}

// admits reports whether an event at at may be queued: not before the last
// event popped.
func (r *radixQueue) admits(at time.Duration) bool { return at >= r.last }

func (r *radixQueue) bucket(at time.Duration) int { return bits.Len64(uint64(at ^ r.last)) }

// push queues e; r must admit it. An event at last comes after those
// already there, as its order, the newest, says it should.
func (r *radixQueue) push(e event) {
	i := r.bucket(e.at)
	r.buckets[i] = append(r.buckets[i], e)
	r.n++
	if i == 0 {
		return
	}
	r.nonEmpty |= 1 << i
	if r.leastKnown && (i < r.leastBucket || i == r.leastBucket && e.before(&r.buckets[i][r.leastIndex])) {
		r.leastBucket, r.leastIndex = i, len(r.buckets[i])-1
	}
}

// peek returns the earliest event, or nil when none is queued. It is
// called before every pop of the queue, so what it usually does is kept
// small enough to be inlined.
func (r *radixQueue) peek() *event {
	if r.head < len(r.buckets[0]) {
		return &r.buckets[0][r.head]
	}
	if r.leastKnown {
		return &r.buckets[r.leastBucket][r.leastIndex]
	}
	return r.findLeast()
}

// findLeast looks for the earliest event while bucket 0 is empty: the
// earliest of the lowest non-empty bucket.
func (r *radixQueue) findLeast() *event {
	if r.n == 0 {
		return nil
	}
	i := bits.TrailingZeros64(r.nonEmpty)
	b, least := r.buckets[i], 0
	for k := 1; k < len(b); k++ {
		if b[k].before(&b[least]) {
			least = k
		}
	}
	r.leastBucket, r.leastIndex, r.leastKnown = i, least, true
	return &b[least]
}

// pop removes the event peek returned.
func (r *radixQueue) pop() event {
	if r.head == len(r.buckets[0]) {
		r.refill()
	}
	e := r.buckets[0][r.head]
	r.head++
	r.n--
	if r.head == len(r.buckets[0]) {
		clear(r.buckets[0])
		r.buckets[0], r.head = r.buckets[0][:0], 0
	}
	r.leastKnown = false
	return e
}

// refill makes the earliest event's time last, moving the events of its
// bucket, which are all earlier than those of the buckets above it, down:
// those at last into bucket 0, by order, the others into buckets below
// theirs.
func (r *radixQueue) refill() {
	i := r.leastBucket
	from := r.buckets[i]
	r.last = from[r.leastIndex].at
	for _, e := range from {
		j := r.bucket(e.at)
		r.buckets[j] = append(r.buckets[j], e)
		r.nonEmpty |= 1 << j
	}
	clear(from)
	r.buckets[i] = from[:0]
	r.nonEmpty &^= 1<<i | 1
	// Events at the same time leave in order; there is seldom more than
	// one, so an insertion sort.
	at := r.buckets[0]
	for k := 1; k < len(at); k++ {
		for m := k; m > 0 && at[m].order < at[m-1].order; m-- {
			at[m], at[m-1] = at[m-1], at[m]
		}
	}
}

func (r *radixQueue) clear() {
	for i := range r.buckets {
		clear(r.buckets[i])
		r.buckets[i] = r.buckets[i][:0]
	}
	r.head, r.nonEmpty, r.n, r.leastKnown = 0, 0, 0, false
}
