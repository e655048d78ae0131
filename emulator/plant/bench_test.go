package plant

import (
	"testing"
	"time"
)

// BenchmarkStep is the cost of one integration step (ns/op) of built-in
// models, and checks it allocates nothing. The quarter car's simulated part
// at CP2 is what the demo steps at 500 Hz.
func BenchmarkStep(b *testing.B) {
	for _, tc := range []struct {
		model, cut string // cut "": the whole plant
		solver     Solver
		step       time.Duration
	}{
		{"quarter-car", "", Trapezoidal, time.Millisecond},
		{"quarter-car", "", RK4, time.Millisecond},
		{"quarter-car", "CP2", Trapezoidal, 2 * time.Millisecond},
		{"dc-motor", "", Trapezoidal, 100 * time.Microsecond},
		{"two-link-arm", "", Trapezoidal, time.Millisecond},
		{"bicycle", "", RK4, 10 * time.Millisecond},
		{"platoon", "lead", Trapezoidal, 10 * time.Millisecond},
		{"parallel-robot", "", RK4, time.Millisecond},
		{"parallel-robot", "", Trapezoidal, time.Millisecond},
		{"parallel-robot", "controller", RK4, time.Millisecond},
	} {
		name := tc.model
		if tc.cut != "" {
			name += "@" + tc.cut
		}
		b.Run(name+"/"+string(tc.solver), func(b *testing.B) {
			bt, _ := LookupBuiltin(tc.model)
			m, _ := bt.Model(nil)
			p, err := New(m)
			if err != nil {
				b.Fatal(err)
			}
			part := p.Whole()
			if tc.cut != "" {
				part, _, _ = p.Cut(tc.cut)
			}
			it, err := NewIntegrator(part, tc.solver, tc.step)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				it.Advance()
			}
		})
	}
}
