package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// shipped lists the shipped profiles as `hilrig profiles` prints them.
func shipped(t testing.TB) []string {
	cmd := runHilrig(t, "profiles")
	if cmd.code != 0 {
		t.Fatalf("hilrig profiles: exit %d: %s", cmd.code, cmd.stderr)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(cmd.stdout), "\n") {
		name, description, _ := strings.Cut(line, " ")
		if strings.TrimSpace(description) == "" {
			t.Errorf("%s has no description", name)
		}
		names = append(names, name)
	}
	return names
}

func TestLibraryChecksAndRuns(t *testing.T) {
	names := shipped(t)
	if len(names) < 12 {
		t.Fatalf("only %d shipped profiles: %v", len(names), names)
	}
	dir := t.TempDir()
	for _, name := range names {
		if r := runHilrig(t, "check", name); r.code != 0 {
			t.Errorf("check %s: exit %d: %s", name, r.code, r.stderr)
		}
		r := runHilrig(t, "sim", name)
		var summary struct {
			Flows []struct {
				Sent uint64 `json:"sent"`
			} `json:"flows"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &summary) != nil || len(summary.Flows) == 0 || summary.Flows[0].Sent == 0 {
			t.Errorf("sim %s: exit %d, summary %.200q, stderr %s", name, r.code, r.stdout, r.stderr)
		}
		// What show prints is itself a valid profile.
		shown := runHilrig(t, "show", name)
		file := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(file, []byte(shown.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := runHilrig(t, "check", file); shown.code != 0 || r.code != 0 {
			t.Errorf("show %s does not check: %s%s", name, shown.stderr, r.stderr)
		}
	}
	r := runHilrig(t, "check", "../profiles")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d profiles checked, 0 with errors", len(names))) {
		t.Errorf("check ../profiles: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestShippedBenches checks the example benches against the profiles
// whose flows they bind, and that a bench's problems name the profile's
// flows.
func TestShippedBenches(t *testing.T) {
	benches, err := filepath.Glob("../profiles/benches/*.yaml")
	if err != nil || len(benches) < 4 {
		t.Fatalf("shipped benches: %v %v", benches, err)
	}
	// The profiles each bench is written for: they have its flows.
	runsWith := map[string][]string{"quarter-car-seat.yaml": {"internet-hil"}, "platoon-lead.yaml": {"platoon-80211p"},
		"digital-twin.yaml": {"twin-baseline", "twin-dropout"}, "digital-twin-degradation.yaml": {"twin-degradation"},
		"robot-bus.yaml": {"shared-ethernet"}}
	for _, bench := range benches {
		profiles := runsWith[filepath.Base(bench)]
		if profiles == nil {
			profiles = []string{"bottleneck", "teleop-table1"}
		}
		r := runHilrig(t, append([]string{"check", "--bench", bench}, profiles...)...)
		if r.code != 0 || strings.Count(r.stdout, " bound)") != len(profiles) {
			t.Errorf("check --bench %s: exit %d\n%s%s", bench, r.code, r.stdout, r.stderr)
		}
	}
	r := runHilrig(t, "check", "--bench", "../profiles/benches/virtual.yaml", "lte")
	if r.code != 2 || !strings.Contains(r.stderr, `virtual.yaml:14:8: bind.m2s: profile lte has no flow "m2s"; its flows are command, sensor`) {
		t.Errorf("check --bench virtual.yaml lte: exit %d\n%s", r.code, r.stderr)
	}
}

// TestTwinProfiles checks paper 004's two disruptions in the trace: during
// the degradation the digital twin receives the states once a second, and
// after the dropout it receives the held states in one burst.
func TestTwinProfiles(t *testing.T) {
	dir := t.TempDir()
	deliveries := func(profile string) map[time.Duration]int {
		path := filepath.Join(dir, profile+".csv")
		if r := runHilrig(t, "sim", profile, "--trace", path); r.code != 0 {
			t.Fatalf("%s: exit %d: %s", profile, r.code, r.stderr)
		}
		at := map[time.Duration]int{}
		for _, r := range readTrace(t, path) {
			if r.flow == "state" && r.status == "delivered" && r.recv >= 10*time.Second && r.recv < 16*time.Second {
				at[r.recv]++
			}
		}
		return at
	}
	degraded := deliveries("twin-degradation")
	for _, s := range []time.Duration{11, 12, 13, 14, 15} {
		// Ten states, 100 ms apart, are held each second.
		if n := degraded[s*time.Second]; n < 9 || n > 11 {
			t.Errorf("degradation: %d states delivered together at %vs, want about 10", n, s)
		}
	}
	for at, n := range degraded {
		if at < 15*time.Second && at%time.Second != 0 {
			t.Errorf("degradation: %d states delivered at %v, between the releases", n, at)
		}
	}
	dropped := deliveries("twin-dropout")
	if n := dropped[11*time.Second]; n < 9 || n > 11 {
		t.Errorf("dropout: %d states released together at 11 s, want about 10", n)
	}
}

func TestCheckReportsEveryFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "good.yaml"), []byte("duration: 1s\nhops: {a: {delay: 1ms}}\nflows: {f: {route: [a]}}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("duration: 1s\nhops: {a: {delay: 1 ms s}}\nflows: {f: {route: [b]}}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a profile"), 0o644)
	r := runHilrig(t, "check", dir, "--set", "seed=3")
	if r.code != 2 {
		t.Errorf("exit %d, want 2", r.code)
	}
	for _, want := range []string{"bad.yaml:2:19: hops.a.delay: \"1 ms s\" is not a duration", "bad.yaml:3:21: flows.f.route[0]: no hop named \"b\""} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if !strings.Contains(r.stdout, "ok  "+filepath.Join(dir, "good.yaml")) || !strings.Contains(r.stdout, "2 profiles checked, 1 with errors") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
}

// BenchmarkCheck100Profiles times `hilrig check` on a directory of 100
// profiles (the shipped library, copied and varied), process start to exit.
func BenchmarkCheck100Profiles(b *testing.B) {
	dir := b.TempDir()
	names := shipped(b)
	for i := range 100 {
		name := names[i%len(names)]
		text := runHilrig(b, "show", name).stdout + fmt.Sprintf("# copy %d\n", i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%03d-%s.yaml", i, name)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		if r := runHilrig(b, "check", dir); r.code != 0 {
			b.Fatalf("exit %d: %s", r.code, r.stderr)
		}
	}
}
