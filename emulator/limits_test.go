package emulator

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestLaterAndDurationOf(t *testing.T) {
	for _, tc := range []struct{ t, d, want time.Duration }{
		{0, 0, 0},
		{time.Second, time.Second, 2 * time.Second},
		{MaxDuration - 1, 1, MaxDuration},
		{MaxDuration - 1, 2, MaxDuration},
		{MaxDuration, MaxDuration, MaxDuration},
		{MaxDuration, math.MaxInt64, MaxDuration},
		{1, math.MaxInt64, MaxDuration},
	} {
		if got := later(tc.t, tc.d); got != tc.want {
			t.Errorf("later(%d, %d) = %d, want %d", tc.t, tc.d, got, tc.want)
		}
	}
	for _, tc := range []struct {
		ns   float64
		want time.Duration
	}{
		{0, 0}, {-1, 0}, {0.4, 0}, {0.5, 1}, {1.5e9, 1500 * time.Millisecond},
		{math.Inf(-1), 0}, {math.NaN(), 0}, {1e19, MaxDuration}, {1e300, MaxDuration}, {math.Inf(1), MaxDuration},
		{float64(MaxDuration), MaxDuration},
	} {
		if got := durationOf(tc.ns); got != tc.want {
			t.Errorf("durationOf(%g) = %d, want %d", tc.ns, got, tc.want)
		}
	}
}

// fixedJitter adds the same extra delay to every frame.
type fixedJitter float64

func (j fixedJitter) draw(*Stream) float64 { return float64(j) }
func (j fixedJitter) mean() float64        { return float64(j) }
func (fixedJitter) stdDev() float64        { return 0 }
func (fixedJitter) check() error           { return nil }

// TestTimeSaturates: instants the engine works out from parameters within
// MaxDuration (a delay plus a draw, a long queue's serialisation at a slow
// rate) that go past it are held at it, after the end of any run: the
// frames are in flight at the end, never delivered before they were sent
// or at once.
func TestTimeSaturates(t *testing.T) {
	const end = 100 * time.Second
	for _, tc := range []struct {
		name string
		hop  HopParams
		size int
		// delivered: how many of the 20 frames sent in the first 20 s are
		// delivered by the end, each no earlier than sent + least.
		delivered int
		least     time.Duration
	}{
		{"a delay and a draw past an int64", HopParams{Delay: MaxDuration, Jitter: Jitter{Dist: fixedJitter(1e19)}}, 100, 0, 0},
		{"a draw past an int64", HopParams{Jitter: Jitter{Dist: fixedJitter(math.MaxInt64)}}, 100, 0, 0},
		{"a draw that is not a number", HopParams{Delay: ms, Jitter: Jitter{Dist: fixedJitter(math.NaN())}}, 100, 20, 0},
		// 64 MiB at 1 bit/s take 17 years each: the 18th would end past
		// an int64 of nanoseconds.
		{"a long queue at a slow rate", HopParams{Rate: Bitps}, MaxFrameSize, 0, 0},
		{"a delay of a century", HopParams{Delay: MaxDuration}, 100, 0, 0},
		{"a short delay", HopParams{Delay: ms}, 100, 20, ms},
	} {
		cfg := oneHop(tc.hop)
		cfg.Flows[0].Traffic = CBR{Interval: time.Second, Size: tc.size, Stop: 20 * time.Second}
		rec := &recorder{}
		n := mustNew(t, cfg, rec)
		for at, ok := n.NextEvent(); ok && at < end; at, ok = n.NextEvent() {
			if at < n.Now() {
				t.Fatalf("%s: an event at %v, after %v", tc.name, at, n.Now())
			}
			n.Advance(at)
		}
		n.Run(end)
		delivered := 0
		for _, f := range rec.frames {
			switch {
			case f.Status == InFlight:
			case f.Status == Delivered && f.Done >= f.Sent+tc.least && f.Done < end:
				delivered++
			default:
				t.Errorf("%s: frame %d sent at %v is %v at %v", tc.name, f.Seq, f.Sent, f.Status, f.Done)
			}
		}
		if len(rec.frames) != 20 || delivered != tc.delivered {
			t.Errorf("%s: %d frames, %d delivered; want 20, %d", tc.name, len(rec.frames), delivered, tc.delivered)
		}
	}
}

// TestLimitsOfTheEngine: the engine refuses a delay, a time per frame, or
// a change's start, length or period past MaxDuration, and a recurring
// change whose occurrences start past it.
func TestLimitsOfTheEngine(t *testing.T) {
	outage := Outage{Hop: 0, Mode: OutageDropMode}
	for _, tc := range []struct {
		name string
		hop  HopParams
		s    []Scheduled
	}{
		{"a delay", HopParams{Delay: MaxDuration + 1}, nil},
		{"a delay of an int64", HopParams{Delay: math.MaxInt64}, nil},
		{"a time per frame", HopParams{PerFrame: MaxDuration + 1}, nil},
		{"a change's delay", HopParams{}, []Scheduled{{At: 0, Change: SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: math.MaxInt64}}}}},
		{"a start", HopParams{}, []Scheduled{{At: MaxDuration + 1, Change: outage}}},
		{"a length", HopParams{}, []Scheduled{{At: time.Second, For: math.MaxInt64, Change: outage}}},
		{"a period", HopParams{}, []Scheduled{{At: 0, Every: MaxDuration + 1, Count: 2, Change: outage}}},
		{"the last occurrence", HopParams{}, []Scheduled{{At: MaxDuration / 2, Every: MaxDuration / 2, Count: 3, Change: outage}}},
	} {
		cfg := oneHop(tc.hop)
		cfg.Schedule = tc.s
		if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), "past the longest duration") {
			t.Errorf("%s: %v, want it refused past the longest duration", tc.name, err)
		}
	}
	cfg := oneHop(HopParams{})
	cfg.Schedule = []Scheduled{{At: MaxDuration / 2, Every: MaxDuration / 2, Count: 2, For: MaxDuration / 2, Change: outage}}
	if _, err := New(cfg, nil); err != nil {
		t.Errorf("occurrences up to MaxDuration: %v", err)
	}
}

// TestApplyNowCountsEveryChange: a live change that recurs every
// nanosecond for 95 years, with its undo, is 6·10^18 changes, more than a
// run may make: refused, not counted modulo 2^64.
func TestApplyNowCountsEveryChange(t *testing.T) {
	n := mustNew(t, oneHop(HopParams{}), nil)
	err := n.ApplyNow(Scheduled{For: 1, Every: 1, Count: 3e18, Change: Outage{Hop: 0, Mode: OutageDropMode}})
	if err == nil || !strings.Contains(err.Error(), "more than 4611686018427387904 changes") {
		t.Errorf("%v, want it refused as too many changes", err)
	}
	if err := n.ApplyNow(Scheduled{For: 1, Every: 2, Count: 1e18, Change: Outage{Hop: 0, Mode: OutageDropMode}}); err != nil {
		t.Errorf("2·10^18 changes: %v", err)
	}
}

// The flows' starts are ranked after the schedule's changes, so with a
// schedule of nearly MaxScheduledChanges the next live change's rank is
// past the bound: it is refused, not counted from a difference that wrapped.
func TestApplyNowPastTheBoundWithFlows(t *testing.T) {
	cfg := oneHop(HopParams{})
	for i := range 10 {
		cfg.Flows = append(cfg.Flows, FlowConfig{Name: fmt.Sprint("f", i), Route: []int{0}})
	}
	drop := Outage{Hop: 0, Mode: OutageDropMode}
	cfg.Schedule = []Scheduled{
		{At: 1, Every: 1, Count: 3e18, Change: drop},
		{At: 1, Every: 1, Count: MaxScheduledChanges - 3e18 - 3, Change: drop},
	}
	n := mustNew(t, cfg, nil)
	if err := n.ApplyNow(Scheduled{Change: drop}); err == nil || !strings.Contains(err.Error(), "more than 4611686018427387904 changes") {
		t.Errorf("%v, want it refused as too many changes", err)
	}
}

// FuzzScheduleNearMaxDuration builds schedules and live changes whose
// starts, lengths and periods are near MaxDuration (or past it), and runs
// what the engine takes to the end of a century: no event is ever due
// before the time it is queued at, and every frame finishes after it was
// sent and by the end.
func FuzzScheduleNearMaxDuration(f *testing.F) {
	f.Add(uint64(MaxDuration-1), uint64(MaxDuration), uint64(0), uint16(1), uint64(1), uint64(5), uint8(0))
	f.Add(uint64(1e9), uint64(math.MaxInt64), uint64(0), uint16(1), uint64(MaxDuration/3), uint64(0), uint8(1))
	f.Add(uint64(0), uint64(MaxDuration/4), uint64(MaxDuration/4), uint16(4), uint64(MaxDuration/2), uint64(1), uint8(2))
	f.Add(uint64(1), uint64(1), uint64(1), uint16(1000), uint64(7), uint64(3e18), uint8(3))
	f.Fuzz(func(t *testing.T, at, length, every uint64, count uint16, liveAt, liveCount uint64, kind uint8) {
		// Near the limit: the values as given, or counted back from
		// MaxDuration when the fuzzer sets the top bit.
		near := func(v uint64) time.Duration {
			if v>>63 != 0 {
				return MaxDuration - time.Duration(v&(1<<62-1)%uint64(MaxDuration))
			}
			return time.Duration(v)
		}
		changes := []Change{
			Outage{Hop: 0, Mode: OutageDropMode},
			Outage{Hop: 0, Mode: OutageHoldMode},
			SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: near(length)}},
			SetHop{Hop: 0, Set: FieldRate | FieldPerFrame, Params: HopParams{Rate: Bitps, PerFrame: near(every)}},
			SwitchTraffic{Flow: 0, On: kind&8 != 0},
		}
		s := Scheduled{At: near(at), For: near(length), Every: near(every), Count: int64(count), Change: changes[int(kind)%len(changes)]}
		if s.Every == 0 {
			s.Count = 0
		}
		cfg := Config{
			Hops:     []HopConfig{{Name: "h", HopParams: HopParams{Delay: near(liveAt) % MaxDuration, Queue: Limit{N: 3, Unit: Frames}}}},
			Flows:    []FlowConfig{{Name: "f", Route: []int{0}, Traffic: CBR{Interval: MaxDuration / 64, Size: 100}}},
			Schedule: []Scheduled{s},
		}
		rec := &recorder{}
		n, err := New(cfg, rec)
		if err != nil {
			return // refused: past the limit, or otherwise wrong
		}
		live := Scheduled{For: near(length), Every: near(liveAt), Count: int64(liveCount), Change: Outage{Hop: 0, Mode: OutageDropMode}}
		if live.Every == 0 {
			live.Count = 0
		}
		applied, events := false, 0
		for due, ok := n.NextEvent(); ok && due < MaxDuration && events < 10_000; due, ok = n.NextEvent() {
			if due < n.Now() {
				t.Fatalf("an event due at %v, queued by %v", due, n.Now())
			}
			n.Advance(due)
			if !applied { // at the first event, between two of the run's
				applied = true
				if err := n.ApplyNow(live); err == nil && live.Count > 0 && !withinTime(n.Now(), live.Every, live.Count-1) {
					t.Fatalf("a live change recurring past the limit was taken: %+v at %v", live, n.Now())
				}
			}
			events++
		}
		if events < 10_000 {
			n.Run(MaxDuration)
		} else {
			n.Finish()
		}
		for _, f := range rec.frames {
			if f.Done < f.Sent || f.Done > MaxDuration {
				t.Fatalf("frame %d sent at %v finished (%v) at %v", f.Seq, f.Sent, f.Status, f.Done)
			}
		}
	})
}
