package emulator

import (
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// record is a copy of a finished frame.
type record struct {
	Flow    int
	Seq     uint64
	Size    int
	Sent    time.Duration
	Done    time.Duration
	Status  Status
	Copy    bool
	Payload string
}

type recorder struct{ frames []record }

func (r *recorder) Finished(f *Frame) {
	r.frames = append(r.frames, record{f.Flow, f.Seq, f.Size, f.Sent, f.Done, f.Status, f.Copy, string(f.Payload)})
}

// bySeq returns the records of one flow ordered by sequence number.
func (r *recorder) bySeq(flow int) []record {
	var out []record
	for _, f := range r.frames {
		if f.Flow == flow {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b record) int { return int(a.Seq) - int(b.Seq) })
	return out
}

// injection puts a frame of size bytes into flow at time at.
type injection struct {
	at   time.Duration
	flow int
	size int
}

func mustNew(t testing.TB, cfg Config, obs Observer) *Network {
	t.Helper()
	n, err := New(cfg, obs)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func runInjections(t *testing.T, cfg Config, in []injection, end time.Duration) *recorder {
	t.Helper()
	rec := &recorder{}
	n := mustNew(t, cfg, rec)
	for _, i := range in {
		n.Advance(i.at)
		n.Inject(i.flow, make([]byte, i.size))
	}
	n.Run(end)
	return rec
}

func oneHop(p HopParams) Config {
	return Config{
		Hops:  []HopConfig{{Name: "h", HopParams: p}},
		Flows: []FlowConfig{{Name: "f", Route: []int{0}}},
	}
}

type outcome struct {
	done   time.Duration
	status Status
}

func TestHopTiming(t *testing.T) {
	// 1000 B at 8 Mbit/s serialise in exactly 1 ms.
	at0 := func(n int) []injection {
		in := make([]injection, n)
		for i := range in {
			in[i] = injection{size: 1000}
		}
		return in
	}
	tests := []struct {
		name   string
		cfg    Config
		in     []injection
		expect []outcome
	}{
		{"delay only, no queue", oneHop(HopParams{Delay: 5 * ms}), at0(3),
			[]outcome{{5 * ms, Delivered}, {5 * ms, Delivered}, {5 * ms, Delivered}}},
		{"serialisation then propagation", oneHop(HopParams{Rate: 8 * Mbitps, Delay: 2 * ms}), at0(3),
			[]outcome{{3 * ms, Delivered}, {4 * ms, Delivered}, {5 * ms, Delivered}}},
		{"queue of 1 frame counts only what waits", oneHop(HopParams{Rate: 8 * Mbitps, Queue: Limit{1, Frames}}), at0(3),
			[]outcome{{1 * ms, Delivered}, {2 * ms, Delivered}, {0, QueueDrop}}},
		{"queue of 1500 B admits 1000 B but not 2000 B", oneHop(HopParams{Rate: 8 * Mbitps, Queue: Limit{1500, Bytes}}), at0(3),
			[]outcome{{1 * ms, Delivered}, {2 * ms, Delivered}, {0, QueueDrop}}},
		{"queue of 2000 B admits exactly two frames", oneHop(HopParams{Rate: 8 * Mbitps, Queue: Limit{2000, Bytes}}), at0(4),
			[]outcome{{1 * ms, Delivered}, {2 * ms, Delivered}, {3 * ms, Delivered}, {0, QueueDrop}}},
		{"queue of 0 B: only the frame on the wire", oneHop(HopParams{Rate: 8 * Mbitps, Queue: Limit{0, Bytes}}), at0(2),
			[]outcome{{1 * ms, Delivered}, {0, QueueDrop}}},
		{"overhead counts for serialisation", oneHop(HopParams{Rate: 8 * Mbitps, Overhead: 24}), at0(2),
			[]outcome{{1024 * time.Microsecond, Delivered}, {2048 * time.Microsecond, Delivered}}},
		{"a frame arriving as the link frees waits for nothing",
			oneHop(HopParams{Rate: 8 * Mbitps, Queue: Limit{0, Frames}}),
			[]injection{{0, 0, 1000}, {ms, 0, 1000}},
			[]outcome{{1 * ms, Delivered}, {2 * ms, Delivered}}},
		{"3 Mbit/s back to back stays exact: k·8000/3e6 s",
			oneHop(HopParams{Rate: 3 * Mbitps}), at0(3),
			[]outcome{{2666666, Delivered}, {5333333, Delivered}, {8000000, Delivered}}},
		{"two hops: store and forward",
			Config{
				Hops: []HopConfig{
					{Name: "a", HopParams: HopParams{Rate: 8 * Mbitps, Delay: ms}},
					{Name: "b", HopParams: HopParams{Rate: 4 * Mbitps, Delay: 3 * ms}},
				},
				Flows: []FlowConfig{{Name: "f", Route: []int{0, 1}}},
			},
			at0(2),
			// a: leaves at 2, 3 ms; b: 2 ms each: 2→4, 4→6 (waits), +3 ms.
			[]outcome{{7 * ms, Delivered}, {9 * ms, Delivered}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runInjections(t, tc.cfg, tc.in, time.Second).bySeq(0)
			if len(got) != len(tc.expect) {
				t.Fatalf("got %d frames, want %d", len(got), len(tc.expect))
			}
			for i, w := range tc.expect {
				g := got[i]
				if g.Status != w.status || (w.status == Delivered && g.Done != w.done) {
					t.Errorf("frame %d: %v at %v, want %v at %v", i, g.Status, g.Done, w.status, w.done)
				}
			}
		})
	}
}

func TestInFlightAtEnd(t *testing.T) {
	cfg := oneHop(HopParams{Rate: 8 * Mbitps, Delay: 10 * ms})
	rec := runInjections(t, cfg, []injection{{0, 0, 1000}, {0, 0, 1000}, {0, 0, 1000}}, 11500*time.Microsecond)
	got := rec.bySeq(0)
	want := []Status{Delivered, InFlight, InFlight} // 11 ms; 12 and 13 ms are after the end
	for i, w := range want {
		if got[i].Status != w {
			t.Errorf("frame %d: %v, want %v", i, got[i].Status, w)
		}
	}
}

func TestScheduleSetHopAndRevert(t *testing.T) {
	cfg := oneHop(HopParams{Delay: 10 * ms})
	cfg.Schedule = []Scheduled{{At: 100 * ms, For: 100 * ms, Change: SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: 50 * ms}}}}
	in := []injection{{50 * ms, 0, 100}, {100 * ms, 0, 100}, {199 * ms, 0, 100}, {200 * ms, 0, 100}}
	got := runInjections(t, cfg, in, time.Second).bySeq(0)
	want := []time.Duration{60 * ms, 150 * ms, 249 * ms, 249 * ms}
	// The last frame would leave at 210 ms after the revert, but a flow never
	// overtakes itself: it leaves with the frame ahead of it, at 249 ms.
	for i, w := range want {
		if got[i].Done != w {
			t.Errorf("frame %d left at %v, want %v", i, got[i].Done, w)
		}
	}
}

func TestOutage(t *testing.T) {
	// Frames leave a delay-only hop 10 ms after entering; the outage covers
	// departures in [100 ms, 200 ms).
	in := []injection{{89 * ms, 0, 100}, {90 * ms, 0, 100}, {150 * ms, 0, 200}, {189 * ms, 0, 300}, {190 * ms, 0, 400}}
	tests := []struct {
		name   string
		outage Outage
		expect []outcome
	}{
		{"drop", Outage{Mode: OutageDropMode},
			[]outcome{{99 * ms, Delivered}, {0, OutageDrop}, {0, OutageDrop}, {0, OutageDrop}, {200 * ms, Delivered}}},
		{"hold releases all at the end, in order", Outage{Mode: OutageHoldMode},
			[]outcome{{99 * ms, Delivered}, {200 * ms, Delivered}, {200 * ms, Delivered}, {200 * ms, Delivered}, {200 * ms, Delivered}}},
		{"hold limit of 300 B", Outage{Mode: OutageHoldMode, HoldLimit: Limit{300, Bytes}},
			[]outcome{{99 * ms, Delivered}, {200 * ms, Delivered}, {200 * ms, Delivered}, {0, OutageDrop}, {200 * ms, Delivered}}},
		{"hold limit of 1 frame", Outage{Mode: OutageHoldMode, HoldLimit: Limit{1, Frames}},
			[]outcome{{99 * ms, Delivered}, {200 * ms, Delivered}, {0, OutageDrop}, {0, OutageDrop}, {200 * ms, Delivered}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := oneHop(HopParams{Delay: 10 * ms})
			cfg.Schedule = []Scheduled{{At: 100 * ms, For: 100 * ms, Change: tc.outage}}
			rec := runInjections(t, cfg, in, time.Second)
			got := rec.bySeq(0)
			for i, w := range tc.expect {
				g := got[i]
				if g.Status != w.status || (w.status == Delivered && g.Done != w.done) {
					t.Errorf("frame %d: %v at %v, want %v at %v", i, g.Status, g.Done, w.status, w.done)
				}
			}
			if tc.outage.Mode == OutageHoldMode {
				// Released frames are delivered in their original order.
				var order []uint64
				for _, f := range rec.frames {
					if f.Status == Delivered {
						order = append(order, f.Seq)
					}
				}
				if !slices.IsSorted(order) {
					t.Errorf("delivery order %v", order)
				}
			}
		})
	}
}

func TestOutageHoldIgnoresQueueLimit(t *testing.T) {
	// A 1-frame queue, 10 frames through a held outage: all are delivered.
	cfg := oneHop(HopParams{Rate: 8 * Mbitps, Queue: Limit{1, Frames}})
	cfg.Schedule = []Scheduled{{At: 0, For: 50 * ms, Change: Outage{Hop: 0, Mode: OutageHoldMode}}}
	var in []injection
	for i := range 10 {
		in = append(in, injection{time.Duration(i) * ms, 0, 1000})
	}
	rec := runInjections(t, cfg, in, time.Second)
	for _, f := range rec.frames {
		if f.Status != Delivered || f.Done != 50*ms {
			t.Fatalf("frame %d: %v at %v, want delivered at 50ms", f.Seq, f.Status, f.Done)
		}
	}
}

func TestCBRTimes(t *testing.T) {
	tests := []struct {
		name    string
		traffic CBR
		at      func(k int64) time.Duration
	}{
		{"interval", CBR{Interval: 20 * ms, Size: 1000, Start: 1300 * time.Microsecond},
			func(k int64) time.Duration { return 1300*time.Microsecond + time.Duration(k)*20*ms }},
		// 1000 B at 3 Mbit/s: frame k at floor(k·8000·1e9/3e6) ns exactly.
		{"rate, not a whole number of ns", CBR{Rate: 3 * Mbitps, Size: 1000},
			func(k int64) time.Duration { return time.Duration(k * 8000 * 1e9 / 3e6) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := oneHop(HopParams{})
			cfg.Flows[0].Traffic = tc.traffic
			rec := &recorder{}
			mustNew(t, cfg, rec).Run(10 * time.Second)
			got := rec.bySeq(0)
			if len(got) < 400 {
				t.Fatalf("only %d frames", len(got))
			}
			for k, f := range got {
				if want := tc.at(int64(k)); f.Sent != want {
					t.Fatalf("frame %d sent at %v, want %v", k, f.Sent, want)
				}
			}
		})
	}
}

func TestOnOffConstant(t *testing.T) {
	// 4 Mbit/s of 1000 B frames: one every 2 ms while ON for 3 s, from 5 s,
	// OFF 4 s: ON periods [5, 8), [12, 15), [19, 22) in 25 s, 1500 frames each.
	cfg := oneHop(HopParams{})
	cfg.Flows[0].Traffic = OnOff{Rate: 4 * Mbitps, Size: 1000, On: Period{Mean: 3 * time.Second}, Off: Period{Mean: 4 * time.Second}, Start: 5 * time.Second}
	rec := &recorder{}
	mustNew(t, cfg, rec).Run(25 * time.Second)
	got := rec.bySeq(0)
	if len(got) != 3*1500 {
		t.Fatalf("%d frames, want 4500", len(got))
	}
	for i, start := range []time.Duration{5, 12, 19} {
		first, last := got[i*1500], got[i*1500+1499]
		if first.Sent != start*time.Second || last.Sent != start*time.Second+2998*ms {
			t.Errorf("period %d: frames from %v to %v", i, first.Sent, last.Sent)
		}
	}
}

func TestSwitchTraffic(t *testing.T) {
	cfg := oneHop(HopParams{})
	cfg.Flows[0].Traffic = CBR{Interval: 10 * ms, Size: 100}
	cfg.Schedule = []Scheduled{{At: 105 * ms, For: 100 * ms, Change: SwitchTraffic{Flow: 0, On: false}}}
	rec := &recorder{}
	mustNew(t, cfg, rec).Run(300 * ms)
	var sent []time.Duration
	for _, f := range rec.bySeq(0) {
		sent = append(sent, f.Sent/ms)
	}
	// 0..100 ms, silent in [105, 205), restarted at 205 ms.
	want := []time.Duration{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 205, 215, 225, 235, 245, 255, 265, 275, 285, 295}
	if !slices.Equal(sent, want) {
		t.Errorf("sent at %v ms, want %v", sent, want)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"empty route", Config{Hops: []HopConfig{{Name: "h"}}, Flows: []FlowConfig{{Name: "f"}}}},
		{"unknown hop", Config{Hops: []HopConfig{{Name: "h"}}, Flows: []FlowConfig{{Name: "f", Route: []int{1}}}}},
		{"negative delay", Config{Hops: []HopConfig{{Name: "h", HopParams: HopParams{Delay: -1}}}}},
		{"zero frame size", Config{Hops: []HopConfig{{Name: "h"}}, Flows: []FlowConfig{{Name: "f", Route: []int{0}, Traffic: CBR{Interval: ms}}}}},
		{"schedule names unknown hop", Config{Hops: []HopConfig{{Name: "h"}}, Schedule: []Scheduled{{Change: Outage{Hop: 3}}}}},
		{"switch a flow without traffic", Config{Hops: []HopConfig{{Name: "h"}}, Flows: []FlowConfig{{Name: "f", Route: []int{0}}}, Schedule: []Scheduled{{Change: SwitchTraffic{Flow: 0}}}}},
	}
	for _, tc := range tests {
		if _, err := New(tc.cfg, nil); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// An event names its hop, flow or schedule entry in the 29 bits above its
// kind: one more than they hold is refused, not wrapped onto another.
func TestNewRefusesWhatAnEventCannotName(t *testing.T) {
	for _, n := range [][3]int{{maxIndexed + 1, 0, 0}, {0, maxIndexed + 1, 0}, {0, 0, maxIndexed + 1}} {
		if err := checkIndexable(n[0], n[1], n[2]); err == nil {
			t.Errorf("%v hops, flows, entries: no error", n)
		}
	}
	if err := checkIndexable(maxIndexed, maxIndexed, maxIndexed); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	var e event
	e.ref = uint32(maxIndexed)<<kindBits | uint32(evExit)
	if e.index() != maxIndexed || e.kind() != evExit {
		t.Errorf("ref at the limit reads index %d kind %d", e.index(), e.kind())
	}
}

// bottleneck is the topology of profiles/bottleneck.yaml, built by hand.
func bottleneck(seed uint64, cross Traffic) Config {
	edge := HopParams{Rate: 100 * Mbitps, Delay: ms, Queue: Limit{30000, Bytes}}
	core := HopParams{Rate: 4 * Mbitps, Delay: 2 * ms, Queue: Limit{30000, Bytes}}
	return Config{
		Seed: seed,
		Hops: []HopConfig{
			{Name: "edge-c", HopParams: edge}, {Name: "core-up", HopParams: core}, {Name: "edge-p", HopParams: edge},
			{Name: "edge-p-r", HopParams: edge}, {Name: "core-dn", HopParams: core}, {Name: "edge-c-r", HopParams: edge},
		},
		Flows: []FlowConfig{
			{Name: "m2s", Route: []int{0, 1, 2}, Traffic: CBR{Interval: 20 * ms, Size: 1000, Start: 1300 * time.Microsecond}},
			{Name: "s2m", Route: []int{3, 4, 5}, Traffic: CBR{Interval: 20 * ms, Size: 1000, Start: 2 * ms}},
			{Name: "cross", Route: []int{1}, Traffic: cross},
		},
		Schedule: []Scheduled{{At: 20 * time.Second, For: time.Second, Change: Outage{Hop: 2, Mode: OutageHoldMode}}},
	}
}

var randomCross = OnOff{Rate: 4 * Mbitps, Size: 1000,
	On:    Period{Kind: Exponential, Mean: 3 * time.Second},
	Off:   Period{Kind: ParetoPeriod, Mean: 4 * time.Second, Shape: 1.5},
	Start: 5 * time.Second}

func TestSameSeedSameRun(t *testing.T) {
	run := func(seed uint64) []record {
		rec := &recorder{}
		mustNew(t, bottleneck(seed, randomCross), rec).Run(60 * time.Second)
		return rec.frames
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different runs")
	}
	if slices.Equal(a, c) {
		t.Error("a different seed gave the same run")
	}
}

func TestAddingAFlowKeepsOthersDraws(t *testing.T) {
	// A Poisson flow's send times are its random choices. Adding another
	// random flow, even across the same hop, must not change them.
	base := oneHop(HopParams{Rate: 10 * Mbitps})
	base.Seed = 42
	base.Flows[0].Traffic = Poisson{Rate: 1 * Mbitps, Size: 500}
	more := base
	more.Flows = append(slices.Clone(base.Flows), FlowConfig{Name: "other", Route: []int{0}, Traffic: randomCross})
	send := func(cfg Config) []time.Duration {
		rec := &recorder{}
		mustNew(t, cfg, rec).Run(30 * time.Second)
		var out []time.Duration
		for _, f := range rec.bySeq(0) {
			out = append(out, f.Sent)
		}
		return out
	}
	a, b := send(base), send(more)
	if len(a) < 1000 || !slices.Equal(a, b) {
		t.Errorf("flow f's send times changed when a flow was added (%d vs %d frames)", len(a), len(b))
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	n := mustNew(t, bottleneck(1, randomCross), nil)
	n.Advance(30 * time.Second) // grow queues, heap and histograms
	allocs := testing.AllocsPerRun(20, func() { n.Advance(n.Now() + time.Second) })
	if allocs != 0 {
		t.Errorf("%v allocations per simulated second in steady state", allocs)
	}
}

func TestSummaryCounts(t *testing.T) {
	n := mustNew(t, bottleneck(1, OnOff{Rate: 4 * Mbitps, Size: 1000, On: Period{Mean: 3 * time.Second}, Off: Period{Mean: 4 * time.Second}, Start: 5 * time.Second}), nil)
	n.Run(30 * time.Second)
	s := n.Summary()
	for _, f := range s.Flows {
		var dropped uint64
		for _, c := range f.Dropped {
			dropped += c
		}
		if f.Sent != f.Delivered+dropped+f.InFlight {
			t.Errorf("%s: sent %d ≠ delivered %d + dropped %d + in flight %d", f.Name, f.Sent, f.Delivered, dropped, f.InFlight)
		}
	}
	if got := s.Hops[1].PeakQueueBytes; got != 30000 {
		t.Errorf("core-up peak queue %d B, want the full 30000 B", got)
	}
	if got := s.Hops[2].PeakHeldFrames; got != 50 {
		t.Errorf("edge-p held at most %d frames during the 1 s outage, want 50 (one per 20 ms)", got)
	}
}

func TestSourceIsOffBeforeItsStart(t *testing.T) {
	// Start at 100 ms, but switched on by the schedule from 50 ms to 70 ms:
	// frames at 50 and 60 ms, none until 100 ms, then every 10 ms.
	cfg := oneHop(HopParams{})
	cfg.Flows[0].Traffic = CBR{Interval: 10 * ms, Size: 100, Start: 100 * ms, Stop: 130 * ms}
	cfg.Schedule = []Scheduled{{At: 50 * ms, For: 20 * ms, Change: SwitchTraffic{Flow: 0, On: true}}}
	rec := &recorder{}
	mustNew(t, cfg, rec).Run(time.Second)
	var sent []time.Duration
	for _, f := range rec.bySeq(0) {
		sent = append(sent, f.Sent/ms)
	}
	if want := []time.Duration{50, 60, 100, 110, 120}; !slices.Equal(sent, want) {
		t.Errorf("sent at %v ms, want %v", sent, want)
	}
}

func TestEgressLead(t *testing.T) {
	// A 10 ms hop and an egress line that takes 10 µs per byte. A 100 B
	// frame sent at 0 is handed over 1 ms before it is due, at 9 ms. A
	// 2000 B frame sent at 5 ms would be handed over at 15 − 20 = −5 ms,
	// but not before it arrived (5 ms) nor before the frame ahead of it
	// (9 ms): at 9 ms. The 100 B frame after it goes at 14 ms.
	cfg := oneHop(HopParams{Delay: 10 * ms})
	cfg.Flows[0].Lead = func(size int) time.Duration { return time.Duration(size) * 10 * time.Microsecond }
	type handover struct{ at, due time.Duration }
	var got []handover
	var n *Network
	n = mustNew(t, cfg, observerFunc(func(f *Frame) { got = append(got, handover{n.Now(), f.Done}) }))
	for _, in := range []injection{{0, 0, 100}, {5 * ms, 0, 2000}, {5 * ms, 0, 100}} {
		n.Advance(in.at)
		n.Inject(0, make([]byte, in.size))
	}
	n.Run(time.Second)
	want := []handover{{9 * ms, 10 * ms}, {9 * ms, 15 * ms}, {14 * ms, 15 * ms}}
	if !slices.Equal(got, want) {
		t.Errorf("handed over %+v, want %+v", got, want)
	}
}

type observerFunc func(*Frame)

func (o observerFunc) Finished(f *Frame) { o(f) }
