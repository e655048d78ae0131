package benchfile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hilrig/hilrig/profiles"
)

// TestFiles checks that a profile and a bench list every file on disk they
// were made from, which hilrig compares its outputs against: a profile
// run with --trace on the file it extends must not overwrite it.
func TestFiles(t *testing.T) {
	msd, err := os.ReadFile("../models/mass-spring-damper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	delays := write("delays.txt", "1ms\n2ms\n")
	series := write("series.txt", "3ms\n4ms\n")
	base := write("base.yaml", "duration: 1s\nhops: {h: {delay: 1ms}}\nflows: {f: {route: [h]}, g: {route: [h]}}\n")
	middle := write("middle.yaml", "extends: base.yaml\nhops: {h: {jitter: {dist: empirical, file: delays.txt}}}\n")
	leaf := write("leaf.yaml", "extends: middle.yaml\nhops: {h: {delay: {trace: series.txt}}}\n")
	plain := write("plain.yaml", "extends: bottleneck\n")
	t.Chdir(dir) // a --set names a file relative to the working directory
	for _, tc := range []struct {
		name, ref string
		sets      []string
		want      []string
	}{
		{"shipped", "bottleneck", nil, nil},
		{"a file", base, nil, []string{base}},
		{"extending a shipped profile", plain, nil, []string{plain}},
		{"a chain of extends and the files its values name", leaf, nil, []string{base, delays, leaf, middle, series}},
		{"a file named by --set", base, []string{"hops.h.jitter={dist: empirical, file: delays.txt}"}, []string{base, delays}},
		{"a shipped profile with a file named by --set", "bottleneck", []string{"hops.core-up.delay={trace: series.txt}"}, []string{series}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profiles.Load(tc.ref, tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			if got := absolute(t, p.Files()); !slices.Equal(got, tc.want) {
				t.Errorf("Files() = %q, want %q", got, tc.want)
			}
		})
	}

	recording := write("session.pcapng", "")
	model := write("msd.yaml", string(msd))
	p, err := profiles.Load(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"devices only", "endpoints: {a: {pty: {}}, b: {pty: {}}}\nbind: {f: {from: a, to: b}}\n", nil},
		{"a built-in model", "endpoints: {car: {model: {name: quarter-car, cut: CP2}}, seat: {pty: {}}}\nbind: {f: {from: car, to: seat}, g: {from: seat, to: car}}\n", nil},
		{"a model file and a recording", "endpoints: {m: {model: {name: ./msd.yaml, cut: spring}}, r: {replay: {file: session.pcapng}}}\nbind: {f: {from: r, to: m}, g: {from: m, to: r}}\n", []string{model, recording}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write("bench.yaml", tc.text)
			b, err := LoadBench(path, p)
			if err != nil {
				t.Fatal(err)
			}
			want := append([]string{path}, tc.want...)
			slices.Sort(want)
			if got := absolute(t, b.Files()); !slices.Equal(got, want) {
				t.Errorf("Files() = %q, want %q", got, want)
			}
		})
	}
}

// absolute makes relative paths absolute, against the working directory.
func absolute(t *testing.T, files []string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, abs)
	}
	slices.Sort(out)
	return out
}
