package emulator

import (
	"reflect"
	"testing"
	"time"
)

// TestApplyNowIsTheSchedule: changes made while the network runs take
// effect at its current time, and each frame meets the same fate, to the
// nanosecond, as in a network whose schedule names them at that instant.
// A change that is wrong changes nothing.
func TestApplyNowIsTheSchedule(t *testing.T) {
	cfg := func(schedule ...Scheduled) Config {
		return Config{
			Seed:     5,
			Hops:     []HopConfig{{Name: "link", HopParams: HopParams{Rate: Mbitps, Delay: 20 * time.Millisecond}}},
			Flows:    []FlowConfig{{Name: "f", Route: []int{0}, Traffic: Poisson{Rate: 400_000, Size: 200}}},
			Schedule: schedule,
		}
	}
	at := 1234567890 * time.Nanosecond
	changes := []Scheduled{
		{For: 500 * time.Millisecond, Change: SetHop{Hop: 0, Set: FieldDelay | FieldLoss, Params: HopParams{Delay: 80 * time.Millisecond, Loss: Bernoulli{P: 0.1}}}},
		{At: at, For: 300 * time.Millisecond, Change: Outage{Hop: 0, Mode: OutageHoldMode}},
	}
	scheduled := []Scheduled{changes[0], changes[1]}
	scheduled[0].At = at

	want := fates{}
	n, err := New(cfg(scheduled...), want)
	if err != nil {
		t.Fatal(err)
	}
	n.Run(3 * time.Second)

	got := fates{}
	live, err := New(cfg(), got)
	if err != nil {
		t.Fatal(err)
	}
	live.Advance(at)
	if err := live.ApplyNow(Scheduled{Change: SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: -time.Second}}}); err == nil {
		t.Error("a negative delay was applied")
	}
	if err := live.ApplyNow(Scheduled{Change: SetHop{Hop: 7, Set: FieldDelay}}, changes[0]); err == nil {
		t.Error("a change of no hop was applied")
	}
	if err := live.ApplyNow(changes...); err != nil {
		t.Fatal(err)
	}
	live.Run(3 * time.Second)

	if len(got) != len(want) || len(want) < 500 {
		t.Fatalf("%d frames live, %d scheduled", len(got), len(want))
	}
	changed := 0
	for seq, w := range want {
		g := got[seq]
		if g == nil || g.Status != w.Status || g.Done != w.Done || g.Sent != w.Sent {
			t.Fatalf("frame %d: live %+v, scheduled %+v", seq, g, w)
		}
		if w.Sent >= at && w.Sent < at+500*time.Millisecond {
			changed++
		}
	}
	if changed < 50 {
		t.Errorf("only %d frames were sent while the change lasted", changed)
	}
}

// TestPlannedLeavesOutChangesMadeByHand: a hop's planned parameters follow
// its configuration and schedule (an entry and its undo), not ApplyNow.
func TestPlannedLeavesOutChangesMadeByHand(t *testing.T) {
	cfg := oneHop(HopParams{Rate: Mbitps, Delay: ms})
	cfg.Schedule = []Scheduled{{At: 10 * ms, For: 10 * ms, Change: SetHop{Hop: 0, Set: FieldDelay, Params: HopParams{Delay: 5 * ms}}}}
	n := mustNew(t, cfg, nil)
	n.Advance(5 * ms)
	if err := n.ApplyNow(Scheduled{Change: SetHop{Hop: 0, Set: FieldRate | FieldLoss, Params: HopParams{Rate: 2 * Mbitps, Loss: Bernoulli{P: 0.5}}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at      time.Duration
		planned HopParams
	}{
		{5 * ms, HopParams{Rate: Mbitps, Delay: ms}},
		{15 * ms, HopParams{Rate: Mbitps, Delay: 5 * ms}},
		{25 * ms, HopParams{Rate: Mbitps, Delay: ms}},
	} {
		n.Advance(tc.at)
		if got := n.Planned(0); !reflect.DeepEqual(got, tc.planned) {
			t.Errorf("at %v: planned %+v, want %+v", tc.at, got, tc.planned)
		}
		if now := n.HopNow(0).Params; now.Rate != 2*Mbitps || now.Loss == nil {
			t.Errorf("at %v: the change made by hand is gone: %+v", tc.at, now)
		}
	}
}
