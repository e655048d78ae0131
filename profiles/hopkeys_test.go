package profiles

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// TestHopSettingsAreTheEnginesKeys: the profile language writes every key
// the engine declares for a hop, and no other, so a key added to the
// engine cannot be left out of profiles, show, live changes or the
// reference.
func TestHopSettingsAreTheEnginesKeys(t *testing.T) {
	var schema, engine []string
	for _, f := range lang.FieldsOf(reflect.TypeFor[HopSettings]()) {
		schema = append(schema, f.Name)
		if k, _ := emulator.LookupHopKey(f.Name); f.Doc != k.Doc || f.Default != k.Default {
			t.Errorf("%s: doc and default are not the engine's", f.Name)
		}
	}
	for _, k := range emulator.HopKeys() {
		engine = append(engine, k.Key)
	}
	if !slices.Equal(schema, engine) {
		t.Errorf("HopSettings has %v, the engine %v", schema, engine)
	}
}

// TestHopValueWritesEveryKey: each of the engine's keys is written, and
// what is written reads back, as a change, to the same engine value.
func TestHopValueWritesEveryKey(t *testing.T) {
	p, err := Parse("p.yaml", []byte("duration: 1s\nhops: {h: {rate: 1Mbit, delay: 1ms}}\nflows: {f: {route: [h]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, params := range []emulator.HopParams{
		{Rate: 2500 * emulator.Kbitps, Delay: 1234567, Queue: emulator.Limit{N: 50, Unit: emulator.Frames}, Overhead: 38, PerFrame: 3000000,
			Loss:    emulator.GilbertElliott{P: 0.01, R: 0.3, LossBad: 0.9, LossGood: 0.001},
			Jitter:  emulator.Jitter{Dist: emulator.Pareto{Mean: 2000000, Sigma: 1000000}, Correlation: 0.25},
			Reorder: emulator.Reorder{Mode: emulator.ReorderGap, P: 0.2, Gap: 3}, Duplicate: 0.005, Corrupt: emulator.Corruption{BER: 1e-6}},
		{Rate: 9600, Queue: emulator.Limit{N: 3000, Unit: emulator.Bytes}, Loss: emulator.Bernoulli{P: 0.05}, Jitter: emulator.Jitter{Dist: emulator.Normal{Sigma: 7}},
			Reorder: emulator.Reorder{Mode: emulator.ReorderAllowed}, Corrupt: emulator.Corruption{FrameP: 0.5}},
		{Rate: emulator.Gbitps, Loss: emulator.Markov4{P13: 0.01, P31: 0.5, P32: 0.1, P23: 0.4, P14: 0.002}, Jitter: emulator.Jitter{Dist: emulator.Uniform{Spread: 5}},
			Flap: emulator.Flap{Rate: 100 * emulator.Kbitps, Every: 100000000, For: 50000000}},
		{Rate: emulator.Mbitps}, // none of the impairments: written none
	} {
		body := map[string]any{}
		for _, k := range emulator.HopKeys() {
			if _, known := hopWriters[k.Key]; !known {
				t.Fatalf("no writer for key %s", k.Key)
			}
			if v, ok := HopValue(k.Key, &params); ok {
				body[k.Key] = v
			}
		}
		text, _ := json.Marshal(body)
		changes, _, err := p.ParseChange("test", text, "h")
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		set := changes[0].Change.(emulator.SetHop)
		for _, k := range emulator.HopKeys() {
			if _, written := body[k.Key]; written && !reflect.DeepEqual(k.Value(&set.Params), k.Value(&params)) {
				t.Errorf("%s: %s read back as %v, want %v", text, k.Key, k.Value(&set.Params), k.Value(&params))
			}
		}
	}
}

// TestNoneRemovesAnImpairment: none, where a key's default is the absence
// of an impairment, removes it in a schedule entry and is written back.
func TestNoneRemovesAnImpairment(t *testing.T) {
	p, err := Parse("x.yaml", []byte(`duration: 10s
hops: {h: {rate: 1Mbit, loss: {random: 5%}, jitter: {dist: normal, sigma: 1ms}, corrupt: {frame: 1%}, flap: {rate: 1kbit, every: 1s, for: 1ms}}}
flows: {f: {route: [h]}}
schedule:
  - {at: 2s, for: 1s, hop: h, loss: none, jitter: none, corrupt: none, flap: none}
`))
	if err != nil {
		t.Fatal(err)
	}
	set := p.Config.Schedule[0].Change.(emulator.SetHop)
	if want := emulator.FieldLoss | emulator.FieldJitter | emulator.FieldCorrupt | emulator.FieldFlap; set.Set != want {
		t.Errorf("sets %v, want %v", set.Set, want)
	}
	if none := (emulator.HopParams{}); !reflect.DeepEqual(set.Params, none) {
		t.Errorf("params %+v, want none", set.Params)
	}
	if text := string(p.YAML()); !strings.Contains(text, "loss: none, jitter: none, corrupt: none, flap: none") {
		t.Errorf("not written back as none:\n%s", text)
	}
}
