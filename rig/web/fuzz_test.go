package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
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
		`{"rate": "2Mbit", "loss": {"random": "5%"}}`, `{"delay": "80ms", "jitter": {"dist": "normal", "sigma": "1ms"}}`,
		`{"for": "9223372036854775807ns"}`, `{"for": "876600h"}`, `{"for": "3155760000.000000001s"}`} {
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
		if d < 0 || d > emulator.MaxDuration {
			t.Fatalf("%q: a phase of %v", body, d)
		}
	})
}

// FuzzHopChangeBody feeds bodies to the hop changes: a PATCH's and an
// outage's become engine changes the network accepts, or problems each at
// its key, or a 400 for the body as a whole that says so in JSON's terms
// (never the YAML parser's); the network is built again each time, runs
// the changes, and delivers no frame before it was sent; nothing panics.
func FuzzHopChangeBody(f *testing.F) {
	p, err := profiles.Parse("p.yaml", []byte("duration: 10s\nhops:\n  link: {rate: 1Mbit, delay: 5ms}\nflows:\n  f: {route: [link], traffic: {cbr: {interval: 10ms, size: 100B}}}\n"))
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{``, `{}`, `{"rate": "2Mbit", "loss": {"random": "5%"}}`, `{"delay": "80ms", "jitter": {"dist": "normal", "sigma": "1ms"}}`,
		`{"for": "2s", "mode": "hold"}`, `{"mode": "drop"}`, `{"outage": "hold"}`, `{"rate": "fast"}`, `{"loss": {"randm": 1}}`, `[1]`, `{"rate": {"baud": 9600}}`, `{"per_frame": "1s", "for": "1s"}`,
		`{"for": "-1s"}`, `{"rate": "1Mbit", "rate": "2Mbit"}`, `{"loss": {"random": "1%", "random": "2%"}}`, `{"rate": "1Mbit"} {}`, `"x"`, ` `, `{"mode": 5}`, `{"for": "1s", "rate": "2Mbit"}`,
		// Durations at and beyond the longest the engine takes (issue 18).
		`{"delay": "9223372036854775807ns"}`, `{"delay": "876600h"}`, `{"delay": "3155760000.000000001s"}`, `{"delay": "1ms", "for": "9223372036.854775807s"}`,
		`{"mode": "drop", "for": "9223372036854775807ns"}`, `{"jitter": {"dist": "pareto", "mean": "9223372036854775807ns", "sigma": "1ms"}}`, `{"per_frame": "9223372036854775807ns"}`,
		// A flapping rate, and removing impairments (what a reset writes).
		`{"flap": {"rate": "100kbit", "every": "100ms", "for": "50ms"}}`, `{"flap": {"rate": "1bit", "every": "1ns", "for": "1ns"}}`, `{"flap": {"rate": "1Mbit", "every": "1s", "for": "2s"}}`,
		`{"loss": "none", "jitter": "none", "corrupt": "none", "flap": "none", "rate": "none"}`, `{"loss": "nothing"}`,
		// Loss models given in part: they take netem's defaults.
		`{"loss": {"gilbert": {"p": "1%"}}}`, `{"loss": {"markov4": {"p13": "1%"}}}`,
		// Files, which a live change does not read.
		`{"delay": {"trace": "/etc/passwd"}}`, `{"loss": {"trace": {"file": "/etc/passwd"}}}`, `{"jitter": {"dist": "empirical", "file": "/etc/passwd"}}`} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, outage bool) {
		source := "PATCH"
		toChange := patchChange
		if outage {
			source, toChange = "outage", outageChange
		}
		if _, keys, problems, err := toChange(body); err == nil {
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
		}
		changes, raw, _, err := parseHopChange(p, source, "link", body, toChange)
		if err != nil {
			// The body as a whole is at fault (not JSON, not an object,
			// empty), or a key in it given twice; or keys are, each with
			// its problem.
			if err.code != http.StatusBadRequest || err.msg == "" || strings.Contains(err.msg, "YAML") {
				t.Fatalf("%q: %d %q", body, err.code, err.msg)
			}
			for _, p := range append(err.all, problem{err.msg, err.path}) {
				if p.Error == "" || strings.Contains(p.Error, "YAML") || strings.Contains(p.Error, "root:") {
					t.Fatalf("%q: a problem %q at %q", body, p.Error, p.Path)
				}
			}
			return
		}
		// The rig reads the change again, from its words in the profile
		// language, to apply it (Host.change): the same change.
		if again, _, err := p.ParseChange(source, raw, "link"); err != nil || !reflect.DeepEqual(again, changes) {
			t.Fatalf("%q: the rig reads %s as %+v, %v; the server as %+v", body, raw, again, err, changes)
		}
		var early frameBeforeSent
		n, nerr := emulator.New(p.Config, &early)
		if nerr != nil {
			t.Fatal(nerr)
		}
		n.Advance(time.Second)
		_ = n.ApplyNow(changes...) // the engine may refuse (none here does); it must not panic
		n.Run(3 * time.Second)
		if early != "" {
			t.Fatalf("%q: %s", body, early)
		}
	})
}

// frameBeforeSent notes the first frame delivered before it was sent.
type frameBeforeSent string

func (e *frameBeforeSent) Finished(f *emulator.Frame) {
	if (f.Status == emulator.Delivered || f.Status == emulator.Corrupted || f.Status == emulator.Duplicate) && f.Done < f.Sent && *e == "" {
		*e = frameBeforeSent(fmt.Sprintf("frame %d, sent at %v, delivered at %v", f.Seq, f.Sent, f.Done))
	}
}

// FuzzResetPath sends DELETE to hop paths made of any hop and key names:
// each is a reset (200, entries that are schedule lines), or a JSON error
// with a 4xx naming what is wrong; nothing panics, and the as-run profile
// still loads after every reset.
func FuzzResetPath(f *testing.F) {
	srv := pacedServer(f, longLink)
	if w := serve(srv, "PATCH", "/api/v1/hops/link", `{"delay": "80ms", "loss": {"random": "5%"}}`); w.Code != http.StatusOK {
		f.Fatalf("%d %s", w.Code, w.Body)
	}
	for _, seed := range [][2]string{{"link", ""}, {"link", "loss"}, {"link", "delay"}, {"", ""}, {"lnk", "loss"}, {"link", "dealy"}, {"link", "outage"}, {"link", "%2F"}, {"link", "flap"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, hop, key string) {
		path := "/api/v1/hops"
		if hop != "" {
			path += "/" + url.PathEscape(hop)
			if key != "" {
				path += "/" + url.PathEscape(key)
			}
		}
		w := serve(srv, "DELETE", path, "")
		if w.Code == http.StatusTemporaryRedirect || w.Code == http.StatusMovedPermanently {
			return // the mux cleans a path of . and .. and empty segments
		}
		var answer struct {
			Error   string
			Entries []string
		}
		if err := json.Unmarshal(w.Body.Bytes(), &answer); err != nil {
			t.Fatalf("DELETE %s: %d, not JSON: %s", path, w.Code, w.Body)
		}
		switch {
		case w.Code == http.StatusOK:
			for _, e := range answer.Entries {
				if !strings.HasPrefix(e, "{at: ") {
					t.Fatalf("DELETE %s: entry %q", path, e)
				}
			}
		case w.Code >= 400 && w.Code < 500 && answer.Error != "":
		case w.Code == http.StatusTooManyRequests:
		default:
			t.Fatalf("DELETE %s: %d %s", path, w.Code, w.Body)
		}
		if w := serve(srv, "GET", "/api/v1/profile?as-run", ""); w.Code != http.StatusOK {
			t.Fatalf("as-run: %d %s", w.Code, w.Body)
		} else if _, err := profiles.Parse("as-run.yaml", w.Body.Bytes()); err != nil {
			t.Fatalf("after DELETE %s the as-run profile does not load: %v\n%s", path, err, w.Body)
		}
	})
}
