package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
)

func TestParseTrace(t *testing.T) {
	const trace = `flow,seq,bytes,t_send,t_recv,status,t_due
a,0,10,0.000000000,0.010000000,delivered,0.009990000
a,1,10,0.005000000,,queue_drop,
b,0,10,0.001000000,0.004000000,corrupted,0.003000000
twin,,,0.002000000,,out_of_sync,
a,2,10,0.008000000,0.011000000,egress_drop,0.011000000
a,3,10,0.009000000,,in_flight,
`
	td, err := parseTrace(strings.NewReader(trace), 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if !td.real || len(td.flows) != 2 || td.end != 0.011 {
		t.Fatalf("real %v, %d flows, end %v", td.real, len(td.flows), td.end)
	}
	a, b := td.flows[0], td.flows[1]
	delays := a.delay.buckets()
	if len(delays) != 1 || delays[0].t != 0 || math.Abs(delays[0].mean-10) > 1e-9 || a.dropped != 2 {
		t.Errorf("a: delays %v, dropped %d", delays, a.dropped)
	}
	// The marks of the drops: each in its slot of the run.
	var marks []float64
	for _, m := range a.drops {
		if !math.IsNaN(m) {
			marks = append(marks, m)
		}
	}
	if !slices.Equal(marks, []float64{0.005, 0.008}) {
		t.Errorf("a: drops marked at %v", marks)
	}
	// In flight: the delivered frame from 0 to 10 ms, the one dropped at
	// its egress from 8 to 11 ms, the one still inside from 9 ms to the
	// end at 11 ms: 15 ms of frames inside.
	spent := 0.0
	for _, s := range a.inFlight {
		spent += s
	}
	if math.Abs(spent-0.015) > 1e-12 {
		t.Errorf("a in flight: %v s in all, want 0.015 s", spent)
	}
	if late := a.late.buckets(); len(late) != 1 || math.Abs(late[0].mean-10) > 1e-6 || len(b.late.buckets()) != 1 || b.name != "b" {
		t.Errorf("lateness: a %v, b %v", late, b.late.buckets())
	}
	for _, bad := range []string{"", "x,y\n", shortRow(), shortRow() + "a,0,1,zz,,delivered\n", "flow,seq,bytes,t_send,t_recv,status\na,0,1,NaN,,queue_drop\n",
		"flow,seq,bytes,t_send,t_recv,status\na,0,1,-1,,queue_drop\n", "flow,seq,bytes,t_send,t_recv,status\na,0,1,0,1e300,delivered\n"} {
		if _, err := parseTrace(strings.NewReader(bad), 0); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func shortRow() string { return "flow,seq,bytes,t_send,t_recv,status\na,1\n" }

// TestRunDirReport runs paper 001's quarter car in virtual time into a
// directory, as a user would with hilrig sim --trace --signals --summary,
// and makes its report: found by content, whatever the files are called,
// with every plot drawn.
func TestRunDirReport(t *testing.T) {
	p, err := profiles.Load("internet-hil")
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../../profiles/suites/benches/quarter-car-cp1.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	tr, sig := create("frames.csv"), create("car.csv")
	sum, err := rig.Sim(p, b, rig.Options{Duration: 4e9, Trace: tr, Signals: sig})
	tr.Close()
	sig.Close()
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(sum)
	os.WriteFile(filepath.Join(dir, "run.json"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.csv"), []byte("x,y\n1,2\n"), 0o644)

	page, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := page.Runs[0]
	if filepath.Base(r.TraceFile) != "frames.csv" || filepath.Base(r.SignalsFile) != "car.csv" || filepath.Base(r.SummaryFile) != "run.json" || r.Verdict != nil {
		t.Fatalf("found %+v", r)
	}
	var html bytes.Buffer
	if err := Write(&html, page); err != nil {
		t.Fatal(err)
	}
	svgs, texts := parsePage(t, html.Bytes())
	// Delay, its distribution, frames in the network, and the car's
	// deflection, Fs and v1 against the uncut car; no lateness in virtual
	// time.
	want := []string{"One-way delay over time", "Delay distribution", "Frames in the network", "car: deflection", "car: v1", "car: Fs"}
	for _, w := range want {
		if !slices.Contains(svgs, w) {
			t.Errorf("no plot %q among %q", w, svgs)
		}
	}
	if len(svgs) != len(want) {
		t.Errorf("plots %q, want %q", svgs, want)
	}
	if !strings.Contains(texts, "profile internet-hil, bench quarter-car-cp1, virtual time, seed 1, 4s; stopped: duration") {
		t.Errorf("the page does not say what ran:\n%s", texts)
	}
}

// parsePage parses a report as XML (the template writes well-formed
// markup) and returns the titles of its SVG plots, each checked to draw
// something, and the page's text.
func parsePage(t *testing.T, page []byte) (titles []string, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var b strings.Builder
	inSVG, paths, texts := 0, 0, []string{}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch {
			case tok.Name.Local == "svg":
				inSVG, paths, texts = inSVG+1, 0, nil
			case inSVG > 0 && tok.Name.Local == "path":
				paths += subpaths(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "svg" {
				inSVG--
				if paths < 10 || len(texts) == 0 {
					t.Errorf("an SVG with %d paths and texts %q", paths, texts)
				}
				titles = append(titles, texts[0])
			}
		case xml.CharData:
			if inSVG > 0 {
				if s := strings.TrimSpace(string(tok)); s != "" {
					texts = append(texts, s)
				}
			} else {
				b.Write(tok)
			}
		}
	}
	return titles, b.String()
}

// FuzzParseTrace: any input is a trace or an error; a trace's frames are
// where they can be drawn.
func FuzzParseTrace(f *testing.F) {
	f.Add("flow,seq,bytes,t_send,t_recv,status\na,0,1,0.000000000,0.001000000,delivered\na,1,1,0.002000000,,queue_drop\n")
	f.Add("flow,seq,bytes,t_send,t_recv,status,t_due\na,0,1,1.0,1.5,delivered,1.4\nb,,,2.0,,out_of_sync,\n")
	f.Add("flow,seq,bytes,t_send,t_recv,status\na,0,1,0,3e9,delivered\na,1,1,2,,in_flight\n")
	// Limits on flow a, crossed or not, drawn over whatever was read.
	bounds := boundsOf(&Verdict{Expect: []Check{{Text: "flows.a.delay.max < 1ms"}, {Text: "flows.a.delay.min > 0.5ms", OK: true}}})
	f.Fuzz(func(t *testing.T, text string) {
		td, err := parseTrace(strings.NewReader(text), 0)
		if err != nil {
			return
		}
		for _, fs := range td.flows {
			n := 0
			for _, b := range fs.delay.buckets() {
				if b.lo > b.hi || math.IsNaN(b.mean) {
					t.Fatalf("%q: a slice %+v", text, b)
				}
				n++
			}
			if n > fs.delay.count {
				t.Fatalf("%q: %d slices of %d delays", text, n, fs.delay.count)
			}
			for _, s := range fs.inFlight {
				if s < -1e-9*td.end || math.IsNaN(s) {
					t.Fatalf("%q: %v frame·s in flight in a slice", text, s)
				}
			}
		}
		// Drawing what was read never fails.
		if _, err := delayPlot(td, bounds); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if _, err := inFlightPlot(td); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if _, err := cdfPlot(td, bounds); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
	})
}

// TestRunThatNeverStarted: a case whose device could not be opened leaves
// a summary that says so and files with their headers alone; its report
// says what ran and draws nothing, rather than failing.
func TestRunThatNeverStarted(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"summary.json": `{"profile": "plain", "bench": "b", "clock": "real", "stopped": "did not start", "duration_s": 0, "flows": [], "hops": []}`,
		"trace.csv":    "flow,seq,bytes,t_send,t_recv,status\n",
		"queues.csv":   "t,link.queue_bytes,link.queue_frames,link.held_frames\n",
		"signals.csv":  "",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	page, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var html bytes.Buffer
	if err := Write(&html, page); err != nil {
		t.Fatal(err)
	}
	if svgs, texts := parsePage(t, html.Bytes()); len(svgs) != 0 || !strings.Contains(texts, "stopped: did not start") {
		t.Errorf("plots %q; page:\n%s", svgs, texts)
	}
}

// subpaths counts the lines a path element draws: one per move in its
// data (the report joins the lines it draws alike into one element).
func subpaths(path xml.StartElement) int {
	for _, a := range path.Attr {
		if a.Name.Local == "d" {
			return strings.Count(a.Value, "M")
		}
	}
	return 0
}
