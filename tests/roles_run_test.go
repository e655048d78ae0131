package tests

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

// TestRunAnyProfileOnTheVirtualBench is issue 10's `hilrig run --bench
// profiles/benches/virtual.yaml lte`, which failed because the bench bound
// flows named m2s and s2m: the shipped virtual bench (its links moved into
// the test's directory) carries lines from the controller to the plant
// through lte's command flow, the flow lte gives the role to-plant.
func TestRunAnyProfileOnTheVirtualBench(t *testing.T) {
	bench, err := os.ReadFile("../profiles/benches/virtual.yaml")
	if err != nil {
		t.Fatal(err)
	}
	lte, err := os.ReadFile("../profiles/lte.yaml")
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.NewReplacer("/tmp/hilrig-controller", "DIR/controller", "/tmp/hilrig-plant", "DIR/plant").Replace(string(bench))
	rig := startRig(t, string(lte), moved)
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	const n = 50
	// lte: 30 ms each way with normal jitter of σ 5 ms, and a loss of 1e-6
	// that seed 1 does not draw for these frames.
	got, bad, _ := rig.carry(traffic{send: line, n: n, every: 10 * time.Millisecond, settle: 400 * time.Millisecond, stop: syscall.SIGTERM})
	if len(got) != n || bad != 0 {
		t.Fatalf("%d of %d lines arrived at the plant, %d bad: %s", len(got), n, bad, rig.stderr.String())
	}
	for i, r := range got {
		if r.seq != i {
			t.Fatalf("line %d arrived as the %d-th", r.seq, i)
		}
	}
	s := rig.readSummary()
	for _, f := range s.Flows {
		if f.Name == "command" && f.Sent != n {
			t.Errorf("flow command carried %d frames, want %d", f.Sent, n)
		}
	}
}
