package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/drivers/realtime"
)

// TestPreemptionSaidOnce: a kernel that does not preempt itself holds the
// executor up behind other processes' system calls (BENCHMARKS.md: 4.7 ms
// behind a linker's write on this VM). A real-time run says so as it
// starts, a suite once for all its cases rather than once a case, and
// every case's summary names the kernel's model.
func TestPreemptionSaidOnce(t *testing.T) {
	dir := t.TempDir()
	bench := "name: two-ptys\nendpoints:\n" +
		"  controller: {pty: {link: " + filepath.Join(dir, "controller") + ", framing: line}}\n" +
		"  plant: {pty: {link: " + filepath.Join(dir, "plant") + ", framing: line}}\n" +
		"bind:\n  to-plant: {from: controller, to: plant}\n  to-controller: {from: plant, to: controller}\n"
	suite := `name: twice
bench: bench.yaml
clock: real
duration: 0.5s
cases:
  twice:
    profile: bottleneck
    matrix: {seeds: [1, 2]}
    script:
      - send: {endpoint: controller, line: "CMD {n}", at: 100ms, every: 10ms, count: 5}
      - expect: {endpoint: plant, line: CMD 4, within: 100ms}
    expect:
      - flows.m2s.sent == 5
`
	for name, text := range map[string]string{"bench.yaml": bench, "suite.yaml": suite} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	report := filepath.Join(dir, "report")
	r := runHilrig(t, "test", filepath.Join(dir, "suite.yaml"), "--report", report)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	model := realtime.KernelPreemption()
	fifo := 0
	for _, c := range []string{"001-twice_seed=1", "002-twice_seed=2"} {
		data, err := os.ReadFile(filepath.Join(report, c, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Timing struct {
				Scheduler  string `json:"scheduler"`
				Preemption string `json:"kernel_preemption"`
			} `json:"timing"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if s.Timing.Preemption != model {
			t.Errorf("%s: kernel_preemption %q, this kernel's %q", c, s.Timing.Preemption, model)
		}
		if strings.HasPrefix(s.Timing.Scheduler, "SCHED_FIFO") {
			fifo++
		}
	}
	said := strings.Count(r.stderr, "the kernel does not preempt itself")
	t.Logf("kernel preemption %q; %d of 2 cases at SCHED_FIFO; said %d times", model, fifo, said)
	want := 0
	if fifo > 0 && realtime.PreemptionHoldsUp(model) {
		want = 1
	}
	if said != want {
		t.Errorf("said %d times, want %d: %s", said, want, r.stderr)
	}
}
