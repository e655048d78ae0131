package report

import (
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hilrig/hilrig/rig/expect"
)

// A plot of a value that an expectation set a limit on draws the limit:
// a dashed line at it, and a mark on the line over each slice of the run
// where the value went beyond it, for a limit on how far the value goes
// (an upper one on its max, a quantile, its mean or peak, a lower one on
// its min); the line and marks are red where the expectation was not met.

// bound is a verdict's expectation with a number for a limit.
type bound struct {
	text  string // the expectation
	label string // for a legend: the expectation without its first word (flows.), which the plot says
	met   bool
	path  []string // split at the dots
	op    expect.Op
	value float64 // in the summary's unit: seconds, bytes, a signal's own
}

// boundsOf are the expectations of v with a number for a limit; an
// expectation that no longer parses (a verdict of another version) is
// left out.
func boundsOf(v *Verdict) []bound {
	if v == nil {
		return nil
	}
	var out []bound
	for _, c := range v.Expect {
		x, err := expect.Parse(c.Text, nil)
		if err != nil {
			continue
		}
		value, ok := x.LimitValue()
		if !ok || x.Op == expect.Equal || x.Op == expect.NotEqual {
			continue
		}
		path := strings.Split(x.Path, ".")
		label := strings.Join(path[1:], " ") + " " + x.Op.String() + " " + x.Limit()
		out = append(out, bound{text: x.Canonical(), label: label, met: c.OK, path: path, op: x.Op, value: value})
	}
	return out
}

// on are the bounds on a statistic (one of stats) of the value at
// prefix: flows.m2s.delay, then p95.
func on(bounds []bound, stats []string, prefix ...string) []bound {
	var out []bound
	for _, b := range bounds {
		if len(b.path) == len(prefix)+1 && slices.Equal(b.path[:len(prefix)], prefix) && slices.Contains(stats, b.path[len(prefix)]) {
			out = append(out, b)
		}
	}
	return out
}

// The statistics of a delay or lateness, and of a model's signal, a
// plot of the series shows a limit of.
var (
	delayStats  = []string{"min", "mean", "p50", "p95", "p99", "p99_9", "max"}
	signalStats = []string{"min", "max", "mean", "peak", "final"}
)

// stat is the statistic the bound is on.
func (b bound) stat() string { return b.path[len(b.path)-1] }

func (b bound) upper() bool { return b.op == expect.Less || b.op == expect.LessEqual }

// marked reports whether the slices beyond the bound are marked: it
// bounds how far the value goes, so that each value beyond it counts
// against it.
func (b bound) marked() bool {
	if b.upper() {
		return b.stat() != "min" && b.stat() != "final"
	}
	return b.stat() == "min"
}

// beyond reports whether the slice b goes beyond the bound at y (in the
// plot's unit): a value on the side the expectation forbids, by more
// than the rounding of the files it was read from (a trace's times are
// to the nanosecond: a delay of 6.16 ms reads as 6.1599999 ms).
func (b bound) beyond(s bucket, y float64) bool {
	tol := float64(1e-6 * max(abs(y), abs(s.lo), abs(s.hi)))
	switch b.op {
	case expect.Less:
		return s.hi >= y+tol
	case expect.LessEqual:
		return s.hi > y+tol
	case expect.Greater:
		return s.lo <= y-tol
	}
	return s.lo < y-tol
}

// limitColor is the colour of a limit that was not met.
var limitColor = dropColor

// drawBound draws the bound at y (in the plot's unit) across [x0, x1],
// in c (red when not met), with a mark over each slice of series beyond
// it, and a legend entry if asked.
func drawBound(p *plot.Plot, b bound, legend bool, y, x0, x1 float64, c color.Color, series ...[]bucket) error {
	if !b.met {
		c = limitColor
	}
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return err
	}
	l.Color, l.Width, l.Dashes = c, vg.Points(1), []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(l)
	if legend {
		p.Legend.Add(b.legend(), l)
	}
	if !b.marked() {
		return nil
	}
	// Each stretch of slices beyond the limit is drawn over the line, thick,
	// with a triangle where it begins: where the limit was crossed.
	var crossed plotter.XYs
	for _, st := range b.stretches(y, series...) {
		crossed = append(crossed, plotter.XY{X: st[0], Y: y})
		if st[1] > st[0] {
			stretch, err := plotter.NewLine(plotter.XYs{{X: st[0], Y: y}, {X: st[1], Y: y}})
			if err != nil {
				return err
			}
			stretch.Color, stretch.Width = c, vg.Points(3)
			p.Add(stretch)
		}
	}
	if len(crossed) == 0 {
		return nil
	}
	s, err := plotter.NewScatter(crossed)
	if err != nil {
		return err
	}
	glyph := draw.GlyphStyle{Color: c, Radius: vg.Points(3), Shape: draw.PyramidGlyph{}}
	if !b.upper() {
		glyph.Shape = invertedTriangle{}
	}
	s.GlyphStyle = glyph
	p.Add(s)
	return nil
}

// stretches are the spans of time, [from, to), over which the slices of
// each series went beyond the bound at y: from the start of the first
// slice beyond to the start of the next slice not (the last slice's
// start, at the series' end).
func (b bound) stretches(y float64, series ...[]bucket) [][2]float64 {
	var out [][2]float64
	for _, bs := range series {
		for k := 0; k < len(bs); k++ {
			if !b.beyond(bs[k], y) {
				continue
			}
			from := k
			for k+1 < len(bs) && b.beyond(bs[k+1], y) {
				k++
			}
			to := bs[k].t
			if k+1 < len(bs) {
				to = bs[k+1].t
			}
			out = append(out, [2]float64{bs[from].t, to})
		}
	}
	return out
}

// legend is the bound's entry in a plot's legend.
func (b bound) legend() string {
	if !b.met {
		return b.label + ": not met"
	}
	return b.label
}

// invertedTriangle is draw.PyramidGlyph upside down: the value went
// below.
type invertedTriangle struct{}

func (invertedTriangle) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	r := sty.Radius + vg.Length((sty.Radius-vg.Length(sty.Radius*0.5))/2) // sin(π/6) = 0.5, cos(π/6) = 0.866…
	var p vg.Path
	p.Move(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X - vg.Length(r*0.8660254037844386), Y: pt.Y + vg.Length(r/2)})
	p.Line(vg.Point{X: pt.X + vg.Length(r*0.8660254037844386), Y: pt.Y + vg.Length(r/2)})
	p.Close()
	c.Fill(p)
}

// reach is how far above the data a limit still widens a plot's range:
// one further off would flatten the data, and is said in the caption.
const reach = 2

// boundsCaption says what the limits drawn mean, and which lay beyond the
// plot's range (off).
func boundsCaption(drawn int, off []string) string {
	var s string
	if drawn > 0 {
		s = " Dashed lines: the expectations' limits (red: not met); where the value went beyond one the line is drawn thick, and a triangle marks where it crossed."
	}
	if len(off) > 0 {
		s += " Too far above the data to draw: " + strings.Join(off, ", ") + "."
	}
	return s
}

// limitOn is a bound as a plot draws it: in colour c, its marks over the
// slices of series beyond it.
type limitOn struct {
	bound
	c      color.Color
	series [][]bucket
	mirror bool // the other side of a bound on a peak, which its legend entry names already
}

// drawLimits draws the limits whose values, scaled to the plot's unit,
// lie within reach of the data's range [lo, hi], across [x0, x1]; it
// returns the range widened to them, how many it drew, and the
// expectations of those too far off to draw.
func drawLimits(p *plot.Plot, limits []limitOn, scale, lo, hi, x0, x1 float64) (newLo, newHi float64, drawn int, off []string, err error) {
	span := hi - lo
	if span <= 0 {
		span = max(abs(hi), 1)
	}
	newLo, newHi = lo, hi
	for _, l := range limits {
		y := l.value * scale
		if y > hi+(reach-1)*span || y < lo-(reach-1)*span {
			off = append(off, l.text)
			continue
		}
		if err := drawBound(p, l.bound, !l.mirror, y, x0, x1, l.c, l.series...); err != nil {
			return lo, hi, drawn, off, err
		}
		newLo, newHi = min(newLo, y), max(newHi, y)
		drawn++
	}
	return newLo, newHi, drawn, off, nil
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// mirror is the comparison of a bound on −v that says what op says of v.
func mirror(op expect.Op) expect.Op {
	switch op {
	case expect.Less:
		return expect.Greater
	case expect.LessEqual:
		return expect.GreaterEqual
	case expect.Greater:
		return expect.Less
	}
	return expect.LessEqual
}
