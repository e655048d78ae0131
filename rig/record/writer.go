package record

import (
	"bufio"
	"io"
	"sync/atomic"
	"time"
)

// Writer writes records of type T as lines of a file, after a header.
//
// A synchronous Writer formats and writes each record as it is published.
// An asynchronous one hands records to a goroutine of its own through a
// ring of fixed-size slots, so that no system call for a file ever happens
// on the publisher's thread; a full ring (the disk far behind) loses the
// record and counts it, and the file is flushed every 100 ms, so that it is
// readable up to then whatever happens next.
type Writer[T any] struct {
	w      *bufio.Writer
	format func(b []byte, r *T) []byte
	err    error

	async   bool
	ring    []T
	head    atomic.Uint64 // next slot the publisher fills
	tail    atomic.Uint64 // next slot the writer goroutine reads
	kick    chan struct{}
	done    chan struct{}
	closing atomic.Bool
	dropped atomic.Uint64
}

// NewWriter writes header and returns a writer. slots > 0 makes it
// asynchronous with a ring of that many slots; init, if set, prepares
// each slot once (to preallocate what it holds).
func NewWriter[T any](w io.Writer, header []byte, slots int, init func(*T), format func([]byte, *T) []byte) *Writer[T] {
	a := &Writer[T]{w: bufio.NewWriterSize(w, 256<<10), format: format, async: slots > 0}
	if !a.async {
		slots = 1
	}
	a.ring = make([]T, slots)
	if init != nil {
		for i := range a.ring {
			init(&a.ring[i])
		}
	}
	_, a.err = a.w.Write(header)
	if a.async {
		a.kick, a.done = make(chan struct{}, 1), make(chan struct{})
		go a.loop()
	}
	return a
}

// Next returns the slot to fill, or nil when the ring is full; Publish
// hands it to the writer.
func (a *Writer[T]) Next() *T {
	head := a.head.Load()
	if a.async && head-a.tail.Load() == uint64(len(a.ring)) {
		a.dropped.Add(1)
		return nil
	}
	return &a.ring[head%uint64(len(a.ring))]
}

// Publish writes the slot Next returned, at once or from the writer's
// goroutine.
func (a *Writer[T]) Publish() {
	if !a.async {
		a.write(&a.ring[0])
		return
	}
	a.head.Add(1)
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// write formats r straight into the file's buffer, which it first makes
// room in: a record's line is far shorter than rowRoom.
func (a *Writer[T]) write(r *T) {
	if a.err != nil {
		return
	}
	if a.w.Available() < rowRoom {
		if a.err = a.w.Flush(); a.err != nil {
			return
		}
	}
	_, a.err = a.w.Write(a.format(a.w.AvailableBuffer(), r))
}

// rowRoom is the buffer space a record may take without allocating.
const rowRoom = 4 << 10

func (a *Writer[T]) loop() {
	defer close(a.done)
	flush := time.NewTicker(100 * time.Millisecond)
	defer flush.Stop()
	for {
		for tail := a.tail.Load(); tail < a.head.Load(); tail++ {
			a.write(&a.ring[tail%uint64(len(a.ring))])
			a.tail.Store(tail + 1)
		}
		if a.closing.Load() && a.tail.Load() == a.head.Load() {
			return
		}
		select {
		case <-a.kick:
		case <-flush.C:
			if a.err == nil {
				a.err = a.w.Flush()
			}
		}
	}
}

// Dropped is how many records a full ring lost.
func (a *Writer[T]) Dropped() uint64 { return a.dropped.Load() }

// Close writes out every record published and flushes the file; it
// returns the first write error.
func (a *Writer[T]) Close() error {
	if a.async {
		a.closing.Store(true)
		select {
		case a.kick <- struct{}{}:
		default:
		}
		<-a.done
	}
	if a.err == nil {
		a.err = a.w.Flush()
	}
	return a.err
}
