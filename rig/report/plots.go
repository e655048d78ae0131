package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/hilrig/hilrig/emulator/detmath"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/rig/record"
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
	p.Legend.TextStyle.Font.Size = vg.Points(10) // as the ticks': the limits' entries are long
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

// svg draws p. gonum panics on a range it cannot draw (values so large
// that padding an axis does not widen it): that plot is lost, not the
// page.
func svg(p *plot.Plot) (_ []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: cannot be drawn (%v)", p.Title.Text, r)
		}
	}()
	c := vgsvg.New(plotWidth, plotHeight)
	m := newMergingCanvas(c)
	p.Draw(draw.New(m))
	m.flush()
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

// delayPlot is the one-way delay of each flow's delivered frames against
// the time they were sent, with the dropped frames marked at the bottom.
func delayPlot(td *traceData, bounds []bound) (Figure, error) {
	p := newPlot("One-way delay over time", "time sent (s)", "one-way delay (ms)")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	top, drops := 0.0, 0
	var limits []limitOn
	for i, fs := range td.flows {
		bs := fs.delay.buckets()
		if err := addBand(p, fs.name, bs, colorOf(i)); err != nil {
			return Figure{}, err
		}
		for _, b := range bs {
			top = max(top, b.hi)
		}
		drops += fs.dropped
		for _, b := range on(bounds, delayStats, "flows", fs.name, "delay") {
			limits = append(limits, limitOn{b, colorOf(i), [][]bucket{bs}, false})
		}
	}
	_, top, drawn, off, err := drawLimits(p, limits, 1e3, 0, top, 0, td.end)
	if err != nil {
		return Figure{}, err
	}
	if drops > 0 {
		// A mark per slice of the run is enough to see where: the first
		// frame dropped in it, of the first flow that dropped one.
		var dropped plotter.XYs
		for slot := range buckets + 1 {
			for _, fs := range td.flows {
				if t := fs.drops[slot]; !math.IsNaN(t) {
					dropped = append(dropped, plotter.XY{X: t})
					break
				}
			}
		}
		s, err := plotter.NewScatter(dropped)
		if err != nil {
			return Figure{}, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: dropColor, Radius: vg.Points(3), Shape: draw.CrossGlyph{}}
		p.Add(s)
		p.Legend.Add(fmt.Sprintf("dropped (%d)", drops), s)
	}
	headroom(p, top, len(td.flows)+1+drawn)
	svg, err := svg(p)
	return Figure{Title: "One-way delay over time", Caption: "Each flow's delivered frames by the time they were sent: the mean delay in each slice of the run, shaded from the smallest to the largest; dropped frames are the crosses at 0." + boundsCaption(drawn, off), SVG: svg}, err
}

// addBand draws a thinned series: its mean as a line, and the range from
// its smallest to its largest value shaded.
func addBand(p *plot.Plot, name string, bs []bucket, c color.RGBA) error {
	if len(bs) == 0 {
		return nil
	}
	var top, bottom plotter.XYs
	spread := false
	for _, b := range bs {
		top = append(top, plotter.XY{X: b.t, Y: b.hi})
		spread = spread || b.hi > b.lo
	}
	if spread {
		for k := len(bs) - 1; k >= 0; k-- {
			bottom = append(bottom, plotter.XY{X: bs[k].t, Y: bs[k].lo})
		}
		poly, err := plotter.NewPolygon(append(top, bottom...))
		if err != nil {
			return err
		}
		// Translucent: non-premultiplied (an RGBA with a colour above its
		// alpha is no colour: vgsvg wrote it purple, doubly transparent).
		poly.Color, poly.LineStyle.Width = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x50}, 0
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
// lines do not cover the data: the legend's entries, from the top, take
// legendLine each of the plot's data area, some 160 points high (the
// plot's height less its title and x axis).
func headroom(p *plot.Plot, top float64, entries int) {
	const legendLine, area = 12.0, 160.0
	if top > 0 {
		p.Y.Max = top / (1 - min(float64(entries)*legendLine/area, 0.7))
	}
}

// cdfPlot is the distribution of each flow's one-way delay, on a
// logarithmic axis: a run's delays span decades (a 4 ms baseline, a 1 s
// hold), and a linear axis gives the baseline a pixel.
func cdfPlot(td *traceData, bounds []bound) (Figure, error) {
	p := newPlot("Delay distribution", "one-way delay (ms)", "fraction of delivered frames")
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	lo, hi := math.Inf(1), 0.0
	widest := 1.0 // the largest ratio of a flow's greatest delay to its least
	for i, fs := range td.flows {
		x, y := fs.spread.cdf()
		if err := addLine(p, fs.name, x, y, colorOf(i), false); err != nil {
			return Figure{}, err
		}
		if len(x) > 0 {
			lo, hi = min(lo, x[0]), max(hi, x[len(x)-1])
			widest = max(widest, x[len(x)-1]/x[0])
		}
	}
	logScale := lo > 0 && hi >= lo
	// A limit on a delay is a vertical line: the curve crosses it at the
	// fraction of frames within it.
	drawn := 0
	var off []string
	for i, fs := range td.flows {
		for _, b := range on(bounds, delayStats, "flows", fs.name, "delay") {
			v := b.value * 1e3
			if !logScale || v < lo/10 || v > hi*10 {
				off = append(off, b.text)
				continue
			}
			c := color.Color(colorOf(i))
			if !b.met {
				c = limitColor
			}
			l, err := plotter.NewLine(plotter.XYs{{X: v, Y: 0}, {X: v, Y: 1}})
			if err != nil {
				return Figure{}, err
			}
			l.Color, l.Width, l.Dashes = c, vg.Points(1), []vg.Length{vg.Points(6), vg.Points(3)}
			p.Add(l)
			lo, hi = min(lo, v), max(hi, v)
			drawn++
		}
	}
	if logScale {
		// Room on either side, and for one value alone a range at all.
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
		p.X.Min, p.X.Max = lo/1.15, hi*1.15
	}
	caption := "The fraction of each flow's delivered frames whose one-way delay was at most x: the empirical distribution, counted in " + fmt.Sprint(cdfBins) + " parts of each flow's range, equal on the logarithmic axis"
	if logScale && widest > 1 {
		caption += fmt.Sprintf(" (to within %.2g %% of x here)", 100*(detmath.Pow(widest, 1.0/cdfBins)-1))
	}
	caption += "."
	if drawn > 0 {
		caption += " Dashed lines: the expectations' limits on a flow's delay, in its colour (red: not met); its curve crosses one at the fraction of its frames within it."
	}
	if len(off) > 0 {
		caption += " Too far from the data to draw: " + strings.Join(off, ", ") + "."
	}
	svg, err := svg(p)
	return Figure{Title: "Delay distribution", Caption: caption, SVG: svg}, err
}

// logTicks marks a logarithmic axis at 1, 2 and 5 times the powers of ten,
// labelled, and at the other whole multiples, unlabelled; over more than
// three decades only the powers of ten are labelled, and within less than
// one every whole multiple is. Where no multiple falls in the range at
// all, the default ticks do.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	if !(min > 0) || !(max > min) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	decades := detmath.Log10(max / min)
	var ticks []plot.Tick
	labels := 0
	for e := math.Floor(detmath.Log10(min)); e <= math.Ceil(detmath.Log10(max)); e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * detmath.Pow(10, e)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || decades <= 3 && (m == 2 || m == 5) || decades < 1 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
				labels++
			}
			ticks = append(ticks, t)
		}
	}
	if labels == 0 {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	return ticks
}

// cdfBins is how many parts of its range a flow's delay distribution is
// counted in, equal on the plot's logarithmic axis: twice as many as the
// plot's width has points, so that the curve is where the exact one is
// to within half a point.
const cdfBins = 1200

// inFlightPlot is how many of each flow's frames were inside the network
// over the run: queued at a hop, being sent, or propagating.
func inFlightPlot(td *traceData) (Figure, error) {
	p := newPlot("Frames in the network", "time (s)", "frames in flight, mean")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	top := 0.0
	width := td.end / inFlightSlices
	for i, fs := range td.flows {
		if width <= 0 {
			break
		}
		x, y := make([]float64, len(fs.inFlight)), make([]float64, len(fs.inFlight))
		for k, spent := range fs.inFlight {
			x[k], y[k] = float64(k)*width, spent/width
			top = max(top, y[k])
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
	return Figure{Title: "Frames in the network", Caption: "Each flow's frames between entering the network and leaving it, on average over each slice of the run (the time they spent inside, over the slice's length): the depth of the queues they wait in, plus those on the wire. Dropped frames never count.", SVG: svg}, err
}

// queuePlot is what each hop held over time: the bytes waiting for its
// serialiser, sampled every 10 ms of the run (hops that never held
// anything are left out).
func queuePlot(qd *signalsData, bounds []bound) (Figure, bool, error) {
	p := newPlot("Queue depth", "time (s)", "bytes waiting")
	p.X.Min, p.X.Max, p.Y.Min = 0, qd.end, 0
	top, shown := 0.0, 0
	var limits []limitOn
	for _, col := range qd.columns {
		hop, ok := strings.CutSuffix(col, ".queue_bytes")
		if !ok {
			continue
		}
		var x, y []float64
		bs := qd.series[col].buckets()
		for _, b := range bs {
			x, y = append(x, b.t), append(y, b.hi)
		}
		if len(y) == 0 || slices.Max(y) == 0 {
			continue
		}
		top = max(top, slices.Max(y))
		l, err := plotter.NewLine(xys(x, y))
		if err != nil {
			return Figure{}, false, err
		}
		l.Color, l.Width, l.StepStyle = colorOf(shown), vg.Points(1.2), plotter.PostStep
		p.Add(l)
		p.Legend.Add(hop, l)
		for _, b := range bounds {
			if len(b.path) == 3 && b.path[0] == "hops" && b.path[1] == hop && b.path[2] == "peak_queue_bytes" {
				b.path = append(b.path[:2:2], "max") // the peak is the most in any slice
				limits = append(limits, limitOn{b, colorOf(shown), [][]bucket{bs}, false})
			}
		}
		shown++
	}
	if shown == 0 {
		return Figure{}, false, nil
	}
	_, top, drawn, off, err := drawLimits(p, limits, 1, 0, top, 0, qd.end)
	if err != nil {
		return Figure{}, false, err
	}
	headroom(p, top, shown+drawn)
	svg, err := svg(p)
	return Figure{Title: "Queue depth", Caption: "The bytes waiting for each hop's serialiser (not counting the frame being sent), the most at once in each slice of the run, from samples every 10 ms." + boundsCaption(drawn, off), SVG: svg}, true, err
}

// queueColumns are the columns of a queues file the queue plot draws.
func queueColumns(columns []string) []string {
	var out []string
	for _, c := range columns {
		if strings.HasSuffix(c, ".queue_bytes") {
			out = append(out, c)
		}
	}
	return out
}

// latenessPlot is, in real time, how late frames were written to their
// device after the engine released them.
func latenessPlot(td *traceData, bounds []bound) (Figure, bool, error) {
	p := newPlot("Executor lateness", "time due (s)", "release lateness (µs)")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	any, top := false, 0.0
	var series [][]bucket
	for i, fs := range td.flows {
		bs := fs.late.buckets()
		if len(bs) == 0 {
			continue
		}
		any = true
		if err := addBand(p, fs.name, bs, colorOf(i)); err != nil {
			return Figure{}, false, err
		}
		for _, b := range bs {
			top = max(top, b.hi)
		}
		series = append(series, bs)
	}
	if !any {
		return Figure{}, false, nil
	}
	// The summary's release lateness is every flow's.
	var limits []limitOn
	for _, b := range on(bounds, delayStats, "timing", "release_lateness") {
		limits = append(limits, limitOn{b, color.Black, series, false})
	}
	_, top, drawn, off, err := drawLimits(p, limits, 1e6, 0, top, 0, td.end)
	if err != nil {
		return Figure{}, false, err
	}
	headroom(p, top, len(td.flows)+drawn)
	svg, err := svg(p)
	return Figure{Title: "Executor lateness", Caption: "How long after the engine released each frame (t_due) its egress write returned (t_recv), per flow: the mean in each slice of the run, shaded from the least to the most late." + boundsCaption(drawn, off), SVG: svg}, true, err
}

// signalPlot is a model's signal in the cut run against the uncut model
// run alongside.
func signalPlot(sd *signalsData, endpoint, signal string, bounds []bound) (Figure, bool, error) {
	cut := sd.series[endpoint+"."+signal]
	if cut == nil {
		cut = sd.series[endpoint+".hardware."+signal]
	}
	ideal := sd.series[endpoint+".ideal."+signal]
	if cut == nil {
		return Figure{}, false, nil
	}
	title := fmt.Sprintf("%s: %s", endpoint, signal)
	p := newPlot(title, "time (s)", signal)
	p.X.Min, p.X.Max = 0, sd.end
	lo, hi := 0.0, 0.0
	bs := cut.buckets()
	if err := addBand(p, "cut (hardware in the loop)", bs, colorOf(0)); err != nil {
		return Figure{}, false, err
	}
	for _, b := range bs {
		lo, hi = min(lo, b.lo), max(hi, b.hi)
	}
	caption := fmt.Sprintf("The signal %s of model endpoint %s at every exchange", signal, endpoint)
	if ideal != nil {
		var t, v []float64
		for _, b := range ideal.buckets() {
			t, v = append(t, b.t), append(v, b.mean)
			lo, hi = min(lo, b.lo), max(hi, b.hi)
		}
		if err := addLine(p, "uncut reference", t, v, color.RGBA{0, 0, 0, 0xff}, true); err != nil {
			return Figure{}, false, err
		}
		caption += ", against the uncut model run alongside (dashed)"
	}
	// A peak bounds the value either way.
	var limits []limitOn
	for _, b := range on(bounds, signalStats, "models", endpoint, signal) {
		limits = append(limits, limitOn{b, colorOf(0), [][]bucket{bs}, false})
		if b.stat() == "peak" {
			below := b
			below.value, below.op = -b.value, mirror(b.op)
			below.path = append(slices.Clone(b.path[:len(b.path)-1]), "min")
			limits = append(limits, limitOn{below, colorOf(0), [][]bucket{bs}, true})
		}
	}
	lo, hi, drawn, off, err := drawLimits(p, limits, 1, lo, hi, 0, sd.end)
	if err != nil {
		return Figure{}, false, err
	}
	if hi > lo {
		p.Y.Min, p.Y.Max = lo, hi+float64((hi-lo)*0.25*float64(1+drawn))
	}
	svg, err := svg(p)
	return Figure{Title: title, Caption: caption + "." + boundsCaption(drawn, off), SVG: svg}, true, err
}

// signalColumns are the columns of a signals file that the models'
// plots draw: for each signal plotted (plottedSignals), the cut run's and
// the uncut reference's.
func signalColumns(models []record.ModelSummary) func(columns []string) []string {
	return func(columns []string) []string {
		var out []string
		for _, m := range models {
			for _, signal := range plottedSignals(columns, m) {
				out = append(out, m.Endpoint+"."+signal, m.Endpoint+".hardware."+signal, m.Endpoint+".ideal."+signal)
			}
		}
		return out
	}
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
