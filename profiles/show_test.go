package profiles

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles/lang"
	"go.yaml.in/yaml/v4"
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
		for _, render := range []struct {
			name string
			text []byte
		}{{"YAML", p.YAML()}, {"AsWritten", p.AsWritten()}} {
			again, err := Parse(p.Source, render.text)
			if err != nil {
				t.Errorf("%s: the %s rendering does not parse: %v\n%s", p.Source, render.name, err, render.text)
				continue
			}
			if !reflect.DeepEqual(again.Config, p.Config) || !reflect.DeepEqual(again.Phases(), p.Phases()) {
				t.Errorf("%s: the %s rendering runs differently:\n%s", p.Source, render.name, render.text)
			}
			if strings.Contains(string(render.text), "extends:") {
				t.Errorf("%s: the %s rendering still extends", p.Source, render.name)
			}
		}
	}
}

// TestShowKeepsWhatWasWritten: hilrig show prints each shipped profile's
// values in the text they were written in and keeps its comments, and those
// of the profile it extends (issue 10, item 4: show lte printed
// 9.999999999999999e-05% for 0.0001%).
func TestShowKeepsWhatWasWritten(t *testing.T) {
	for _, name := range Shipped() {
		p, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		shown := string(p.AsWritten())
		data, _ := library.ReadFile(name + ".yaml")
		files := [][]byte{data}
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatal(err)
		}
		if base := extendsOf(&root); base != "" {
			baseData, _ := library.ReadFile(base + ".yaml")
			files = append(files, baseData)
		} else {
			// Without extends every scalar shows as written, in order.
			var again yaml.Node
			if err := yaml.Unmarshal([]byte(shown), &again); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got, want := scalars(&again), scalars(&root); !slices.Equal(got, want) {
				t.Errorf("%s: show's values\n  %q\nare not the file's\n  %q", name, got, want)
			}
		}
		for _, file := range files {
			for _, line := range strings.Split(string(file), "\n") {
				if comment := strings.TrimSpace(line); strings.HasPrefix(comment, "#") && !strings.Contains(shown, comment) {
					t.Errorf("%s: show lost the comment %q", name, comment)
				}
			}
		}
	}
	lte, _ := Load("lte")
	for _, text := range [][]byte{lte.AsWritten(), lte.YAML()} {
		if !strings.Contains(string(text), "loss: {random: 0.0001%}") {
			t.Errorf("lte's loss is not shown as written:\n%s", text)
		}
	}
}

// TestShowVariantElsewhere renders a variant whose base lives in another
// directory and reads a delay file next to itself: the comments of both
// files (a header, a key's, a line's) stay, the override's text is kept,
// the delay file is named from the variant, and the defaults are listed.
func TestShowVariantElsewhere(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("base/delays.txt", "1ms\n2ms\n3.5ms\n")
	write("base/base.yaml", `# The base: a radio link.
name: base
duration: 10s
hops:
  # the only hop
  radio: {rate: 1.5Mbit, delay: 5ms, jitter: {dist: empirical, file: delays.txt}, loss: {gilbert: {p: 0.3%}}} # measured
flows:
  f: {route: [radio], traffic: {cbr: {interval: 10ms, size: 100B}}}
`)
	variant := write("lab/variant.yaml", `# A slower variant.
extends: ../base/base.yaml
hops:
  # slower, on purpose
  radio: {delay: 1.30ms} # one way
`)
	p, err := Load(variant, "seed=007")
	if err != nil {
		t.Fatal(err)
	}
	shown := string(p.AsWritten())
	for _, want := range []string{
		"# A slower variant.\n# extends ../base/base.yaml:\n# The base: a radio link.\n",
		"  # the only hop\n  # slower, on purpose\n",
		"delay: 1.30ms", "rate: 1.5Mbit", "p: 0.3%", "# one way", "seed: 007",
		"file: ../base/delays.txt",
		"#   name: variant\n",
		"#   hops.radio.loss.gilbert.r: 99.7%\n",
		"#   flows.f.trace: true\n",
	} {
		if !strings.Contains(shown, want) {
			t.Errorf("show lacks %q:\n%s", want, shown)
		}
	}
	again, err := Parse(variant, []byte(shown))
	if err != nil || !reflect.DeepEqual(again.Config, p.Config) {
		t.Errorf("the rendering runs differently: %v\n%s", err, shown)
	}
}

// extendsOf is the profile a parsed file extends, or "".
func extendsOf(doc *yaml.Node) string {
	root := doc.Content[0]
	if i := lang.MappingIndex(root, "extends"); i >= 0 {
		return root.Content[i+1].Value
	}
	return ""
}

// scalars lists a tree's scalar texts in document order.
func scalars(n *yaml.Node) []string {
	var out []string
	if n.Kind == yaml.ScalarNode {
		out = append(out, n.Value)
	}
	for _, c := range n.Content {
		out = append(out, scalars(c)...)
	}
	return out
}

// TestShowListsDefaultsThatChangeResults: a default that is a rule (a
// jittered flow kept in order; a queue that never drops) is listed where a
// hop does not write it, and one that is the absence of an impairment (no
// loss) is not.
func TestShowListsDefaultsThatChangeResults(t *testing.T) {
	l, err := Parse("p.yaml", []byte(`duration: 1s
hops:
  radio: {rate: 1Mbit, delay: 5ms, jitter: {dist: normal, sigma: 1ms}}
  wire: {delay: 1ms, reorder: allowed}
  relay: {per_frame: 2ms, queue: 10 frames}
flows:
  f: {route: [radio, wire, relay]}
`))
	if err != nil {
		t.Fatal(err)
	}
	text := string(l.AsWritten())
	_, listed, _ := strings.Cut(text, "# Not written above, so their defaults:\n")
	var got []string
	for line := range strings.Lines(listed) {
		if key, _, ok := strings.Cut(strings.TrimPrefix(line, "#   "), ":"); ok && strings.HasPrefix(key, "hops.") {
			got = append(got, strings.TrimSpace(strings.TrimPrefix(line, "#   ")))
		}
	}
	want := []string{"hops.radio.queue: unlimited", "hops.radio.reorder: in_order", "hops.relay.reorder: in_order"}
	if !slices.Equal(got, want) {
		t.Errorf("hop defaults listed %q, want %q\n%s", got, want, text)
	}
}
