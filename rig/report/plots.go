package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

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

// delayPlot is the one-way delay of each flow's delivered frames against
// the time they were sent, with the dropped frames marked at the bottom.
func delayPlot(td *traceData) (Figure, error) {
	p := newPlot("One-way delay over time", "time sent (s)", "one-way delay (ms)")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	top, drops := 0.0, 0
	for i, fs := range td.flows {
		bs := fs.delay.buckets()
		if err := addBand(p, fs.name, bs, colorOf(i)); err != nil {
			return Figure{}, err
		}
		for _, b := range bs {
			top = max(top, b.hi)
		}
		drops += fs.dropped
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
		p.Y.Max = top * (1 + float64(0.09*float64(entries)))
	}
}

// cdfPlot is the distribution of each flow's one-way delay.
func cdfPlot(td *traceData) (Figure, error) {
	p := newPlot("Delay distribution", "one-way delay (ms)", "fraction of delivered frames")
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = false, false
	for i, fs := range td.flows {
		x, y := fs.spread.cdf()
		if err := addLine(p, fs.name, x, y, colorOf(i), false); err != nil {
			return Figure{}, err
		}
	}
	svg, err := svg(p)
	return Figure{Title: "Delay distribution", Caption: "The fraction of each flow's delivered frames whose one-way delay was at most x (the empirical CDF, to within a 1/" + fmt.Sprint(cdfBins) + " of its range).", SVG: svg}, err
}

// cdfBins is how many parts of its range a flow's delay distribution is
// counted in: twice as many as the plot's width has points, so that the
// curve is where the exact one is to within half a point.
const cdfBins = 2 * buckets

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
func queuePlot(qd *signalsData) (Figure, bool, error) {
	p := newPlot("Queue depth", "time (s)", "bytes waiting")
	p.X.Min, p.X.Max, p.Y.Min = 0, qd.end, 0
	top, shown := 0.0, 0
	for _, col := range qd.columns {
		hop, ok := strings.CutSuffix(col, ".queue_bytes")
		if !ok {
			continue
		}
		var x, y []float64
		for _, b := range qd.series[col].buckets() {
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
		shown++
	}
	if shown == 0 {
		return Figure{}, false, nil
	}
	headroom(p, top, shown)
	svg, err := svg(p)
	return Figure{Title: "Queue depth", Caption: "The bytes waiting for each hop's serialiser (not counting the frame being sent), the most at once in each slice of the run, from samples every 10 ms.", SVG: svg}, true, err
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
func latenessPlot(td *traceData) (Figure, bool, error) {
	p := newPlot("Executor lateness", "time due (s)", "release lateness (µs)")
	p.X.Min, p.X.Max, p.Y.Min = 0, td.end, 0
	any, top := false, 0.0
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
	if hi > lo {
		p.Y.Min, p.Y.Max = lo, hi+float64((hi-lo)*0.25)
	}
	svg, err := svg(p)
	return Figure{Title: title, Caption: caption + ".", SVG: svg}, true, err
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
