package web

import (
	"encoding/json"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/record"
)

// runSnapshot is a snapshot of a run at t with a flow, a hop, a model and
// a device: a 4 ms delay but for a 3 s hold from 1 h for 2 s, and a
// frame lost in ten.
func runSnapshot(s *record.Snapshot, t time.Duration) {
	k := uint64(t / record.PublishEvery)
	delay := 4 * time.Millisecond
	if t > time.Hour && t <= time.Hour+2*time.Second {
		delay = 3 * time.Second
	}
	s.Reset(t, time.Time{})
	s.Flows = append(s.Flows, record.FlowProgress{Name: "m2s", Sent: 10 * k, Delivered: 9 * k, LossDrops: k,
		Recent: record.DelayProgress{Count: 9, P50: delay, P99: delay + time.Millisecond}})
	s.Hops = append(s.Hops, record.HopProgress{Name: "core", QueueBytes: int64(k % 7 * 100)})
	s.Models = append(s.Models, record.ModelProgress{Endpoint: "car", Output: "speed", Value: float64(k), Ideal: float64(k) + 1,
		Sync: record.SyncProgress{Supervised: true, TDiff: time.Duration(k%5) * time.Millisecond}})
	s.Endpoints = append(s.Endpoints, record.EndpointProgress{Name: "controller", FramesIn: 10 * k, Away: t > 2*time.Hour && t < 2*time.Hour+time.Second})
	s.Timing = record.TimingProgress{Real: true, RecentRelease: record.DelayProgress{Count: 100, P99: 50 * time.Microsecond}}
}

// TestHistoryIsBounded: six hours of a run's snapshots (216 000) leave
// every series with at most HistoryRecent + HistoryOlder points (160 kB),
// the last 5 minutes at full resolution, the run from its start, and the
// 2 s of 3 s delays at 1 h in the merged points' greatest value.
func TestHistoryIsBounded(t *testing.T) {
	const run = 6 * time.Hour
	h := newHistory()
	var s record.Snapshot
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for at := record.PublishEvery; at <= run; at += record.PublishEvery {
		runSnapshot(&s, at)
		h.add(&s)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	const bound = (HistoryRecent + HistoryOlder) * 40
	if historyPointBytes != 40 {
		t.Errorf("a point takes %d bytes, not 40", historyPointBytes)
	}
	total := 0
	for _, se := range h.series {
		total += se.bytes()
		if len(se.recent) != HistoryRecent || len(se.older) >= HistoryOlder || se.bytes() > bound {
			t.Errorf("%v: %d recent and %d older points, %d bytes; bound %d", se.seriesKey, len(se.recent), len(se.older), se.bytes(), bound)
		}
		ps := se.points(math.MaxInt)
		if first := ps[0].T; first > se.width {
			t.Errorf("%v begins at %v, not at the run's start", se.seriesKey, first)
		}
		last := ps[len(ps)-HistoryRecent:]
		for i := 1; i < len(last); i++ {
			if last[i].T-last[i-1].T != record.PublishEvery {
				t.Fatalf("%v: the recent points at %v and %v", se.seriesKey, last[i-1].T, last[i].T)
			}
		}
		if last[len(last)-1].T != run || run-last[0].T != (HistoryRecent-1)*record.PublishEvery {
			t.Errorf("%v: full resolution from %v to %v", se.seriesKey, last[0].T, last[len(last)-1].T)
		}
	}
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d series after %v: %d points each at most, %d bytes each at most, %d bytes in all; the heap grew by %d bytes", len(h.series), run, HistoryRecent+HistoryOlder, bound, total, grown)
	if grown > int64(len(h.series)*bound)+64<<10 {
		t.Errorf("the heap grew by %d bytes for %d series", grown, len(h.series))
	}
	// 6 h less the 5 min at full resolution in fewer than 1000 stretches:
	// 0.1 s doubled until 21 300 s / 1000 fits, 25.6 s.
	p99 := h.byKey[seriesKey{"delay", "m2s", "p99"}]
	if p99.width != 25600*time.Millisecond {
		t.Errorf("older points of %v", p99.width)
	}
	var peak float64
	for _, p := range p99.older {
		peak = max(peak, p.Max)
	}
	if peak != 3.001 {
		t.Errorf("the greatest p99 of the merged points is %g s; want the hold's 3.001 s", peak)
	}
	var away bool
	for _, p := range h.byKey[seriesKey{"away", "controller", ""}].older {
		away = away || p.Max == 1
	}
	if !away {
		t.Error("the device's second away at 2 h is merged away")
	}
}

// TestHistoryMergesWeighted: a merged point's value is the frames' own
// mean (a loss over the frames finished, a delay over those delivered),
// not the mean of the snapshots' values.
func TestHistoryMergesWeighted(t *testing.T) {
	h := newHistory()
	var s record.Snapshot
	// Snapshot 1: nothing yet. 2: 10 frames finish, 0 lost, delay 1 ms
	// over 10 frames. 3: 2 frames finish, both lost, no delay.
	for i, f := range []record.FlowProgress{
		{Name: "f"},
		{Name: "f", Delivered: 10, Recent: record.DelayProgress{Count: 10, P50: time.Millisecond}},
		{Name: "f", Delivered: 10, LossDrops: 2},
	} {
		s.Reset(time.Duration(i+1)*record.PublishEvery, time.Time{})
		s.Flows = append(s.Flows, f)
		h.add(&s)
	}
	loss := h.byKey[seriesKey{"loss", "f", ""}]
	p := loss.recent[1]
	p.merge(loss.recent[2])
	if p.Num/p.Den != 2.0/12 || p.Min != 0 || p.Max != 1 {
		t.Errorf("merged loss %+v: want 2/12, from 0 to 1", p)
	}
	if loss.recent[0].Den != 0 {
		t.Errorf("a loss at the first snapshot: %+v", loss.recent[0])
	}
	delay := h.byKey[seriesKey{"delay", "f", "p50"}]
	d := delay.recent[0]
	d.merge(delay.recent[1])
	d.merge(delay.recent[2])
	if d.Num/d.Den != 0.001 || d.Min != 0.001 || d.Max != 0.001 {
		t.Errorf("merged delay %+v: want 1 ms", d)
	}
	b, err := json.Marshal(pointsJSON{loss.recent[0], loss.recent[1], p})
	if err != nil || string(b) != `[[0.1,null],[0.2,0],[0.3,0.166667,0,1]]` {
		t.Errorf("points in JSON: %s, %v", b, err)
	}
	var back pointsJSON
	if err := json.Unmarshal(b, &back); err != nil || len(back) != 3 || back[0].Den != 0 || back[1].Num != 0 || back[1].Den != 1 ||
		back[2].T != 300*time.Millisecond || back[2].Num != 0.166667 || back[2].Min != 0 || back[2].Max != 1 {
		t.Errorf("points read back: %+v, %v", back, err)
	}
}

// TestHistorySince: a client is sent every point once, the first time
// from the run's start; one further behind than the full-resolution
// points reach is sent the whole history again, and told to start over.
func TestHistorySince(t *testing.T) {
	h := newHistory()
	var s record.Snapshot
	at := time.Duration(0)
	add := func(n int) {
		for range n {
			at += record.PublishEvery
			runSnapshot(&s, at)
			h.add(&s)
		}
	}
	count := func(ss []SeriesJSON) (series, points int) {
		for _, x := range ss {
			points += len(x.Points)
		}
		return len(ss), points
	}
	ss, n, reset := h.since(0)
	if len(ss) != 0 || n != 0 || reset {
		t.Errorf("before any snapshot: %d series, %d, %v", len(ss), n, reset)
	}
	add(5)
	ss, n, reset = h.since(0)
	if series, points := count(ss); series != 12 || points != 12*5 || n != 5 || reset {
		t.Errorf("from the start: %d series, %d points, %d, %v", series, points, n, reset)
	}
	add(2)
	ss, n, reset = h.since(5)
	if series, points := count(ss); series != 12 || points != 12*2 || n != 7 || reset || ss[0].Points[0].T != 6*record.PublishEvery {
		t.Errorf("after 5: %d series, %d points, %d, %v", series, points, n, reset)
	}
	if ss, _, _ = h.since(7); len(ss) != 0 {
		t.Errorf("nothing new: %d series", len(ss))
	}
	add(HistoryRecent + 10)
	ss, n, reset = h.since(7)
	if series, points := count(ss); series != 12 || points != 12*(HistoryRecent+17) || !reset || n != HistoryRecent+17 {
		t.Errorf("far behind: %d series, %d points, %d, %v", series, points, n, reset)
	}
}

// FuzzPointsJSON: whatever a client is sent or sends back, points are read
// without a panic, and points read are written as they were read.
func FuzzPointsJSON(f *testing.F) {
	f.Add([]byte(`[[0.1,null],[0.2,0],[0.3,0.166667,0,1]]`))
	f.Add([]byte(`[[1e300,1e-300,-5,7]]`))
	f.Add([]byte(`[[0.1]]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var ps pointsJSON
		if json.Unmarshal(b, &ps) != nil {
			return
		}
		out, err := json.Marshal(ps)
		if err != nil {
			t.Fatal(err)
		}
		var again pointsJSON
		if err := json.Unmarshal(out, &again); err != nil || len(again) != len(ps) {
			t.Fatalf("%s written as %s, read back as %+v, %v", b, out, again, err)
		}
		for i := range ps {
			if (ps[i].Den == 0) != (again[i].Den == 0) {
				t.Fatalf("point %d: %+v, then %+v", i, ps[i], again[i])
			}
		}
	})
}
