package web

import (
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// linkProfile is one hop and one flow across it.
func linkProfile(t *testing.T) *profiles.Loaded {
	t.Helper()
	p, err := profiles.Parse("p.yaml", []byte("duration: 10s\nhops:\n  link: {rate: 1Mbit, delay: 5ms}\nflows:\n  f: {route: [link], traffic: {cbr: {interval: 10ms, size: 100B}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHopChangeDurationsInRange: a change with a duration longer than the
// longest the engine takes (emulator.MaxDuration, a century), at any of
// its keys, is refused at that key; one of exactly the longest is taken.
func TestHopChangeDurationsInRange(t *testing.T) {
	p := linkProfile(t)
	// The profile language refuses it, at its key, as it refuses a
	// profile's (hilrig takes durations up to a century).
	beyond := func(key, value string) string {
		return key + ": " + key + ": \"" + value + "\" is too long: hilrig takes durations up to 876600h (a century)"
	}
	for _, tc := range []struct {
		body   string
		outage bool
		want   []string // path: error; none when taken
	}{
		{`{"delay": "9223372036854775807ns"}`, false, []string{beyond("delay", "9223372036854775807ns")}},
		{`{"delay": "3155760000.000000001s"}`, false, []string{beyond("delay", "3155760000.000000001s")}},
		{`{"delay": "876600h"}`, false, nil},
		{`{"per_frame": "1000000h"}`, false, []string{beyond("per_frame", "1000000h")}},
		{`{"delay": "1ms", "for": "9223372036.854775807s"}`, false, []string{beyond("for", "9223372036.854775807s")}},
		{`{"jitter": {"dist": "uniform", "spread": "1000000h"}}`, false, []string{beyond("jitter.spread", "1000000h")}},
		{`{"jitter": {"dist": "pareto", "mean": "1000000h", "sigma": "2000000h"}}`, false, []string{beyond("jitter.mean", "1000000h"), beyond("jitter.sigma", "2000000h")}},
		{`{"delay": "1000000h", "rate": "fast"}`, false, []string{beyond("delay", "1000000h"), `rate: rate: "fast" is not a rate (want e.g. 4Mbit, 512kbit)`}},
		{`{"mode": "drop", "for": "9223372036854775807ns"}`, true, []string{beyond("for", "9223372036854775807ns")}},
		{`{"mode": "hold", "for": "876600h"}`, true, nil},
	} {
		toChange := patchChange
		if tc.outage {
			toChange = outageChange
		}
		changes, _, _, err := parseHopChange(p, "PATCH", "link", []byte(tc.body), toChange)
		var got []string
		if err != nil {
			problems := err.all // when there are several
			if len(problems) == 0 {
				problems = []problem{{err.msg, err.path}}
			}
			for _, e := range problems {
				got = append(got, e.Path+": "+e.Error)
			}
			if err.code != http.StatusBadRequest {
				t.Errorf("%s: %d", tc.body, err.code)
			}
		} else if len(changes) == 0 {
			t.Errorf("%s: taken, and changes nothing", tc.body)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.body, got, tc.want)
		}
	}
	for _, tc := range []struct {
		body string
		want string
	}{
		{`{"for": "9223372036854775807ns"}`, `for: "9223372036854775807ns" is too long: hilrig takes durations up to 876600h (a century)`},
		{`{"for": "876600h"}`, ""},
	} {
		d, err := parsePhase("handover", []byte(tc.body))
		if tc.want == "" && (err != nil || d != emulator.MaxDuration) || tc.want != "" && (err == nil || err.path != "for" || err.msg != tc.want) {
			t.Errorf("phase %s: %v, %+v; want %q", tc.body, d, err, tc.want)
		}
	}
}

// TestLiveChangeReadsNoFile: a change that names a file (a recorded
// series, measured delays) is refused at the key that names it, without
// reading it: the errors of the profile language quote what a file
// holds, and the API would answer them to anyone who may change the run.
func TestLiveChangeReadsNoFile(t *testing.T) {
	want := []string{"delay.trace", "delay.trace.file", "jitter.file", "loss.trace", "loss.trace.file"}
	if got := slices.Sorted(maps.Keys(fileKeys())); !slices.Equal(got, want) {
		t.Errorf("the keys naming files: %q, want %q", got, want)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("root:$6$salt$hash:20228:0:99999:7:::\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := linkProfile(t)
	for _, tc := range []struct{ body, at string }{
		{`{"delay": {"trace": "SECRET"}}`, "delay.trace"},
		{`{"delay": {"trace": {"file": "SECRET", "flow": "f"}}}`, "delay.trace.file"},
		{`{"loss": {"trace": "SECRET"}}`, "loss.trace"},
		{`{"loss": {"trace": {"file": "SECRET"}}}`, "loss.trace.file"},
		{`{"jitter": {"dist": "empirical", "file": "SECRET"}}`, "jitter.file"},
	} {
		body := strings.ReplaceAll(tc.body, "SECRET", secret)
		_, _, _, err := parseHopChange(p, "PATCH", "link", []byte(body), patchChange)
		if err == nil || err.path != tc.at || !strings.Contains(err.msg, "a change made live reads no file on the rig's machine") || strings.Contains(err.msg+err.path, "root:") || len(err.all) > 1 {
			t.Errorf("%s: %+v", body, err)
		}
	}
	// What may come next to a file is not a file.
	if _, _, _, err := parseHopChange(p, "PATCH", "link", []byte(`{"delay": "5ms", "jitter": {"dist": "normal", "sigma": "1ms"}}`), patchChange); err != nil {
		t.Errorf("a change without a file: %+v", err)
	}
}
