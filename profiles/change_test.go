package profiles

import (
	"testing"

	"github.com/hilrig/hilrig/emulator"
)

// TestLiveChangeTakesTheDefaults: a live change's loss model given in
// part takes the defaults a profile's would (netem's), where it used to
// dereference the parameters not given and panic.
func TestLiveChangeTakesTheDefaults(t *testing.T) {
	p, err := Parse("p.yaml", []byte("duration: 1s\nhops:\n  a: {delay: 1ms}\nflows:\n  f: {route: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		body string
		want emulator.LossModel
	}{
		{`{"loss": {"gilbert": {"p": "1%"}}}`, emulator.GilbertElliott{P: 0.01, R: 0.99, LossBad: 1, LossGood: 0}},
		{`{"loss": {"markov4": {"p13": "2%"}}}`, emulator.Markov4{P13: 0.02, P31: 0.98, P32: 0, P23: 1, P14: 0}},
	} {
		changes, _, err := p.ParseChange("PATCH", []byte(tc.body), "a")
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		set, ok := changes[0].Change.(emulator.SetHop)
		if !ok || set.Params.Loss != tc.want {
			t.Errorf("%s: %+v, want loss %+v", tc.body, changes[0].Change, tc.want)
		}
	}
}
