package expect

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Signals accumulates a run's model signals as the signals file is
// written (give it as rig.Options.Signals, or alongside the file with
// io.MultiWriter), so that expectations on them hold over a run of any
// length without keeping it: per column its extremes, sums and last value,
// and per signal its error against the uncut model's (ENDPOINT.ideal.SIGNAL).
type Signals struct {
	partial []byte
	columns []string
	stats   []columnStats
	rows    uint64
	err     error
}

type columnStats struct {
	min, max, sum, sumSq, last, peak float64
	// Against the uncut model's column ideal (-1: none).
	ideal                     int
	maxErr, sumSqErr, idealPk float64
}

// Write takes the next bytes of the signals CSV.
func (s *Signals) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	start := 0
	for {
		i := bytes.IndexByte(s.partial[start:], '\n')
		if i < 0 {
			break
		}
		s.line(s.partial[start : start+i])
		start += i + 1
	}
	s.partial = s.partial[:copy(s.partial, s.partial[start:])]
	return len(p), nil
}

func (s *Signals) line(l []byte) {
	if s.err != nil {
		return
	}
	if s.columns == nil {
		s.header(strings.Split(string(l), ","))
		return
	}
	n := 0
	for field := range bytes.SplitSeq(l, []byte{','}) {
		if n > 0 {
			v, err := strconv.ParseFloat(string(field), 64)
			if err != nil || n > len(s.stats) {
				s.err = fmt.Errorf("signals row %d: %q is not a number", s.rows+1, field)
				return
			}
			c := &s.stats[n-1]
			if s.rows == 0 {
				c.min, c.max = v, v
			}
			c.min, c.max = min(c.min, v), max(c.max, v)
			c.sum += v
			c.sumSq += float64(v * v) // not fused (emulator/detmath's doc)
			c.peak = max(c.peak, math.Abs(v))
			c.last = v
		}
		n++
	}
	if n-1 != len(s.stats) {
		s.err = fmt.Errorf("signals row %d has %d values for %d columns", s.rows+1, n-1, len(s.stats))
		return
	}
	for i := range s.stats {
		c := &s.stats[i]
		if c.ideal < 0 {
			continue
		}
		ref := s.stats[c.ideal].last
		e := c.last - ref
		c.maxErr = max(c.maxErr, math.Abs(e))
		c.sumSqErr += float64(e * e)
		c.idealPk = max(c.idealPk, math.Abs(ref))
	}
	s.rows++
}

func (s *Signals) header(cols []string) {
	if len(cols) == 0 || cols[0] != "t" {
		s.err = fmt.Errorf("the signals file starts with %q, not t", cols[0])
		return
	}
	s.columns = cols[1:]
	s.stats = make([]columnStats, len(s.columns))
	index := map[string]int{}
	for i, c := range s.columns {
		index[c] = i
	}
	for i, c := range s.columns {
		s.stats[i].ideal = -1
		ep, sig, ok := strings.Cut(c, ".")
		if !ok || strings.HasPrefix(sig, "ideal.") {
			continue
		}
		sig = strings.TrimPrefix(sig, "hardware.")
		if j, ok := index[ep+".ideal."+sig]; ok {
			s.stats[i].ideal = j
		}
	}
}

// Rows is how many rows (exchanges) were taken in.
func (s *Signals) Rows() uint64 { return s.rows }

// Err is the first problem found in the file.
func (s *Signals) Err() error { return s.err }

// column finds a signal of a model endpoint: the rig's part's, else the
// hardware stand-in's.
func (s *Signals) column(endpoint, signal string) int {
	for _, name := range []string{endpoint + "." + signal, endpoint + ".hardware." + signal} {
		for i, c := range s.columns {
			if c == name {
				return i
			}
		}
	}
	return -1
}

func (s *Signals) value(r *signalRef) value {
	name := r.endpoint + "." + r.signal
	switch {
	case s != nil && s.err != nil:
		return value{missing: s.err.Error()}
	case s == nil || s.columns == nil:
		return value{missing: "the run recorded no signals"}
	case s.rows == 0:
		return value{missing: "the run recorded no exchange"}
	}
	i := s.column(r.endpoint, r.signal)
	if i < 0 {
		return value{missing: "the signals have no column " + name}
	}
	c := &s.stats[i]
	n := float64(s.rows)
	switch r.stat {
	case "min":
		return value{num: c.min}
	case "max":
		return value{num: c.max}
	case "mean":
		return value{num: c.sum / n}
	case "rms":
		return value{num: math.Sqrt(c.sumSq / n)}
	case "peak":
		return value{num: c.peak}
	case "final":
		return value{num: c.last}
	}
	if c.ideal < 0 {
		return value{missing: "the signals have no uncut " + r.endpoint + ".ideal." + r.signal + " to compare with"}
	}
	switch r.stat {
	case "max_error":
		return value{num: c.maxErr}
	case "rms_error":
		return value{num: math.Sqrt(c.sumSqErr / n)}
	}
	if c.idealPk == 0 {
		return value{missing: "the uncut " + name + " stays at 0: only max_error means anything"}
	}
	return value{num: 100 * c.maxErr / c.idealPk}
}
