package main

import "testing"

// TestCommandTreeIsCheap: every command builds the whole command tree
// before it runs, so building it does no work that only one command's
// help needs. `help expect`'s text (every path of the summary, found by
// walking its types) was written there: 6 % of `hilrig version`'s CPU
// (perf record of 200 runs), and the tree took 1 964 allocations with it,
// 772 without. The bound leaves room for more commands and flags, none
// for such a walk.
func TestCommandTreeIsCheap(t *testing.T) {
	allocs := testing.AllocsPerRun(10, func() { newRoot() })
	t.Logf("%.0f allocations to build the command tree", allocs)
	const bound = 1000
	if allocs > bound {
		t.Errorf("building the command tree made %.0f allocations, more than %d", allocs, bound)
	}
}
