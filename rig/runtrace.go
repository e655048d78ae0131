package rig

import (
	"io"
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

// runTrace writes the trace of a hardware run from its own goroutine.
type runTrace struct {
	*asyncWriter[traceRecord]
	names  []string
	traced []bool
}

const traceRing = 1 << 16

func newRunTrace(w io.Writer, names []string, traced []bool) *runTrace {
	t := &runTrace{names: names, traced: traced}
	t.asyncWriter = newAsyncWriter(w, RunTraceHeader, traceRing, nil, t.format)
	return t
}

// add queues a record; it never blocks.
func (t *runTrace) add(r traceRecord) {
	if !t.traced[r.flow] {
		return
	}
	if slot := t.next(); slot != nil {
		*slot = r
		t.publish()
	}
}

func (t *runTrace) format(b []byte, r *traceRecord) []byte {
	status := "egress_drop"
	if r.status != statusEgressDrop {
		status = emulator.Status(r.status).String()
	}
	b = appendTraceRow(b, t.names[r.flow], r.seq, int(r.size), r.sent, r.recv, status)
	b = append(b, ',')
	if r.due >= 0 {
		b = AppendSeconds(b, r.due)
	}
	return append(b, '\n')
}
