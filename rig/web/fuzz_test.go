package web

import (
	"encoding/json"
	"net/http"
	"testing"
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
