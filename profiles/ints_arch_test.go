package profiles

import (
	"strings"
	"testing"
)

// TestIntsMeanTheSameEverywhere: a profile means the same on every
// architecture. A schedule's count is 64 bits (4·10¹⁰ occurrences were
// read as 1 345 294 336 on arm and 386, where int is 32 bits); any other
// whole number beyond 32 bits is refused with its position everywhere
// (gap: 4294967297 was a gap of 4 294 967 297 frames on amd64 and of 1
// on arm).
func TestIntsMeanTheSameEverywhere(t *testing.T) {
	const base = "duration: 10s\nhops:\n  h: {delay: 1ms, reorder: {p: 1%, gap: GAP}}\nflows:\n  f: {route: [h], traffic: {cbr: {interval: 10ms, size: 100B}}}\n"
	for _, tc := range []struct{ gap, err string }{
		{"2147483647", ""},
		{"2147483648", "x.yaml:3:41: hops.h.reorder.gap: 2147483648 is out of range (from -2147483648 to 2147483647)"},
		{"4294967297", "x.yaml:3:41: hops.h.reorder.gap: 4294967297 is out of range (from -2147483648 to 2147483647)"},
		{"-2147483649", "x.yaml:3:41: hops.h.reorder.gap: -2147483649 is out of range (from -2147483648 to 2147483647)"},
	} {
		_, err := Parse("x.yaml", []byte(strings.Replace(base, "GAP", tc.gap, 1)))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("gap %s: %v", tc.gap, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("gap %s: %v, want %s", tc.gap, err, tc.err)
		}
	}
	p := mustParse(t, "x.yaml", "duration: 100s\nhops:\n  h: {delay: 1ms}\nflows:\n  f: {route: [h], traffic: {cbr: {interval: 10ms, size: 100B}}}\nschedule:\n  - {at: 0s, for: 1ns, every: 2ns, count: 40000000000, hop: h, outage: drop}\n")
	if s := p.Config.Schedule; len(s) != 1 || s[0].Count != 40e9 {
		t.Errorf("count: 40000000000 reads as %+v", s)
	}
}
