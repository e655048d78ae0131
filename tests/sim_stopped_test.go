package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSimThatStopsKeepsItsSummary: paper 004's dropout with the
// supervisor told to stop the run when out of sync. The run fails (exit
// 1), says so as it happens on stderr, and its summary is written all the
// same, saying what stopped it, where the summary file used to be empty.
func TestSimThatStopsKeepsItsSummary(t *testing.T) {
	dir := t.TempDir()
	bench := strings.Replace(shippedBench(t, "digital-twin.yaml"), "supervisor: {theta_safe: 299ms, check: 10ms, jump: 3}", "supervisor: {theta_safe: 299ms, check: 10ms, jump: 3, on_out_of_sync: stop}", 1)
	if !strings.Contains(bench, "on_out_of_sync: stop") {
		t.Fatal("the shipped bench's supervisor is not as this test expects")
	}
	benchPath, summaryPath := filepath.Join(dir, "twin.yaml"), filepath.Join(dir, "summary.json")
	if err := os.WriteFile(benchPath, []byte(bench), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runHilrig(t, "sim", "twin-dropout", "--bench", benchPath, "--summary", summaryPath)
	var s struct{ Stopped string }
	data, _ := os.ReadFile(summaryPath)
	if err := json.Unmarshal(data, &s); err != nil || r.code != 1 || !strings.HasPrefix(s.Stopped, "failed: model twin out of sync") ||
		!strings.Contains(r.stderr, "out of sync at 10.500 s: twin: t_diff") || !strings.Contains(r.stderr, "run stopped: model twin out of sync") {
		t.Errorf("exit %d, summary %q (%v):\n%s", r.code, s.Stopped, err, r.stderr)
	}
}
