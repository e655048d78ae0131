package web

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/hilrig/hilrig/rig/record"
)

// The server keeps the run's history, in its own process, so that a page
// opened late or reloaded plots the run from its start: one point per
// series for each snapshot the rig sends (every record.PublishEvery of the
// run's clock) for the last HistoryRecent of them, and before those at
// most HistoryOlder points, each the merge of the snapshots of a stretch
// of the run, the stretches twice as long each time the points would
// outnumber HistoryOlder. So a series holds at most HistoryRecent +
// HistoryOlder points, whatever the run's length: the last 5 minutes at
// full resolution, and a 24-hour run's earlier part in stretches of
// 102.4 s (0.1 s doubled 10 times).
//
// A merged point keeps what a plot of it needs: the mean (weighted: the
// delay of the frames delivered, the loss of the frames finished) and the
// least and greatest value of the snapshots merged, so that a peak (a
// 3 s hold among 4 ms delays, a second out of sync) is never averaged
// away.
const (
	HistoryRecent = 3000
	HistoryOlder  = 1000
)

// historyPointBytes is what a point takes in memory: 40 bytes.
const historyPointBytes = int(unsafe.Sizeof(point{}))

// point is a series' value at T: the snapshot's, or the merge of the
// snapshots of the stretch of the run that ends at T.
type point struct {
	T time.Duration
	// The value is Num/Den: a gauge's value with Den 1, the mean of
	// delays weighted by the frames (Num the sum), a loss as the frames
	// lost over those finished, a rate as frames over seconds. Den 0 is
	// no value (no frame was delivered, none finished): a gap in the plot.
	Num, Den float64
	Min, Max float64 // of the values merged (+Inf, -Inf: none)
}

func (p *point) merge(q point) {
	p.T = q.T
	p.Num += q.Num
	p.Den += q.Den
	p.Min = math.Min(p.Min, q.Min)
	p.Max = math.Max(p.Max, q.Max)
}

// seriesKey names a series: the plot it belongs to (delay, loss, queue,
// outage, model, sync, out_of_sync, late, endpoint_in, away), what it is
// of (a flow, a hop, an endpoint) and which part (p50, p99; value, uncut).
type seriesKey struct {
	Plot string `json:"plot"`
	Name string `json:"name"`
	Part string `json:"part,omitempty"`
}

// series is one line of a plot over the run.
type series struct {
	seriesKey
	recent []point // a ring of the latest points, oldest at head once full
	head   int
	older  []point       // the merged points before them, in time order
	width  time.Duration // the run's time each of older covers, at most
	// For a series of a ratio of counts (a loss, a rate): the counts at
	// the previous snapshot.
	lastNum, lastDen float64
	counted          bool
}

// history is the run's series. Every series gets a point at every
// snapshot after it appears, so that a point's number (n, counted from 1
// over the run) says where a client is.
type history struct {
	mu     sync.Mutex
	n      uint64 // snapshots taken
	byKey  map[seriesKey]*series
	series []*series // in the order they appeared
}

func newHistory() *history { return &history{byKey: map[seriesKey]*series{}} }

// add takes a snapshot's points.
func (h *history) add(s *record.Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	t := s.Time
	for i := range s.Flows {
		f := &s.Flows[i]
		n := float64(f.Recent.Count)
		h.gauge(t, "delay", f.Name, "p50", f.Recent.P50.Seconds()*n, n)
		h.gauge(t, "delay", f.Name, "p99", f.Recent.P99.Seconds()*n, n)
		lost := f.Lost()
		h.ratio(t, "loss", f.Name, "", float64(lost), float64(lost+f.Delivered))
	}
	for i := range s.Hops {
		hp := &s.Hops[i]
		h.gauge(t, "queue", hp.Name, "", float64(hp.QueueBytes), 1)
		h.gauge(t, "outage", hp.Name, "", flag(hp.Outage != 0), 1)
	}
	for i := range s.Models {
		m := &s.Models[i]
		if m.Output != "" {
			h.gauge(t, "model", m.Endpoint, "value", m.Value, 1)
			h.gauge(t, "model", m.Endpoint, "uncut", m.Ideal, 1)
		}
		if m.Sync.Supervised {
			h.gauge(t, "sync", m.Endpoint, "", m.Sync.TDiff.Seconds(), 1)
			h.gauge(t, "out_of_sync", m.Endpoint, "", flag(m.Sync.OutOfSync), 1)
		}
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		h.ratio(t, "endpoint_in", e.Name, "", float64(e.FramesIn), t.Seconds())
		h.gauge(t, "away", e.Name, "", flag(e.Away), 1)
	}
	if tm := &s.Timing; tm.Real {
		n := float64(tm.RecentRelease.Count)
		h.gauge(t, "late", "release", "p99", tm.RecentRelease.P99.Seconds()*n, n)
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// gauge adds a point of value num/den (den 0: none).
func (h *history) gauge(t time.Duration, plot, name, part string, num, den float64) {
	h.of(plot, name, part).push(valued(t, num, den))
}

// ratio adds a point of the ratio of what two counts grew by since the
// previous snapshot (none at the first).
func (h *history) ratio(t time.Duration, plot, name, part string, num, den float64) {
	s := h.of(plot, name, part)
	p := valued(t, 0, 0)
	if s.counted {
		p = valued(t, num-s.lastNum, den-s.lastDen)
	}
	s.lastNum, s.lastDen, s.counted = num, den, true
	s.push(p)
}

func valued(t time.Duration, num, den float64) point {
	if den <= 0 || math.IsNaN(num) || math.IsInf(num, 0) {
		return point{T: t, Min: math.Inf(1), Max: math.Inf(-1)}
	}
	v := num / den
	return point{T: t, Num: num, Den: den, Min: v, Max: v}
}

func (h *history) of(plot, name, part string) *series {
	k := seriesKey{plot, name, part}
	s := h.byKey[k]
	if s == nil {
		s = &series{seriesKey: k, width: record.PublishEvery}
		h.byKey[k] = s
		h.series = append(h.series, s)
	}
	return s
}

// push adds the latest point; the oldest of the ring, once it is full,
// joins the merged ones.
func (s *series) push(p point) {
	if len(s.recent) < HistoryRecent {
		s.recent = appendBounded(s.recent, p, HistoryRecent)
		return
	}
	s.retire(s.recent[s.head])
	s.recent[s.head] = p
	s.head = (s.head + 1) % HistoryRecent
}

// retire merges p into the older points: into the last if it falls in
// the same stretch of width, else as a new one; when they reach
// HistoryOlder, the stretches double and the points are merged again.
func (s *series) retire(p point) {
	if n := len(s.older); n > 0 && s.older[n-1].T/s.width == p.T/s.width {
		s.older[n-1].merge(p)
		return
	}
	s.older = appendBounded(s.older, p, HistoryOlder)
	for len(s.older) >= HistoryOlder {
		s.width *= 2
		merged := s.older[:1]
		for _, q := range s.older[1:] {
			if last := &merged[len(merged)-1]; last.T/s.width == q.T/s.width {
				last.merge(q)
			} else {
				merged = append(merged, q)
			}
		}
		clear(s.older[len(merged):])
		s.older = merged
	}
}

// appendBounded appends p to ps, whose capacity grows as append's would
// but never past limit.
func appendBounded(ps []point, p point, limit int) []point {
	if len(ps) == cap(ps) {
		grown := make([]point, len(ps), min(max(2*cap(ps), 16), limit))
		copy(grown, ps)
		ps = grown
	}
	return append(ps, p)
}

// points returns the series' last k points (all of them when k exceeds
// the ring: the merged ones first), in time order.
func (s *series) points(k int) []point {
	n := len(s.recent)
	var out []point
	if k > n {
		out = append(out, s.older...)
		k = n
	}
	for i := n - k; i < n; i++ {
		out = append(out, s.recent[(s.head+i)%n])
	}
	return out
}

// bytes is what the series' points take in memory.
func (s *series) bytes() int { return (cap(s.recent) + cap(s.older)) * historyPointBytes }

// SeriesJSON is a series' points: [t_s, value] at full resolution,
// [t_s, mean, min, max] for a point that merges several snapshots whose
// values differ, [t_s, null] where there is no value.
type SeriesJSON struct {
	seriesKey
	Points pointsJSON `json:"points"`
}

type pointsJSON []point

func (ps pointsJSON) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(ps)*24)
	b = append(b, '[')
	num := func(v float64) {
		b = strconv.AppendFloat(b, v, 'g', 6, 64)
	}
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendFloat(b, p.T.Seconds(), 'f', -1, 64)
		b = append(b, ',')
		if p.Den <= 0 {
			b = append(b, "null"...)
		} else {
			num(p.Num / p.Den)
			if p.Min != p.Max {
				b = append(b, ',')
				num(p.Min)
				b = append(b, ',')
				num(p.Max)
			}
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads points as MarshalJSON writes them, for Go clients
// of the stream and the history.
func (ps *pointsJSON) UnmarshalJSON(b []byte) error {
	var raw [][]*float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*ps = make(pointsJSON, 0, len(raw))
	for _, r := range raw {
		if len(r) < 2 || r[0] == nil {
			return errors.New("a point is [t_s, value], [t_s, mean, min, max] or [t_s, null]")
		}
		t := time.Duration(math.Round(*r[0] * 1e9))
		if r[1] == nil {
			*ps = append(*ps, valued(t, 0, 0))
			continue
		}
		p := valued(t, *r[1], 1)
		if len(r) == 4 && r[2] != nil && r[3] != nil {
			p.Min, p.Max = *r[2], *r[3]
		}
		*ps = append(*ps, p)
	}
	return nil
}

// since returns every series' points after the first `after` snapshots
// (0: from the start), the number of snapshots taken, and whether a
// client that had `after` must start again: it is further behind than
// the full-resolution points reach, and is sent the whole history.
func (h *history) since(after uint64) (out []SeriesJSON, n uint64, reset bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if after > h.n {
		after = 0 // another run's count
	}
	if h.n-after > HistoryRecent {
		reset, after = after > 0, 0
	}
	for _, s := range h.series {
		k := int(h.n - after)
		if after == 0 {
			k = math.MaxInt
		}
		if k == 0 {
			continue
		}
		out = append(out, SeriesJSON{seriesKey: s.seriesKey, Points: s.points(k)})
	}
	return out, h.n, reset
}

// HistoryJSON is the answer of GET /api/v1/history.
type HistoryJSON struct {
	// Snapshots is how many the history took; Recent and Older its bounds
	// per series, and ResolutionS the run's time between snapshots.
	Snapshots   uint64       `json:"snapshots"`
	ResolutionS float64      `json:"resolution_s"`
	Recent      int          `json:"recent_points"`
	Older       int          `json:"older_points"`
	Series      []SeriesJSON `json:"series"`
}

func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) {
	series, n, _ := s.history.since(0)
	if series == nil {
		series = []SeriesJSON{}
	}
	writeJSON(w, http.StatusOK, HistoryJSON{Snapshots: n, ResolutionS: record.PublishEvery.Seconds(), Recent: HistoryRecent, Older: HistoryOlder, Series: series})
}
