package plant

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"
)

// fnv folds values into an FNV-1a hash, every NaN alike (which NaN an
// operation makes is the processor's, as IEEE 754 allows, and none is
// written other than as NaN).
type fnv uint64

func newFNV() fnv { return 14695981039346656037 }

func (h *fnv) add(vs ...float64) {
	for _, v := range vs {
		b := math.Float64bits(v)
		if math.IsNaN(v) {
			b = 0x7ff8000000000000
		}
		*h ^= fnv(b)
		*h *= 1099511628211
	}
}

// runsEverywhere are the hashes of every built-in model integrated whole
// by each solver, and of quarter-car's analysis at both cuts, as
// computed on amd64 (TestSameBitsEverywhere prints them when they
// differ). A build for any other architecture must give the same:
// .ci/run runs this test under qemu-user for arm64 and arm.
var runsEverywhere = map[string]uint64{
	"bicycle rk4 1ms":                0x70e8dc16055a796e,
	"bicycle trapezoidal 1ms":        0x28648bd570a70261,
	"dc-motor trapezoidal 1ms":       0xe8c46c2743c76fb1,
	"motor-speed trapezoidal 1ms":    0x3de5bd6e12568401,
	"parallel-robot rk4 1ms":         0x4fb2af857e24f42d,
	"parallel-robot trapezoidal 1ms": 0x751b546500f835ec,
	"platoon rk4 1ms":                0x7c81f35062ec7110,
	"platoon trapezoidal 1ms":        0x9c7b2cbe0dd52ccc,
	"quarter-car analysis CP1":       0xa88bef7d6738e314,
	"quarter-car analysis CP2":       0x5138c25d9ee2ca20,
	"quarter-car rk4 1ms":            0xaf70a6b0cc9a94f0,
	"quarter-car trapezoidal 1ms":    0xd14b57162e2bc36e,
	"two-link-arm rk4 100µs":         0x8d416fa8b3e33e16,
	"two-link-arm trapezoidal 1ms":   0x4144b35c8d9d569f,
}

// TestSameBitsEverywhere: the solvers and the frequency analysis give
// the same bits on every architecture. Each built-in model is integrated
// whole, from its initial state, for 2 s by RK4 and by the trapezoidal
// rule, at the first of 1 ms and 100 µs the solver takes (RK4 takes
// neither for a stiff model), every state and
// signal hashed after each step; quarter-car's distortion and
// sensitivity are hashed at 61 frequencies for each cut. Before the
// solvers and models rounded each product before adding it, and before
// they had detmath's functions and their own LU, the hashes of every
// model differed under qemu-aarch64.
func TestSameBitsEverywhere(t *testing.T) {
	got := map[string]uint64{}
	for _, b := range Builtins() {
		m := builtin(t, b.Name, nil)
		p, err := New(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range Solvers {
			var it *Integrator
			for _, step := range []time.Duration{time.Millisecond, 100 * time.Microsecond} {
				if it, err = NewIntegrator(p.Whole(), s, step); err == nil {
					break
				}
			}
			if it == nil {
				continue // RK4 at a stiff model (dc-motor's step is 2 µs)
			}
			h := newFNV()
			for it.Time() < 2*time.Second {
				it.Advance()
				it.Sample()
				h.add(it.State()...)
				for k := range p.Signals() {
					h.add(it.Signal(k))
				}
			}
			got[fmt.Sprintf("%s %s %v", b.Name, s, it.Step())] = uint64(h)
		}
	}
	p, err := New(builtin(t, "quarter-car", nil))
	if err != nil {
		t.Fatal(err)
	}
	omegas := LogSpace(0.1, 1000, 15)
	for _, cut := range p.CutNames() {
		a, err := Analyse(p, cut, "v0", "deflection", 20*time.Millisecond, omegas)
		if err != nil {
			t.Fatal(err)
		}
		h := newFNV()
		h.add(omegas...)
		for i := range a.Omega {
			h.add(real(a.Distortion[i]), imag(a.Distortion[i]), real(a.Sensitivity[i]), imag(a.Sensitivity[i]))
		}
		db, at := a.PeakDistortion()
		h.add(db, at)
		got["quarter-car analysis "+cut] = uint64(h)
	}
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if want, ok := runsEverywhere[name]; !ok || got[name] != want {
			t.Errorf("%q: %#x, on %s; want %#x (amd64)", name, got[name], runtime.GOARCH, want)
		}
	}
	if len(got) != len(runsEverywhere) {
		t.Errorf("%d hashes, want %d", len(got), len(runsEverywhere))
	}
}
