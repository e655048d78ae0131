package emulator

import (
	"testing"
	"time"
)

// fates records each frame's status and delay by sequence number.
type fates map[uint64]*Frame

func (r fates) Finished(f *Frame) { c := *f; r[f.Seq] = &c }

// TestTraceDriven: a hop replaying recorded delay and loss series gives
// the k-th frame of the flow the k-th delay and the k-th fate, exactly,
// starting the series again when it runs out and when the schedule sets it
// again. The delays (1 to 9 ms) differ by less than the frames' spacing,
// so keeping the flow in order changes none of them.
func TestTraceDriven(t *testing.T) {
	delays := make([]time.Duration, 7)
	for i := range delays {
		delays[i] = time.Duration(1+(i*5)%9) * time.Millisecond
	}
	lost := []bool{false, false, true, false, true, true, false, false, false, false, false}
	done := fates{}
	n, err := New(Config{
		Hops:  []HopConfig{{Name: "replay", HopParams: HopParams{DelayTrace: delays, Loss: LossTrace{Lost: lost}}}},
		Flows: []FlowConfig{{Name: "f", Route: []int{0}, Traffic: CBR{Interval: 10 * time.Millisecond, Size: 100}}},
		// From 0.5 s the same series again, from their first values.
		Schedule: []Scheduled{{At: 500 * time.Millisecond, Change: SetHop{Hop: 0, Set: FieldDelay | FieldLoss, Params: HopParams{DelayTrace: delays, Loss: LossTrace{Lost: lost}}}}},
	}, done)
	if err != nil {
		t.Fatal(err)
	}
	n.Run(time.Second)
	for seq := uint64(0); seq < 100; seq++ {
		k := int(seq)
		if seq >= 50 {
			k -= 50
		}
		f := done[seq]
		if f == nil {
			t.Fatalf("frame %d: no fate", seq)
		}
		if wantLost := lost[k%len(lost)]; wantLost != (f.Status == LossDrop) {
			t.Errorf("frame %d: %v, the series says lost %v", seq, f.Status, wantLost)
			continue
		}
		// A lost frame takes no delay from the series: the delay series
		// counts the frames that reach the serialiser's far side.
		if f.Status == Delivered {
			if got, want := f.Done-f.Sent, delays[delivered(lost, k)%len(delays)]; got != want {
				t.Errorf("frame %d: delay %v, the series' %v", seq, got, want)
			}
		}
	}
	if r := (LossTrace{Lost: lost}).LossRate(); r != 3.0/11 {
		t.Errorf("loss rate %v, want 3/11", r)
	}
}

// delivered counts the frames before the k-th that the series delivers.
func delivered(lost []bool, k int) int {
	n := 0
	for i := range k {
		if !lost[i%len(lost)] {
			n++
		}
	}
	return n
}

// TestStatusNamed: every status is read back from its name, and nothing
// else is a status.
func TestStatusNamed(t *testing.T) {
	names := StatusNames()
	if len(names) != int(numStatus) {
		t.Fatalf("%d names for %d statuses", len(names), numStatus)
	}
	for s := range numStatus {
		if got, ok := StatusNamed(s.String()); !ok || got != s {
			t.Errorf("%s: read back as %v, %v", s, got, ok)
		}
	}
	for _, name := range []string{"", "bogus", "Delivered", "status(9)"} {
		if s, ok := StatusNamed(name); ok {
			t.Errorf("%q read as %v", name, s)
		}
	}
}
