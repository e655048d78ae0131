package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/record"
)

// thinInMemory is what a plot showed of a series when the report held it
// whole (before it streamed): sorted by time, kept whole when it has at
// most 2n points, else cut into n equal slices of [0, end), the empty
// ones left out. The envelope must give the same from two passes.
func thinInMemory(t, v []float64, end float64, n int) []bucket {
	idx := make([]int, len(t))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return t[idx[a]] < t[idx[b]] })
	var out []bucket
	if len(t) <= 2*n || end <= 0 {
		for _, i := range idx {
			out = append(out, bucket{t[i], v[i], v[i], v[i]})
		}
		return out
	}
	width := end / float64(n)
	for j := 0; j < len(idx); {
		k := int(t[idx[j]] / width)
		b := bucket{t: float64(k) * width, lo: v[idx[j]], hi: v[idx[j]]}
		sum, m := 0.0, 0
		for ; j < len(idx) && int(t[idx[j]]/width) == k; j++ {
			b.lo, b.hi = min(b.lo, v[idx[j]]), max(b.hi, v[idx[j]])
			sum += v[idx[j]]
			m++
		}
		b.mean = sum / float64(m)
		out = append(out, b)
	}
	return out
}

// TestEnvelope: a series thinned in two passes, in the order it comes, is
// what thinning it whole gave: the same slices with the same extremes,
// and means that differ only by the rounding of sums taken in another
// order (at most m·ε·max|v| for m values).
func TestEnvelope(t *testing.T) {
	const n = 100
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name   string
		points int
		end    float64
		order  string // "sorted", "shuffled"
	}{
		{"empty", 0, 10, "sorted"},
		{"one point", 1, 10, "sorted"},
		{"short, kept whole", 2 * n, 10, "shuffled"},
		{"one point too many to keep whole", 2*n + 1, 10, "sorted"},
		{"long", 10000, 10, "sorted"},
		{"long, in another order", 10000, 10, "shuffled"},
		{"a point at the end", 5000, 5, "sorted"},
		{"no end", 5000, 0, "sorted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, vs := make([]float64, tc.points), make([]float64, tc.points)
			top := 0.0
			for i := range ts {
				ts[i] = tc.end * float64(i) / float64(max(tc.points-1, 1))
				vs[i] = 100*math.Sin(float64(i)/50) + rng.NormFloat64()
				top = max(top, math.Abs(vs[i]))
			}
			if tc.points > 0 {
				vs[tc.points/2] = 1e4 // a spike no slice may lose
				top = 1e4
			}
			if tc.order == "shuffled" {
				rng.Shuffle(len(ts), func(i, j int) { ts[i], ts[j], vs[i], vs[j] = ts[j], ts[i], vs[j], vs[i] })
			}
			var e envelope
			for _, x := range ts {
				e.observe(x)
			}
			e.prepare(tc.end, n, true)
			for i := range ts {
				e.add(ts[i], vs[i])
			}
			got, want := e.buckets(), thinInMemory(ts, vs, tc.end, n)
			if len(got) != len(want) {
				t.Fatalf("%d buckets, want %d", len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				tolerance := float64(len(ts)) * 0x1p-52 * top
				if g.t != w.t || g.lo != w.lo || g.hi != w.hi || math.Abs(g.mean-w.mean) > tolerance {
					t.Errorf("bucket %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestHistogramCDF: the distribution drawn from a histogram is within a
// bin's width of the exact one: at each point (x, y), y is the fraction
// of values below x, and x is a bin's upper edge, except the last, the
// greatest value, where y is 1.
func TestHistogramCDF(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name   string
		values func(i int) float64
		n      int
	}{
		{"one value", func(int) float64 { return 7 }, 1},
		{"all alike", func(int) float64 { return 7 }, 1000},
		{"uniform", func(int) float64 { return 5 + rng.Float64() }, 100000},
		{"a long tail", func(int) float64 { return 19 + rng.ExpFloat64()*rng.ExpFloat64() }, 100000},
		{"two values", func(i int) float64 { return float64(i % 2) }, 11},
		{"decades", func(int) float64 { return 0.5 * math.Exp(9*rng.Float64()) }, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := make([]float64, tc.n)
			var h histogram
			for i := range vs {
				vs[i] = tc.values(i)
				h.observe(vs[i])
			}
			h.prepare(cdfBins)
			for _, v := range vs {
				h.add(v)
			}
			slices.Sort(vs)
			x, y := h.cdf()
			if len(x) < 2 || x[0] != vs[0] || y[0] != 0 || x[len(x)-1] != vs[len(vs)-1] || y[len(y)-1] != 1 || len(x) > cdfBins+1 {
				t.Fatalf("%d points from (%v, %v) to (%v, %v), values from %v to %v", len(x), x[0], y[0], x[len(x)-1], y[len(y)-1], vs[0], vs[len(vs)-1])
			}
			below := func(x float64) float64 {
				return float64(sort.SearchFloat64s(vs, x)) / float64(len(vs))
			}
			for i := 1; i < len(x)-1; i++ {
				// Rounding in the bin of a value on an edge moves it to the
				// next: the exact fraction is that below x, give or take the
				// values within a rounding of it (a bin's edge is
				// lo·e^(k·width), exact to some ulps of x).
				lo, hi := below(x[i]*(1-1e-9)), below(x[i]*(1+1e-9))
				if y[i] < lo || y[i] > hi || x[i] < x[i-1] {
					t.Errorf("point %d: (%v, %v); the fraction below %v is %v to %v", i, x[i], y[i], x[i], lo, hi)
				}
			}
		})
	}
}

// TestInFlightAverage: the frames in flight in each slice of the run are
// the time they spent inside it, frame by frame, over its length.
func TestInFlightAverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var trace strings.Builder
	trace.WriteString("flow,seq,bytes,t_send,t_recv,status\n")
	type interval struct{ a, b float64 }
	var frames []interval
	const end = 30.0
	for i := range 20000 {
		a := rng.Float64() * 29
		var b float64
		switch {
		case i%1000 == 0: // held for a long time, many slices
			b = min(a+rng.Float64()*20, end)
		default:
			b = a + rng.ExpFloat64()*0.05
		}
		switch {
		case i%7 == 0:
			fmt.Fprintf(&trace, "f,%d,1,%.9f,,queue_drop\n", i, a) // never inside
		case i%101 == 0:
			fmt.Fprintf(&trace, "f,%d,1,%.9f,,in_flight\n", i, a)
			frames = append(frames, interval{a, end})
		default:
			fmt.Fprintf(&trace, "f,%d,1,%.9f,%.9f,delivered\n", i, a, b)
			frames = append(frames, interval{a, b})
		}
	}
	// The end of the run: its summary's duration, after every frame.
	td, err := parseTrace(strings.NewReader(trace.String()), end)
	if err != nil {
		t.Fatal(err)
	}
	// Each frame's part of each slice, with the times as the trace wrote
	// them (nine decimals).
	round := func(x float64) float64 { return math.Round(x*1e9) / 1e9 }
	width := end / inFlightSlices
	want := make([]float64, inFlightSlices)
	for _, f := range frames {
		for k := range want {
			want[k] += max(0, min(round(f.b), float64(k+1)*width)-max(round(f.a), float64(k)*width))
		}
	}
	got := td.flows[0].inFlight
	for k := range want {
		// Sums of some thousand intervals of at most 30 s: rounding well
		// under a nanosecond each.
		if math.Abs(got[k]-want[k]) > 1e-9 {
			t.Errorf("slice %d: %v frame·s in flight, want %v", k, got[k], want[k])
		}
	}
}

// TestTraceMemoryFlat: what the report keeps of a trace does not grow
// with it: a hundred times the frames, the same memory, to within the
// thinned series' fixed size. Held whole, 200 000 frames took some 10 MB.
func TestTraceMemoryFlat(t *testing.T) {
	trace := func(frames int) *bytes.Reader {
		var b bytes.Buffer
		b.WriteString("flow,seq,bytes,t_send,t_recv,status\n")
		for i := range frames {
			sent := float64(i) * 30 / float64(frames)
			if i%10 == 0 {
				fmt.Fprintf(&b, "f,%d,100,%.9f,,loss_drop\n", i, sent)
				continue
			}
			fmt.Fprintf(&b, "f,%d,100,%.9f,%.9f,delivered\n", i, sent, sent+0.02+0.001*float64(i%7))
		}
		return bytes.NewReader(b.Bytes())
	}
	kept := func(frames int) (uint64, *traceData) {
		r := trace(frames)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		td, err := parseTrace(r, 30)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		return max(after.HeapAlloc, before.HeapAlloc) - before.HeapAlloc, td
	}
	small, td1 := kept(2000)
	large, td2 := kept(200000)
	runtime.KeepAlive(td1)
	runtime.KeepAlive(td2)
	// A flow's thinned series: 601 slices of delays and of lateness, 1200
	// bins, 601 drop marks, 2×200 in-flight slices: some 70 kB.
	const fixed = 256 << 10
	if large > small+fixed {
		t.Errorf("a trace of 2 000 frames keeps %d bytes, of 200 000 frames %d: it grows with the file", small, large)
	}
}

// TestRunFilesRead: the report reads regular files only, each line of a
// CSV at most maxLineBytes: a trace linked to /dev/zero, a named pipe
// (whose open would block), a file of 2 MB without a newline and a
// summary linked to /dev/zero are each left out, saying why, and the
// page is made without them.
func TestRunFilesRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("summary.json", `{"profile": "plain", "clock": "virtual", "stopped": "duration", "duration_s": 1, "flows": [], "hops": []}`)
	write("long.csv", strings.Repeat("x", 2<<20))
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "a-zero.json")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.csv"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	skipped := strings.Join(r.Skipped, "\n")
	for _, want := range []string{
		"long.csv: line 1 is longer than 1048576 bytes",
		"pipe.csv: is not a regular file (a named pipe)",
		"zero.csv: is not a regular file (a character device)",
		"a-zero.json: is not a regular file (a character device)",
	} {
		if !strings.Contains(skipped, want) {
			t.Errorf("skipped:\n%s\nlacks %q", skipped, want)
		}
	}
	if r.TraceFile != "" || r.SignalsFile != "" || r.QueuesFile != "" || filepath.Base(r.SummaryFile) != "summary.json" {
		t.Errorf("found %+v", r)
	}
	var html bytes.Buffer
	if err := Write(&html, Page{Title: "x", Runs: []*Run{r}}); err != nil {
		t.Fatal(err)
	}
	if _, text := parsePage(t, html.Bytes()); !strings.Contains(text, "zero.csv: is not a regular file") {
		t.Errorf("the page does not say what was left out:\n%s", text)
	}
}

// TestSignalsColumns: a signals file is read for the columns asked for,
// those it has, each checked as a number; the others are counted but not
// kept.
func TestSignalsColumns(t *testing.T) {
	const text = "t,car.x,car.ideal.x,other\n0,1,2,a\n0.5,3,4,b\n1,5,6,c\n"
	sd, err := parseSignals(strings.NewReader(text), 0, buckets, true, func([]string) []string { return []string{"car.x", "car.hardware.x", "car.ideal.x", "car.x"} })
	if err != nil {
		t.Fatal(err)
	}
	if sd.rows != 3 || sd.end != 1 || len(sd.series) != 2 || !slices.Equal(sd.columns, []string{"car.x", "car.ideal.x", "other"}) {
		t.Fatalf("%d rows to %v, series %v, columns %q", sd.rows, sd.end, sd.series, sd.columns)
	}
	if bs := sd.series["car.ideal.x"].buckets(); len(bs) != 3 || bs[2] != (bucket{1, 6, 6, 6}) {
		t.Errorf("car.ideal.x: %+v", bs)
	}
	for _, bad := range []struct{ text, err string }{
		{"", "empty signals file"},
		{"x,y\n", `not a hilrig signals file: it starts with "x"`},
		{"t,car.x\n0,1,2\n", "signals line 2: 3 fields for 2 columns"},
		{"t,car.x\n0,zz\n", `signals line 2: "zz" is not a number`},
		{"t,car.x\n" + strings.Repeat("9", 2<<20) + "\n", "line 2 is longer than"},
	} {
		_, err := parseSignals(strings.NewReader(bad.text), 0, buckets, true, func([]string) []string { return []string{"car.x"} })
		if err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%.40q: error %v, want %q", bad.text, err, bad.err)
		}
	}
}

// TestNineDecimals: a time as hilrig writes it reads, the fast way, as
// ParseFloat reads it, to the bit; any other text is left to ParseFloat.
func TestNineDecimals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var cases []int64
	for range 100000 {
		cases = append(cases, rng.Int64N(1<<53+1), rng.Int64N(1e9), rng.Int64N(1e13))
	}
	cases = append(cases, 0, 1, 999999999, 1e9, 1<<53, 1<<53-1)
	for _, ns := range cases {
		text := record.AppendSeconds(nil, time.Duration(ns))
		got, ok := nineDecimals(text)
		want, err := strconv.ParseFloat(string(text), 64)
		if !ok || err != nil || got != want {
			t.Fatalf("%s: %v (%v), ParseFloat %v (%v)", text, got, ok, want, err)
		}
	}
	for _, text := range []string{"", ".123456789", "1.12345678", "1.1234567890", "-1.123456789", "+1.123456789", "1,123456789", "1.12345678x",
		"9007199.254740993", "1234567890.123456789", "1e3.123456789"} {
		if v, ok := nineDecimals([]byte(text)); ok {
			t.Errorf("%q read the fast way, as %v", text, v)
		}
	}
}

// FuzzParseSignals: any input is a signals file or an error; the columns
// read are those asked for that it has, their slices in order, each
// between its extremes.
func FuzzParseSignals(f *testing.F) {
	f.Add("t,car.x,car.ideal.x\n0,1,2\n0.002,3,4\n")
	f.Add("t,link.queue_bytes,link.queue_frames\n0,0,0\n0.01,1500,1\n")
	f.Add("t,a\n-1,1e308\n1e300,-1e308\n")
	bounds := boundsOf(&Verdict{Expect: []Check{{Text: "hops.link.peak_queue_bytes <= 1kB"}, {Text: "models.car.x.peak < 2", OK: true}, {Text: "models.car.x.min > -1"}}})
	f.Fuzz(func(t *testing.T, text string) {
		for _, whole := range []bool{true, false} {
			sd, err := parseSignals(strings.NewReader(text), 0, buckets, whole, func(columns []string) []string { return columns })
			if err != nil {
				continue
			}
			for name, e := range sd.series {
				if !slices.Contains(sd.columns, name) {
					t.Fatalf("%q: a series %q of no column", text, name)
				}
				bs := e.buckets()
				for i, b := range bs {
					if b.lo > b.hi || (i > 0 && b.t < bs[i-1].t) {
						t.Fatalf("%q: %s: bucket %d %+v", text, name, i, b)
					}
				}
			}
			// Drawing with limits panics on nothing (a range too large to
			// draw is an error, which the page says).
			queuePlot(sd, bounds)
			signalPlot(sd, "car", "x", bounds)
		}
	})
}
