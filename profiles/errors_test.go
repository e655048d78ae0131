package profiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hilrig/hilrig/profiles/lang"
)

// TestErrorListIsBounded: a profile with more problems than maxErrors
// lists the first maxErrors, in source order, and counts the rest in a
// last line; so does a list that gathers others' (a bench's model file).
func TestErrorListIsBounded(t *testing.T) {
	for _, tc := range []struct {
		unknown int
		lines   int
		last    string
	}{
		{lang.MaxErrors, lang.MaxErrors, "x.yaml:108:1: k99: unknown key"},
		{lang.MaxErrors + 1, lang.MaxErrors + 1, "... and 1 more problem"},
		{200_000, lang.MaxErrors + 1, "... and 199900 more problems"},
	} {
		var b strings.Builder
		b.WriteString(minimal)
		for i := range tc.unknown {
			fmt.Fprintf(&b, "k%d: 1\n", i)
		}
		_, err := Parse("x.yaml", []byte(b.String()))
		var list lang.ErrorList
		if !errors.As(err, &list) {
			t.Fatalf("%d unknown keys: %v", tc.unknown, err)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != tc.lines || !strings.HasPrefix(lines[len(lines)-1], tc.last) {
			t.Errorf("%d unknown keys: %d lines, the last %q; want %d, the last %q", tc.unknown, len(lines), lines[len(lines)-1], tc.lines, tc.last)
		}
		if !strings.HasPrefix(lines[0], "x.yaml:9:1: k0: unknown key") {
			t.Errorf("%d unknown keys: the first line is %q", tc.unknown, lines[0])
		}
	}

	// Lists gathered from another decoder keep their count.
	d := lang.NewDecoder()
	for i := range 150 {
		d.Report(lang.Pos{File: "a", Line: i + 1, Col: 1}, "", "a problem")
	}
	other := lang.NewDecoder()
	other.Add(d.Err().(lang.ErrorList)...)
	other.Report(lang.Pos{File: "b", Line: 1, Col: 1}, "", "another")
	if got := other.Err().Error(); !strings.HasSuffix(got, "\n... and 51 more problems") || strings.Count(got, "\n") != lang.MaxErrors {
		t.Errorf("gathered: %d lines, ending %q", strings.Count(got, "\n")+1, got[strings.LastIndex(got, "\n")+1:])
	}
}

// TestMessagesQuoteExcerpts: a message quotes at most maxQuoted
// characters of a value, however long the value or its line in a file.
func TestMessagesQuoteExcerpts(t *testing.T) {
	dir := t.TempDir()
	nuls := filepath.Join(dir, "nuls.txt")
	if err := os.WriteFile(nuls, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		name, text, start string
	}{
		{"a value", strings.Replace(minimal, "rate: 4Mbit", "rate: "+long, 1), `x.yaml:3:13: hops.a.rate: "xxxxx`},
		{"a key", minimal + long + ": 1\n", "x.yaml:9:1: xxxxx"},
		{"a reference", strings.Replace(minimal, "route: [a, b]", "route: [a, "+long+"]", 1), `x.yaml:7:16: flows.f.route[1]: no hop named "xxxxx`},
		{"a line of a delay file", strings.Replace(minimal, "b: {delay: 1ms}", "b: {delay: {trace: nuls.txt}}", 1), `nuls.txt:1:1: hops.b.delay.trace.file: "\x00\x00`},
		{"a line of a loss series", strings.Replace(minimal, "b: {delay: 1ms}", "b: {loss: {trace: nuls.txt}}", 1), `nuls.txt:1:1: hops.b.loss.trace.file: "\x00\x00`},
	} {
		_, err := Parse(filepath.Join(dir, "x.yaml"), []byte(tc.text))
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		msg := strings.ReplaceAll(err.Error(), dir+"/", "")
		if !strings.HasPrefix(msg, tc.start) || len(msg) > 2*lang.MaxNamed+lang.MaxQuoted+200 {
			t.Errorf("%s: %d bytes: %.300s", tc.name, len(msg), msg)
		}
	}
}

func TestQuoted(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `""`},
		{"4 Mbps", `"4 Mbps"`},
		{strings.Repeat("a", 78), `"` + strings.Repeat("a", 78) + `"`},
		{strings.Repeat("a", 79), `"` + strings.Repeat("a", 78) + `"…`},
		{strings.Repeat("\x00", 100), `"` + strings.Repeat(`\x00`, 19) + `"…`},
		{strings.Repeat("é", 100), `"` + strings.Repeat("é", 78) + `"…`},
		{"\xff\xfe", `"\xff\xfe"`},
	} {
		got := lang.Quoted(tc.in)
		if got != tc.want {
			t.Errorf("quoted(%.20q…) = %s, want %s", tc.in, got, tc.want)
		}
		if n := utf8.RuneCountInString(strings.TrimSuffix(got, "…")); n > lang.MaxQuoted {
			t.Errorf("quoted(%.20q…) is %d characters", tc.in, n)
		}
	}
}
