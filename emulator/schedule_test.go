package emulator

import (
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
