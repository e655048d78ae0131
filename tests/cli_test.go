package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("duration: 1s\nhops: {a: {rate: 4 Mbps}}\nflows: {f: {route: [a]}}\n"), 0o644)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no command", nil, 2, "usage: hilrig"},
		{"unknown command", []string{"simulate"}, 2, `unknown command "simulate"`},
		{"missing profile argument", []string{"sim"}, 2, "usage: hilrig sim PROFILE"},
		{"missing file", []string{"sim", filepath.Join(dir, "nope.yaml")}, 2, "nope.yaml: no such file"},
		{"unknown shipped name", []string{"sim", "nope"}, 2, "no shipped profile by that name"},
		{"bad profile", []string{"sim", bad}, 2, `bad.yaml:2:18: hops.a.rate: "4 Mbps" is not a rate`},
		{"bad flag", []string{"sim", "bottleneck", "--duration", "5"}, 2, `"5" is not a duration`},
		{"bad seed", []string{"sim", "bottleneck", "--seed", "x"}, 2, `--seed "x"`},
		{"trace into a missing directory", []string{"sim", "bottleneck", "--trace", filepath.Join(dir, "no", "t.csv")}, 2, "no such file or directory"},
		{"help", []string{"sim", "-h"}, 0, "usage: hilrig sim"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runHilrig(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.stderr)
			}
		})
	}
}

func TestSimByNameWithOverrides(t *testing.T) {
	dir := t.TempDir()
	summaryPath := filepath.Join(dir, "s.json")
	r := runHilrig(t, "sim", "bottleneck", "--duration", "10s", "--seed", "5", "--summary", summaryPath)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Profile  string  `json:"profile"`
		Seed     uint64  `json:"seed"`
		Duration float64 `json:"duration_s"`
		Flows    []struct {
			Name string `json:"name"`
			Sent uint64 `json:"sent"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	// m2s sends every 20 ms from 1.3 ms: 500 frames in 10 s.
	if s.Profile != "bottleneck" || s.Seed != 5 || s.Duration != 10 || s.Flows[0].Name != "m2s" || s.Flows[0].Sent != 500 {
		t.Errorf("summary %+v", s)
	}
}
