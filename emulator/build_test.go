package emulator

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

// TestBuildAllocatesWhatAFlowKeeps: building a network of 10 000 two-hop
// flows allocates about what the flows keep (their state, route, state at
// each hop, source, stream and pending event), not twice that by growing
// the flows' slice, nor a map per flow to count its route's hops.
func TestBuildAllocatesWhatAFlowKeeps(t *testing.T) {
	const flows = 10_000
	cfg := Config{Seed: 1, Hops: []HopConfig{{Name: "a", HopParams: HopParams{Rate: Gbitps}}, {Name: "b", HopParams: HopParams{Rate: Gbitps}}}}
	for i := range flows {
		cfg.Flows = append(cfg.Flows, FlowConfig{Name: fmt.Sprint("f", i), Route: []int{0, 1}, Traffic: Poisson{Rate: 8000, Size: 100}})
	}
	// What a flow keeps, the event queue's slice counted at twice its
	// length (it grows by doubling), and a quarter more for the
	// allocator's size classes.
	// The state at a two-hop route's positions is in the flow itself.
	keeps := unsafe.Sizeof(flow{}) + 2*unsafe.Sizeof(0) +
		unsafe.Sizeof(poissonSource{}) + unsafe.Sizeof(Stream{}) + 2*unsafe.Sizeof(event{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := mustNew(t, cfg, nil)
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(n)
	perFlow := (after.TotalAlloc - before.TotalAlloc) / flows
	if limit := uint64(keeps) * 5 / 4; perFlow > limit {
		t.Errorf("building allocated %d B per flow, over %d B (a flow keeps %d B)", perFlow, limit, keeps)
	}
}

// TestRouteOccurrences: a flow's state at each position of its route
// counts the times the route crossed that hop before (which names its
// random streams there), for each flow afresh.
func TestRouteOccurrences(t *testing.T) {
	cfg := Config{Hops: []HopConfig{{Name: "a"}, {Name: "b"}}}
	routes := [][]int{{0, 1, 0, 0}, {1, 0}, {0, 0}}
	want := [][]int32{{0, 0, 1, 2}, {0, 0}, {0, 1}}
	for i, r := range routes {
		cfg.Flows = append(cfg.Flows, FlowConfig{Name: fmt.Sprint("f", i), Route: r})
	}
	n := mustNew(t, cfg, nil)
	for i := range routes {
		var got []int32
		for pos := range n.flows[i].routeLen {
			got = append(got, n.flows[i].hopAt(int(pos)).occurrence)
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("route %v: occurrences %v, want %v", routes[i], got, want[i])
		}
	}
}
