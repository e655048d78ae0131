package profiles

import (
	"reflect"
	"strings"
	"testing"
)

// TestShowRoundTrips renders every shipped profile (and a profile using
// every feature) and parses the result again: the engine configuration must
// be identical, so `hilrig show` prints exactly what will run.
func TestShowRoundTrips(t *testing.T) {
	var loaded []*Loaded
	for _, name := range Shipped() {
		p, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		loaded = append(loaded, p)
	}
	every, err := Parse("testdata/every.yaml", []byte(radio+`schedule:
  - {at: 0s, for: 1s, phase: start}
  - {at: 1s, for: 500ms, every: 2s, count: 3, hop: radio, outage: hold, hold_limit: 10 frames, phase: drops}
  - {at: 2s, for: 3s, hop: radio, ramp: {rate: {from: 1Mbit, to: 2Mbit}, loss: {from: 0%, to: 10%}}}
  - {at: 8s, flow: f, traffic: off}
`), "hops.radio.jitter={dist: empirical, file: testdata/delays.txt}", "hops.radio.reorder={p: 5%, gap: 3}")
	if err != nil {
		t.Fatal(err)
	}
	loaded = append(loaded, every)
	for _, p := range loaded {
		text := p.YAML()
		again, err := Parse(p.Source, text)
		if err != nil {
			t.Errorf("%s: the rendering does not parse: %v\n%s", p.Source, err, text)
			continue
		}
		if !reflect.DeepEqual(again.Config, p.Config) || !reflect.DeepEqual(again.Phases(), p.Phases()) {
			t.Errorf("%s: the rendering runs differently:\n%s", p.Source, text)
		}
		if strings.Contains(string(text), "extends") {
			t.Errorf("%s: the rendering still extends", p.Source)
		}
	}
}
