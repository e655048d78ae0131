package rig

import (
	"bufio"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// RunTraceHeader is the first line of a run trace: the sim trace's columns
// and t_due, when the engine said the frame should leave.
const RunTraceHeader = TraceHeader + ",t_due"

// statusEgressDrop marks a frame the engine delivered but the egress
// device would not take (disconnected, or a write error).
const statusEgressDrop = 255

type traceRecord struct {
	seq             uint64
	sent, recv, due time.Duration // recv, due < 0: empty
	flow, size      int32
	status          uint8
}

// runTrace writes the trace of a hardware run from its own goroutine: the
// executor only puts fixed-size records in a ring, so no system call for
// the trace ever happens on the real-time thread.
type runTrace struct {
	w       *bufio.Writer
	names   []string
	traced  []bool
	ring    []traceRecord
	head    atomic.Uint64 // next record the executor writes
	tail    atomic.Uint64 // next record the writer reads
	kick    chan struct{}
	done    chan struct{}
	closing atomic.Bool
	dropped atomic.Uint64
	err     error
	row     []byte
}

const traceRing = 1 << 16

func newRunTrace(w io.Writer, names []string, traced []bool) *runTrace {
	t := &runTrace{
		w: bufio.NewWriterSize(w, 256<<10), names: names, traced: traced,
		ring: make([]traceRecord, traceRing), kick: make(chan struct{}, 1), done: make(chan struct{}),
	}
	_, t.err = t.w.WriteString(RunTraceHeader + "\n")
	go t.loop()
	return t
}

// add queues a record; it never blocks, and a full ring (the disk far
// behind) loses the record and counts it.
func (t *runTrace) add(r traceRecord) {
	if !t.traced[r.flow] {
		return
	}
	head := t.head.Load()
	if head-t.tail.Load() == traceRing {
		t.dropped.Add(1)
		return
	}
	t.ring[head%traceRing] = r
	t.head.Store(head + 1)
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *runTrace) loop() {
	defer close(t.done)
	flush := time.NewTicker(100 * time.Millisecond)
	defer flush.Stop()
	for {
		for tail := t.tail.Load(); tail < t.head.Load(); tail++ {
			t.write(&t.ring[tail%traceRing])
			t.tail.Store(tail + 1)
		}
		if t.closing.Load() && t.tail.Load() == t.head.Load() {
			if t.err == nil {
				t.err = t.w.Flush()
			}
			return
		}
		select {
		case <-t.kick:
		case <-flush.C:
			if t.err == nil {
				t.err = t.w.Flush() // keep the file readable up to now
			}
		}
	}
}

func (t *runTrace) write(r *traceRecord) {
	if t.err != nil {
		return
	}
	b := append(t.row[:0], t.names[r.flow]...)
	b = append(b, ',')
	b = strconv.AppendUint(b, r.seq, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.size), 10)
	b = append(b, ',')
	b = AppendSeconds(b, r.sent)
	b = append(b, ',')
	if r.recv >= 0 {
		b = AppendSeconds(b, r.recv)
	}
	b = append(b, ',')
	if r.status == statusEgressDrop {
		b = append(b, "egress_drop"...)
	} else {
		b = append(b, emulator.Status(r.status).String()...)
	}
	b = append(b, ',')
	if r.due >= 0 {
		b = AppendSeconds(b, r.due)
	}
	b = append(b, '\n')
	t.row = b
	_, t.err = t.w.Write(b)
}

// close writes out every record queued and flushes the file.
func (t *runTrace) close() error {
	t.closing.Store(true)
	select {
	case t.kick <- struct{}{}:
	default:
	}
	<-t.done
	return t.err
}
