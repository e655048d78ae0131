package report

import (
	"bytes"
	"image"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
)

// judged is a run of 10 s of virtual time that took 4.2 ms, as a suite
// judged it.
func judged(name string, passed bool, checks ...Check) *Run {
	s := &record.Summary{Profile: "bottleneck", Clock: "virtual", Stopped: "duration"}
	s.Duration = 10
	return &Run{Summary: s, Verdict: &Verdict{Name: name, Passed: passed, ElapsedS: 0.0042, Expect: checks}}
}

// TestPageSummaryFirst (issue 22, item 7): the page opens with a table
// of the runs, the failed first, each with the run's own time and the
// wall time it took, labelled (a virtual-time run's was "0.00 s"), and
// what failed; then each run's details, folded but for the failed ones.
func TestPageSummaryFirst(t *testing.T) {
	failed := Check{Text: "flows.m2s.delay.p95 < 60ms", Measured: "65.7654ms", Limit: "60ms"}
	page := Page{Title: "hilrig test ci", Runs: []*Run{
		judged("fast", true), judged("plateau-budget", false, failed, Check{Text: "flows.m2s.lost == 0", OK: true, Measured: "0"}), judged("slow", true),
	}}
	var b bytes.Buffer
	if err := Write(&b, page); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	rows := regexp.MustCompile(`<tr class="(pass|fail)"><td>[^<]*</td><td><a href="#(run-\d)">([^<]*)</a></td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td>(.*?)</td></tr>`).FindAllStringSubmatch(html, -1)
	var got []string
	for _, r := range rows {
		got = append(got, strings.Join(r[1:], " | "))
	}
	want := []string{
		"fail | run-2 | plateau-budget | 10s virtual | 4.2ms | <code>flows.m2s.delay.p95 &lt; 60ms: measured 65.7654ms</code>",
		"pass | run-1 | fast | 10s virtual | 4.2ms | ",
		"pass | run-3 | slow | 10s virtual | 4.2ms | ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the summary table:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sections := regexp.MustCompile(`<details class="run"( open)?>\n<summary><h2>.*?</span> ([^<]*)</h2>`).FindAllStringSubmatch(html, -1)
	var order []string
	for _, s := range sections {
		order = append(order, s[2]+s[1])
	}
	if !slices.Equal(order, []string{"plateau-budget open", "fast", "slow"}) {
		t.Errorf("the runs' details: %q, want the failed first and open, the others folded", order)
	}
	if !strings.Contains(html, "10s in 4.2ms of wall time") {
		t.Error("the run's facts do not say its wall time")
	}
}

// TestLimitsDrawn: a plot of a value an expectation set a limit on draws
// the limit, red when it was not met, and marks where the value crossed
// it (a thick stretch of the line, a triangle where it begins); a limit
// far above the data is said in the caption rather than flatten the
// plot; a limit on another flow, or not on how far the value goes, is
// drawn without marks.
func TestLimitsDrawn(t *testing.T) {
	// Flow a waits 2 ms, but 9 ms from 4 s to 6 s; b always 3 ms.
	var trace strings.Builder
	trace.WriteString(record.TraceHeader + "\n")
	for i := range 1000 {
		sent := float64(i) * 0.01
		delay := 0.002
		if sent >= 4 && sent < 6 {
			delay = 0.009
		}
		trace.WriteString(traceLine("a", i, sent, delay))
		trace.WriteString(traceLine("b", i, sent, 0.003))
	}
	td, err := parseTrace(strings.NewReader(trace.String()), 10)
	if err != nil {
		t.Fatal(err)
	}
	bounds := boundsOf(&Verdict{Expect: []Check{
		{Text: "flows.a.delay.max < 5ms"},            // not met: crossed at 4 s
		{Text: "flows.b.delay.p99 < 4ms", OK: true},  // met: never crossed
		{Text: "flows.a.delay.min >= 2ms", OK: true}, // met, on the edge: never crossed
		{Text: "flows.b.delay.max > 1ms", OK: true},  // a lower bound on the max: no marks
		{Text: "flows.a.delay.mean < 1s", OK: true},  // too far to draw
		{Text: "flows.a.lost == 0", OK: true},        // no number to draw
	}})
	if len(bounds) != 5 {
		t.Fatalf("%d bounds: %+v", len(bounds), bounds)
	}
	fig, err := delayPlot(td, bounds)
	if err != nil {
		t.Fatal(err)
	}
	svg := string(fig.SVG)
	for _, want := range []string{">a delay max &lt; 5ms: not met<", ">b delay p99 &lt; 4ms<", ">a delay min &gt;= 2ms<", ">b delay max &gt; 1ms<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the legend lacks %q", want)
		}
	}
	if strings.Contains(svg, "mean") || !strings.Contains(fig.Caption, "Too far above the data to draw: flows.a.delay.mean < 1s.") {
		t.Errorf("the limit far above: caption %q", fig.Caption)
	}
	// The crossing: from 4 s to 6 s (to within a slice of the run), one
	// thick red stretch and its triangle; the others never crossed.
	series := map[string][]bucket{"a": td.flows[0].delay.buckets(), "b": td.flows[1].delay.buckets()}
	for _, b := range bounds[:3] {
		stretches := b.stretches(b.value*1e3, series[b.path[1]])
		switch {
		case b.met && len(stretches) != 0:
			t.Errorf("%s: met, crossed over %v", b.text, stretches)
		case !b.met && (len(stretches) != 1 || math.Abs(stretches[0][0]-4) > 10.0/buckets || math.Abs(stretches[0][1]-6) > 10.0/buckets):
			t.Errorf("%s: crossed over %v, want from 4 s to 6 s", b.text, stretches)
		}
	}
	if n := strings.Count(svg, `style="fill:none;stroke:#D62728;stroke-width:3"`); n != 1 {
		t.Errorf("%d thick red stretches, want 1", n)
	}
	if n := strings.Count(svg, `style="fill:#D62728"`); n != 1 {
		t.Errorf("%d red fills (the crossing's triangle), want 1", n)
	}
	// The distribution draws the limits drawn as vertical lines.
	cdf, err := cdfPlot(td, bounds)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(cdf.SVG), "stroke-dasharray:6,3"); n != 4 {
		t.Errorf("%d dashed lines in the delay distribution, want 4 (all but the mean's, 1 s)", n)
	}
}

func traceLine(flow string, seq int, sent, delay float64) string {
	return flow + "," + strconv.Itoa(seq) + ",10," + nine(sent) + "," + nine(sent+delay) + ",delivered\n"
}

// nine writes seconds as hilrig does: nine decimals.
func nine(s float64) string {
	return string(record.AppendSeconds(nil, time.Duration(math.Round(s*1e9))))
}

// TestLogTicks: a logarithmic axis is labelled at 1, 2 and 5 times the
// powers of ten (the linear axis put a delay distribution's ticks at 400,
// 1600 and 2800 ms), at the powers alone over more than three decades,
// at every whole multiple within less than one; with no multiple in the
// range, the default ticks label it.
func TestLogTicks(t *testing.T) {
	for _, tc := range []struct {
		min, max float64
		want     string
	}{
		{5.36, 75.6, "10 20 50"},
		{3.5, 1218, "5 10 20 50 100 200 500 1000"},
		{0.5, 5000, "1 10 100 1000"},
		{5.4, 7.1, "6 7"},
		{0.0021, 0.0098, "0.003 0.004 0.005 0.006 0.007 0.008 0.009"},
	} {
		var labels []string
		for _, tick := range (logTicks{}).Ticks(tc.min, tc.max) {
			if tick.Value < tc.min || tick.Value > tc.max {
				t.Errorf("%v..%v: a tick at %v", tc.min, tc.max, tick.Value)
			}
			if tick.Label != "" {
				labels = append(labels, tick.Label)
			}
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("%v..%v: labels %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
	if ticks := (logTicks{}).Ticks(61, 66); len(ticks) == 0 {
		t.Error("61..66: no ticks")
	}
}

// TestSimplify: a path drawn without the points that move it by nothing
// one can see keeps its ends and every point further than fine from the
// line through those kept, and leaves alone what is not a line.
func TestSimplify(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, step := range []float64{0.01, 0.1, 1, 10} {
		var p vg.Path
		x, y := 0.0, 0.0
		p.Move(vg.Point{X: 0, Y: 0})
		for range 2000 {
			x, y = x+rng.Float64(), y+step*rng.NormFloat64()
			p.Line(vg.Point{X: vg.Length(x), Y: vg.Length(y)})
		}
		p.Arc(vg.Point{X: 5, Y: 5}, 3, 0, math.Pi)
		p.Close()
		q := simplify(p)
		same := func(a, b vg.PathComp) bool { return a.Type == b.Type && a.Pos == b.Pos && a.Radius == b.Radius }
		if !same(q[0], p[0]) || !same(q[len(q)-1], p[len(p)-1]) || !same(q[len(q)-2], p[len(p)-2]) || !same(q[len(q)-3], p[len(p)-3]) {
			t.Fatalf("step %v: the ends or the arc changed", step)
		}
		kept := q[:len(q)-2]
		// Every point of p lies within fine of the segment of the kept
		// line that spans it.
		k := 0
		for _, c := range p[:len(p)-2] {
			for k+1 < len(kept) && kept[k+1].Pos.X < c.Pos.X {
				k++
			}
			if k+1 == len(kept) {
				break
			}
			if d := segmentDistance(c.Pos, kept[k].Pos, kept[k+1].Pos); d > float64(fine)+1e-9 {
				t.Fatalf("step %v: a point %v from the simplified line", step, d)
			}
		}
		t.Logf("step %v: %d of %d points kept", step, len(q), len(p))
	}
}

func segmentDistance(p, a, b vg.Point) float64 {
	dx, dy := float64(b.X-a.X), float64(b.Y-a.Y)
	return math.Abs(dx*float64(p.Y-a.Y)-dy*float64(p.X-a.X)) / math.Hypot(dx, dy)
}

// TestMergingCanvasDrawsTheSame draws a plot into an image directly and
// through the canvas that joins paths drawn alike: the images differ by
// no more than the simplification's twentieth of a point can change a
// pixel's coverage, at 4 pixels a point: a fifth of a pixel's width on
// either edge of a line, some 2·0.2·255 = 102 levels at most where a
// line's edge moved, and on no more than a small share of the pixels.
func TestMergingCanvasDrawsTheSame(t *testing.T) {
	var trace strings.Builder
	trace.WriteString(record.TraceHeader + "\n")
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 5000 {
		trace.WriteString(traceLine("a", i, float64(i)*0.002, 0.002+0.001*rng.ExpFloat64()))
	}
	td, err := parseTrace(strings.NewReader(trace.String()), 10)
	if err != nil {
		t.Fatal(err)
	}
	draw1 := func(merge bool) *image.RGBA {
		p := newPlot("One-way delay over time", "time sent (s)", "one-way delay (ms)")
		if err := addBand(p, "a", td.flows[0].delay.buckets(), colorOf(0)); err != nil {
			t.Fatal(err)
		}
		c := vgimg.NewWith(vgimg.UseWH(plotWidth, plotHeight), vgimg.UseDPI(288))
		var canvas vg.CanvasSizer = c
		var m *mergingCanvas
		if merge {
			m = newMergingCanvas(c)
			canvas = m
		}
		p.Draw(draw.New(canvas))
		if m != nil {
			m.flush()
		}
		return c.Image().(*image.RGBA)
	}
	plain, merged := draw1(false), draw1(true)
	differ, worst := 0, 0
	for i := range plain.Pix {
		d := int(plain.Pix[i]) - int(merged.Pix[i])
		if d != 0 {
			differ++
			worst = max(worst, max(d, -d))
		}
	}
	share := float64(differ) / float64(len(plain.Pix))
	t.Logf("%d of %d channel values differ (%.3f %%), by at most %d", differ, len(plain.Pix), 100*share, worst)
	if worst > 102 || share > 0.01 {
		t.Errorf("the joined paths draw another plot: %.3f %% of the values differ, by up to %d", 100*share, worst)
	}
}

// TestStyleClasses: the page's plots name their styles by class, each
// defined once in the page's style, and no element keeps a style of its
// own.
func TestStyleClasses(t *testing.T) {
	var trace strings.Builder
	trace.WriteString(record.TraceHeader + "\n")
	for i := range 100 {
		trace.WriteString(traceLine("a", i, float64(i)*0.01, 0.002))
	}
	dir := t.TempDir()
	path := dir + "/trace.csv"
	if err := os.WriteFile(path, []byte(trace.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := judged("a", true)
	r.Summary.Flows = []emulator.FlowSummary{{Name: "a", Sent: 100, Delivered: 100}}
	r.TraceFile = path
	var b bytes.Buffer
	if err := Write(&b, Page{Runs: []*Run{r, judged("b", true)}}); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.Contains(html, ` style="`) {
		t.Error("an element keeps a style of its own")
	}
	used := regexp.MustCompile(` class="(p\d+)"`).FindAllStringSubmatch(html, -1)
	if len(used) < 20 {
		t.Fatalf("%d classes used", len(used))
	}
	for _, u := range used {
		if n := strings.Count(html, "figure svg ."+u[1]+" {"); n != 1 {
			t.Errorf("class %s is defined %d times", u[1], n)
		}
	}
}
