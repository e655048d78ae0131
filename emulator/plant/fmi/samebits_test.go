package fmi_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/emulator/plant/fmi/fmitest"
)

// stepsEverywhere are the hashes of the Go FMUs stepped by hilrig's side
// of FMI, as computed on amd64 (TestSameBitsEverywhere prints them when
// they differ). A build for any other architecture must give the same:
// .ci/run runs this test under qemu-user for arm64 and arm.
var stepsEverywhere = map[string]uint64{
	"bouncing-ball ME":            0x1e0d842afe974d09,
	"first-order ME, 1e-10":       0x039972fead9ced3a,
	"first-order CS":              0xbc0b48bfbfb2b72d,
	"counter ME, steps of 0.03 s": 0x6735747fe70a45c6,
}

// TestSameBitsEverywhere: the Model Exchange integrator (Dormand–Prince,
// its error control, its dense output and the bisection that places a
// state event) gives the same bits on every architecture, as package
// plant's solvers do (its doc has the rule). Each Go FMU is stepped for
// 3 s, its time, outputs and event instants hashed after each step; the
// FMUs are Go, so the whole computation is hilrig's. Before the
// integrator rounded each product before adding it and took detmath's
// Pow, the bouncing ball's and the lag's hashes differed under
// qemu-aarch64.
func TestSameBitsEverywhere(t *testing.T) {
	type input struct {
		at     int
		values []float64
	}
	for _, tc := range []struct {
		name   string
		model  *fmitest.Model
		kind   fmi.Kind
		cfg    fmi.Config
		step   float64
		inputs []input
	}{
		{"bouncing-ball ME", fmitest.BouncingBall(), fmi.ME, fmi.Config{}, 0.01, nil},
		{"first-order ME, 1e-10", fmitest.FirstOrder(), fmi.ME, fmi.Config{Experiment: fmi.Experiment{Stop: 3, Tolerance: 1e-10}}, 0.01, []input{{51, []float64{1, 1}}, {101, []float64{1, -1}}, {201, []float64{-0.3, -1}}}},
		{"first-order CS", fmitest.FirstOrder(), fmi.CS, fmi.Config{Initial: []float64{1, 1}}, 0.01, []input{{151, []float64{0.7, -1}}}},
		{"counter ME, steps of 0.03 s", fmitest.Counter(), fmi.ME, fmi.Config{}, 0.03, nil},
	} {
		s, inst := newStepper(t, tc.model, tc.kind, tc.cfg)
		h := uint64(14695981039346656037)
		add := func(vs ...float64) {
			for _, v := range vs {
				b := math.Float64bits(v)
				if math.IsNaN(v) {
					b = 0x7ff8000000000000 // which NaN is the processor's
				}
				h = (h ^ b) * 1099511628211
			}
		}
		out := make([]float64, len(s.OutputSignals()))
		for k := 1; float64(k)*tc.step <= 3+1e-9; k++ {
			for _, in := range tc.inputs {
				if in.at == k {
					s.Set(in.values)
				}
			}
			if err := s.Step(float64(k) * tc.step); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			s.Outputs(out)
			add(s.Time())
			add(out...)
		}
		add(inst.EventTimes...)
		st := s.Stats()
		add(float64(st.SolverSteps), float64(st.Rejected), float64(st.StateEvents))
		if want := stepsEverywhere[tc.name]; h != want {
			t.Errorf("%s on %s: hash %#016x, want %#016x (amd64's)\n\t%q: %#016x,", tc.name, runtime.GOARCH, h, want, tc.name, h)
		}
	}
}
