package supervisor

import "time"

// Inbox keeps the newest messages a model endpoint received, each the
// values of its inputs and the message's timestamp, in a fixed ring:
// receiving and choosing allocate nothing. When the ring is full the
// oldest message is dropped.
type Inbox struct {
	t      []time.Duration
	values [][]float64
	head   int // oldest
	n      int
	// Dropped counts messages pushed out of a full ring.
	Dropped uint64
}

// NewInbox keeps up to capacity messages of width values each.
func NewInbox(capacity, width int) *Inbox {
	b := &Inbox{t: make([]time.Duration, capacity), values: make([][]float64, capacity)}
	backing := make([]float64, capacity*width)
	for i := range b.values {
		b.values[i] = backing[i*width : (i+1)*width : (i+1)*width]
	}
	return b
}

// Slot returns the buffer for the next message's values; Put keeps it.
func (b *Inbox) Slot() []float64 {
	return b.values[(b.head+b.n)%len(b.t)]
}

// Put keeps the message whose values were written into Slot, stamped t.
// Messages are kept in timestamp order: one older than the newest kept
// (reordered on the way) is inserted in its place.
func (b *Inbox) Put(t time.Duration) {
	if b.n == len(b.t) {
		// Full: the oldest goes, and its buffer (the slot just written,
		// which is also the oldest's) is taken over below.
		b.head = (b.head + 1) % len(b.t)
		b.n--
		b.Dropped++
	}
	i := b.n
	at := func(k int) int { return (b.head + k) % len(b.t) }
	b.t[at(i)] = t
	for ; i > 0 && b.t[at(i-1)] > t; i-- {
		b.t[at(i)], b.t[at(i-1)] = b.t[at(i-1)], b.t[at(i)]
		b.values[at(i)], b.values[at(i-1)] = b.values[at(i-1)], b.values[at(i)]
	}
	b.n++
}

// Len is how many messages are kept.
func (b *Inbox) Len() int { return b.n }

// Newest is the timestamp of the newest message kept.
func (b *Inbox) Newest() (time.Duration, bool) {
	if b.n == 0 {
		return 0, false
	}
	return b.t[(b.head+b.n-1)%len(b.t)], true
}

// Valid finds the input for a step to target: the newest message with
// target − maxAge ≤ T ≤ target (paper 004's Eq. 1). It returns its values
// (valid until the next Put) and timestamp, and drops every older message:
// the model has moved past them.
func (b *Inbox) Valid(target, maxAge time.Duration) (values []float64, t time.Duration, ok bool) {
	k := -1
	for i := b.n - 1; i >= 0; i-- {
		ti := b.t[(b.head+i)%len(b.t)]
		if ti <= target {
			if ti >= target-maxAge {
				k = i
			}
			break
		}
	}
	if k < 0 {
		return nil, 0, false
	}
	idx := (b.head + k) % len(b.t)
	values, t = b.values[idx], b.t[idx]
	b.head, b.n = idx, b.n-k // keep the chosen one and what is newer
	return values, t, true
}
