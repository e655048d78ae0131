package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// FuzzChangeBody feeds change bodies to their parsers: every body is
// either a change or a 400 whose error names its key, and nothing panics.
func FuzzChangeBody(f *testing.F) {
	for _, seed := range []string{``, `{}`, `{"for": "2s"}`, `{"for": "-1s"}`, `{"for": 5}`, `{"x": 1}`, `{"for": "2s"} {}`, `[`, `null`,
		`{"rate": "2Mbit", "loss": {"random": "5%"}}`, `{"delay": "80ms", "jitter": {"dist": "normal", "sigma": "1ms"}}`} {
		f.Add("handover", []byte(seed))
	}
	f.Fuzz(func(t *testing.T, name string, body []byte) {
		d, err := parsePhase(name, body)
		if err != nil {
			if err.code != http.StatusBadRequest || err.msg == "" {
				t.Fatalf("%q %q: %d %q", name, body, err.code, err.msg)
			}
			if _, jerr := json.Marshal(apiError{Error: err.msg, Path: err.path}); jerr != nil {
				t.Fatal(jerr)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q: a phase of %v", body, d)
		}
	})
}

// FuzzHopChangeBody feeds bodies to the hop changes: a PATCH's and an
// outage's become engine changes the network accepts, or problems each at
// its key, or a 400 for the body as a whole that says so in JSON's terms
// (never the YAML parser's); the network is built again each time, and
// nothing panics.
func FuzzHopChangeBody(f *testing.F) {
	p, err := profiles.Parse("p.yaml", []byte("duration: 10s\nhops:\n  link: {rate: 1Mbit, delay: 5ms}\nflows:\n  f: {route: [link], traffic: {cbr: {interval: 10ms, size: 100B}}}\n"))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{``, `{}`, `{"rate": "2Mbit", "loss": {"random": "5%"}}`, `{"delay": "80ms", "jitter": {"dist": "normal", "sigma": "1ms"}}`,
		`{"for": "2s", "mode": "hold"}`, `{"mode": "drop"}`, `{"outage": "hold"}`, `{"rate": "fast"}`, `{"loss": {"randm": 1}}`, `[1]`, `{"rate": {"baud": 9600}}`, `{"per_frame": "1s", "for": "1s"}`,
		`{"for": "-1s"}`, `{"rate": "1Mbit", "rate": "2Mbit"}`, `{"loss": {"random": "1%", "random": "2%"}}`, `{"rate": "1Mbit"} {}`, `"x"`, ` `, `{"mode": 5}`, `{"for": "1s", "rate": "2Mbit"}`} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, outage bool) {
		source := "PATCH"
		toChange := patchChange
		if outage {
			source, toChange = "outage", outageChange
		}
		change, keys, problems, err := toChange(body)
		if err != nil {
			// The body as a whole is at fault (not JSON, not an object,
			// empty), or a key in it given twice.
			if err.code != http.StatusBadRequest || err.msg == "" || strings.Contains(err.msg, "YAML") {
				t.Fatalf("%q: %d %q", body, err.code, err.msg)
			}
			return
		}
		for _, p := range problems {
			if p.Error == "" || p.Path == "" && !slices.Contains(keys, "") {
				t.Fatalf("%q: a problem %q at %q", body, p.Error, p.Path)
			}
		}
		if len(problems) > 0 {
			if e := refuseAll(keys, problems); e.msg != problems[0].Error && !slices.Contains(problems, problem{e.msg, e.path}) {
				t.Fatalf("%q: %+v for %+v", body, e, problems)
			}
		}
		changes, _, perr := p.ParseChange(source, change, "link")
		if perr != nil {
			var list profiles.ErrorList
			if !errors.As(perr, &list) || len(list) == 0 || list[0].Msg == "" {
				t.Fatalf("%q: %v", change, perr)
			}
			for _, e := range list {
				if strings.Contains(e.Msg, "YAML") {
					t.Fatalf("%q: %v", change, e)
				}
			}
			return
		}
		if len(problems) > 0 {
			return
		}
		n, nerr := emulator.New(p.Config, nil)
		if nerr != nil {
			t.Fatal(nerr)
		}
		n.Advance(time.Second)
		_ = n.ApplyNow(changes...) // the engine may refuse (none here does); it must not panic
		n.Run(3 * time.Second)
	})
}
