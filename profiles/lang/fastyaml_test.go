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
// alias, comments (unless dropComments), line and column, and the
// children in order.
func treeDiff(got, want *yaml.Node, dropComments bool, at string) string {
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
	g, w := of(got), of(want)
	if dropComments {
		w.HeadComment, w.LineComment, w.FootComment = "", "", ""
	}
	if g != w {
		return fmt.Sprintf("%s: got %+v, want %+v", at, g, w)
	}
	for i := range got.Content {
		if d := treeDiff(got.Content[i], want.Content[i], dropComments, fmt.Sprintf("%s[%d]", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// sameAsYAMLv4 fails t if fastParse reads data otherwise than yaml.v4,
// keeping comments or dropping them, or lazily otherwise than at once (a
// stub expanded is the tree it stands for, and a file is declined either
// way or neither); it reports whether fastParse read it with its
// comments, and whether without.
func sameAsYAMLv4(t *testing.T, data []byte) (read, readUncommented bool) {
	t.Helper()
	want, wantErr := composeYAML("f.yaml", string(data))
	for _, dropComments := range []bool{false, true} {
		got, ok := fastParse(string(data), dropComments)
		if !ok {
			continue
		}
		if wantErr != nil {
			t.Fatalf("fastParse (dropping comments: %v) read %q, which yaml.v4 rejects: %v", dropComments, data, wantErr)
		}
		if d := treeDiff(got, want, dropComments, "root"); d != "" {
			t.Fatalf("fastParse (dropping comments: %v) of %q differs from yaml.v4's tree at %s", dropComments, data, d)
		}
		if dropComments {
			readUncommented = true
		} else {
			read = true
		}
	}
	for _, dropComments := range []bool{false, true} {
		_, eager := fastParse(string(data), dropComments)
		lazy, p, ok := fastParseLazy(string(data), dropComments)
		if ok != eager {
			t.Fatalf("fastParse (dropping comments: %v) of %q: read %v, and %v lazily", dropComments, data, eager, ok)
		}
		if !ok {
			continue
		}
		lazyEntriesDiffer(t, p, lazy, want, data)
		p.expandAll(lazy)
		if d := treeDiff(lazy, want, dropComments, "root"); d != "" {
			t.Fatalf("fastParse (dropping comments: %v) of %q, lazily and expanded, differs from yaml.v4's tree at %s", dropComments, data, d)
		}
	}
	if read && !readUncommented {
		t.Fatalf("fastParse of %q read it with its comments but not without", data)
	}
	return read, readUncommented
}

// lazyEntriesDiffer fails t if an entry of a stub of the lazy tree, parsed
// on its own (as the decoder reads it), is not the entry of want, or its
// key's index does not find it.
func lazyEntriesDiffer(t *testing.T, p *fastParser, lazy, want *yaml.Node, data []byte) {
	t.Helper()
	for i, stub := range lazy.Content {
		at, ok := p.stubOf(stub)
		if !ok {
			continue
		}
		wantTree := want.Content[i]
		for e := range at.entryCount() {
			wantKey, wantValue := (*yaml.Node)(nil), wantTree.Content[e]
			if stub.Kind == yaml.MappingNode {
				wantKey, wantValue = wantTree.Content[2*e], wantTree.Content[2*e+1]
				if first := MappingIndex(wantTree, wantKey.Value) / 2; p.entryNamed(stub, at, wantKey.Value) != first {
					t.Fatalf("lazy parse of %q: the entry of key %q is %d, want %d", data, wantKey.Value, p.entryNamed(stub, at, wantKey.Value), first)
				}
			}
			key, value := p.entryReused(stub, at, e)
			if d := treeDiff(key, wantKey, true, fmt.Sprintf("root[%d] entry %d's key", i, e)); d != "" {
				t.Fatalf("lazy parse of %q: %s", data, d)
			}
			if d := treeDiff(value, wantValue, true, fmt.Sprintf("root[%d] entry %d", i, e)); d != "" {
				t.Fatalf("lazy parse of %q: %s", data, d)
			}
		}
		if got := at.entryCount(); stub.Kind == yaml.MappingNode && 2*got != len(wantTree.Content) || stub.Kind == yaml.SequenceNode && got != len(wantTree.Content) {
			t.Fatalf("lazy parse of %q: root[%d] has %d entries, want those of %d children", data, i, got, len(wantTree.Content))
		}
	}
}

func TestFastParse(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		read bool // false: declined, to yaml.v4
		// readUncommented: read when its comments are dropped; true if read
		readUncommented bool
	}{
		{"name: a\n", true, true},
		{"name: a", true, true},
		{"\n\nname: a  \n\n", true, true},
		{"a: 1\nb: -2\nc: 0x1F\nd: 1_000\ne: +3\nf: 1e5\ng: .5\nh: 1.\ni: 2Mbit\nj: 10us\n", true, true},
		{"a: true\nb: False\nc: null\nd: ~\ne: .inf\nf: -.Inf\ng: .nan\nh: -0\ni: yes\nj: 18446744073709551615\n", true, true},
		{"a: '1'\nb: \"x y\"\nc: ''\nd: 2%\ne: a b  c\n", true, true},
		{"hops:\n  a: {rate: 1Gbit, delay: 1ms}\n  b: {rate: 1Gbit, delay: 1ms}\nflows:\n  f: {route: [a, b], traffic: {poisson: {rate: 8kbit, size: 100B}}, trace: false}\n", true, true},
		{"a: {}\nb: []\nc: [ x ,y]\nd: {k: [1, [2, {z: 3}]]}\n", true, true},
		{"schedule:\n  - at: 1s\n    rate: 2Mbit\n  - at: 2s\n    hops: {a: {rate: 1}}\n", true, true},
		{"schedule:\n- at: 1s\n- 2\n- [a]\nnext: 1\n", true, true},
		{"a:\n  b:\n    c: 1\n  d: 2\ne: 3\n", true, true},
		{"\"a b\": 1\n'c': 2\nx:y: 3\nurl: http://h:80/p\n", true, true},
		{"<<: 1\n", true, true},
		{"description: Paper 001's a, b \"c\" [x] {y}\n", true, true},
		{"schedule:\n  - {at: 1s, rate: 2}\n  - [a, b]\n", true, true},
		{"a: 1\na: 2\n", true, true},
		// Text outside ASCII: yaml.v4 counts columns in runes.
		{"description: LTE → 3G → 2G, γ = 1 s\né: {ü: 'ö', ß: [µs, \"…\"]}\nc: 33–44 ms\n", true, true},
		{"a: x\u00a0y\n", true, true},
		{"a: x\u2028y\n", false, false},
		{"a: x\ufeffy\n", false, false},
		{"\ufeffa: 1\n", false, false},
		{"a: x\xffy\n", false, false},
		{"s:\n- a:\n  - x\n  b: 1\n- c: {d: [-1, -e]}\n  f: 'g'\nh: { }\ni: [ ]\n", true, true},
		{"<<: {a: 1}\nb: 2\n", true, true},
		{"\"a\":\n  b: 1\nc: {\"d\": 'e'}\nurl: http://x/y\nk  : v  w\n", true, true},
		// Outside the subset.
		{"", false, false},
		{"  a: 1\n", false, false},
		// Comments, passed over when they are not kept.
		{"# c\na: 1\n", false, true},
		{"a: 1 # c\n", false, true},
		{"# → µs\na: # c\n  # c\n  b: [x, 'y'] # c\n# c\n  c: \"#\" #c\nd:\n- e # c\n  # c\n- f\n# c", false, true},
		{"a: 1 # c\xff\n", false, false},
		{"a: 1 # \u2028\n", false, false},
		{"a: 1 # \x85\n", false, false},
		{"a: 1#c\n", false, false},
		{"a: 'x'# c\n", false, false},
		{"a: {b: 1 # c\n}\n", false, false},
		{"a: b#c\n", false, false},
		{"# c\n", false, false},
		{"a: 1 # & * ! | > ? @ `\nb: 2\n", false, true},
		{"a: 1 # \\ \n", false, false},
		{"a: x &y\n", false, false},
		{"a: [x, *y]\n", false, false},
		{"a: \"x & y | z\"\n", false, true},
		{"a: &x 1\nb: *x\n", false, false},
		{"a: !!str 1\n", false, false},
		{"---\na: 1\n", false, false},
		{"a: |\n  x\n", false, false},
		{"a: b\n  c\n", false, false},
		{"a:\n", false, false},
		{"a:\nb: 1\n", false, false},
		{"a: {b: 1,\n  c: 2}\n", false, false},
		{"a: \"x\\ty\"\n", false, false},
		{"a: 'it''s'\n", false, false},
		{"a: 2024-01-02\n", false, false},
		{"a:\tb\n", false, false},
		{"a: b: c\n", false, false},
		{"a: {b}\n", false, false},
		{"a: [b,]\n", false, false},
		{"a: {b:c}\n", false, false},
		{"- a\n", false, false},
		{"a: 1\r\n", false, false},
		{"a: [x, y]]\n", false, false},
		{"a:\n  - b\n  c: 1\n", false, false},
		{"a: 1\n b: 2\n", false, false},
		{"a: [b, c\n", false, false},
		{"a: b:\n", false, false},
		{"a: \"x\" y\n", false, false},
		{"a: [- b]\n", false, false},
		{"a: {[b]: 1}\n", false, false},
		{"a: - b\n", false, false},
		{"a:\n  - - b\n", false, false},
		{"? a\n: b\n", false, false},
		{"a: \"x\n  y\"\n", false, false},
	} {
		read, readUncommented := sameAsYAMLv4(t, []byte(tc.yaml))
		if read != tc.read || readUncommented != tc.readUncommented {
			t.Errorf("fastParse of %q: read %v, %v without comments; want %v, %v", tc.yaml, read, readUncommented, tc.read, tc.readUncommented)
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
		if got, ok := fastParse("a: "+scalar+"\n", false); !ok || got.Content[1].Value != scalar {
			t.Errorf("fastParse declined or misread the scalar %q", scalar)
		}
	}
}

// TestFastParseLarge checks that a profile of the shape issue 21's large
// one has is read by fastParse, not left to yaml.v4 (which is the same
// tree, and four times the time), and with comments when they are dropped.
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
	if read, _ := sameAsYAMLv4(t, []byte(b.String())); !read {
		t.Error("fastParse declined the large profile's shape")
	}
	commented := "# A profile of many hops and flows.\n" + strings.ReplaceAll(b.String(), "}\n", "} # one of many\n")
	if _, readUncommented := sameAsYAMLv4(t, []byte(commented)); !readUncommented {
		t.Error("fastParse declined the large profile's shape with comments, dropping them")
	}
}

// TestFastParseLazy checks what a lazy parse leaves for later: the
// collections at lazyDepth are stubs, without children; each is expanded
// whole into two allocations of its exact size (its nodes, its children),
// each of its entries on its own into two of its own, or into those of
// the entry before: from the parser's slabs, every entry would keep the
// one before it alive, and the tree would grow whole as it is decoded.
func TestFastParseLazy(t *testing.T) {
	data := []byte("name: x\nhops:\n  a: {rate: 1Gbit, delay: [1ms, {x: 2}]}\n  b:\n    rate: 2Mbit\n    loss: {random: 1%}\nschedule:\n  - at: 1s\n    hop: a\n  - {at: 2s}\n  - [1, 2]\n  - 3\nflows: {f: {route: [a]}, g: [1]}\nlist: [x, {y: 1}]\n")
	want, err := composeYAML("f.yaml", string(data))
	if err != nil {
		t.Fatal(err)
	}
	root, p, ok := fastParseLazy(string(data), true)
	if !ok {
		t.Fatal("fastParseLazy declined")
	}
	// At depth 2: hops, schedule, flows and list; name is a scalar.
	stubbed := []int{3, 5, 7, 9}
	if len(p.stubs) != len(stubbed) {
		t.Errorf("the lazy tree has %d stubs, want %d", len(p.stubs), len(stubbed))
	}
	for _, i := range stubbed {
		stub, wantTree := root.Content[i], want.Content[i]
		if stub.Content != nil {
			t.Errorf("stub %d has %d children before it is expanded", i, len(stub.Content))
		}
		at, _ := p.stubOf(stub)
		entries := len(wantTree.Content)
		if stub.Kind == yaml.MappingNode {
			entries /= 2
		}
		if at.entryCount() != entries {
			t.Errorf("stub %d has %d entries, want %d", i, at.entryCount(), entries)
		}
		for e := range at.entryCount() {
			wantKey, wantValue := (*yaml.Node)(nil), wantTree.Content[e]
			if stub.Kind == yaml.MappingNode {
				wantKey, wantValue = wantTree.Content[2*e], wantTree.Content[2*e+1]
			}
			var key, value *yaml.Node
			if allocs := testing.AllocsPerRun(10, func() { key, value = p.entry(stub, at, e) }); allocs != 2 {
				t.Errorf("parsing entry %d of stub %d made %v allocations, want 2 (its nodes and its children)", e, i, allocs)
			}
			for _, reused := range []bool{false, true} {
				if reused {
					if allocs := testing.AllocsPerRun(10, func() { key, value = p.entryReused(stub, at, e) }); allocs != 0 {
						t.Errorf("parsing entry %d of stub %d into the arrays of the one before made %v allocations, want none", e, i, allocs)
					}
				}
				if d := treeDiff(key, wantKey, true, fmt.Sprintf("stub %d, entry %d's key (reused: %v)", i, e, reused)); d != "" {
					t.Error(d)
				}
				if d := treeDiff(value, wantValue, true, fmt.Sprintf("stub %d, entry %d (reused: %v)", i, e, reused)); d != "" {
					t.Error(d)
				}
			}
			if wantKey != nil {
				if got := p.entryNamed(stub, at, wantKey.Value); got != e {
					t.Errorf("stub %d: the entry of key %q is %d, want %d", i, wantKey.Value, got, e)
				}
			}
		}
		var tree *yaml.Node
		if allocs := testing.AllocsPerRun(10, func() { tree = p.expand(stub) }); allocs != 2 {
			t.Errorf("expanding stub %d made %v allocations, want 2 (its nodes and its children)", i, allocs)
		}
		if d := treeDiff(tree, wantTree, true, fmt.Sprintf("stub %d", i)); d != "" {
			t.Error(d)
		}
		if again := p.expand(stub); again == tree {
			t.Errorf("stub %d expanded twice into the same nodes", i)
		}
	}
	if at, _ := p.stubOf(root.Content[3]); p.entryNamed(root.Content[3], at, "nope") != -1 {
		t.Error("a key the stub does not have was found")
	}
	if n := root.Content[1]; p.expand(n) != n {
		t.Error("expanding a node that is not a stub gave another")
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
	read, readUncommented := 0, 0
	files := repoYAML(t)
	for _, data := range files {
		r, u := sameAsYAMLv4(t, data)
		if r {
			read++
		}
		if u {
			readUncommented++
		}
	}
	t.Logf("fastParse read %d of %d files (each as written and without comments), %d dropping comments", read, len(files), readUncommented)
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
