package report

import (
	"image"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/hilrig/hilrig/emulator/detmath"
)

// mergingCanvas draws into a canvas (vgsvg's) as the plot asks, but joins
// the paths stroked, or filled in an opaque colour, one after the other
// in the same style into one path, as subpaths: a plot strokes each tick,
// each grid line and each glyph on its own, and each is an element of
// the SVG with its style, the bulk of a report's weight. What is drawn is
// the same: every subpath is stroked or filled as it was, in the same
// order with respect to everything else, and opaque fills of the same
// colour look the same overlapping or not. Dashed strokes are left alone
// (whether a dash restarts at a subpath is the renderer's choice). And
// every path is drawn without the points that move it by nothing one
// can see (simplify).
type mergingCanvas struct {
	vg.CanvasSizer
	state   drawState
	saved   []drawState
	pending vg.Path
	kind    pathKind
}

// drawState is what a path is drawn with.
type drawState struct {
	color  color.Color
	width  vg.Length
	dashes []vg.Length
	offset vg.Length
}

type pathKind uint8

const (
	none pathKind = iota
	stroked
	filled
)

func newMergingCanvas(c vg.CanvasSizer) *mergingCanvas {
	return &mergingCanvas{CanvasSizer: c, state: drawState{color: color.Black, width: vg.Points(1)}}
}

// flush draws the paths joined so far.
func (m *mergingCanvas) flush() {
	switch m.kind {
	case stroked:
		m.CanvasSizer.Stroke(simplify(m.pending))
	case filled:
		m.CanvasSizer.Fill(simplify(m.pending))
	}
	m.pending, m.kind = nil, none
}

// fine is how far from a straight line a point of a path may be and be
// left out (simplify): a twentieth of a point, half of what the page
// rounds coordinates to, and a fortieth of a pixel where a point is a
// pixel and a third.
const fine = vg.Length(0.05)

// simplify leaves out of each run of straight segments of p the points
// within fine of the line through those kept (Ramer, Douglas and
// Peucker): a series of 600 slices drawn 540 points wide has many a
// point that moves the line by nothing one can see.
func simplify(p vg.Path) vg.Path {
	out := make(vg.Path, 0, len(p))
	for i := 0; i < len(p); {
		j := i + 1
		if p[i].Type == vg.MoveComp || p[i].Type == vg.LineComp {
			for j < len(p) && p[j].Type == vg.LineComp {
				j++
			}
		}
		if j-i < 3 {
			out = append(out, p[i:j]...)
		} else {
			keep := make([]bool, j-i)
			keep[0], keep[j-i-1] = true, true
			douglasPeucker(p[i:j], keep, 0, j-i-1)
			for k, c := range p[i:j] {
				if keep[k] {
					out = append(out, c)
				}
			}
		}
		i = j
	}
	return out
}

// douglasPeucker marks in keep the points of run between first and last
// (both kept) that lie further than fine from the line between them, and
// recursively those of the parts either side of the furthest.
func douglasPeucker(run vg.Path, keep []bool, first, last int) {
	a, b := run[first].Pos, run[last].Pos
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	length := detmath.Hypot(dx, dy)
	far, at := 0.0, -1
	for k := first + 1; k < last; k++ {
		p := run[k].Pos
		var d float64
		if length == 0 {
			d = detmath.Hypot(float64(p.X-a.X), float64(p.Y-a.Y))
		} else {
			d = math.Abs(float64(dx*float64(p.Y-a.Y))-float64(dy*float64(p.X-a.X))) / length
		}
		if d > far {
			far, at = d, k
		}
	}
	if at < 0 || far <= float64(fine) {
		return
	}
	keep[at] = true
	douglasPeucker(run, keep, first, at)
	douglasPeucker(run, keep, at, last)
}

func (m *mergingCanvas) SetLineWidth(w vg.Length) {
	if w != m.state.width {
		m.flush()
		m.state.width = w
	}
	m.CanvasSizer.SetLineWidth(w)
}

func (m *mergingCanvas) SetLineDash(dashes []vg.Length, offset vg.Length) {
	if !slices.Equal(dashes, m.state.dashes) || offset != m.state.offset {
		m.flush()
		m.state.dashes, m.state.offset = slices.Clone(dashes), offset
	}
	m.CanvasSizer.SetLineDash(dashes, offset)
}

func (m *mergingCanvas) SetColor(c color.Color) {
	if c == nil {
		c = color.Black
	}
	if !sameColor(c, m.state.color) {
		m.flush()
		m.state.color = c
	}
	m.CanvasSizer.SetColor(c)
}

func sameColor(a, b color.Color) bool {
	ar, ag, ab, aa := a.RGBA()
	br, bg, bb, ba := b.RGBA()
	return ar == br && ag == bg && ab == bb && aa == ba
}

func (m *mergingCanvas) Rotate(rad float64)   { m.flush(); m.CanvasSizer.Rotate(rad) }
func (m *mergingCanvas) Translate(p vg.Point) { m.flush(); m.CanvasSizer.Translate(p) }
func (m *mergingCanvas) Scale(x, y float64)   { m.flush(); m.CanvasSizer.Scale(x, y) }

func (m *mergingCanvas) Push() {
	m.flush()
	m.saved = append(m.saved, m.state)
	m.CanvasSizer.Push()
}

func (m *mergingCanvas) Pop() {
	m.flush()
	if n := len(m.saved); n > 0 {
		m.state, m.saved = m.saved[n-1], m.saved[:n-1]
	}
	m.CanvasSizer.Pop()
}

func (m *mergingCanvas) Stroke(p vg.Path) {
	if len(m.state.dashes) > 0 {
		m.flush()
		m.CanvasSizer.Stroke(simplify(p))
		return
	}
	m.join(stroked, p)
}

func (m *mergingCanvas) Fill(p vg.Path) {
	if _, _, _, a := m.state.color.RGBA(); a != 0xffff {
		m.flush()
		m.CanvasSizer.Fill(simplify(p))
		return
	}
	m.join(filled, p)
}

// join adds p to the paths drawn alike, drawing those of the other kind.
func (m *mergingCanvas) join(kind pathKind, p vg.Path) {
	if len(p) == 0 || p[0].Type != vg.MoveComp { // it would go on from the path before
		m.flush()
		if kind == stroked {
			m.CanvasSizer.Stroke(simplify(p))
		} else {
			m.CanvasSizer.Fill(simplify(p))
		}
		return
	}
	if m.kind != kind {
		m.flush()
		m.kind = kind
	}
	m.pending = append(m.pending, p...)
}

func (m *mergingCanvas) FillString(f font.Face, pt vg.Point, text string) {
	m.flush()
	m.CanvasSizer.FillString(f, pt, text)
}

func (m *mergingCanvas) DrawImage(rect vg.Rectangle, img image.Image) {
	m.flush()
	m.CanvasSizer.DrawImage(rect, img)
}
