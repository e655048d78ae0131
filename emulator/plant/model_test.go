package plant

import (
	"slices"
	"strings"
	"testing"
)

func TestQuarterCarCuts(t *testing.T) {
	p := quarterCarPlant(t)
	for _, tc := range []struct {
		cut                          string
		simulated, in, out, external []string
	}{
		{"CP1", []string{"wheel", "suspension"}, []string{"v2"}, []string{"Fs"}, []string{"v0"}},
		{"CP2", []string{"wheel", "body", "suspension"}, []string{"Fseat"}, []string{"v2"}, []string{"v0"}},
	} {
		sim, hw, err := p.Cut(tc.cut)
		if err != nil {
			t.Fatal(err)
		}
		got := sim.Subsystems()
		slices.Sort(got)
		slices.Sort(tc.simulated)
		if !slices.Equal(got, tc.simulated) || !slices.Equal(sim.In(), tc.in) || !slices.Equal(sim.Out(), tc.out) || !slices.Equal(sim.External(), tc.external) {
			t.Errorf("%s: simulated %v in %v out %v external %v", tc.cut, got, sim.In(), sim.Out(), sim.External())
		}
		if !slices.Equal(hw.In(), tc.out) || !slices.Equal(hw.Out(), tc.in) || len(hw.External()) != 0 {
			t.Errorf("%s: hardware in %v out %v external %v", tc.cut, hw.In(), hw.Out(), hw.External())
		}
	}
}

// TestModelProblems: every kind of mistake in a model is reported, with
// the path of what is wrong, all at once.
func TestModelProblems(t *testing.T) {
	ok := func() Model { return msd(1, 2, 400) }
	for _, tc := range []struct {
		name   string
		change func(m *Model)
		want   []string
	}{
		{"no subsystems", func(m *Model) { m.Subsystems = nil; m.Inputs = nil }, []string{"subsystems: a model needs at least one subsystem"}},
		{"unknown input", func(m *Model) { m.Subsystems[1].Inputs[1] = "vv" }, []string{"subsystems.spring.inputs[1]: no subsystem produces vv and it is not an input of the model; did you mean v?"}},
		{"produced twice", func(m *Model) { m.Subsystems[1].Outputs[0] = "x" }, []string{"subsystems.spring.outputs[0]: x is produced by mass too"}},
		{"input produced", func(m *Model) { m.Subsystems[1].Outputs[0] = "F" }, []string{"subsystems.spring.outputs[0]: F is an input of the model; a subsystem cannot produce it"}},
		{"bad A", func(m *Model) { m.Subsystems[0].Linear.A = dense([]float64{0, 1, 0}, []float64{0, 0, 0}) }, []string{"subsystems.mass.A: is 2×3; want 2×2 (2 states by 2 states)"}},
		{"bad D", func(m *Model) { m.Subsystems[1].Linear.D = dense([]float64{1}) }, []string{"subsystems.spring.D: is 1×1; want 1×2 (1 outputs by 2 inputs)"}},
		{"initial", func(m *Model) { m.Subsystems[0].Initial = []float64{1} }, []string{"subsystems.mass.initial: has 1 values for 2 states"}},
		{"state twice", func(m *Model) { m.Subsystems[0].States[1] = "x" }, []string{"subsystems.mass.states[1]: x given twice"}},
		{"bad name", func(m *Model) { m.Subsystems[0].States[1] = "2v" }, []string{`subsystems.mass.states[1]: "2v" is not a valid state name`}},
		{"unused input", func(m *Model) { m.Inputs = append(m.Inputs, Input{Name: "G", Stimulus: Constant(0)}) }, []string{"inputs.G: is read by no subsystem"}},
		{"no stimulus", func(m *Model) { m.Inputs[0].Stimulus = nil }, []string{"inputs.F: has no stimulus"}},
		{"no equations", func(m *Model) { m.Subsystems[1].Linear = nil }, []string{"subsystems.spring: needs either linear matrices or equations"}},
		{"output", func(m *Model) { m.Output = "xx" }, []string{"output: no signal is named xx; did you mean x?"}},
		{"loop", func(m *Model) {
			// spring reads mass's x and v; make mass pass Fsd straight to x.
			m.Subsystems[0].Linear.D = dense([]float64{0, 1}, []float64{0, 0})
		}, []string{"subsystems: algebraic loop: mass → spring → mass pass their inputs straight to their outputs in a circle; give one of them a state"}},
		{"cut unknown", func(m *Model) { m.Cuts = []Cut{{Name: "C", Hardware: []string{"sprung"}}} }, []string{"cuts.C: no subsystem named sprung; did you mean spring? (the subsystems: mass, spring)"}},
		{"cut all", func(m *Model) { m.Cuts = []Cut{{Name: "C", Hardware: []string{"mass", "spring"}}} }, []string{"cuts.C: puts every subsystem on the bench: the rig would simulate nothing"}},
		{"cut empty", func(m *Model) { m.Cuts = []Cut{{Name: "C"}} }, []string{"cuts.C: names no hardware subsystem"}},
		{"several at once", func(m *Model) {
			m.Subsystems[0].Initial = []float64{1}
			m.Subsystems[1].Inputs[0] = "y"
		}, []string{"subsystems.mass.initial: has 1 values for 2 states", "subsystems.spring.inputs[0]: no subsystem produces y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := ok()
			tc.change(&m)
			_, err := New(m)
			if err == nil {
				t.Fatalf("no error; want %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestCutExchangesNothing: a cut between parts that share no signal is
// refused.
func TestCutExchangesNothing(t *testing.T) {
	m := lag(1)
	m.Subsystems = append(m.Subsystems, Subsystem{Name: "other", States: []string{"y2"}, Inputs: []string{"u"}, Outputs: []string{"y2"},
		Linear: &LTI{A: dense([]float64{-1}), B: dense([]float64{1}), C: dense([]float64{1})}})
	m.Cuts = []Cut{{Name: "C", Hardware: []string{"other"}}}
	if _, err := New(m); err == nil || !strings.Contains(err.Error(), "cuts.C: the hardware and the simulated part exchange no signal") {
		t.Errorf("got %v", err)
	}
}
