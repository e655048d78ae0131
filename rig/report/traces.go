package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/hilrig/hilrig/rig/record"
)

// flowSeries is what a report plots of one flow, read from a trace.
type flowSeries struct {
	name     string
	sent     []float64 // t_send of delivered frames, s
	delay    []float64 // their one-way delay, s
	dropped  []float64 // t_send of dropped frames
	inFlight []step    // +1 at t_send, −1 when delivered (drops never enter)
	late     []point   // real time: t_recv − t_due at t_due
}

type point struct{ t, v float64 }

// step is a change of the frames in flight at an instant.
type step struct {
	t float64
	d int
}

// traceData is a trace read for plotting.
type traceData struct {
	flows []*flowSeries
	real  bool // the trace has t_due
	end   float64
}

// readTrace reads a hilrig trace (virtual or real time). The supervisor's
// rows (no seq) are skipped: they mark events, not frames.
func readTrace(path string) (*traceData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseTrace(f)
}

func parseTrace(r io.Reader) (*traceData, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("empty trace")
	}
	td := &traceData{}
	switch sc.Text() {
	case record.TraceHeader:
	case record.RealTraceHeader:
		td.real = true
	default:
		return nil, fmt.Errorf("not a hilrig trace: its header is %q", sc.Text())
	}
	byName := map[string]*flowSeries{}
	line := 1
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), ",")
		if len(fields) < 6 {
			return nil, fmt.Errorf("trace line %d: %d fields", line, len(fields))
		}
		if fields[1] == "" {
			continue // a supervisor's row
		}
		fs := byName[fields[0]]
		if fs == nil {
			fs = &flowSeries{name: fields[0]}
			byName[fields[0]] = fs
			td.flows = append(td.flows, fs)
		}
		sent, err := strconv.ParseFloat(fields[3], 64)
		if err != nil || math.IsNaN(sent) || math.IsInf(sent, 0) {
			return nil, fmt.Errorf("trace line %d: t_send %q", line, fields[3])
		}
		td.end = max(td.end, sent)
		status := fields[5]
		switch {
		case fields[4] != "":
			recv, err := strconv.ParseFloat(fields[4], 64)
			if err != nil || math.IsNaN(recv) || math.IsInf(recv, 0) {
				return nil, fmt.Errorf("trace line %d: t_recv %q", line, fields[4])
			}
			td.end = max(td.end, recv)
			fs.inFlight = append(fs.inFlight, step{sent, 1}, step{recv, -1})
			if status == "egress_drop" {
				fs.dropped = append(fs.dropped, sent)
				continue
			}
			fs.sent = append(fs.sent, sent)
			fs.delay = append(fs.delay, recv-sent)
			if td.real && len(fields) > 6 && fields[6] != "" {
				if due, err := strconv.ParseFloat(fields[6], 64); err == nil && !math.IsNaN(due) && !math.IsInf(due, 0) {
					fs.late = append(fs.late, point{due, recv - due})
				}
			}
		case status == "in_flight":
			fs.inFlight = append(fs.inFlight, step{sent, 1})
		default:
			fs.dropped = append(fs.dropped, sent)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, fs := range td.flows {
		slices.SortFunc(fs.inFlight, func(a, b step) int {
			if a.t != b.t {
				if a.t < b.t {
					return -1
				}
				return 1
			}
			return b.d - a.d // arrivals before departures at one instant
		})
	}
	return td, nil
}

// signalsData is a signals file read for plotting.
type signalsData struct {
	columns []string
	t       []float64
	values  [][]float64 // per column
}

func readSignals(path string) (*signalsData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("empty signals file")
	}
	head := strings.Split(sc.Text(), ",")
	if head[0] != "t" {
		return nil, fmt.Errorf("not a hilrig signals file: it starts with %q", head[0])
	}
	sd := &signalsData{columns: head[1:], values: make([][]float64, len(head)-1)}
	line := 1
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), ",")
		if len(fields) != len(head) {
			return nil, fmt.Errorf("signals line %d: %d fields for %d columns", line, len(fields), len(head))
		}
		for i, s := range fields {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("signals line %d: %q is not a number", line, s)
			}
			if i == 0 {
				sd.t = append(sd.t, v)
			} else {
				sd.values[i-1] = append(sd.values[i-1], v)
			}
		}
	}
	return sd, sc.Err()
}

func (sd *signalsData) column(name string) []float64 {
	if i := slices.Index(sd.columns, name); i >= 0 {
		return sd.values[i]
	}
	return nil
}

// bucket is a slice of the run in a thinned series: the slice's start,
// and the smallest, largest and mean value in it.
type bucket struct{ t, lo, hi, mean float64 }

// thin cuts a series sorted by time into at most n equal slices of
// [0, end), so that a plot of the extremes loses no spike; a series short
// enough is kept whole, a point per bucket.
func thin(t, v []float64, end float64, n int) []bucket {
	if len(t) <= 2*n {
		return whole(t, v)
	}
	return inSlices(t, v, end, n)
}

func whole(t, v []float64) []bucket {
	out := make([]bucket, len(t))
	for i := range t {
		out[i] = bucket{t[i], v[i], v[i], v[i]}
	}
	return out
}

// inSlices cuts a series sorted by time into n equal slices of [0, end),
// the empty ones left out.
func inSlices(t, v []float64, end float64, n int) []bucket {
	if end <= 0 {
		return whole(t, v)
	}
	width := end / float64(n)
	var out []bucket
	for i := 0; i < len(t); {
		k := int(t[i] / width)
		b := bucket{t: float64(k) * width, lo: v[i], hi: v[i]}
		sum, j := 0.0, i
		for ; j < len(t) && int(t[j]/width) == k; j++ {
			b.lo, b.hi = min(b.lo, v[j]), max(b.hi, v[j])
			sum += v[j]
		}
		b.mean = sum / float64(j-i)
		out = append(out, b)
		i = j
	}
	return out
}
