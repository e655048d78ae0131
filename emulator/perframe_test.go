package emulator

import (
	"testing"
	"time"
)

// recordDone keeps each delivered frame's flow sequence and time.
type recordDone map[uint64]time.Duration

func (r recordDone) Finished(f *Frame) {
	if f.Status == Delivered {
		r[f.Seq] = f.Done
	}
}

// TestPerFrame: a relay that takes γ per message whatever its size (paper
// 004's degradation): frames 100 ms apart leave one every second, in order,
// while the schedule gives the hop 1 s per frame from 1 s to 5.5 s; the
// frame being sent when it ends keeps its time and the backlog then leaves
// at once, as when the rate goes unlimited. Sizes differ to show they do
// not count.
func TestPerFrame(t *testing.T) {
	done := recordDone{}
	n, err := New(Config{
		Hops:  []HopConfig{{Name: "relay"}},
		Flows: []FlowConfig{{Name: "state", Route: []int{0}, Traffic: CBR{Interval: 100 * time.Millisecond, Size: 37}}},
		Schedule: []Scheduled{{At: time.Second, For: 4500 * time.Millisecond,
			Change: SetHop{Hop: 0, Set: FieldPerFrame, Params: HopParams{PerFrame: time.Second}}}},
	}, done)
	if err != nil {
		t.Fatal(err)
	}
	n.Run(10 * time.Second)
	for seq := uint64(0); seq < 100; seq++ {
		sent := time.Duration(seq) * 100 * time.Millisecond
		var want time.Duration
		switch {
		case seq < 10 || seq >= 60:
			want = sent // before the window, and after the backlog left
		case seq <= 14:
			// One a second: 10 (at 1 s) leaves at 2 s, … 14 at 6 s (its
			// second began at 5 s, before the window ended at 5.5 s).
			want = time.Duration(seq-8) * time.Second
		default:
			want = 6 * time.Second // waited behind 14, then left at once
		}
		if got, ok := done[seq]; !ok || got != want {
			t.Errorf("frame %d sent at %v: delivered %v (%v), want %v", seq, sent, got, ok, want)
		}
	}
}
