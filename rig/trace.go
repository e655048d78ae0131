package rig

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// TraceHeader is the first line of a sim trace.
const TraceHeader = "flow,seq,bytes,t_send,t_recv,status"

// TraceWriter streams one CSV row per finished frame of the traced flows, so
// a run of any length keeps no per-frame history in memory. Times are
// seconds with nine decimals, written from integer nanoseconds so that no
// floating-point rounding creeps in.
type TraceWriter struct {
	w      *bufio.Writer
	names  []string
	traced []bool
	row    []byte
	err    error
}

var _ emulator.Observer = (*TraceWriter)(nil)

// NewTraceWriter writes the header and returns a writer for the flows whose
// traced entry is true.
func NewTraceWriter(w io.Writer, names []string, traced []bool) *TraceWriter {
	t := &TraceWriter{w: bufio.NewWriterSize(w, 256<<10), names: names, traced: traced}
	_, t.err = t.w.WriteString(TraceHeader + "\n")
	return t
}

// Finished records a frame's row. A copy made by duplication has a row
// only when it is delivered (status duplicate): the other rows are exactly
// the frames the source sent, so counting them by status gives its loss.
func (t *TraceWriter) Finished(f *emulator.Frame) {
	if !t.traced[f.Flow] || t.err != nil || f.Copy && f.Status != emulator.Duplicate {
		return
	}
	recv := time.Duration(-1)
	if f.Status.Arrived() {
		recv = f.Done
	}
	b := appendTraceRow(t.row[:0], t.names[f.Flow], f.Seq, f.Size, f.Sent, recv, f.Status.String())
	b = append(b, '\n')
	t.row = b
	_, t.err = t.w.Write(b)
}

// Flush writes out buffered rows and returns the first write error.
func (t *TraceWriter) Flush() error {
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
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

// appendTraceRow writes the six columns sim and run traces share:
// flow,seq,bytes,t_send,t_recv,status, with t_recv empty when recv < 0.
func appendTraceRow(b []byte, flow string, seq uint64, size int, sent, recv time.Duration, status string) []byte {
	b = append(b, flow...)
	b = append(b, ',')
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, ',')
	b = AppendSeconds(b, sent)
	b = append(b, ',')
	if recv >= 0 {
		b = AppendSeconds(b, recv)
	}
	b = append(b, ',')
	return append(b, status...)
}
