package profiles

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// Trace-driven hops: a hop's delay or loss replayed from a recorded series,
// frame by frame, in order (as Mahimahi replays a recorded link), from a
// hilrig trace (trace.csv of an earlier run) or a plain file of one value
// per line.

// HopDelay is a hop's propagation delay: a duration, or a recorded series
// of delays replayed frame by frame ({trace: FILE}).
type HopDelay struct {
	Trace *TraceRef `yaml:"trace,required" doc:"a recorded series of delays, replayed in order: the k-th frame of each flow through the hop gets the k-th delay, the series starting again when it runs out"`

	fixed lang.Duration
}

func (h *HopDelay) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	type plain HopDelay
	d.ScalarOr(n, path, &h.fixed, (*plain)(h))
}

func (HopDelay) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a delay", Example: "2ms, or a recorded series {trace: delays.csv}"}
}

func (h HopDelay) String() string {
	if h.Trace != nil {
		return "{trace: " + h.Trace.File + "}"
	}
	return h.fixed.String()
}

// TraceRef names a recorded series: a file, and in a hilrig trace the flow
// whose frames it follows.
type TraceRef struct {
	File string         `yaml:"file,required" doc:"a hilrig trace (trace.csv of an earlier run: its delivered frames' delays, and which frames were dropped) or a plain file of one value per line (a delay with its unit, or 1 for a lost frame and 0 for one that arrived; # starts a comment), relative to the profile"`
	Flow *string        `yaml:"flow" doc:"in a hilrig trace: the flow to follow" default:"the trace's only flow"`
	Unit *lang.TimeUnit `yaml:"unit" doc:"in a plain file of delays: the unit of bare numbers" default:"none: each value has its unit"`

	readFrom string // the file the series was read from
}

func (r *TraceRef) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	type plain TraceRef
	if d.ScalarOr(n, path, &r.File, (*plain)(r)) {
		// trace: FILE is {file: FILE}: its problems are the file's, at the
		// same path as in the long form.
		d.Positions[path.String()+".file"] = d.PosOf(n)
	}
}

func (TraceRef) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a recorded series", Example: "run/trace.csv, or {file: run/trace.csv, flow: m2s}"}
}

// traceHeader starts every hilrig trace (a run's adds a column, t_due).
const traceHeader = "flow,seq,bytes,t_send,t_recv,status"

// egressDrop is the status rig/record gives, in a run's trace, a frame the
// network delivered but its egress device refused: for the far end, a
// frame lost (record.StatusName(record.EgressDrop); profiles cannot import
// rig/record, which imports profiles, so TestRunTraceStatuses checks it).
const egressDrop = "egress_drop"

// frameStatuses are the statuses of a trace's frame rows, as the message
// for an unknown one lists them.
func frameStatuses() string {
	return strings.Join(append(emulator.StatusNames(), egressDrop), ", ")
}

// traceRow is a frame of a hilrig trace.
type traceRow struct {
	seq        uint64
	sent, recv time.Duration
	status     string
}

// fate is what happened to a frame, as a series sees it.
type fate uint8

const (
	inFlight fate = iota // when the trace ended
	arrived
	dropped
)

func (r traceRow) fate() fate {
	if r.status == egressDrop {
		return dropped
	}
	s, _ := emulator.StatusNamed(r.status)
	switch {
	case s.Dropped():
		return dropped
	case s.Arrived():
		return arrived
	}
	return inFlight
}

// readSeries reads the series ref names for the value at path: delays, or
// which frames were lost. Problems are reported at the file's own line and
// column, or at path: its .file for the file and what it holds, its .flow
// (or path, when no flow was given) for the choice of flow.
func readSeries(d *lang.Decoder, ref *TraceRef, path string, loss bool) (delays []time.Duration, lost []bool) {
	at := path + ".file"
	data, file, err := readRelated(d, at, ref.File)
	ref.readFrom = file
	if err != nil {
		d.ErrorAt(at, "cannot read %s: %s", file, lang.FileProblem(err))
		return nil, nil
	}
	text := string(data)
	if strings.HasPrefix(text, traceHeader) {
		rows, ok := traceRows(d, text, file, ref, path)
		if !ok {
			return nil, nil
		}
		// The k-th frame sent gets the k-th value. A trace's rows are the
		// frames the source sent and the copies that a hop's duplication
		// made and that arrived (duplicate, with their original's seq; a
		// copy dropped has no row): the copies' rows are not frames sent.
		for _, r := range rows {
			switch {
			case r.status == emulator.Duplicate.String() || r.fate() == inFlight:
				// a copy, or a frame whose fate the trace does not know
			case loss:
				lost = append(lost, r.fate() == dropped)
			case r.fate() == arrived:
				delays = append(delays, r.recv-r.sent)
			}
		}
		if len(delays) == 0 && len(lost) == 0 {
			d.ErrorAt(at, "%s has no frame of flow %s to take a series from", file, *ref.Flow)
		}
		return delays, lost
	}
	if ref.Flow != nil {
		d.ErrorAt(path+".flow", "%s is not a hilrig trace (its first line is not %s): a plain file has no flows", file, traceHeader)
	}
	if !loss {
		samples, _ := readDelays(d, ref.File, ref.Unit, at)
		return samples, nil
	}
	if ref.Unit != nil {
		d.ErrorAt(path+".unit", "a loss series has no unit")
	}
	for i, line := range strings.Split(text, "\n") {
		value, _, _ := strings.Cut(line, "#")
		value = strings.TrimSpace(value)
		switch value {
		case "":
		case "0", "1":
			lost = append(lost, value == "1")
		default:
			d.Fail(at)
			d.Report(lang.Pos{File: file, Line: i + 1, Col: strings.Index(line, value) + 1}, at, "%q is not 1 (lost) or 0 (arrived)", value)
			return nil, nil
		}
	}
	if len(lost) == 0 {
		d.ErrorAt(at, "%s holds no frames", file)
	}
	return nil, lost
}

// traceRows reads the frames of one flow of a hilrig trace, a sim's or a
// run's, in the order the flow sent them; ok is false when it reported a
// problem. Rows that are not frames (an event's, a supervisor's: no seq)
// are skipped, and only the followed flow's rows are read further.
func traceRows(d *lang.Decoder, text, file string, ref *TraceRef, path string) (rows []traceRow, ok bool) {
	at := path + ".file"
	bad := func(e *traceRowError) ([]traceRow, bool) {
		d.Fail(at)
		d.Report(lang.Pos{File: file, Line: e.line, Col: e.col}, at, e.format, e.args...)
		return nil, false
	}
	byFlow, flows, err := traceLinesByFlow(text, ref.Flow)
	if err != nil {
		return bad(err)
	}
	if ref.Flow == nil {
		if len(flows) != 1 {
			if len(flows) == 0 {
				d.ErrorAt(at, "%s holds no frames", file)
			} else {
				d.ErrorAt(path, "%s holds flows %s: say which to follow (flow)", file, strings.Join(flows, ", "))
			}
			return nil, false
		}
		ref.Flow = &flows[0]
	}
	lines, ok := byFlow[*ref.Flow]
	if !ok {
		d.ErrorAt(path+".flow", "%s has no flow %q%s", file, *ref.Flow, lang.DidYouMean(*ref.Flow, flows))
		return nil, false
	}
	for _, l := range lines {
		r, err := l.row()
		if err != nil {
			return bad(err)
		}
		rows = append(rows, r)
	}
	slices.SortStableFunc(rows, func(a, b traceRow) int { return cmp.Compare(a.seq, b.seq) })
	return rows, true
}

// traceLine is a frame's row of a trace, split into its fields.
type traceLine struct {
	number int
	fields []string
}

// traceRowError is a problem of a trace's row, at its line and column.
type traceRowError struct {
	line, col int
	format    string
	args      []any
}

// traceLinesByFlow splits a trace's frame rows by flow, keeping the rows
// of flow only (all, when nil), and lists its flows in order of their
// first frame.
func traceLinesByFlow(text string, flow *string) (map[string][]traceLine, []string, *traceRowError) {
	byFlow := map[string][]traceLine{}
	var flows []string
	for i, text := range strings.Split(text, "\n")[1:] {
		text = strings.TrimSuffix(text, "\r")
		if text == "" {
			continue
		}
		f := strings.Split(text, ",")
		if len(f) < 6 {
			return nil, nil, &traceRowError{line: i + 2, col: 1, format: "a trace row has flow, seq, bytes, t_send, t_recv and status"}
		}
		if f[1] == "" {
			continue // an event, not a frame
		}
		if _, seen := byFlow[f[0]]; !seen {
			flows = append(flows, f[0])
			byFlow[f[0]] = nil
		}
		if flow == nil || f[0] == *flow {
			byFlow[f[0]] = append(byFlow[f[0]], traceLine{i + 2, f})
		}
	}
	return byFlow, flows, nil
}

// row reads a frame's fields: its sequence number, times and status.
func (l traceLine) row() (traceRow, *traceRowError) {
	f := l.fields
	bad := func(k int, format string, args ...any) (traceRow, *traceRowError) {
		col := 1 // of field k
		for _, before := range f[:k] {
			col += len(before) + 1
		}
		return traceRow{}, &traceRowError{l.number, col, format, args}
	}
	seq, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return bad(1, "%q is not a sequence number", f[1])
	}
	var sent, recv lang.Duration
	if sent.ParseScalar(f[3]+"s") != nil {
		return bad(3, "%q is not a time in seconds", f[3])
	}
	if f[4] != "" && recv.ParseScalar(f[4]+"s") != nil {
		return bad(4, "%q is not a time in seconds", f[4])
	}
	r := traceRow{seq: seq, sent: time.Duration(sent), recv: time.Duration(recv), status: f[5]}
	if _, known := emulator.StatusNamed(r.status); !known && r.status != egressDrop {
		return bad(5, "%q is not a frame's status (want %s)", r.status, frameStatuses())
	}
	if r.fate() == arrived && (f[4] == "" || r.recv < r.sent) {
		if f[4] == "" {
			return bad(4, "a frame that arrived (%s) has a t_recv", r.status)
		}
		return bad(4, "t_recv %s is before t_send %s: a delay cannot be negative", f[4], f[3])
	}
	return r, nil
}

// build turns a delay into the engine's: a fixed delay, or a series.
func (h *HopDelay) build(d *lang.Decoder, path lang.Path) (time.Duration, []time.Duration) {
	if h.Trace == nil {
		return time.Duration(h.fixed), nil
	}
	series, _ := readSeries(d, h.Trace, path.Key("trace").String(), false)
	if series == nil {
		return 0, []time.Duration{0} // reported; something valid to go on with
	}
	return 0, series
}

// buildLossTrace is a loss series as the engine's loss model.
func buildLossTrace(d *lang.Decoder, ref *TraceRef, path string) emulator.LossModel {
	_, lost := readSeries(d, ref, path, true)
	if lost == nil {
		lost = []bool{false}
	}
	return emulator.LossTrace{Lost: lost}
}
