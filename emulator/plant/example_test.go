package plant_test

import (
	"fmt"
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
)

// Paper 002's robot and its PID, uncut, over the paper's 5 s: the plate's
// distance from the path.
func Example_parallelRobot() {
	b, _ := plant.LookupBuiltin("parallel-robot")
	m, _ := b.Model(nil)
	p, _ := plant.New(m)
	it, _ := plant.NewIntegrator(p.Whole(), plant.RK4, time.Millisecond)
	e := p.SignalIndex(m.Output)
	worst := 0.0
	for it.Time() < 5*time.Second {
		it.Advance()
		it.Sample()
		worst = math.Max(worst, it.Signal(e))
	}
	fmt.Printf("%s: largest %.1f mm\n", m.Output, 1e3*worst)
	// Output: track_err: largest 5.5 mm
}

// A supervisor catching up jumps three exchange steps of 1 ms at once; the
// integrator takes them in its own steps and hands back what does not make
// a whole step.
func ExampleIntegrator_AdvanceBy() {
	b, _ := plant.LookupBuiltin("parallel-robot")
	m, _ := b.Model(nil)
	p, _ := plant.New(m)
	it, _ := plant.NewIntegrator(p.Whole(), plant.RK4, 500*time.Microsecond)
	rest := it.AdvanceBy(3*time.Millisecond + 200*time.Microsecond)
	fmt.Println(it.Time(), rest)
	// Output: 3ms 200µs
}
