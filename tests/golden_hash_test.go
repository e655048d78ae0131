package tests

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// updateHashes rewrites testdata/sim-hashes.txt. Use it only for a change
// of behaviour that is meant, and say so in the commit: a refactor must
// leave every hash as it was.
var updateHashes = flag.Bool("update-hashes", false, "rewrite testdata/sim-hashes.txt from this build")

// TestSimTracesUnchanged runs every shipped profile with three seeds, and
// the shipped co-simulation benches, and compares the SHA-256 of each trace
// and signals file with the hashes recorded in testdata/sim-hashes.txt. A
// virtual-time run is reproducible bit for bit from its seed, so any
// difference is a change of behaviour.
func TestSimTracesUnchanged(t *testing.T) {
	dir := t.TempDir()
	var got []string
	hash := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:])
	}
	out := runHilrig(t, "profiles")
	if out.code != 0 {
		t.Fatalf("profiles: %s", out.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.stdout), "\n") {
		name := strings.Fields(line)[0]
		for _, seed := range []string{"", "1", "7"} {
			args := []string{"sim", name, "--trace", filepath.Join(dir, "trace.csv"), "--summary", filepath.Join(dir, "s.json")}
			if seed != "" {
				args = append(args, "--seed", seed)
			}
			if r := runHilrig(t, args...); r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			got = append(got, fmt.Sprintf("trace %s seed=%s %s", name, or(seed, "profile"), hash(filepath.Join(dir, "trace.csv"))))
		}
	}
	for _, c := range [][2]string{{"internet-hil", "quarter-car-seat"}, {"platoon-80211p", "platoon-lead"},
		{"twin-dropout", "digital-twin"}, {"twin-degradation", "digital-twin-degradation"}} {
		trace, signals := filepath.Join(dir, "trace.csv"), filepath.Join(dir, "signals.csv")
		args := []string{"sim", c[0], "--bench", "../profiles/benches/" + c[1] + ".yaml", "--duration", "20s", "--trace", trace, "--signals", signals, "--summary", filepath.Join(dir, "s.json")}
		if r := runHilrig(t, args...); r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		got = append(got, fmt.Sprintf("trace %s bench=%s %s", c[0], c[1], hash(trace)))
		got = append(got, fmt.Sprintf("signals %s bench=%s %s", c[0], c[1], hash(signals)))
	}
	path := filepath.Join("testdata", "sim-hashes.txt")
	if *updateHashes {
		if err := os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no longer produced: %s", w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("new or changed: %s", g)
		}
	}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
