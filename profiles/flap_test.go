package profiles

import (
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

func TestFlapKey(t *testing.T) {
	const head = "duration: 1s\nflows: {f: {route: [h]}}\nhops:\n  h: "
	for _, tc := range []struct {
		hop, want string
	}{
		{"{rate: 1Mbit, flap: {rate: 100kbit, every: 100ms, for: 50ms}}", ""},
		{"{rate: 1Mbit, flap: {rate: 0bit, every: 100ms, for: 50ms}}", `x.yaml:4:33: hops.h.flap.rate: "0bit" must be positive`},
		{"{rate: 1Mbit, flap: {rate: 1kbit, every: 10ms, for: 50ms}}", "x.yaml:4:58: hops.h.flap.for: must be positive and at most every (10ms)"},
		{"{rate: 1Mbit, flap: {rate: 1kbit, for: 50ms}}", "x.yaml:4:26: hops.h.flap: missing every"},
		{"{rate: 1Mbit, flap: {rate: 1kbit, evry: 1s, for: 50ms}}", "did you mean every?"},
		{"{rate: 1Mbit, flap: {rate: 1kbit, every: 0s, for: 0s}}", "x.yaml:4:47: hops.h.flap.every: must be positive"},
		{"{bus: {rate: 1Mbit}, flap: {rate: 1kbit, every: 1s, for: 50ms}}", "hops.h.flap: a bus has its own flap"},
	} {
		p, err := Parse("x.yaml", []byte(head+tc.hop+"\n"))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.hop, err)
		case tc.want == "":
			want := emulator.Flap{Rate: 100 * emulator.Kbitps, Every: 100 * time.Millisecond, For: 50 * time.Millisecond}
			if got := p.Config.Hops[0].Flap; got != want {
				t.Errorf("%s: %+v, want %+v", tc.hop, got, want)
			}
		case err == nil || !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.hop, err, tc.want)
		}
	}
}

// TestFlapScheduledAndLive: the schedule and a change made live set a
// flap, and undo it, as they do every key.
func TestFlapScheduledAndLive(t *testing.T) {
	p, err := Parse("x.yaml", []byte(`duration: 10s
hops: {h: {rate: 1Mbit}}
flows: {f: {route: [h]}}
schedule:
  - {at: 2s, for: 1s, hop: h, flap: {rate: 10kbit, every: 1s, for: 100ms}}
`))
	if err != nil {
		t.Fatal(err)
	}
	set := p.Config.Schedule[0].Change.(emulator.SetHop)
	if set.Set != emulator.FieldFlap || set.Params.Flap.Rate != 10*emulator.Kbitps {
		t.Errorf("scheduled: %+v", set)
	}
	changes, _, err := p.ParseChange("PATCH", []byte(`{"flap": {"rate": "10kbit", "every": "1s", "for": "100ms"}}`), "h")
	if err != nil {
		t.Fatal(err)
	}
	if got := changes[0].Change.(emulator.SetHop); got.Set != emulator.FieldFlap || got.Params.Flap != set.Params.Flap {
		t.Errorf("live: %+v", got)
	}
}
