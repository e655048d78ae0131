package profiles

import (
	"regexp"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles/lang"
)

// nameRule is validName's rule as the regular expression it replaced (a
// regexp per name was a tenth of the decoder's time on 20 000 names).
var nameRule = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]*$`)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"core-up", true}, {"h0", true}, {"_x", true}, {"0", true}, {"A-b_9", true},
		{"", false}, {"-up", false}, {"core.up", false}, {"a b", false}, {"a[0]", false},
		{"é", false}, {"a\x00", false}, {"up-", true},
	} {
		if got := lang.ValidName(tc.name); got != tc.ok {
			t.Errorf("validName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	// Said where it is written, at its line and column.
	_, err := Parse("p.yaml", []byte("hops:\n  a.b: {rate: 1Mbit}\nflows:\n  f: {route: [a.b]}\n"))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:2:3: hops.a.b: is not a valid name (letters, digits, _ and -)") {
		t.Errorf("a hop named a.b: %v", err)
	}
}

func FuzzValidName(f *testing.F) {
	for _, s := range []string{"core-up", "-x", "", "a.b", "é", "x-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := lang.ValidName(s), nameRule.MatchString(s); got != want {
			t.Errorf("validName(%q) = %v, the rule says %v", s, got, want)
		}
	})
}
