package emulator

import (
	"strings"
	"testing"
	"time"
)

// TestRateMadeUnlimitedWithABacklog: the schedule sets a hop's rate to none
// while frames wait. The frame on the serialiser keeps its time; the frames
// waiting then leave at once, in the order they queued, and so do frames
// that arrived behind them meanwhile; afterwards the hop only delays. (It
// used to divide by a zero rate.)
func TestRateMadeUnlimitedWithABacklog(t *testing.T) {
	cfg := Config{
		Hops: []HopConfig{{Name: "h", HopParams: HopParams{Rate: Mbitps, Delay: ms}}},
		Flows: []FlowConfig{
			{Name: "a", Route: []int{0}},
			{Name: "b", Route: []int{0}},
		},
		// 1000 B take 8 ms at 1 Mbit/s.
		Schedule: []Scheduled{{At: 2 * ms, Change: SetHop{Hop: 0, Set: FieldRate}}},
	}
	in := []injection{{0, 0, 1000}, {0, 1, 1000}, {0, 0, 1000}, {ms, 1, 1000}, {3 * ms, 0, 1000}, {10 * ms, 1, 1000}}
	rec := runInjections(t, cfg, in, time.Second)
	type left struct {
		flow int
		seq  uint64
		done time.Duration
	}
	want := []left{
		{0, 0, 9 * ms},  // serialised 0..8 ms at the old rate, then 1 ms
		{1, 0, 9 * ms},  // waiting: out as soon as the serialiser is free
		{0, 1, 9 * ms},  // in the order they queued
		{1, 1, 9 * ms},  //
		{0, 2, 9 * ms},  // arrived at 3 ms, behind them
		{1, 2, 11 * ms}, // arrived at 10 ms: the hop only delays
	}
	if len(rec.frames) != len(want) {
		t.Fatalf("%d frames finished, want %d", len(rec.frames), len(want))
	}
	for i, w := range want {
		f := rec.frames[i]
		if got := (left{f.Flow, f.Seq, f.Done}); got != w || f.Status != Delivered {
			t.Errorf("frame %d to leave: %+v %v, want %+v delivered", i, got, f.Status, w)
		}
	}
}

// writtenOut is a schedule with every occurrence of its recurring entries
// written out as an entry of its own, in the order Scheduled defines for
// simultaneous changes: block by block, occurrence by occurrence, parts in
// order. It is the reference the lazily queued schedule must match.
func writtenOut(schedule []Scheduled) []Scheduled {
	var out []Scheduled
	for b := 0; b < len(schedule); {
		e := b + 1
		for e < len(schedule) && schedule[e].WithPrevious {
			e++
		}
		for k := range schedule[b].occurrences() {
			for _, s := range schedule[b:e] {
				shift := time.Duration(k) * s.Every
				out = append(out, Scheduled{At: s.At + shift, For: s.For, Change: s.Change})
			}
		}
		b = e
	}
	return out
}

// sameRun runs cfg with its schedule as given and written out, and
// reports the first difference in what happened to the frames.
func sameRun(t *testing.T, cfg Config, end time.Duration) {
	t.Helper()
	lazy, full := &recorder{}, &recorder{}
	n := mustNew(t, cfg, lazy)
	n.Run(end)
	cfg.Schedule = writtenOut(cfg.Schedule)
	mustNew(t, cfg, full).Run(end)
	if len(lazy.frames) != len(full.frames) {
		t.Fatalf("%d frames, %d with the schedule written out", len(lazy.frames), len(full.frames))
	}
	for i := range lazy.frames {
		if lazy.frames[i] != full.frames[i] {
			t.Fatalf("frame %d: %+v, written out %+v", i, lazy.frames[i], full.frames[i])
		}
	}
}

// TestRecurringScheduleActsAsWrittenOut: changes queued one occurrence at
// a time act as the schedule written out does, where the order of
// simultaneous changes decides the outcome.
func TestRecurringScheduleActsAsWrittenOut(t *testing.T) {
	delay := func(d time.Duration) Change { return SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: d}} }
	tests := []struct {
		name     string
		schedule []Scheduled
	}{
		// Entry 0's undo at 2, 4, 6 ms meets entry 1's change: entry 0
		// first, whichever occurrence it is in.
		{"an undo meets a later entry's change", []Scheduled{
			{At: ms, For: ms, Every: 2 * ms, Count: 10, Change: delay(5 * ms)},
			{At: 2 * ms, For: 3 * ms, Every: 4 * ms, Count: 5, Change: delay(9 * ms)},
		}},
		// A ramp-like block whose last step meets the next occurrence's
		// first: the occurrence ends before the next begins.
		{"a block's end meets its next occurrence", []Scheduled{
			{At: 0, Every: 3 * ms, Count: 6, Change: delay(ms)},
			{At: 1500 * time.Microsecond, Every: 3 * ms, Count: 6, WithPrevious: true, Change: delay(2 * ms)},
			{At: 3 * ms, Every: 3 * ms, Count: 6, WithPrevious: true, Change: delay(4 * ms)},
		}},
		// Back-to-back outages of one hop, hold then drop, recurring.
		{"back-to-back outages", []Scheduled{
			{At: ms, For: ms, Every: 2 * ms, Count: 8, Change: Outage{Hop: 0, Mode: OutageHoldMode}},
			{At: 2 * ms, For: ms, Every: 2 * ms, Count: 8, Change: Outage{Hop: 0, Mode: OutageDropMode}},
		}},
		// The source switched off at its own start, and again every 5 ms.
		{"a switch meets the source's start", []Scheduled{
			{At: 5 * ms, For: 2 * ms, Every: 5 * ms, Count: 4, Change: SwitchTraffic{Flow: 0}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{
				Seed:     3,
				Hops:     []HopConfig{{Name: "h", HopParams: HopParams{Rate: 8 * Mbitps, Delay: ms, Jitter: Jitter{Dist: Uniform{Spread: ms / 2}}}}},
				Flows:    []FlowConfig{{Name: "f", Route: []int{0}, Traffic: CBR{Interval: 100 * time.Microsecond, Size: 100, Start: 5 * ms}}},
				Schedule: tc.schedule,
			}
			sameRun(t, cfg, 40*ms)
		})
	}
}

// TestRecurringChangeIsQueuedOneAtATime: a change recurring every
// nanosecond for 100 s (10^11 occurrences) builds a network of the same
// size as one occurring once, and running it queues one occurrence at a
// time.
func TestRecurringChangeIsQueuedOneAtATime(t *testing.T) {
	config := func(count int64) Config {
		cfg := oneHop(HopParams{Delay: ms})
		cfg.Schedule = []Scheduled{{At: 0, For: 1, Every: 1, Count: count, Change: Outage{Hop: 0, Mode: OutageDropMode}}}
		return cfg
	}
	once := testing.AllocsPerRun(10, func() { mustNew(t, config(1), nil) })
	often := testing.AllocsPerRun(10, func() { mustNew(t, config(100e9), nil) })
	if often != once {
		t.Errorf("%v allocations to build 10^11 occurrences, %v for one", often, once)
	}
	n := mustNew(t, config(100e9), nil)
	n.Advance(10 * time.Microsecond)
	if s := n.schedule[0]; s.applied != 10_001 || n.events.len() != 2 {
		t.Errorf("after 10 µs: %d occurrences applied, %d events queued; want 10001 and 2 (an undo and the next)", s.applied, n.events.len())
	}
}

// TestScheduleMistakes: what the engine refuses in a recurring schedule.
func TestScheduleMistakes(t *testing.T) {
	outage := Outage{Hop: 0, Mode: OutageDropMode}
	tests := []struct {
		name string
		s    []Scheduled
		want string
	}{
		{"longer than its period", []Scheduled{{At: 0, For: 2 * ms, Every: ms, Count: 2, Change: outage}}, "longer than its period"},
		{"a period without occurrences", []Scheduled{{At: 0, Every: ms, Change: outage}}, "at least one occurrence"},
		{"occurrences without a period", []Scheduled{{At: 0, Count: 3, Change: outage}}, "need a period"},
		{"past the longest duration", []Scheduled{{At: 0, Every: time.Hour, Count: 1 << 40, Change: outage}}, "starts past the longest duration"},
		{"the last occurrence a nanosecond too late", []Scheduled{{At: 1, Every: MaxDuration / 2, Count: 3, Change: outage}}, "occurrence 3 starts past the longest duration"},
		{"a start past the longest duration", []Scheduled{{At: MaxDuration + 1, Change: outage}}, "past the longest duration"},
		{"a length past the longest duration", []Scheduled{{At: 0, For: MaxDuration + 1, Change: outage}}, "past the longest duration"},
		{"a part of nothing", []Scheduled{{At: 0, WithPrevious: true, Change: outage}}, "previous entry's occurrences"},
		{"a part with another period", []Scheduled{{At: 0, Every: ms, Count: 2, Change: outage}, {At: 0, Every: 2 * ms, Count: 2, WithPrevious: true, Change: outage}}, "previous entry's occurrences"},
		// 3·10^18 occurrences of a change and its undo, every nanosecond
		// for 95 years.
		{"too many changes", []Scheduled{{At: 0, For: 1, Every: 1, Count: 3e18, Change: outage}}, "more than 4611686018427387904 changes"},
	}
	for _, tc := range tests {
		cfg := oneHop(HopParams{})
		cfg.Schedule = tc.s
		if _, err := New(cfg, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// FuzzRecurringSchedule runs fuzzed recurring schedules (blocks included)
// as queued one occurrence at a time and written out, and requires the
// same fate for every frame.
func FuzzRecurringSchedule(f *testing.F) {
	f.Add([]byte{0, 2, 1, 2, 10, 1, 3, 4, 3, 6, 5})
	f.Add([]byte{2, 0, 2, 2, 20, 0x83, 1, 0, 2, 20, 4, 4, 2, 4, 5})
	f.Add([]byte{5, 10, 4, 10, 4, 3, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		const unit = 250 * time.Microsecond
		var schedule []Scheduled
		for len(data) >= 5 && len(schedule) < 6 {
			kind, at, span, every, count := data[0], data[1]%40, data[2]%8, data[3]%16, int64(data[4]%25)
			data = data[5:]
			var c Change
			switch kind % 6 {
			case 0:
				c = SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: time.Duration(at%5) * ms}}
			case 1:
				c = SetHop{Hop: 0, Set: FieldRate, Params: HopParams{Rate: Rate(at%3) * Mbitps}} // 0: unlimited
			case 2:
				c = Outage{Hop: int(kind / 8 % 2), Mode: OutageHoldMode, HoldLimit: Limit{N: 4, Unit: Frames}}
			case 3:
				c = Outage{Hop: int(kind / 8 % 2), Mode: OutageDropMode}
			case 4:
				c = SwitchTraffic{Flow: int(kind / 8 % 2), On: kind&0x40 != 0}
			case 5:
				c = SetHop{Hop: 1, Set: FieldLoss | FieldJitter, Params: HopParams{Loss: Bernoulli{P: 0.3}, Jitter: Jitter{Dist: Normal{Sigma: ms}}}}
			}
			s := Scheduled{At: time.Duration(at) * unit, For: time.Duration(span) * unit, Change: c}
			if every > 0 && count > 0 {
				s.Every, s.Count = max(time.Duration(every)*unit, s.For), count
			}
			if prev := len(schedule) - 1; kind&0x80 != 0 && prev >= 0 {
				s.WithPrevious, s.Every, s.Count = true, schedule[prev].Every, schedule[prev].Count
				if s.Every > 0 {
					s.For = min(s.For, s.Every)
				}
			}
			schedule = append(schedule, s)
		}
		hop := HopParams{Rate: 4 * Mbitps, Delay: ms, Queue: Limit{N: 8, Unit: Frames}}
		cfg := Config{
			Seed: 5,
			Hops: []HopConfig{{Name: "a", HopParams: hop}, {Name: "b", HopParams: HopParams{Delay: ms / 2}}},
			Flows: []FlowConfig{
				{Name: "f", Route: []int{0, 1}, Traffic: CBR{Interval: 300 * time.Microsecond, Size: 200}},
				{Name: "g", Route: []int{1, 0}, Traffic: Poisson{Rate: 2 * Mbitps, Size: 100, Start: 2 * ms}},
			},
			Schedule: schedule,
		}
		if _, err := New(cfg, nil); err != nil {
			return // a mistake the engine refuses (overlapping parts, say)
		}
		sameRun(t, cfg, 30*ms)
	})
}
