package lang

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

type lazyItem struct {
	Every Duration   `yaml:"every,required"`
	Sizes []int      `yaml:"sizes"`
	Inner *lazyInner `yaml:"inner"`
}

type lazyInner struct {
	Name string `yaml:"name,required"`
}

type lazyDoc struct {
	Name  string         `yaml:"name"`
	Items Map[lazyItem]  `yaml:"items"`
	List  []lazyItem     `yaml:"list"`
	Deep  map2[lazyItem] `yaml:"deep"`
	Rate  HopRate        `yaml:"rate"`
}

// map2 is a mapping of names to mappings of names: its entries' values
// are below lazyDepth.
type map2[T any] struct{ Map[Map[T]] }

// TestLazyDecode holds a lazily parsed document (DropComments: decoded,
// not rendered) to the same values, problems and positions as one parsed
// at once: its stubs are expanded where the decoder reaches them, and
// where a position is looked for after decoding.
func TestLazyDecode(t *testing.T) {
	for _, doc := range []string{
		"name: a\nitems:\n  x: {every: 1s, sizes: [1, 2]}\n  y:\n    every: 2s\n    inner: {name: q}\nlist:\n  - every: 3s\n  - {every: 4s, sizes: [5]}\ndeep:\n  a:\n    b: {every: 5s}\n",
		"items:\n  x: {every: 1 s, sizes: [1, b]}\n  y:\n    every: 2s\n    inner: {nam: q}\n    extra: 1\nlist:\n  - every: 3\n  - {sizes: {a: 1}}\n  - [1]\n  - 3\ndeep:\n  a:\n    b: {every: x}\n    c: 1\n",
		"items: {x: {every: 1s}}\nlist: [{every: 1s}, {every: 2ms, inner: {name: [x]}}]\n",
		"# a comment\nitems:  # on a key\n  x:\n    every: 1s # on a value\n    sizes:\n      - 1\n      - 2 # and a list's\n",
		// A key given twice in a stub: its first entry is the one a
		// position is looked for in.
		"items:\n  x: {every: 1s}\n  y: {every: 2s}\n  x: {every: 3s, inner: {name: [1]}}\nlist:\n- every: 1s\n- {every: x}\nrate: {baud: 0}\n",
		// A value decoded by a NodeDecoder that reads its children itself,
		// and checks after decoding in it.
		"rate:\n  baud: 9600\n  format: 9X1\nlist: [{every: 1s, sizes: []}, {}]\ndeep: {a: {b: {every: 1s}}, c: {d: {every: 2}}}\n",
		"items: [1]\nlist: {a: 1}\ndeep: 3\nrate: 1\nname: {a: 1}\n",
	} {
		var eager, lazy lazyDoc
		de := decodeWith(t, doc, false, &eager)
		dl := decodeWith(t, doc, true, &lazy)
		if dl.unparsed == nil {
			t.Errorf("%q was not parsed lazily", doc)
		}
		if !reflect.DeepEqual(eager, lazy) {
			t.Errorf("%q decoded lazily is %+v, at once %+v", doc, lazy, eager)
		}
		if e, l := fmt.Sprint(de.Err()), fmt.Sprint(dl.Err()); e != l {
			t.Errorf("%q decoded lazily says\n%s\nat once\n%s", doc, l, e)
		}
		for _, path := range []string{"items.x", "items.x.sizes[1]", "items.y.inner.name", "list[1].sizes", "deep.a.b.every", "items.nope.every", "list[9]", "items", "list", "deep", "list[0]", "list[1].every", "items.x.inner.name", "rate", "rate.baud", "rate.format", "deep.c.d.every", "name"} {
			if e, l := de.PosAt(path), dl.PosAt(path); e != l {
				t.Errorf("%q: %s is at %v lazily, at %v at once", doc, path, l, e)
			}
		}
	}
}

func decodeWith(t *testing.T, doc string, dropComments bool, v *lazyDoc) *Decoder {
	t.Helper()
	d := NewDecoder()
	d.DropComments = dropComments
	root, err := d.ParseYAML("f.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("%q: %v", doc, err)
	}
	d.Tree = root
	d.Decode(root, reflect.ValueOf(v).Elem(), Path{})
	return d
}

// TestLazyParseAllocates bounds what parsing a file of many entries
// lazily allocates: the list of where each entry begins (8 bytes a
// line), and a few nodes for the tree's top levels and stubs. A slab of
// 1 024 nodes for them was 160 KB beside the loaded profile.
func TestLazyParseAllocates(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nhops:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  h%d: {rate: 1Mbit}\n", i)
	}
	b.WriteString("flows:\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "  f%d: {route: [h%d]}\n", i, i)
	}
	text := b.String()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, p, ok := fastParseLazy(text, true)
	runtime.ReadMemStats(&after)
	if !ok {
		t.Fatal("declined")
	}
	runtime.KeepAlive(p)
	allocated := after.TotalAlloc - before.TotalAlloc
	lines := uint64(strings.Count(text, "\n") + 1)
	if limit := 8*lines + 16<<10; allocated > limit {
		t.Errorf("parsing %d lines lazily allocated %d bytes, want at most %d", lines, allocated, limit)
	}
}
