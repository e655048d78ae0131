package lang

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// treeDiff describes the first difference between two trees, or is "".
// Every field yaml.v4 fills is compared: kind, style, tag, value, anchor,
// alias, comments, line and column, and the children in order.
func treeDiff(got, want *yaml.Node, at string) string {
	if got == nil || want == nil {
		if got != want {
			return fmt.Sprintf("%s: got %v, want %v", at, got, want)
		}
		return ""
	}
	type fields struct {
		Kind                                  yaml.Kind
		Style                                 yaml.Style
		Tag, Value, Anchor                    string
		HeadComment, LineComment, FootComment string
		Line, Column, Children                int
		Alias, Stream                         bool
		NilContent                            bool
	}
	of := func(n *yaml.Node) fields {
		return fields{n.Kind, n.Style, n.Tag, n.Value, n.Anchor, n.HeadComment, n.LineComment, n.FootComment,
			n.Line, n.Column, len(n.Content), n.Alias != nil, n.Stream != nil, n.Content == nil}
	}
	if g, w := of(got), of(want); g != w {
		return fmt.Sprintf("%s: got %+v, want %+v", at, g, w)
	}
	for i := range got.Content {
		if d := treeDiff(got.Content[i], want.Content[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// sameAsYAMLv4 fails t if fastParse reads data otherwise than yaml.v4; it
// reports whether fastParse read it.
func sameAsYAMLv4(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := fastParse(data)
	if !ok {
		return false
	}
	want, err := composeYAML("f.yaml", data)
	if err != nil {
		t.Fatalf("fastParse read %q, which yaml.v4 rejects: %v", data, err)
	}
	if d := treeDiff(got, want, "root"); d != "" {
		t.Fatalf("fastParse of %q differs from yaml.v4's tree at %s", data, d)
	}
	return true
}

func TestFastParse(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		read bool // false: declined, to yaml.v4
	}{
		{"name: a\n", true},
		{"name: a", true},
		{"\n\nname: a  \n\n", true},
		{"a: 1\nb: -2\nc: 0x1F\nd: 1_000\ne: +3\nf: 1e5\ng: .5\nh: 1.\ni: 2Mbit\nj: 10us\n", true},
		{"a: true\nb: False\nc: null\nd: ~\ne: .inf\nf: -.Inf\ng: .nan\nh: -0\ni: yes\nj: 18446744073709551615\n", true},
		{"a: '1'\nb: \"x y\"\nc: ''\nd: 2%\ne: a b  c\n", true},
		{"hops:\n  a: {rate: 1Gbit, delay: 1ms}\n  b: {rate: 1Gbit, delay: 1ms}\nflows:\n  f: {route: [a, b], traffic: {poisson: {rate: 8kbit, size: 100B}}, trace: false}\n", true},
		{"a: {}\nb: []\nc: [ x ,y]\nd: {k: [1, [2, {z: 3}]]}\n", true},
		{"schedule:\n  - at: 1s\n    rate: 2Mbit\n  - at: 2s\n    hops: {a: {rate: 1}}\n", true},
		{"schedule:\n- at: 1s\n- 2\n- [a]\nnext: 1\n", true},
		{"a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", true},
		{"\"a b\": 1\n'c': 2\nx:y: 3\nurl: http://h:80/p\n", true},
		{"<<: 1\n", true},
		{"description: Paper 001's a, b \"c\" [x] {y}\n", true},
		{"schedule:\n  - {at: 1s, rate: 2}\n  - [a, b]\n", true},
		{"a: 1\na: 2\n", true},
		// Outside the subset.
		{"", false},
		{"  a: 1\n", false},
		{"# c\na: 1\n", false},
		{"a: 1 # c\n", false},
		{"a: &x 1\nb: *x\n", false},
		{"a: !!str 1\n", false},
		{"---\na: 1\n", false},
		{"a: |\n  x\n", false},
		{"a: b\n  c\n", false},
		{"a:\n", false},
		{"a:\nb: 1\n", false},
		{"a: {b: 1,\n  c: 2}\n", false},
		{"a: \"x\\ty\"\n", false},
		{"a: 'it''s'\n", false},
		{"a: 2024-01-02\n", false},
		{"a:\tb\n", false},
		{"a: b: c\n", false},
		{"a: {b}\n", false},
		{"a: [b,]\n", false},
		{"a: {b:c}\n", false},
		{"- a\n", false},
		{"a: 1\r\n", false},
		{"a: é\n", false},
		{"a: [x, y]]\n", false},
		{"a: - b\n", false},
		{"a:\n  - - b\n", false},
		{"? a\n: b\n", false},
		{"a: \"x\n  y\"\n", false},
	} {
		if got := sameAsYAMLv4(t, []byte(tc.yaml)); got != tc.read {
			t.Errorf("fastParse of %q: read %v, want %v", tc.yaml, got, tc.read)
		}
	}
}

// TestResolvePlain holds the tags of plain scalars to yaml.v4's, near the
// edges of what it reads as a number.
func TestResolvePlain(t *testing.T) {
	for _, scalar := range []string{
		"0", "-0", "+0", "00", "017", "018", "0x1F", "0X1f", "-0x1", "+0b1", "0b2", "0o17", "0O8", "0x", "0x_1", "0xG",
		"1_000", "_6", "6_", "1__0", "9223372036854775807", "9223372036854775808", "18446744073709551616", "-9223372036854775809",
		"1e5", "1E+5", "-1.5e-3", "1_000.5", "1.", ".5", "-.5", "+.5e3", "1.2.3", "1e", "e1", "+", "-1-", "1e5e5",
		"0x1p-2", "1_e5", "inf", "nan", "+inf", "-.inf", ".Nan", "100B", "30000B", "10Mbit", "2ms", "1e3bit", "0b1Mbit",
		"True", "tRue", "NULL", "nUll", "<<", "<", "~a",
	} {
		sameAsYAMLv4(t, []byte("a: "+scalar+"\n"))
		sameAsYAMLv4(t, []byte("a: ["+scalar+"]\n"))
		if got, ok := fastParse([]byte("a: " + scalar + "\n")); !ok || got.Content[1].Value != scalar {
			t.Errorf("fastParse declined or misread the scalar %q", scalar)
		}
	}
}

// TestFastParseLarge checks that a profile of the shape issue 21's large
// one has is read by fastParse, not left to yaml.v4 (which is the same
// tree, and four times the time).
func TestFastParseLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: large\nseed: 1\nduration: 10s\nhops:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "  h%d: {rate: %dMbit, delay: %dus, queue: 30000B}\n", i, 10+i%90, 100+i%1000)
	}
	b.WriteString("flows:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "  f%d: {route: [h%d, h%d], traffic: {poisson: {rate: %dkbit, size: 100B}}, trace: false}\n", i, i, (i+1)%100, 10+i%500)
	}
	if !sameAsYAMLv4(t, []byte(b.String())) {
		t.Error("fastParse declined the large profile's shape")
	}
}

// repoYAML is every .yaml file of the repository, as written and with its
// comments taken out (so that fastParse reads it).
func repoYAML(tb testing.TB) [][]byte {
	var files [][]byte
	err := filepath.WalkDir("../..", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files = append(files, data, stripComments(data))
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// stripComments drops comment lines and the comments after values.
func stripComments(data []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if i := bytes.Index(line, []byte(" #")); i >= 0 {
			line = line[:i]
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		out = append(out, line)
	}
	return bytes.Join(out, []byte("\n"))
}

// TestFastParseRepo holds fastParse to yaml.v4 on the repository's files.
func TestFastParseRepo(t *testing.T) {
	read := 0
	files := repoYAML(t)
	for _, data := range files {
		if sameAsYAMLv4(t, data) {
			read++
		}
	}
	t.Logf("fastParse read %d of %d files (each as written and without comments)", read, len(files))
	if read == 0 {
		t.Error("fastParse read none of the repository's files without their comments")
	}
}

// FuzzFastParse is the differential test: on any bytes, fastParse builds
// yaml.v4's tree or declines.
func FuzzFastParse(f *testing.F) {
	for _, data := range repoYAML(f) {
		f.Add(data)
	}
	f.Add([]byte("a: {b: [1, 'x', \"y\"], c: -1.5e3}\nd:\n- e: 1\n  f: [g]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsYAMLv4(t, data)
	})
}
