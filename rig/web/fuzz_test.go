package web

import (
	"encoding/json"
	"errors"
	"net/http"
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
// outage's become engine changes the network accepts or take a 400 whose
// error names its key; the network is built again each time, and nothing
// panics.
func FuzzHopChangeBody(f *testing.F) {
	p, err := profiles.Parse("p.yaml", []byte("duration: 10s\nhops:\n  link: {rate: 1Mbit, delay: 5ms}\nflows:\n  f: {route: [link], traffic: {cbr: {interval: 10ms, size: 100B}}}\n"))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{``, `{}`, `{"rate": "2Mbit", "loss": {"random": "5%"}}`, `{"delay": "80ms", "jitter": {"dist": "normal", "sigma": "1ms"}}`,
		`{"for": "2s", "mode": "hold"}`, `{"mode": "drop"}`, `{"outage": "hold"}`, `{"rate": "fast"}`, `{"loss": {"randm": 1}}`, `[1]`, `{"rate": {"baud": 9600}}`, `{"per_frame": "1s", "for": "1s"}`} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, outage bool) {
		source := "PATCH"
		if outage {
			source = "outage"
			change, err := outageChange(body)
			if err != nil {
				if err.code != http.StatusBadRequest || err.msg == "" {
					t.Fatalf("%q: %d %q", body, err.code, err.msg)
				}
				return
			}
			body = change
		} else {
			change, err := patchChange(body)
			if err != nil {
				if err.code != http.StatusBadRequest || err.path == "" {
					t.Fatalf("%q: %d %q at %q", body, err.code, err.msg, err.path)
				}
				return
			}
			body = change
		}
		changes, _, err := p.ParseChange(source, body, "link")
		if err != nil {
			var list profiles.ErrorList
			if !errors.As(err, &list) || len(list) == 0 || list[0].Msg == "" {
				t.Fatalf("%q: %v", body, err)
			}
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
