package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/hilrig/hilrig/emulator/plant"
)

// Figure is a plot drawn as SVG, with its caption.
type Figure struct {
	Title   string
	Caption string
	SVG     []byte
}

// The plots' size, and how many slices of the run a time series is
// thinned to (envelope): about one per horizontal point.
const (
	plotWidth  = 7.5 * vg.Inch
	plotHeight = 3 * vg.Inch
	buckets    = 600
)

// palette is the flows' and signals' colours: Tableau 10, which tells
// its first colours apart in print and for most colour-blind readers.
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0x94, 0x67, 0xbd, 0xff},
	{0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
	{0x17, 0xbe, 0xcf, 0xff},
}

var dropColor = color.RGBA{0xd6, 0x27, 0x28, 0xff}

func colorOf(i int) color.RGBA { return palette[i%len(palette)] }

// newPlot is a plot with the report's look: sans-serif text, a grid, the
// legend at the top left.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, x, y
	for _, s := range []*draw.TextStyle{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		s.Font.Variant = "Sans"
	}
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// svg draws p.
func svg(p *plot.Plot) ([]byte, error) {
	c := vgsvg.New(plotWidth, plotHeight)
	p.Draw(draw.New(c))
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func xys(x, y []float64) plotter.XYs {
	out := make(plotter.XYs, len(x))
	for i := range x {
		out[i] = plotter.XY{X: x[i], Y: y[i]}
	}
	return out
}

func addLine(p *plot.Plot, name string, x, y []float64, c color.Color, dashed bool) error {
	if len(x) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys(x, y))
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// byTime sorts a series of (t, v) by t.
func byTime(t, v []float64) ([]float64, []float64) {
	idx := make([]int, len(t))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return t[idx[a]] < t[idx[b]] })
	ts, vs := make([]float64, len(t)), make([]float64, len(t))
	for i, j := range idx {
		ts[i], vs[i] = t[j], v[j]
	}
	return ts, vs
}

func scale(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

// delayPlot is the one-way delay of each flow's delivered frames against
// the time they were sent, with the dropped frames marked at the bottom.
func delayPlot(td *traceData) (Figure, error) {
	p := newPlot("One-way delay over time", "time sent (s)", "one-way delay (ms)")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	top, drops := 0.0, 0
	var dropped plotter.XYs
	for i, fs := range td.flows {
		t, d := byTime(fs.sent, scale(fs.delay, 1e3))
		bs := thin(t, d, td.end, buckets)
		if err := addBand(p, fs.name, bs, colorOf(i)); err != nil {
			return Figure{}, err
		}
		for _, b := range bs {
			top = max(top, b.hi)
		}
		for _, s := range fs.dropped {
			dropped = append(dropped, plotter.XY{X: s})
		}
		drops += len(fs.dropped)
	}
	if len(dropped) > 0 {
		// A mark per slice of the run is enough to see where.
		s, err := plotter.NewScatter(thinMarks(dropped, td.end, buckets))
		if err != nil {
			return Figure{}, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: dropColor, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("dropped (%d)", drops), s)
	}
	headroom(p, top, len(td.flows)+1)
	svg, err := svg(p)
	return Figure{Title: "One-way delay over time", Caption: "Each flow's delivered frames by the time they were sent: the mean delay in each slice of the run, shaded from the smallest to the largest; dropped frames are the crosses at 0.", SVG: svg}, err
}

// addBand draws a thinned series: its mean as a line, and the range from
// its smallest to its largest value shaded.
func addBand(p *plot.Plot, name string, bs []bucket, c color.RGBA) error {
	if len(bs) == 0 {
		return nil
	}
	var band plotter.XYs
	spread := false
	for _, b := range bs {
		band = append(band, plotter.XY{X: b.t, Y: b.hi})
		spread = spread || b.hi > b.lo
	}
	if spread {
		for k := len(bs) - 1; k >= 0; k-- {
			band = append(band, plotter.XY{X: bs[k].t, Y: bs[k].lo})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return err
		}
		shade := c
		shade.A = 0x50
		poly.Color, poly.LineStyle.Width = shade, 0
		p.Add(poly)
	}
	x, y := make([]float64, len(bs)), make([]float64, len(bs))
	for k, b := range bs {
		x[k], y[k] = b.t, b.mean
	}
	if len(bs) < sparse {
		// Few points: each is marked, and one alone is seen at all.
		s, err := plotter.NewScatter(xys(x, y))
		if err != nil {
			return err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(1.8), Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	return addLine(p, name, x, y, c, false)
}

// sparse is how few points a series has for each to be marked.
const sparse = 60

// headroom raises the top of the y axis above top so that the legend's
// lines do not cover the data.
func headroom(p *plot.Plot, top float64, entries int) {
	if top > 0 {
		p.Y.Max = top * (1 + 0.09*float64(entries))
	}
}

func thinMarks(marks plotter.XYs, end float64, n int) plotter.XYs {
	if end <= 0 {
		return marks
	}
	seen := map[int]bool{}
	var out plotter.XYs
	for _, m := range marks {
		if b := int(m.X / end * float64(n)); !seen[b] {
			seen[b] = true
			out = append(out, m)
		}
	}
	return out
}

// cdfPlot is the distribution of each flow's one-way delay.
func cdfPlot(td *traceData) (Figure, error) {
	p := newPlot("Delay distribution", "one-way delay (ms)", "fraction of delivered frames")
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	for i, fs := range td.flows {
		if len(fs.delay) == 0 {
			continue
		}
		d := slices.Clone(fs.delay)
		slices.Sort(d)
		var x, y []float64
		n := len(d)
		stride := max(1, n/(2*buckets))
		for k := 0; k < n; k += stride {
			x, y = append(x, d[k]*1e3), append(y, float64(k+1)/float64(n))
		}
		x, y = append(x, d[n-1]*1e3), append(y, 1)
		if err := addLine(p, fs.name, x, y, colorOf(i), false); err != nil {
			return Figure{}, err
		}
	}
	svg, err := svg(p)
	return Figure{Title: "Delay distribution", Caption: "The fraction of each flow's delivered frames whose one-way delay was at most x (the empirical CDF).", SVG: svg}, err
}

// inFlightPlot is how many of each flow's frames were inside the network
// at each instant: queued at a hop, being sent, or propagating.
func inFlightPlot(td *traceData) (Figure, error) {
	p := newPlot("Frames in the network", "time (s)", "frames in flight")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	top := 0.0
	for i, fs := range td.flows {
		var t, n []float64
		level := 0
		for _, s := range fs.inFlight {
			level += s.d
			t, n = append(t, s.t), append(n, float64(level))
		}
		var x, y []float64
		// The level changes at every frame: its peak in each slice is
		// what can be read.
		for _, b := range inSlices(t, n, td.end, buckets/3) {
			x, y = append(x, b.t), append(y, b.hi)
			top = max(top, b.hi)
		}
		l, err := plotter.NewLine(xys(x, y))
		if err != nil {
			return Figure{}, err
		}
		l.Color, l.Width, l.StepStyle = colorOf(i), vg.Points(1.2), plotter.PostStep
		p.Add(l)
		p.Legend.Add(fs.name, l)
	}
	headroom(p, top, len(td.flows))
	svg, err := svg(p)
	return Figure{Title: "Frames in the network", Caption: "Each flow's frames between entering the network and leaving it, the most at once in each slice of the run: the depth of the queues they wait in, plus those on the wire. Dropped frames never count.", SVG: svg}, err
}

// queuePlot is what each hop held over time: the bytes waiting for its
// serialiser, sampled every 10 ms of the run (hops that never held
// anything are left out).
func queuePlot(qd *signalsData, end float64) (Figure, bool, error) {
	p := newPlot("Queue depth", "time (s)", "bytes waiting")
	p.X.Min, p.X.Max, p.Y.Min = 0, max(end, qd.t[len(qd.t)-1]), 0
	top, shown := 0.0, 0
	for _, col := range qd.columns {
		hop, ok := strings.CutSuffix(col, ".queue_bytes")
		if !ok {
			continue
		}
		v := qd.column(col)
		if slices.Max(v) == 0 {
			continue
		}
		var x, y []float64
		for _, b := range inSlices(qd.t, v, p.X.Max, buckets/3) {
			x, y = append(x, b.t), append(y, b.hi)
			top = max(top, b.hi)
		}
		l, err := plotter.NewLine(xys(x, y))
		if err != nil {
			return Figure{}, false, err
		}
		l.Color, l.Width, l.StepStyle = colorOf(shown), vg.Points(1.2), plotter.PostStep
		p.Add(l)
		p.Legend.Add(hop, l)
		shown++
	}
	if shown == 0 {
		return Figure{}, false, nil
	}
	headroom(p, top, shown)
	svg, err := svg(p)
	return Figure{Title: "Queue depth", Caption: "The bytes waiting for each hop's serialiser (not counting the frame being sent), the most at once in each slice of the run, from samples every 10 ms.", SVG: svg}, true, err
}

// latenessPlot is, in real time, how late frames were written to their
// device after the engine released them.
func latenessPlot(td *traceData) (Figure, bool, error) {
	p := newPlot("Executor lateness", "time due (s)", "release lateness (µs)")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	any, top := false, 0.0
	for i, fs := range td.flows {
		if len(fs.late) == 0 {
			continue
		}
		any = true
		t, v := make([]float64, len(fs.late)), make([]float64, len(fs.late))
		for k, pt := range fs.late {
			t[k], v[k] = pt.t, pt.v*1e6
		}
		t, v = byTime(t, v)
		bs := thin(t, v, td.end, buckets)
		if err := addBand(p, fs.name, bs, colorOf(i)); err != nil {
			return Figure{}, false, err
		}
		for _, b := range bs {
			top = max(top, b.hi)
		}
	}
	if !any {
		return Figure{}, false, nil
	}
	headroom(p, top, len(td.flows))
	svg, err := svg(p)
	return Figure{Title: "Executor lateness", Caption: "How long after the engine released each frame (t_due) its egress write returned (t_recv), per flow: the mean in each slice of the run, shaded from the least to the most late.", SVG: svg}, true, err
}

// signalPlot is a model's signal in the cut run against the uncut model
// run alongside.
func signalPlot(sd *signalsData, endpoint, signal string) (Figure, bool, error) {
	cut := sd.column(endpoint + "." + signal)
	if cut == nil {
		cut = sd.column(endpoint + ".hardware." + signal)
	}
	ideal := sd.column(endpoint + ".ideal." + signal)
	if cut == nil {
		return Figure{}, false, nil
	}
	title := fmt.Sprintf("%s: %s", endpoint, signal)
	p := newPlot(title, "time (s)", signal)
	end := sd.t[len(sd.t)-1]
	p.X.Min, p.X.Max = 0, end
	lo, hi := 0.0, 0.0
	if err := addBand(p, "cut (hardware in the loop)", thin(sd.t, cut, end, buckets), colorOf(0)); err != nil {
		return Figure{}, false, err
	}
	for _, v := range cut {
		lo, hi = min(lo, v), max(hi, v)
	}
	caption := fmt.Sprintf("The signal %s of model endpoint %s at every exchange", signal, endpoint)
	if ideal != nil {
		var t, v []float64
		for _, b := range thin(sd.t, ideal, end, buckets) {
			t, v = append(t, b.t), append(v, b.mean)
		}
		if err := addLine(p, "uncut reference", t, v, color.RGBA{0, 0, 0, 0xff}, true); err != nil {
			return Figure{}, false, err
		}
		for _, x := range ideal {
			lo, hi = min(lo, x), max(hi, x)
		}
		caption += ", against the uncut model run alongside (dashed)"
	}
	if hi > lo {
		p.Y.Min, p.Y.Max = lo, hi+(hi-lo)*0.25
	}
	svg, err := svg(p)
	return Figure{Title: title, Caption: caption + ".", SVG: svg}, true, err
}

// CouplingPlot draws a coupling analysis (hilrig couple): distortion and
// sensitivity in dB against frequency, one line per cut, one panel each.
func CouplingPlot(title string, results []*plant.Analysis) ([]byte, error) {
	panels := []struct {
		name string
		get  func(a *plant.Analysis, i int) float64
	}{
		{"distortion |Θ| (dB)", func(a *plant.Analysis, i int) float64 { return plant.DB(a.Distortion[i]) }},
		{"sensitivity |Sr| (dB)", func(a *plant.Analysis, i int) float64 { return plant.DB(a.Sensitivity[i]) }},
	}
	c := vgsvg.New(plotWidth, 2*plotHeight+vg.Inch/4)
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadY: vg.Points(10), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
	for k, panel := range panels {
		name := title
		if k > 0 {
			name = ""
		}
		p := newPlot(name, "ω (rad/s)", panel.name)
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Left = false
		for ci, a := range results {
			var x, y []float64
			for i, om := range a.Omega {
				v := panel.get(a, i)
				if math.IsInf(v, 0) || math.IsNaN(v) {
					continue
				}
				x, y = append(x, om), append(y, v)
			}
			if err := addLine(p, a.Cut, x, y, colorOf(ci), false); err != nil {
				return nil, err
			}
		}
		p.Draw(tiles.At(dc, 0, k))
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
