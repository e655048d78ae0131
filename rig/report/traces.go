package report

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/detmath"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig/record"
)

// A run's trace and signals can be far larger than memory (a trace is a
// line per frame, streamed however long the run), so the report reads
// each twice, a line at a time, and keeps only what its plots show:
// first how many values there are and when the series ends, then each
// value into its slice of the run. Memory does not grow with the file.

// maxLineBytes bounds a line of a CSV the report reads: a trace's are
// under 200 bytes, a signals file's a column header per signal.
const maxLineBytes = 1 << 20

// maxFlows bounds the flows plotted: beyond that many, a plot's legend
// and colours (which repeat after nine) no longer tell them apart.
const maxFlows = 32

// errStop ends scanLines early, without an error.
var errStop = errors.New("stop")

// scanLines calls fn with each line of r, numbered from 1, until fn
// returns errStop or another error, which it returns. A line may be at
// most maxLineBytes.
// The line is the scanner's: valid until fn returns.
func scanLines(r io.Reader, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	n := 0
	for sc.Scan() {
		n++
		if err := fn(n, sc.Bytes()); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("line %d is longer than %d bytes: not a file hilrig writes", n+1, maxLineBytes)
	}
	return sc.Err()
}

// firstLine is the first line of the file at path, which must be a
// regular file (a FIFO or a device may never end).
func firstLine(path string) (string, error) {
	f, _, err := lang.OpenFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var head string
	err = scanLines(f, func(_ int, line []byte) error {
		head = string(line)
		return errStop
	})
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return strings.TrimRight(head, "\r"), nil
}

// excerpt quotes at most the first 80 bytes of s, for a message about it.
func excerpt(s string) string {
	const most = 80
	if len(s) <= most {
		return strconv.Quote(s)
	}
	cut := most
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// splitFields splits a CSV line of hilrig's (no quoting) at its commas
// into dst, reused: a line per frame must not cost an allocation.
func splitFields(dst [][]byte, line []byte) [][]byte {
	dst = dst[:0]
	for {
		i := bytes.IndexByte(line, ',')
		if i < 0 {
			return append(dst, line)
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}

// flowSeries is what a report plots of one flow, read from a trace.
type flowSeries struct {
	name    string
	delay   envelope  // one-way delay of the delivered frames (ms) by time sent
	late    envelope  // real time: t_recv − t_due (µs) at t_due
	spread  histogram // the distribution of the delivered frames' delay (ms)
	dropped int       // frames dropped (egress drops included)
	drops   []float64 // per mark slot, the first dropped frame's t_send, or NaN
	// Per slice of the run, the time its frames spent in the network
	// (frame·s), and the whole slices covered, carried to the slices
	// after as differences until the end.
	inFlight, carried []float64
}

// traceData is a trace read for plotting.
type traceData struct {
	flows     []*flowSeries
	real      bool    // the trace has t_due
	end       float64 // the run's end: the latest time in it, at least the summary's duration
	moreFlows bool    // the trace has more than maxFlows flows; those after are not plotted
}

// inFlightSlices is how many slices of the run the frames in flight are
// averaged over: a step every few points of the plot.
const inFlightSlices = buckets / 3

// traceRow is a frame of the trace, as the plots take it.
type traceRow struct {
	flow           *flowSeries // nil: not plotted
	sent, recv     float64     // recv NaN: not received
	due            float64     // NaN: none
	delivered, out bool        // out: in flight when the trace ended
}

// readTrace reads a hilrig trace (virtual or real time) for plotting, the
// run lasting at least minEnd. The supervisor's rows (no seq) are
// skipped: they mark events, not frames.
func readTrace(path string, minEnd float64) (*traceData, error) {
	f, _, err := lang.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTrace(f, minEnd)
}

// parseTrace reads a trace in two passes over r: the first finds the
// flows, the run's end and what each series holds; the second puts each
// frame into the slices of its flow's plots.
func parseTrace(r io.ReadSeeker, minEnd float64) (*traceData, error) {
	td := &traceData{end: minEnd}
	byName := map[string]*flowSeries{}
	// The first pass: the header, every row checked, the flows and the end.
	err := td.rows(r, func(line int, fields [][]byte) (traceRow, error) {
		row, err := parseRow(fields, line, td.real)
		if err != nil {
			return row, err
		}
		fs := byName[string(fields[0])]
		if fs == nil && len(td.flows) < maxFlows {
			fs = &flowSeries{name: string(fields[0])}
			byName[fs.name] = fs
			td.flows = append(td.flows, fs)
		} else if fs == nil {
			td.moreFlows = true
			return row, nil
		}
		td.end = max(td.end, row.sent)
		if !math.IsNaN(row.recv) {
			td.end = max(td.end, row.recv)
		}
		if row.delivered {
			fs.delay.observe(row.sent)
			fs.spread.observe((row.recv - row.sent) * 1e3)
			if !math.IsNaN(row.due) {
				fs.late.observe(row.due)
			}
		}
		return row, nil
	})
	if err != nil {
		return nil, err
	}
	for _, fs := range td.flows {
		fs.delay.prepare(td.end, buckets, true)
		fs.late.prepare(td.end, buckets, true)
		fs.spread.prepare(cdfBins)
		fs.drops = make([]float64, buckets+1)
		for i := range fs.drops {
			fs.drops[i] = math.NaN()
		}
		fs.inFlight = make([]float64, inFlightSlices)
		fs.carried = make([]float64, inFlightSlices+1)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	// The second pass: each frame into its slices.
	err = td.rows(r, func(line int, fields [][]byte) (traceRow, error) {
		row, err := parseRow(fields, line, td.real)
		if err != nil {
			return row, err
		}
		fs := byName[string(fields[0])]
		if fs == nil {
			return row, nil
		}
		switch {
		case row.delivered:
			fs.delay.add(row.sent, (row.recv-row.sent)*1e3)
			fs.spread.add(float64((row.recv - row.sent) * 1e3)) // rounded here: add subtracts from it
			if !math.IsNaN(row.due) {
				fs.late.add(row.due, (row.recv-row.due)*1e6)
			}
		case !row.out:
			fs.dropped++
			if td.end > 0 {
				if slot := min(int(row.sent/td.end*buckets), buckets); slot >= 0 && math.IsNaN(fs.drops[slot]) {
					fs.drops[slot] = row.sent
				}
			}
		}
		switch {
		case row.out:
			td.addInFlight(fs, row.sent, td.end)
		case !math.IsNaN(row.recv): // delivered, or dropped at its egress
			td.addInFlight(fs, row.sent, row.recv)
		}
		return row, nil
	})
	if err != nil {
		return nil, err
	}
	for _, fs := range td.flows {
		whole := 0.0
		for k := range fs.inFlight {
			whole += fs.carried[k]
			fs.inFlight[k] += whole
		}
	}
	return td, nil
}

// rows calls row with each frame's fields after the header, which it
// checks (and which says whether the trace is a real-time one).
func (td *traceData) rows(r io.Reader, row func(line int, fields [][]byte) (traceRow, error)) error {
	header := false
	var fields [][]byte
	err := scanLines(r, func(n int, line []byte) error {
		if n == 1 {
			switch string(line) {
			case record.TraceHeader:
			case record.RealTraceHeader:
				td.real = true
			default:
				return fmt.Errorf("not a hilrig trace: its header is %s", excerpt(string(line)))
			}
			header = true
			return nil
		}
		fields = splitFields(fields, line)
		if len(fields) < 6 {
			return fmt.Errorf("trace line %d: %d fields", n, len(fields))
		}
		if len(fields[1]) == 0 {
			return nil // a supervisor's row
		}
		_, err := row(n, fields)
		return err
	})
	if err == nil && !header {
		err = errors.New("empty trace")
	}
	return err
}

// parseRow reads a frame's times and fate.
func parseRow(fields [][]byte, line int, real bool) (traceRow, error) {
	row := traceRow{recv: math.NaN(), due: math.NaN()}
	var err error
	if row.sent, err = seconds(fields[3]); err != nil {
		return row, fmt.Errorf("trace line %d: t_send %s", line, excerpt(string(fields[3])))
	}
	status := fields[5]
	switch {
	case len(fields[4]) > 0:
		if row.recv, err = seconds(fields[4]); err != nil {
			return row, fmt.Errorf("trace line %d: t_recv %s", line, excerpt(string(fields[4])))
		}
		row.delivered = string(status) != record.StatusName(record.EgressDrop)
		if real && row.delivered && len(fields) > 6 && len(fields[6]) > 0 {
			if due, err := seconds(fields[6]); err == nil {
				row.due = due
			}
		}
	case string(status) == "in_flight":
		row.out = true
	}
	return row, nil
}

// seconds reads a time of a trace: seconds from the run's start, no
// later than the latest instant hilrig takes.
func seconds(b []byte) (float64, error) {
	v, ok := nineDecimals(b)
	if !ok {
		var err error
		if v, err = strconv.ParseFloat(string(b), 64); err != nil {
			return v, err
		}
	}
	if !(v >= 0 && v <= emulator.MaxDuration.Seconds()) {
		return v, errors.New("not a time of a run")
	}
	return v, nil
}

// nineDecimals reads a time as hilrig writes it (record.AppendSeconds:
// whole seconds, a point, nine digits) the fast way, which half the time
// of reading a trace went to: its nanoseconds, a whole number, divided by
// 1e9, which rounds as ParseFloat does while both are exact in a float64
// (below 2⁵³ ns, 104 days). ok is false for any other text.
func nineDecimals(b []byte) (v float64, ok bool) {
	point := len(b) - 10
	if point < 1 || point > 9 || b[point] != '.' {
		return 0, false
	}
	var ns int64
	for i, c := range b {
		if i == point {
			continue
		}
		if c < '0' || c > '9' {
			return 0, false
		}
		ns = ns*10 + int64(c-'0')
	}
	if ns > 1<<53 {
		return 0, false
	}
	return float64(ns) / 1e9, true
}

// addInFlight counts a frame inside the network from a to b into the
// slices of the run it spans: the part of each slice it spent inside.
// The slices it covers whole are carried as a difference, so that a
// frame held for the whole run costs what a brief one does.
func (td *traceData) addInFlight(fs *flowSeries, a, b float64) {
	if td.end <= 0 || !(b > a) {
		return
	}
	width := td.end / inFlightSlices
	slice := func(t float64) int { return min(max(int(t/width), 0), inFlightSlices-1) }
	first, last := slice(a), slice(b)
	if first == last {
		fs.inFlight[first] += b - a
		return
	}
	fs.inFlight[first] += float64(float64(first+1)*width) - a
	fs.inFlight[last] += b - float64(float64(last)*width)
	fs.carried[first+1] += width
	fs.carried[last] -= width
}

// signalsData is a signals or queues file read for plotting: the
// columns asked for, each thinned, and the run's end.
type signalsData struct {
	columns []string // every column after t, as the header names them
	series  map[string]*envelope
	end     float64 // the latest t
	rows    int
}

// readSignals reads the columns of a signals file (a t column, then a
// column per signal) that wanted picks from its header, each thinned to
// n slices of the run from 0 to the file's last t, at least minEnd
// (envelope; whole keeps a short series whole).
func readSignals(path string, minEnd float64, n int, whole bool, wanted func(columns []string) []string) (*signalsData, error) {
	f, _, err := lang.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSignals(f, minEnd, n, whole, wanted)
}

func parseSignals(r io.ReadSeeker, minEnd float64, n int, whole bool, wanted func(columns []string) []string) (*signalsData, error) {
	sd := &signalsData{end: minEnd, series: map[string]*envelope{}}
	var index []int // of each wanted column among the fields
	var names []string
	var fields [][]byte
	pass := func(row func(t float64, fields [][]byte) error) error {
		err := scanLines(r, func(n int, line []byte) error {
			fields = splitFields(fields, line)
			if n == 1 {
				if string(fields[0]) != "t" {
					return fmt.Errorf("not a hilrig signals file: it starts with %s", excerpt(string(fields[0])))
				}
				if sd.columns == nil {
					sd.columns = []string{}
					for _, c := range fields[1:] {
						sd.columns = append(sd.columns, string(c))
					}
					for _, name := range wanted(sd.columns) {
						if i := slices.Index(sd.columns, name); i >= 0 && !slices.Contains(names, name) {
							names, index = append(names, name), append(index, i+1)
						}
					}
				}
				return nil
			}
			if len(fields) != len(sd.columns)+1 {
				return fmt.Errorf("signals line %d: %d fields for %d columns", n, len(fields), len(sd.columns)+1)
			}
			t, err := strconv.ParseFloat(string(fields[0]), 64)
			if err != nil {
				return fmt.Errorf("signals line %d: %s is not a number", n, excerpt(string(fields[0])))
			}
			for _, i := range index {
				if _, err := strconv.ParseFloat(string(fields[i]), 64); err != nil {
					return fmt.Errorf("signals line %d: %s is not a number", n, excerpt(string(fields[i])))
				}
			}
			return row(t, fields)
		})
		if err == nil && sd.columns == nil {
			err = errors.New("empty signals file")
		}
		return err
	}
	if err := pass(func(t float64, _ [][]byte) error {
		sd.rows++
		sd.end = max(sd.end, t)
		return nil
	}); err != nil {
		return nil, err
	}
	var series []*envelope
	for _, name := range names {
		e := &envelope{count: sd.rows}
		e.prepare(sd.end, n, whole)
		sd.series[name] = e
		series = append(series, e)
	}
	if len(index) == 0 {
		return sd, nil
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	err := pass(func(t float64, fields [][]byte) error {
		for k, i := range index {
			v, _ := strconv.ParseFloat(string(fields[i]), 64)
			series[k].add(t, v)
		}
		return nil
	})
	return sd, err
}

// bucket is a slice of the run in a thinned series: the slice's start,
// and the smallest, largest and mean value in it.
type bucket struct{ t, lo, hi, mean float64 }

// envelope thins a series of (t, v) to what a plot of it shows, from two
// passes over it: observe every t, then prepare, then add every (t, v).
// A series of at most twice as many points as slices is kept whole, a
// point per bucket, when whole is asked for; any other is cut into n
// equal slices of [0, end), the empty ones left out, each the smallest,
// largest and mean of its values, so that a plot of the extremes loses no
// spike.
type envelope struct {
	count   int
	width   float64
	points  []bucket // kept whole, in the order added
	slices  []bucket // by slice; slice n holds t = end
	inSlice []int
}

func (e *envelope) observe(float64) { e.count++ }

func (e *envelope) prepare(end float64, n int, whole bool) {
	if (whole && e.count <= 2*n) || end <= 0 {
		e.points = make([]bucket, 0, e.count)
		return
	}
	e.width = end / float64(n)
	e.slices = make([]bucket, n+1)
	e.inSlice = make([]int, n+1)
}

func (e *envelope) add(t, v float64) {
	if e.slices == nil {
		if len(e.points) < e.count { // a file that grew between the passes adds nothing
			e.points = append(e.points, bucket{t, v, v, v})
		}
		return
	}
	k := min(max(int(t/e.width), 0), len(e.slices)-1)
	b := &e.slices[k]
	if e.inSlice[k] == 0 {
		*b = bucket{t: float64(k) * e.width, lo: v, hi: v}
	}
	b.lo, b.hi = min(b.lo, v), max(b.hi, v)
	b.mean += v // the sum, until buckets
	e.inSlice[k]++
}

// buckets is the thinned series, by time.
func (e *envelope) buckets() []bucket {
	if e.slices == nil {
		out := make([]bucket, len(e.points))
		copy(out, e.points)
		slices.SortStableFunc(out, func(a, b bucket) int { return cmp.Compare(a.t, b.t) })
		return out
	}
	var out []bucket
	for k, b := range e.slices {
		if e.inSlice[k] > 0 {
			b.mean /= float64(e.inSlice[k])
			out = append(out, b)
		}
	}
	return out
}

// histogram is the distribution of a series of values, from two passes
// over it: observe every value, then prepare, then add each. Its bins
// split the range from the least value to the greatest in equal parts of
// its logarithm when the least is above 0 (as a delay is: the plot's
// axis is logarithmic), else in equal parts.
type histogram struct {
	n      int
	lo, hi float64
	log    bool    // the bins are equal in log(v/lo)
	width  float64 // of a bin, in v or in log(v/lo)
	counts []int
}

func (h *histogram) observe(v float64) {
	if h.n == 0 {
		h.lo, h.hi = v, v
	}
	h.lo, h.hi = min(h.lo, v), max(h.hi, v)
	h.n++
}

func (h *histogram) prepare(bins int) {
	if h.n == 0 {
		return
	}
	h.log = h.lo > 0
	h.width = (h.hi - h.lo) / float64(bins)
	if h.log {
		h.width = detmath.Log(h.hi/h.lo) / float64(bins)
	}
	h.counts = make([]int, bins)
}

func (h *histogram) add(v float64) {
	if h.counts == nil {
		return
	}
	k := len(h.counts) - 1
	switch {
	case h.width > 0 && h.log:
		k = min(max(int(detmath.Log(v/h.lo)/h.width), 0), k)
	case h.width > 0:
		k = min(max(int((v-h.lo)/h.width), 0), k)
	}
	h.counts[k]++
}

// edge is the upper edge of bin k.
func (h *histogram) edge(k int) float64 {
	if h.log {
		return h.lo * detmath.Exp(float64(k+1)*h.width)
	}
	return h.lo + float64(float64(k+1)*h.width)
}

// cdf is the empirical distribution function at the upper edge of every
// bin that holds a value, from the least value at 0: within a bin's width
// of the exact one, and exact at the greatest value.
func (h *histogram) cdf() (x, y []float64) {
	if h.n == 0 {
		return nil, nil
	}
	total := 0
	for _, c := range h.counts {
		total += c
	}
	if total == 0 {
		return nil, nil
	}
	x, y = []float64{h.lo}, []float64{0}
	cum := 0
	for k, c := range h.counts {
		if c == 0 {
			continue
		}
		cum += c
		x, y = append(x, h.edge(k)), append(y, float64(cum)/float64(total))
	}
	x[len(x)-1] = h.hi
	return x, y
}
