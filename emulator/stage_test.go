package emulator

import (
	"slices"
	"testing"
	"time"
)

// TestStagesRegistered: every impairment is a stage registered under its
// hop key, once, and a hop runs them in netem's order: loss, duplication
// and corruption as a frame enters; reordering, the recorded delay and
// jitter as it leaves the serialiser. A hop that writes none has no stage.
func TestStagesRegistered(t *testing.T) {
	var entering, propagating []string
	for _, d := range stageDefs {
		if _, ok := LookupHopKey(d.key); !ok {
			t.Errorf("stage %q is not a hop key", d.key)
		}
		if d.at == atEnter {
			entering = append(entering, d.key)
		} else {
			propagating = append(propagating, d.key)
		}
	}
	if want := []string{"loss", "duplicate", "corrupt"}; !slices.Equal(entering, want) {
		t.Errorf("entering stages %v, want %v", entering, want)
	}
	if want := []string{"reorder", "delay", "jitter"}; !slices.Equal(propagating, want) {
		t.Errorf("propagating stages %v, want %v", propagating, want)
	}

	none := []hop{{HopParams: HopParams{Rate: Mbitps, Delay: ms}}}
	initStages(none)
	if s := none[0].stages; len(s.entering)+len(s.propagating) != 0 {
		t.Errorf("a hop without impairments has stages %v %v", s.entering, s.propagating)
	}
	for _, tc := range []struct {
		key string
		p   HopParams
	}{
		{"loss", HopParams{Loss: Bernoulli{P: 0.1}}},
		{"duplicate", HopParams{Duplicate: 0.1}},
		{"corrupt", HopParams{Corrupt: Corruption{FrameP: 0.1}}},
		{"reorder", HopParams{Reorder: Reorder{Mode: ReorderGap, P: 0.1, Gap: 2}}},
		{"delay", HopParams{DelayTrace: []time.Duration{ms}}},
		{"jitter", HopParams{Jitter: Jitter{Dist: Uniform{Spread: ms}}}},
	} {
		h := []hop{{HopParams: tc.p}}
		initStages(h)
		active := append(slices.Clone(h[0].stages.entering), h[0].stages.propagating...)
		if len(active) != 1 || stageDefs[active[0].index].key != tc.key {
			t.Errorf("%s: active stages %v", tc.key, active)
		}
	}
}

// TestStageStreamsNamedByKey: each stage draws from the flow's stream at
// the hop named by its key and nothing else, so the loss decisions with
// duplication on are exactly those without, and each is the stream's
// draw for that frame: one seed reproduces a run, and turning on one
// impairment does not move another's draws.
func TestStageStreamsNamedByKey(t *testing.T) {
	const seed, frames, p = 11, 400, 0.3
	stream := func(key string) *Stream { return NewStream(seed, "hop", "h", "0", "flow", "f", key) }
	for _, tc := range []struct {
		name string
		hop  HopParams
	}{
		{"loss", HopParams{Loss: Bernoulli{P: p}}},
		{"duplicate", HopParams{Duplicate: p}},
		{"both", HopParams{Loss: Bernoulli{P: p}, Duplicate: p}},
	} {
		cfg := oneHop(tc.hop)
		cfg.Seed = seed
		rec := &recorder{}
		n := mustNew(t, cfg, rec)
		for range frames {
			n.Inject(0, []byte{1})
			n.Advance(n.Now() + ms)
		}
		n.Finish()
		lost, copies := map[uint64]bool{}, map[uint64]int{}
		for _, r := range rec.frames {
			lost[r.Seq] = lost[r.Seq] || r.Status == LossDrop
			if r.Copy {
				copies[r.Seq]++
			}
		}
		loss, dup := stream("loss"), stream("duplicate")
		for seq := range uint64(frames) {
			wantLost := tc.hop.Loss != nil && loss.Bernoulli(p)
			wantCopy := !wantLost && tc.hop.Duplicate > 0 && dup.Bernoulli(p)
			if lost[seq] != wantLost || (copies[seq] == 1) != wantCopy || copies[seq] > 1 {
				t.Fatalf("%s: frame %d lost %v with %d copies; its streams say lost %v, copied %v", tc.name, seq, lost[seq], copies[seq], wantLost, wantCopy)
			}
		}
	}
}

// TestStagesAllocateNothingPerFrame: a frame through a hop with every stage
// on allocates nothing, and neither does a change of every stage's
// parameters, which makes each flow's state again in place.
func TestStagesAllocateNothingPerFrame(t *testing.T) {
	p := HopParams{Rate: 10 * Mbitps, Queue: Limit{N: 50, Unit: Frames},
		DelayTrace: []time.Duration{ms, 3 * ms, 2 * ms},
		Loss:       GilbertElliott{P: 0.05, R: 0.3, LossBad: 0.8, LossGood: 0.01},
		Jitter:     Jitter{Dist: Normal{Sigma: ms}, Correlation: 0.5},
		Reorder:    Reorder{Mode: ReorderGap, P: 0.2, Gap: 3},
		Duplicate:  0.1, Corrupt: Corruption{BER: 1e-4}}
	n := mustNew(t, oneHop(p), nil)
	payload := make([]byte, 200)
	frame := func() {
		n.Inject(0, payload)
		n.Advance(n.Now() + 5*ms)
	}
	for range 2000 { // the pool, the queues and each stage's state
		frame()
	}
	if allocs := testing.AllocsPerRun(2000, frame); allocs != 0 {
		t.Errorf("%v allocations per frame", allocs)
	}
	every := FieldDelay | FieldLoss | FieldJitter | FieldReorder | FieldDuplicate | FieldCorrupt
	change := func() {
		n.hops[0].set(&p, every, n.Now())
		frame()
	}
	if allocs := testing.AllocsPerRun(2000, change); allocs != 0 {
		t.Errorf("%v allocations per change and frame", allocs)
	}
}

// dropOriginals is a stage written for TestStageFromOneFile: it loses
// every original frame with probability P, drawing from its key's stream,
// and lets copies through.
type dropOriginals struct{ P float64 }

func (s *dropOriginals) Active() bool         { return true }
func (s *dropOriginals) Check() error         { return checkProbabilities(s.P) }
func (s *dropOriginals) NewState(old any) any { return nil }
func (s *dropOriginals) Enter(f *Frame, fs *FlowState) Verdict {
	if !f.Copy && fs.Rand.Bernoulli(s.P) {
		return Lose
	}
	return Pass
}

func (s *dropOriginals) Propagate(_ *Frame, _ *FlowState, d time.Duration) (time.Duration, Verdict) {
	return d, Pass
}

// TestStageFromOneFile: a stage registered under a key runs on every hop
// with nothing else written: it draws from the flow's stream named by its
// key, and what it decides is applied in its place among the stages. Here
// it stands between duplication and corruption: every frame is copied,
// the original may then be lost while its copy goes on, and both that
// survive are corrupted.
func TestStageFromOneFile(t *testing.T) {
	saved := stageDefs
	t.Cleanup(func() { stageDefs = saved })
	stageDefs = slices.Clone(stageDefs)
	stage := &dropOriginals{P: 0.4}
	registerStage(stageDef{key: "flap", at: atEnter, order: 25, of: func(*HopParams) Stage { return stage }})

	const seed, frames = 5, 300
	cfg := oneHop(HopParams{Duplicate: 1, Corrupt: Corruption{FrameP: 1}})
	cfg.Seed = seed
	rec := &recorder{}
	n := mustNew(t, cfg, rec)
	for range frames {
		n.Inject(0, []byte{0, 0})
		n.Advance(n.Now() + ms)
	}
	n.Finish()
	want := NewStream(seed, "hop", "h", "0", "flow", "f", "flap")
	status := map[uint64][2]Status{} // the original's, the copy's
	for _, r := range rec.frames {
		s := status[r.Seq]
		if r.Copy {
			s[1] = r.Status
		} else {
			s[0] = r.Status
		}
		status[r.Seq] = s
	}
	for seq := range uint64(frames) {
		original := Corrupted
		if want.Bernoulli(stage.P) {
			original = LossDrop
		}
		if got := status[seq]; got != [2]Status{original, Duplicate} {
			t.Fatalf("frame %d: original %v, copy %v; want %v, duplicate", seq, got[0], got[1], original)
		}
	}
	if h := n.Summary().Hops[0]; h.Duplicated != frames || h.Corrupted == 0 {
		t.Errorf("hop: %d duplicated, %d corrupted", h.Duplicated, h.Corrupted)
	}
}
