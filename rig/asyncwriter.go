package rig

import (
	"bufio"
	"io"
	"sync/atomic"
	"time"
)

// asyncWriter writes records from a goroutine of its own: the real-time
// executor only fills fixed-size slots of a ring, so no system call for a
// file ever happens on its thread. A full ring (the disk far behind) loses
// the record and counts it. The file is flushed every 100 ms, so it is
// readable up to then whatever happens next.
type asyncWriter[T any] struct {
	w       *bufio.Writer
	format  func(b []byte, r *T) []byte
	ring    []T
	head    atomic.Uint64 // next slot the executor fills
	tail    atomic.Uint64 // next slot the writer reads
	kick    chan struct{}
	done    chan struct{}
	closing atomic.Bool
	dropped atomic.Uint64
	err     error
	row     []byte
}

// newAsyncWriter writes header and starts the writer; init prepares each
// slot once (to preallocate what it holds).
func newAsyncWriter[T any](w io.Writer, header string, slots int, init func(*T), format func([]byte, *T) []byte) *asyncWriter[T] {
	a := &asyncWriter[T]{w: bufio.NewWriterSize(w, 256<<10), format: format, ring: make([]T, slots), kick: make(chan struct{}, 1), done: make(chan struct{})}
	if init != nil {
		for i := range a.ring {
			init(&a.ring[i])
		}
	}
	_, a.err = a.w.WriteString(header + "\n")
	go a.loop()
	return a
}

// next returns the slot to fill, or nil when the ring is full; publish
// hands it to the writer.
func (a *asyncWriter[T]) next() *T {
	head := a.head.Load()
	if head-a.tail.Load() == uint64(len(a.ring)) {
		a.dropped.Add(1)
		return nil
	}
	return &a.ring[head%uint64(len(a.ring))]
}

func (a *asyncWriter[T]) publish() {
	a.head.Add(1)
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *asyncWriter[T]) loop() {
	defer close(a.done)
	flush := time.NewTicker(100 * time.Millisecond)
	defer flush.Stop()
	for {
		for tail := a.tail.Load(); tail < a.head.Load(); tail++ {
			if a.err == nil {
				a.row = a.format(a.row[:0], &a.ring[tail%uint64(len(a.ring))])
				_, a.err = a.w.Write(a.row)
			}
			a.tail.Store(tail + 1)
		}
		if a.closing.Load() && a.tail.Load() == a.head.Load() {
			if a.err == nil {
				a.err = a.w.Flush()
			}
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

// close writes out every record queued and flushes the file.
func (a *asyncWriter[T]) close() error {
	a.closing.Store(true)
	select {
	case a.kick <- struct{}{}:
	default:
	}
	<-a.done
	return a.err
}
