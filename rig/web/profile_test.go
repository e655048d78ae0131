package web

import (
	"reflect"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// TestHopsAsTheyAre writes hops whose every parameter the schedule (not a
// change made by hand) has changed: the profile written parses to those
// parameters; a hop changed by hand is written as the change wrote it,
// and an unchanged hop as the profile did.
func TestHopsAsTheyAre(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte(`duration: 10s
hops:
  a: {rate: 1Mbit, delay: 5ms}
  b: {rate: {baud: 9600}, delay: 1ms, loss: {random: 1%}}
  c: {delay: 1ms}
flows:
  f: {route: [a, b, c], traffic: {cbr: {interval: 10ms, size: 100B}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	hops := make([]emulator.HopState, len(p.Config.Hops))
	for i, h := range p.Config.Hops {
		hops[i] = emulator.HopState{Name: h.Name, Params: h.HopParams}
	}
	hops[0].Params = emulator.HopParams{
		Rate: 2500 * emulator.Kbitps, Delay: 1234567 * time.Nanosecond, Queue: emulator.Limit{N: 50, Unit: emulator.Frames}, Overhead: 38, PerFrame: 3 * time.Millisecond,
		Loss:    emulator.GilbertElliott{P: 0.01, R: 0.3, LossBad: 0.9, LossGood: 0.001},
		Jitter:  emulator.Jitter{Dist: emulator.Pareto{Mean: 2 * time.Millisecond, Sigma: time.Millisecond}, Correlation: 0.25},
		Reorder: emulator.Reorder{Mode: emulator.ReorderGap, P: 0.2, Gap: 3}, Duplicate: 0.005, Corrupt: emulator.Corruption{BER: 1e-6},
	}
	// b: a rate in baud, changed by hand, then its loss by the schedule.
	changes, entry, err := p.ParseChange("PATCH", []byte(`{"rate": {"baud": 19200, "format": "8E1"}}`), "b")
	if err != nil {
		t.Fatal(err)
	}
	set := changes[0].Change.(emulator.SetHop)
	hops[1].Params.Rate = set.Params.Rate
	hops[1].Params.Loss = emulator.Markov4{P13: 0.01, P31: 0.5, P32: 0.1, P23: 0.4, P14: 0.002}
	latest := map[hopParam]*change{{1, emulator.FieldRate}: {entry: entry, hop: 1, set: set.Set, params: set.Params}}

	prof := *p.Profile
	if unshown := hopsAsTheyAre(p, &prof, hops, latest); len(unshown) > 0 {
		t.Errorf("not shown: %v", unshown)
	}
	now := *p
	now.Profile = &prof
	text := now.YAML()
	back, err := profiles.Parse("now.yaml", text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	for i, h := range hops {
		if got := back.Config.Hops[i].HopParams; !reflect.DeepEqual(got, h.Params) {
			t.Errorf("hop %s: %+v, want %+v\n%s", h.Name, got, h.Params, text)
		}
	}
	if b := prof.Hops.Values[1]; b.Rate == nil || b.Rate.Baud == nil || *b.Rate.Baud != 19200 {
		t.Errorf("hop b's rate is not written as the change wrote it:\n%s", text)
	}
	if prof.Hops.Values[2] != p.Hops.Values[2] || p.Hops.Values[0].Queue != nil {
		t.Errorf("an unchanged hop rewritten, or the run's profile changed")
	}
}
