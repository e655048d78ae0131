package profiles

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// radio is the syntax, as written.
const radio = `duration: 10s
hops:
  radio:
    delay: 5ms
    loss: {gilbert: {p: 1%, r: 20%, loss_bad: 90%, loss_good: 0.1%}}
    jitter: {dist: normal, sigma: 2ms, correlation: 0.5}
    reorder: allowed
    duplicate: 0.5%
    corrupt: {ber: 1e-6}
flows:
  f: {route: [radio], traffic: {cbr: {interval: 10ms, size: 100B}}}
`

func TestImpairmentSyntax(t *testing.T) {
	p, err := Parse("radio.yaml", []byte(radio))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Config.Hops[0].HopParams
	want := emulator.HopParams{
		Delay:     5 * time.Millisecond,
		Loss:      emulator.GilbertElliott{P: 0.01, R: 0.2, LossBad: 0.9, LossGood: 0.001},
		Jitter:    emulator.Jitter{Dist: emulator.Normal{Sigma: 2 * time.Millisecond}, Correlation: 0.5},
		Reorder:   emulator.Reorder{Mode: emulator.ReorderAllowed},
		Duplicate: 0.005,
		Corrupt:   emulator.Corruption{BER: 1e-6},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestImpairmentAlternatives(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		line string
		want emulator.HopParams
	}{
		{"loss: {random: 2%}", emulator.HopParams{Loss: emulator.Bernoulli{P: 0.02}}},
		// netem's defaults: only p gives r = 1 − p, 1−h = 100 %, 1−k = 0.
		{"loss: {gilbert: {p: 5%}}", emulator.HopParams{Loss: emulator.GilbertElliott{P: 0.05, R: 0.95, LossBad: 1}}},
		{"loss: {markov4: {p13: 1%, p31: 80%, p32: 5%, p23: 30%, p14: 0.5%}}",
			emulator.HopParams{Loss: emulator.Markov4{P13: 0.01, P31: 0.8, P32: 0.05, P23: 0.3, P14: 0.005}}},
		// netem's defaults: p31 = 1 − p13, p32 = 0, p23 = 100 %, p14 = 0.
		{"loss: {markov4: {p13: 3%}}", emulator.HopParams{Loss: emulator.Markov4{P13: 0.03, P31: 0.97, P23: 1}}},
		{"jitter: {dist: uniform, spread: 3ms}", emulator.HopParams{Jitter: emulator.Jitter{Dist: emulator.Uniform{Spread: 3 * ms}}}},
		{"jitter: {dist: pareto, mean: 2ms, sigma: 1ms}", emulator.HopParams{Jitter: emulator.Jitter{Dist: emulator.Pareto{Mean: 2 * ms, Sigma: ms}}}},
		{"jitter: {dist: paretonormal, mean: 2ms, sigma: 1ms, correlation: 25%}",
			emulator.HopParams{Jitter: emulator.Jitter{Dist: emulator.ParetoNormal{Mean: 2 * ms, Sigma: ms}, Correlation: 0.25}}},
		{"reorder: {p: 5%, gap: 3}", emulator.HopParams{Reorder: emulator.Reorder{Mode: emulator.ReorderGap, P: 0.05, Gap: 3}}},
		{"reorder: {p: 5%}", emulator.HopParams{Reorder: emulator.Reorder{Mode: emulator.ReorderGap, P: 0.05, Gap: 1}}},
		{"reorder: in_order", emulator.HopParams{}},
		{"corrupt: {frame: 0.1%}", emulator.HopParams{Corrupt: emulator.Corruption{FrameP: 0.001}}},
	}
	for _, tc := range tests {
		yaml := "duration: 1s\nhops:\n  h:\n    delay: 1ms\n    " + tc.line + "\nflows: {f: {route: [h]}}\n"
		p, err := Parse("x.yaml", []byte(yaml))
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		tc.want.Delay = ms
		if got := p.Config.Hops[0].HopParams; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got  %+v\n want %+v", tc.line, got, tc.want)
		}
	}
}

func TestEmpiricalJitterFile(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []time.Duration
	}{
		{"{dist: empirical, file: testdata/delays.txt}", []time.Duration{12500 * time.Microsecond, 13100 * time.Microsecond, 250 * time.Microsecond}},
		{"{dist: empirical, file: testdata/delays-ms.txt, unit: ms}", []time.Duration{12500 * time.Microsecond, 13100 * time.Microsecond, 11900 * time.Microsecond, 40200 * time.Microsecond}},
	} {
		yaml := "duration: 1s\nhops: {h: {jitter: " + tc.spec + "}}\nflows: {f: {route: [h]}}\n"
		// The file is relative to the profile, which is in this directory.
		p, err := Parse("profile.yaml", []byte(yaml))
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		e, ok := p.Config.Hops[0].Jitter.Dist.(*emulator.Empirical)
		if !ok || !slices.Equal(e.Samples(), tc.want) {
			t.Errorf("%s: got %+v, want samples %v", tc.spec, p.Config.Hops[0].Jitter.Dist, tc.want)
		}
	}
}

func TestEmpiricalRelativeToProfile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.txt"), []byte("1ms\n2ms\n"), 0o644)
	profile := filepath.Join(dir, "p.yaml")
	os.WriteFile(profile, []byte("duration: 1s\nhops: {h: {jitter: {dist: empirical, file: d.txt}}}\nflows: {f: {route: [h]}}\n"), 0o644)
	if _, err := Load(profile); err != nil {
		t.Fatal(err)
	}
}
