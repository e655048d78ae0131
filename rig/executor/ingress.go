package executor

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/realtime"
)

// Ingress carries frames from the endpoints' reader threads to the
// executor: a ring of slots whose buffers are swapped, never copied twice
// and never allocated once grown. It is the endpoints' drivers.Sink.
type Ingress struct {
	mu      sync.Mutex
	slots   []ingressFrame
	head, n int
	queued  atomic.Int64 // n, readable without the lock
	dropped atomic.Uint64
	wake    func()

	events chan deviceEvent // endpoints gone and back, for the executor

	// readers count the rests of each endpoint's reader threads.
	readers []readerRests

	// notices are the endpoints' other news, under mu: sent from the
	// executor's own thread too (a Write), they must never wait for it.
	notices []deviceEvent
	noticed atomic.Bool
}

// ReaderBudget is the CPU an endpoint's reader thread may take in a
// LoadWindow of its reads (drivers.Sink.Read): a device that floods the
// rig with frames (a UDP sender gone mad) would otherwise keep a
// real-time thread busy as long as the kernel let it. A reader that has
// used it in a window rests for the rest of the window, stretched so that
// it had its share, and the frames wait in the kernel's buffer meanwhile
// (where a socket loses what overflows it, and a serial line or
// pseudo-terminal holds its sender back).
//
// The budget is counted over a whole window, not over the stretch between
// two reads: the kernel counts as a thread's CPU what it was not doing
// (interrupts it took, time its virtual CPU's host ran something else),
// and on a loaded machine a reader that read a frame every 5 ms was seen
// to use 1.25 ms of one such stretch, and rested.
const ReaderBudget = LoadWindow / 4

// readerCheck is how often a reader's CPU is read while it works: a flood
// overruns ReaderBudget by at most this much.
const readerCheck = ReaderBudget / 2

// readerRests are the rests of an endpoint's reader threads, however
// many it has.
type readerRests struct {
	rests  atomic.Uint64
	rested atomic.Int64 // ns in all
	// floods are the rests that came within a LoadWindow of the thread's
	// previous one: a device that keeps it busy, where a rest alone may
	// be the machine's doing (ReaderBudget).
	floods                atomic.Uint64
	seenFloods, seenRests uint64 // what the executor has seen of both
}

// meter sets the ingress up for n endpoints' readers.
func (q *Ingress) meter(n int) { q.readers = make([]readerRests, n) }

// Read is called on endpoint's reader thread after each read from its
// device: it rests once that thread has used ReaderBudget of a window.
func (q *Ingress) Read(endpoint int, m *drivers.ReaderMeter, at time.Duration) {
	if endpoint >= len(q.readers) || at-m.Checked < readerCheck {
		return
	}
	cpu, ok := realtime.ThreadCPU()
	if !ok {
		return
	}
	m.Checked = at
	used, elapsed := cpu-m.CPU, at-m.Start
	switch {
	case m.Start == 0 && m.CPU == 0:
		m.Start, m.CPU = at, cpu
	case used >= max(ReaderBudget, ReaderBudget*elapsed/LoadWindow): // a stretch between reads may outlast a window
		rest := used*LoadWindow/ReaderBudget - elapsed
		time.Sleep(rest)
		r := &q.readers[endpoint]
		r.rests.Add(1)
		r.rested.Add(int64(rest))
		if m.RestedUntil > 0 && at-m.RestedUntil <= LoadWindow {
			r.floods.Add(1)
		}
		at += rest
		m.Start, m.CPU, m.Checked, m.RestedUntil = at, cpu, at, at
	case elapsed >= LoadWindow:
		m.Start, m.CPU = at, cpu
	}
}

type ingressFrame struct {
	endpoint int
	at       time.Duration
	payload  []byte
}

// deviceEvent is an endpoint's device going away or coming back.
type deviceEvent struct {
	endpoint int
	at       time.Duration
	gone     bool
	err      error
	notice   string // a notice's kind (drivers.Notice…), for neither gone nor back
}

var _ drivers.Sink = (*Ingress)(nil)

// slotBytes is the buffer each slot starts with: frames up to this size
// never make the ring allocate, larger ones grow their slot once.
const slotBytes = 512

// NewIngress returns a ring of capacity frames; wake is called when
// something arrives (the executor's clock's Wake).
func NewIngress(capacity int, wake func()) *Ingress {
	q := &Ingress{slots: make([]ingressFrame, capacity), wake: wake, events: make(chan deviceEvent, 64)}
	backing := make([]byte, capacity*slotBytes)
	for i := range q.slots {
		q.slots[i].payload = backing[i*slotBytes : i*slotBytes : (i+1)*slotBytes]
	}
	return q
}

// Frame queues a copy of the frame; a full queue drops it and counts it.
func (q *Ingress) Frame(endpoint int, payload []byte, at time.Duration) {
	q.mu.Lock()
	if q.n == len(q.slots) {
		q.mu.Unlock()
		q.dropped.Add(1)
		return
	}
	s := &q.slots[(q.head+q.n)%len(q.slots)]
	s.endpoint, s.at = endpoint, at
	s.payload = append(s.payload[:0], payload...)
	q.n++
	q.queued.Store(int64(q.n))
	q.mu.Unlock()
	q.wake()
}

func (q *Ingress) Gone(endpoint int, at time.Duration, err error) {
	q.events <- deviceEvent{endpoint: endpoint, at: at, gone: true, err: err}
	q.wake()
}

func (q *Ingress) Back(endpoint int, at time.Duration) {
	q.events <- deviceEvent{endpoint: endpoint, at: at}
	q.wake()
}

func (q *Ingress) Notice(endpoint int, at time.Duration, kind string, err error) {
	q.mu.Lock()
	q.notices = append(q.notices, deviceEvent{endpoint: endpoint, at: at, err: err, notice: kind})
	q.noticed.Store(true)
	q.mu.Unlock()
	q.wake()
}

// takeNotices returns the notices so far, oldest first, and forgets them.
func (q *Ingress) takeNotices() []deviceEvent {
	if !q.noticed.Load() {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.notices
	q.notices = nil
	q.noticed.Store(false)
	return n
}

// Dropped is how many frames a full ring lost.
func (q *Ingress) Dropped() uint64 { return q.dropped.Load() }

// pending reports whether anything waits for the executor.
func (q *Ingress) pending() bool {
	return q.queued.Load() > 0 || len(q.events) > 0 || q.noticed.Load()
}

// pop takes the oldest frame. Its payload is spare's buffer swapped with
// the slot's: the caller hands the returned buffer back as the next spare
// (the first spare may be nil: the ring then has one slot fewer bytes,
// which it regains as the buffer comes back).
func (q *Ingress) pop(spare []byte) (ingressFrame, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return ingressFrame{}, false
	}
	s := &q.slots[q.head]
	f := *s
	s.payload = spare[:0]
	q.head = (q.head + 1) % len(q.slots)
	q.n--
	q.queued.Store(int64(q.n))
	return f, true
}
