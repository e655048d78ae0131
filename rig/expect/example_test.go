package expect_test

import (
	"fmt"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
)

// Expectations are parsed against the profile before the run, so that a
// misspelt flow is an error at once, and evaluated on the summary after.
func Example() {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		panic(err)
	}
	names := expect.NamesOf(p, nil)
	if _, err := expect.Parse("flows.m2z.delay.p95 < 60ms", names); err != nil {
		fmt.Println(err)
	}
	var exps []*expect.Expectation
	for _, text := range []string{"flows.m2s.lost == 0", "flows.m2s.delay.max < 60ms", "hops.core-up.peak_queue_bytes <= 30kB"} {
		x, err := expect.Parse(text, names)
		if err != nil {
			panic(err)
		}
		exps = append(exps, x)
	}
	sum, err := rig.Sim(p, nil, rig.Options{})
	if err != nil {
		panic(err)
	}
	for _, r := range expect.Evaluate(exps, &sum, nil) {
		fmt.Println(r)
	}
	// Output:
	// "flows.m2z.delay.p95 < 60ms": column 7: flows has no "m2z"; did you mean m2s? (it has m2s, s2m, cross)
	// flows.m2s.lost == 0: measured 0
	// flows.m2s.delay.max < 60ms failed: measured 1058.7ms, limit 60ms
	// hops.core-up.peak_queue_bytes <= 30kB: measured 30kB
}
