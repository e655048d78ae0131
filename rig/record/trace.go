package record

import (
	"io"
	"strconv"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// TraceHeader is the first line of a virtual-time trace; a real-time trace
// adds t_due (RealTraceHeader).
const (
	TraceHeader     = "flow,seq,bytes,t_send,t_recv,status"
	RealTraceHeader = TraceHeader + ",t_due"
)

// Statuses of the trace beyond the engine's. EgressDrop is a frame the
// engine delivered but whose egress device would not take it
// (disconnected, or a write error). The others are event rows, not
// frames: their flow is an endpoint's name and they have no seq or bytes.
// A model endpoint's supervisor writes OutOfSync, InSync and Suppressed
// (the model fell out of sync, came back in sync, or suppressed a message
// while out of sync); an endpoint speaking the wire protocol writes the
// changes of its device's heartbeat: a controller's fault flag raised or
// cleared, a plant node's watchdog tripped (its outputs driven safe) or
// cleared (commanded again), and the device restarted (its numbering
// started again); one whose peer is another rig (two sites) writes the
// peer lost (silent past its timeout) and back.
const (
	EgressDrop emulator.Status = 255 - iota
	OutOfSync
	InSync
	Suppressed
	FaultRaised
	FaultCleared
	WatchdogTripped
	WatchdogCleared
	DeviceRestarted
	PeerLost
	PeerBack
)

// StatusName is the trace's word for a status.
func StatusName(s emulator.Status) string {
	switch s {
	case EgressDrop:
		return "egress_drop"
	case OutOfSync:
		return "out_of_sync"
	case InSync:
		return "in_sync"
	case Suppressed:
		return "suppressed"
	case FaultRaised:
		return "fault_raised"
	case FaultCleared:
		return "fault_cleared"
	case WatchdogTripped:
		return "watchdog_tripped"
	case WatchdogCleared:
		return "watchdog_cleared"
	case DeviceRestarted:
		return "device_restarted"
	case PeerLost:
		return "peer_lost"
	case PeerBack:
		return "peer_back"
	}
	return s.String()
}

// isEvent reports whether a status is an event's row.
func isEvent(s emulator.Status) bool { return s >= PeerBack && s < EgressDrop }

// TraceRow is a finished frame. Recv and Due are negative when empty.
type TraceRow struct {
	Seq             uint64
	Sent, Recv, Due time.Duration
	Flow, Size      int32
	Status          emulator.Status
}

// Trace streams one CSV row per finished frame of the traced flows, so that
// a run of any length keeps no per-frame history in memory. Times are
// seconds with nine decimals, written from integer nanoseconds so that no
// floating-point rounding creeps in. In real time the row has a seventh
// column, t_due: when the engine said the frame should arrive, where t_recv
// is when its egress write returned; in virtual time the two are equal, and
// the column is left out.
type Trace struct {
	*Writer[TraceRow]
	names  []string
	traced []bool
	due    bool
}

// traceSlots is the ring of a real-time trace: a second of frames at 64 kHz.
const traceSlots = 1 << 16

// NewTrace writes the header and returns a trace of the flows whose traced
// entry is true; real makes it a real-time trace, written asynchronously.
func NewTrace(w io.Writer, names []string, traced []bool, real bool) *Trace {
	t := &Trace{names: names, traced: traced, due: real}
	header, slots := TraceHeader, 0
	if real {
		header, slots = RealTraceHeader, traceSlots
	}
	t.Writer = NewWriter(w, []byte(header+"\n"), slots, nil, t.format)
	return t
}

// Add records a row; in real time it never blocks.
func (t *Trace) Add(r TraceRow) {
	if !t.traced[r.Flow] {
		return
	}

	if slot := t.Next(); slot != nil {
		*slot = r
		t.Publish()
	}
}

func (t *Trace) format(b []byte, r *TraceRow) []byte {
	b = append(b, t.names[r.Flow]...)
	b = append(b, ',')
	if !isEvent(r.Status) {
		b = strconv.AppendUint(b, r.Seq, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(r.Size), 10)
	} else {
		b = append(b, ',')
	}
	b = append(b, ',')
	b = AppendSeconds(b, r.Sent)
	b = append(b, ',')
	if r.Recv >= 0 {
		b = AppendSeconds(b, r.Recv)
	}
	b = append(b, ',')
	b = append(b, StatusName(r.Status)...)
	if t.due {
		b = append(b, ',')
		if r.Due >= 0 {
			b = AppendSeconds(b, r.Due)
		}
	}
	return append(b, '\n')
}

// AppendSeconds appends d as seconds with exactly nine decimals.
func AppendSeconds(b []byte, d time.Duration) []byte {
	ns := int64(d)
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1e9, 10)
	frac := ns % 1e9
	b = append(b, '.')
	for div := int64(1e8); div > 0; div /= 10 {
		b = append(b, byte('0'+frac/div%10))
	}
	return b
}
