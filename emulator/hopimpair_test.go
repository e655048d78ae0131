package emulator

import (
	"math"
	"testing"
	"time"
)

// cbrThrough runs n frames of a CBR flow, one per ms, through one hop.
func cbrThrough(t *testing.T, p HopParams, n int, seed uint64) (*Network, *recorder) {
	t.Helper()
	cfg := oneHop(p)
	cfg.Seed = seed
	cfg.Flows[0].Traffic = CBR{Interval: time.Millisecond, Size: 100, Stop: time.Duration(n) * time.Millisecond}
	rec := &recorder{}
	net := mustNew(t, cfg, rec)
	net.Run(time.Duration(n)*time.Millisecond + time.Second)
	return net, rec
}

func TestHopLoss(t *testing.T) {
	const n = 100_000
	net, rec := cbrThrough(t, HopParams{Delay: ms, Loss: Bernoulli{P: 0.05}}, n, 1)
	st := net.FlowStats(0)
	lost := st.Status[LossDrop]
	// Binomial: n·p ± z999·√(n·p(1−p)).
	if tol := z999 * math.Sqrt(n*0.05*0.95); math.Abs(float64(lost)-n*0.05) > tol {
		t.Errorf("%d of %d lost, want %v ± %.0f", lost, n, n*0.05, tol)
	}
	var inBursts uint64
	for k, c := range st.LossBursts {
		inBursts += uint64(k+1) * c
	}
	if inBursts != lost {
		t.Errorf("bursts add up to %d frames, %d were lost", inBursts, lost)
	}
	// Bernoulli losses come in geometric bursts of mean 1/(1−p).
	if got := st.MeanLossBurst(); math.Abs(got-1/0.95) > 0.02 {
		t.Errorf("mean burst %v, want %v", got, 1/0.95)
	}
	for _, f := range rec.frames {
		if f.Status == LossDrop && f.Done != f.Sent {
			t.Fatalf("a frame lost at %v, not as it entered the hop at %v", f.Done, f.Sent)
		}
	}
}

func TestJitterKeepsOrderUnlessAllowed(t *testing.T) {
	// 1 ms delay with 2 ms of normal jitter: many draws would be negative
	// (clamped to 0) and consecutive frames 1 ms apart would often cross.
	jitter := Jitter{Dist: Normal{Sigma: 2 * ms}}
	for _, tc := range []struct {
		reorder  Reorder
		reorders bool
	}{{Reorder{}, false}, {Reorder{Mode: ReorderAllowed}, true}} {
		_, rec := cbrThrough(t, HopParams{Delay: ms, Jitter: jitter, Reorder: tc.reorder}, 10_000, 2)
		var last uint64
		crossed, atSend := 0, 0
		for i, f := range rec.frames {
			if f.Done < f.Sent {
				t.Fatalf("frame %d delivered before it was sent", f.Seq)
			}
			if f.Done == f.Sent {
				atSend++
			}
			if i > 0 && f.Seq < last {
				crossed++
			}
			last = max(last, f.Seq)
		}
		if got := crossed > 0; got != tc.reorders {
			t.Errorf("reorder %+v: %d frames overtaken", tc.reorder, crossed)
		}
		if atSend == 0 {
			t.Error("no delay was clamped to zero; the test does not exercise the clamp")
		}
	}
}

func TestReorderGap(t *testing.T) {
	// p = 100 %, gap 3: two frames are delayed, the third goes at once.
	_, rec := cbrThrough(t, HopParams{Delay: 10 * ms, Reorder: Reorder{Mode: ReorderGap, P: 1, Gap: 3}}, 30, 3)
	for _, f := range rec.frames {
		want := 10 * ms
		if f.Seq%3 == 2 {
			want = 0
		}
		if f.Done-f.Sent != want {
			t.Errorf("frame %d delayed %v, want %v", f.Seq, f.Done-f.Sent, want)
		}
	}
	// p = 20 %, gap 1: each frame independently goes at once with 20 %.
	const n = 50_000
	_, rec = cbrThrough(t, HopParams{Delay: 10 * ms, Reorder: Reorder{Mode: ReorderGap, P: 0.2, Gap: 1}}, n, 4)
	now := 0
	for _, f := range rec.frames {
		if f.Done == f.Sent {
			now++
		}
	}
	if tol := z999 * math.Sqrt(n*0.2*0.8); math.Abs(float64(now)-n*0.2) > tol {
		t.Errorf("%d of %d sent at once, want %v ± %.0f", now, n, n*0.2, tol)
	}
}

func TestDuplicate(t *testing.T) {
	// Duplicate at the first of two hops: the copy crosses the second hop
	// too and is delivered as "duplicate" with the original's seq.
	const n = 50_000
	cfg := Config{
		Seed: 5,
		Hops: []HopConfig{
			{Name: "a", HopParams: HopParams{Delay: ms, Duplicate: 0.1}},
			{Name: "b", HopParams: HopParams{Rate: 10 * Mbitps, Delay: ms}},
		},
		Flows: []FlowConfig{{Name: "f", Route: []int{0, 1}, Traffic: CBR{Interval: ms, Size: 100, Stop: n * ms}}},
	}
	rec := &recorder{}
	net := mustNew(t, cfg, rec)
	net.Run(n*ms + time.Second)
	originals := map[uint64]record{}
	copies := 0
	for _, f := range rec.frames {
		if f.Copy {
			continue
		}
		originals[f.Seq] = f
	}
	for _, f := range rec.frames {
		if !f.Copy {
			continue
		}
		copies++
		o := originals[f.Seq]
		if f.Status != Duplicate || o.Status != Delivered || f.Done < o.Done {
			t.Fatalf("copy of %d: %v at %v; original %v at %v", f.Seq, f.Status, f.Done, o.Status, o.Done)
		}
	}
	if tol := z999 * math.Sqrt(n*0.1*0.9); math.Abs(float64(copies)-n*0.1) > tol {
		t.Errorf("%d copies of %d frames, want %v ± %.0f", copies, n, n*0.1, tol)
	}
	st := net.FlowStats(0)
	if st.Duplicates != uint64(copies) || st.Status[Delivered] != n || net.Summary().Hops[1].Frames != uint64(n+copies) {
		t.Errorf("stats: %d duplicates, %d delivered; hop b saw %d frames", st.Duplicates, st.Status[Delivered], net.Summary().Hops[1].Frames)
	}
}

func TestCorruptionFlipsRealBytes(t *testing.T) {
	cfg := oneHop(HopParams{Delay: ms, Corrupt: Corruption{FrameP: 0.5}})
	cfg.Seed = 6
	rec := &recorder{}
	net := mustNew(t, cfg, rec)
	payload := []byte("sequence-numbered frame with real bytes")
	for i := range 1000 {
		net.Advance(time.Duration(i) * ms)
		net.Inject(0, payload)
	}
	net.Run(2 * time.Second)
	corrupted := 0
	for _, f := range rec.frames {
		same := f.Payload == string(payload)
		switch f.Status {
		case Corrupted:
			corrupted++
			if same {
				t.Fatalf("frame %d is corrupted but its bytes are intact", f.Seq)
			}
		case Delivered:
			if !same {
				t.Fatalf("frame %d delivered with changed bytes", f.Seq)
			}
		}
	}
	if corrupted < 400 || corrupted > 600 {
		t.Errorf("%d of 1000 corrupted at 50 %%", corrupted)
	}
}

func TestScheduledLossWindow(t *testing.T) {
	cfg := oneHop(HopParams{Delay: ms})
	cfg.Flows[0].Traffic = CBR{Interval: ms, Size: 100}
	cfg.Schedule = []Scheduled{{At: 100 * ms, For: 50 * ms, Change: SetHop{Hop: 0, Set: FieldLoss, Params: HopParams{Loss: Bernoulli{P: 1}}}}}
	rec := &recorder{}
	mustNew(t, cfg, rec).Run(300 * ms)
	for _, f := range rec.frames {
		inWindow := f.Sent >= 100*ms && f.Sent < 150*ms
		if (f.Status == LossDrop) != inWindow {
			t.Errorf("frame sent at %v: %v", f.Sent, f.Status)
		}
	}
}

func TestAddingAFlowKeepsLossDecisions(t *testing.T) {
	// Two flows share a lossy, jittery hop: the first flow's fates and
	// delays must not depend on whether the second exists.
	hop := HopParams{Delay: 5 * ms, Loss: GilbertElliott{P: 0.05, R: 0.3, LossBad: 0.8}, Jitter: Jitter{Dist: Pareto{Mean: ms, Sigma: ms}, Correlation: 0.3}, Duplicate: 0.01}
	base := oneHop(hop)
	base.Seed = 9
	base.Flows[0].Traffic = CBR{Interval: ms, Size: 100}
	more := base
	more.Flows = append([]FlowConfig{}, base.Flows...)
	more.Flows = append(more.Flows, FlowConfig{Name: "other", Route: []int{0}, Traffic: Poisson{Rate: Mbitps, Size: 200}})
	fates := func(cfg Config) []record {
		rec := &recorder{}
		mustNew(t, cfg, rec).Run(20 * time.Second)
		return rec.bySeq(0)
	}
	a, b := fates(base), fates(more)
	if len(a) != len(b) {
		t.Fatalf("%d vs %d frames", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("frame %d: %+v alone, %+v with another flow", i, a[i], b[i])
		}
	}
}

func TestImpairedSteadyStateAllocatesNothing(t *testing.T) {
	hop := HopParams{Rate: 10 * Mbitps, Delay: 5 * ms, Queue: Limit{50, Frames},
		Loss:      Markov4{P13: 0.01, P31: 0.8, P32: 0.05, P23: 0.3, P14: 0.005},
		Jitter:    Jitter{Dist: ParetoNormal{Mean: ms, Sigma: ms}, Correlation: 0.5},
		Duplicate: 0.01, Corrupt: Corruption{BER: 1e-5}}
	cfg := oneHop(hop)
	cfg.Flows[0].Traffic = Poisson{Rate: 5 * Mbitps, Size: 500}
	n := mustNew(t, cfg, nil)
	n.Advance(20 * time.Second)
	if allocs := testing.AllocsPerRun(10, func() { n.Advance(n.Now() + time.Second) }); allocs != 0 {
		t.Errorf("%v allocations per simulated second", allocs)
	}
}
