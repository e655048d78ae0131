package lang

import (
	"math"
	"strconv"
	"strings"
)

// Path names a value of a document in messages: hops.core-up.rate,
// schedule[2].jitter.file, as Join and an index in brackets write it. The
// decoder makes one for every value it decodes but reads one only when a
// message or a check needs it, so a Path keeps its last steps apart and
// joins them when asked (String): joined at each step, the paths of a
// profile of 10 000 hops and 10 000 flows were 2.4 MB a load, made and
// dropped unread.
type Path struct {
	front string // the steps before those kept apart, joined
	// The steps after front: a key, or a list's index (index ≥ 0).
	keys  [pathSteps]string
	index [pathSteps]int32
	n     uint8
}

// pathSteps is how many steps a Path keeps apart before it joins them:
// flows.NAME.traffic.poisson.rate, a profile's deepest common value, is
// five from the document's root.
const pathSteps = 5

// PathOf is the path whose text is s.
func PathOf(s string) Path { return Path{front: s} }

// Key is the path of the value at key in the mapping at p.
func (p Path) Key(key string) Path {
	p = p.room()
	p.keys[p.n], p.index[p.n] = key, -1
	p.n++
	return p
}

// Index is the path of the i-th entry of the list at p.
func (p Path) Index(i int) Path {
	if i < 0 || i > math.MaxInt32 { // not reached: a list is no longer than the file
		return PathOf(p.String() + "[" + strconv.Itoa(i) + "]")
	}
	p = p.room()
	p.keys[p.n], p.index[p.n] = "", int32(i)
	p.n++
	return p
}

// room is p with room for a step, its steps joined if they fill it.
func (p Path) room() Path {
	if p.n == pathSteps {
		return PathOf(p.String())
	}
	return p
}

// String is the path's text: each key joined to what comes before with a
// dot (Join: none after an empty path), each index in brackets.
func (p Path) String() string {
	if p.n == 0 {
		return p.front
	}
	if p.n == 1 && p.front == "" && p.index[0] < 0 {
		return p.keys[0]
	}
	size := len(p.front)
	for i := range p.n {
		size += len(p.keys[i]) + 12 // the dot, or an index in brackets
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString(p.front)
	for i := range p.n {
		if p.index[i] >= 0 {
			var digits [10]byte
			b.WriteByte('[')
			b.Write(strconv.AppendInt(digits[:0], int64(p.index[i]), 10))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.keys[i])
	}
	return b.String()
}
