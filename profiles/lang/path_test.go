package lang

import (
	"fmt"
	"testing"
)

// joined is a path as the decoder joined it at each step before Path:
// Join for a key, "%s[%d]" for a list's index. A step is a key, or an
// index when key is "" and index ≥ 0.
type pathStep struct {
	key   string
	index int
}

func joined(front string, steps []pathStep) string {
	s := front
	for _, st := range steps {
		if st.index >= 0 {
			s = fmt.Sprintf("%s[%d]", s, st.index)
		} else {
			s = Join(s, st.key)
		}
	}
	return s
}

func pathOf(front string, steps []pathStep) Path {
	p := PathOf(front)
	for _, st := range steps {
		if st.index >= 0 {
			p = p.Index(st.index)
		} else {
			p = p.Key(st.key)
		}
	}
	return p
}

func key(k string) pathStep { return pathStep{key: k, index: -1} }
func index(i int) pathStep  { return pathStep{index: i} }

// TestPath holds a Path's text to the text joined at each step, at every
// depth (past the steps it keeps apart, it joins them), for keys that are
// empty (a name the decoder refuses, in its message) and paths that start
// with an index.
func TestPath(t *testing.T) {
	for _, c := range []struct {
		front string
		steps []pathStep
		want  string
	}{
		{"", nil, ""},
		{"", []pathStep{key("hops")}, "hops"},
		{"", []pathStep{key("hops"), key("core-up"), key("rate")}, "hops.core-up.rate"},
		{"", []pathStep{key("flows"), key("f1"), key("traffic"), key("poisson"), key("rate")}, "flows.f1.traffic.poisson.rate"},
		{"", []pathStep{key("flows"), key("f1"), key("traffic"), key("onoff"), key("on"), key("mean")}, "flows.f1.traffic.onoff.on.mean"},
		{"", []pathStep{key("schedule"), index(2), key("jitter"), key("file")}, "schedule[2].jitter.file"},
		{"", []pathStep{key("a"), index(0), index(12), index(345), index(6789), index(2147483647), key("b")}, "a[0][12][345][6789][2147483647].b"},
		{"", []pathStep{index(0), key("a")}, "[0].a"},
		{"", []pathStep{key(""), key("a")}, "a"},
		{"", []pathStep{key("hops"), key("")}, "hops."},
		{"", []pathStep{key("hops"), key(""), key("")}, "hops.."},
		{"change", []pathStep{key("loss"), key("random")}, "change.loss.random"},
		{"change", nil, "change"},
		{"", []pathStep{key("a"), key("b"), key("c"), key("d"), key("e"), key("f"), key("g"), key("h"), key("i"), key("j"), key("k")}, "a.b.c.d.e.f.g.h.i.j.k"},
	} {
		if got := pathOf(c.front, c.steps).String(); got != c.want {
			t.Errorf("%q then %v: %q, want %q", c.front, c.steps, got, c.want)
		}
		if eager := joined(c.front, c.steps); eager != c.want {
			t.Errorf("%q then %v joined at each step: %q, want %q (the table is wrong)", c.front, c.steps, eager, c.want)
		}
	}
}

// TestPathsKeptApart holds a Path's steps apart from the path it was made
// from: two made from one differ only in their own step.
func TestPathsKeptApart(t *testing.T) {
	flow := PathOf("").Key("flows").Key("f1")
	for _, depth := range []int{0, pathSteps - 2, pathSteps, 2 * pathSteps} {
		p := flow
		for i := range depth {
			p = p.Key(fmt.Sprint("k", i))
		}
		a, b := p.Key("rate"), p.Index(3)
		if a.String() != p.String()+".rate" || b.String() != p.String()+"[3]" {
			t.Errorf("depth %d: %q and %q made from %q", depth, a, b, p)
		}
	}
}

// TestPathAllocations bounds what a Path costs while nothing reads it: a
// profile's values are at most pathSteps deep, and their paths are made
// without a byte of heap.
func TestPathAllocations(t *testing.T) {
	sink := 0
	allocs := testing.AllocsPerRun(100, func() {
		p := Path{}.Key("flows").Key("f1").Key("traffic").Key("poisson").Key("rate")
		q := Path{}.Key("schedule").Index(12).Key("jitter").Key("file")
		sink += int(p.n + q.n)
	})
	if allocs != 0 {
		t.Errorf("making two paths of five and four steps allocated %v times, want 0", allocs)
	}
}

// FuzzPath holds a Path's text to the text joined at each step, for any
// steps: each byte of ops is a step, a key (a slice of keys) or an index.
func FuzzPath(f *testing.F) {
	f.Add("", "hops.core-up.rate", []byte{1, 2, 3})
	f.Add("change", "a..b", []byte{0, 200, 1, 255, 2, 3, 4, 5, 6, 7, 8})
	f.Add("", "", []byte{128, 1, 129})
	f.Fuzz(func(t *testing.T, front, keys string, ops []byte) {
		var steps []pathStep
		for i, op := range ops {
			if op >= 128 {
				steps = append(steps, index(int(op-128)*i*7919))
				continue
			}
			from := int(op) % (len(keys) + 1)
			steps = append(steps, key(keys[from:min(len(keys), from+i%5)]))
		}
		if got, want := pathOf(front, steps).String(), joined(front, steps); got != want {
			t.Errorf("%q then %v: %q, joined at each step %q", front, steps, got, want)
		}
	})
}
