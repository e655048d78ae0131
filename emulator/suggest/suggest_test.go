package suggest

import "testing"

func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"egde", []string{"edge", "core"}, "; did you mean edge?"},
		{"bauds", []string{"baud", "parity"}, "; did you mean baud?"},
		{"quart", []string{"quarter-car"}, "; did you mean quarter-car?"}, // a prefix
		{"vv", []string{"v", "x"}, "; did you mean v?"},                   // one letter too many
		{"CP3", []string{"CP1", "CP2"}, "; did you mean CP1?"},
		{"Deflection", []string{"deflection"}, "; did you mean deflection?"},
		{"xyz", []string{"ab"}, ""},    // nothing alike
		{"road", []string{"v0"}, ""},   // two edits, but all of v0
		{"zz", []string{"xyzzy"}, ""},  // too far
		{"c", []string{"a", "bb"}, ""}, // every letter changed
		{"b", []string{"a", "bb"}, "; did you mean bb?"},
		{"m2x", nil, ""},
	} {
		if got := DidYouMean(tc.name, tc.candidates); got != tc.want {
			t.Errorf("%s in %v: %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
