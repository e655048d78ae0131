// Package report makes hilrig's HTML reports: one self-contained page (no
// script, no file beside it) for a suite or a single run. It opens with a
// table of the runs, the failed first, with the time each ran (virtual
// or real) and the wall time it took and what failed; then, per run,
// folded but for the failed ones, its verdict (the expectations with
// what was measured, the script's steps), the network's figures, and
// plots drawn with gonum.org/v1/plot as inline SVG: one-way delay over
// time per flow with the drops marked, the delay distribution on a
// logarithmic axis, the frames in the network, each hop's queue, the
// models' signals against the uncut reference, and in real time the
// executor's lateness. A plot of a value an expectation set a limit on
// draws the limit, and where the value went beyond it (limits.go). The
// plots are drawn without what cannot be seen (mergingCanvas, and the
// page's rounding and classes of styles), which was most of a page's
// weight.
//
// A page may open with the loop two sites' runs make (Sites, hilrig
// join): what each site measured of the direction that reaches it, the
// sites' clocks, how far the loop strayed from the uncut model, and paper
// 001's distortion over frequency, measured and as couple predicts it.
//
// A report is made from a run's files alone (LoadRun): the summary, and
// when present the trace, the signals and a suite's verdict, found in the
// run's directory by their content; so `hilrig report DIR` serves the
// outputs of any run, and a suite's report can be made again later. The
// trace and signals, which grow with the run, are read as streams and
// thinned as they are read, so that a report's memory does not grow with
// them; every file read must be a regular file.
package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
)

// Run is one run's outputs.
type Run struct {
	Dir     string
	Summary *record.Summary
	Verdict *Verdict // nil: no suite judged it
	// The files found, or empty.
	SummaryFile, TraceFile, SignalsFile, QueuesFile string
	// Skipped says which files of the directory were left out, and why:
	// one that is not a regular file, or too large to be a summary.
	Skipped []string

	verdictFile string // the file the verdict was read from
}

// Files are the files the run's page is made from.
func (r *Run) Files() []string {
	var files []string
	for _, f := range []string{r.SummaryFile, r.verdictFile, r.TraceFile, r.SignalsFile, r.QueuesFile} {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// LoadRun finds a run's outputs in dir by their content: a JSON summary,
// a trace (its header), a queues file (a CSV of t and HOP.queue_bytes…),
// a signals file (another CSV whose first column is t), and a verdict.
// Each must be a regular file; a summary or verdict at most
// lang.MaxFileBytes (the others are read as streams, whatever their
// size).
func LoadRun(dir string) (*Run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		switch {
		case e.Name() == VerdictFile:
			var v Verdict
			if err := readJSON(path, &v); err != nil {
				return nil, err
			}
			r.Verdict, r.verdictFile = &v, path
		case strings.HasSuffix(e.Name(), ".json") && r.Summary == nil:
			var s record.Summary
			err := readJSON(path, &s)
			var syntax *json.SyntaxError
			var wrongType *json.UnmarshalTypeError
			switch {
			case err == nil && s.Clock != "":
				r.Summary, r.SummaryFile = &s, path
			case err != nil && !errors.As(err, &syntax) && !errors.As(err, &wrongType):
				r.Skipped = append(r.Skipped, err.Error()) // JSON of another kind is not the report's business
			}
		case strings.HasSuffix(e.Name(), ".csv"):
			head, err := firstLine(path)
			if err != nil {
				r.Skipped = append(r.Skipped, err.Error())
				continue
			}
			switch {
			case head == record.TraceHeader || head == record.RealTraceHeader:
				if r.TraceFile == "" {
					r.TraceFile = path
				}
			case strings.HasPrefix(head, "t,") && strings.HasSuffix(strings.SplitN(head, ",", 3)[1], ".queue_bytes"):
				if r.QueuesFile == "" {
					r.QueuesFile = path
				}
			case strings.HasPrefix(head, "t,"):
				if r.SignalsFile == "" {
					r.SignalsFile = path
				}
			}
		}
	}
	if r.Summary == nil {
		return nil, fmt.Errorf("%s holds no run summary (the JSON that hilrig sim, run and demo write with --summary)", dir)
	}
	return r, nil
}

func readJSON(path string, v any) error {
	data, err := lang.ReadFile(path, lang.MaxFileBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Page is a report: a title and the runs it shows.
type Page struct {
	Title       string
	Description string
	Source      string // the suite file, or the run's directory
	// Note, when not empty, says why the page shows no run (a suite's
	// part that holds no case).
	Note string
	Runs []*Run
	// Sites, when set, is the loop the runs make between two sites
	// (hilrig join), told before the runs.
	Sites *Sites
}

// Files are the files the page is made from, which writing it must not
// overwrite.
func (p Page) Files() []string {
	var files []string
	for _, r := range p.Runs {
		files = append(files, r.Files()...)
	}
	return files
}

// LoadDir makes the page of a directory: a suite's report (a directory per
// case, each with its verdict) or the outputs of one run.
func LoadDir(dir string) (Page, error) {
	if run, err := LoadRun(dir); err == nil {
		title := "hilrig run: " + run.Summary.Profile
		return Page{Title: title, Source: dir, Runs: []*Run{run}}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return Page{}, err
	}
	page := Page{Title: "hilrig report: " + filepath.Base(dir), Source: dir}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if run, err := LoadRun(filepath.Join(dir, e.Name())); err == nil {
			page.Runs = append(page.Runs, run)
		}
	}
	if len(page.Runs) == 0 {
		return Page{}, fmt.Errorf("%s holds no run: neither a summary (the JSON of hilrig sim, run or demo --summary) nor directories of a suite's report", dir)
	}
	return page, nil
}

// view is a run as the template shows it.
type view struct {
	*Run
	ID, Name    string
	Passed      *bool // nil: not judged
	Open        bool  // its details shown at first: it failed, or it is the page's only run
	Facts       string
	Ran, Took   string // the run's own time (virtual or real), and the wall time it took
	Failing     string // the first of what failed, with what was measured
	MoreFailing int    // how many more failed
	Flows       [][]string
	Models      [][]string
	Timing      [][]string
	Figures     []figureView
	PlotProblem []string
}

// figureView is a figure as the page has it: its SVG inline.
type figureView struct {
	Figure
	Inline template.HTML
}

// pageData is what the page's template shows.
type pageData struct {
	Page
	Joined         *sitesView
	Views          []view
	Failed, Judged int
	PlotStyle      template.CSS // the classes of the plots' styles
}

// Write writes the page as HTML: a summary table on top, the failed runs
// first, each run's details below it, those of the runs that passed
// folded.
func Write(w io.Writer, page Page) error {
	data := pageData{Page: page}
	if page.Sites != nil {
		data.Joined = page.Sites.view()
	}
	classes := &styleClasses{byStyle: map[string]string{}}
	for i, r := range page.Runs {
		v := view{Run: r, ID: fmt.Sprintf("run-%d", i+1), Name: r.Summary.Profile}
		v.Ran = expect.Rounded(r.Summary.Duration, expect.Seconds) + " " + r.Summary.Clock
		if r.Verdict != nil {
			v.Name = r.Verdict.Name
			passed := r.Verdict.Passed
			v.Passed = &passed
			v.Took = expect.Rounded(r.Verdict.ElapsedS, expect.Seconds)
			data.Judged++
			if !passed {
				data.Failed++
				failing := r.Verdict.failing()
				if len(failing) > 0 {
					v.Failing, v.MoreFailing = failing[0], len(failing)-1
				}
			}
		}
		v.Open = len(page.Runs) == 1 || v.Passed != nil && !*v.Passed
		v.Facts, v.Flows, v.Models, v.Timing = facts(r)
		figs, problems := figures(r)
		for _, f := range figs {
			v.Figures = append(v.Figures, figureView{f, classes.inline(f.SVG)})
		}
		v.PlotProblem = problems
		data.Views = append(data.Views, v)
	}
	// The failed first, each kind in the page's order.
	slices.SortStableFunc(data.Views, func(a, b view) int { return cmp.Compare(btoi(!a.failed()), btoi(!b.failed())) })
	var b bytes.Buffer
	data.PlotStyle = classes.css()
	if err := pageTemplate().Execute(&b, data); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (v view) failed() bool { return v.Passed != nil && !*v.Passed }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteFile writes the page to path.
func WriteFile(path string, page Page) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = Write(f, page)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// facts are the run's figures as the page's tables.
func facts(r *Run) (line string, flows, models, timing [][]string) {
	s := r.Summary
	line = fmt.Sprintf("profile %s", s.Profile)
	if s.Bench != "" {
		line += ", bench " + s.Bench
	}
	line += fmt.Sprintf(", %s time, seed %d, %s", s.Clock, s.Seed, expect.Format(s.Duration, expect.Seconds))
	if r.Verdict != nil {
		line += fmt.Sprintf(" in %s of wall time", expect.Rounded(r.Verdict.ElapsedS, expect.Seconds))
	}
	line += "; stopped: " + s.Stopped
	for _, f := range s.Flows {
		lost := uint64(0)
		for _, n := range f.Dropped {
			lost += n
		}
		row := []string{f.Name, fmt.Sprint(f.Sent), fmt.Sprint(f.Delivered), fmt.Sprint(lost), fmt.Sprint(f.InFlight)}
		if d := f.Delay; d != nil {
			for _, q := range []float64{d.Min, d.P50, d.P95, d.P99, d.Max} {
				row = append(row, expect.Format(q, expect.Seconds))
			}
		} else {
			row = append(row, "", "", "", "", "")
		}
		flows = append(flows, row)
	}
	for _, m := range s.Models {
		row := []string{m.Endpoint, m.Model, m.Cut, fmt.Sprint(m.Exchanges), "", "", ""}
		if o := m.Output; o != nil {
			row[4], row[5] = o.Signal, fmt.Sprintf("%.4g", o.MaxError)
			if o.Peak > 0 {
				row[6] = fmt.Sprintf("%.3g %%", 100*o.MaxError/o.Peak)
			}
		}
		models = append(models, row)
	}
	if t := s.Timing; t != nil {
		timing = append(timing, []string{"scheduler", t.Scheduler}, []string{"memory locked", fmt.Sprint(t.MemoryLocked)})
		if l := t.WakeLateness; l != nil {
			timing = append(timing, []string{"wake lateness p50 / p99 / max", lateness(l.P50, l.P99, l.Max)})
		}
		if l := t.ReleaseLateness; l != nil {
			timing = append(timing, []string{"release lateness p50 / p99 / max", lateness(l.P50, l.P99, l.Max)})
		}
		timing = append(timing, []string{"frames dropped: ingress / trace", fmt.Sprintf("%d / %d", t.IngressDropped, t.TraceDropped)})
	}
	return line, flows, models, timing
}

func lateness(vs ...float64) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, expect.Format(v, expect.Seconds))
	}
	return strings.Join(parts, " / ")
}

// figures draws a run's plots from its files; a file that cannot be read
// costs its plots, said in the page, not the page.
func figures(r *Run) (figs []Figure, problems []string) {
	problems = slices.Clone(r.Skipped)
	bounds := boundsOf(r.Verdict)
	add := func(f Figure, ok bool, err error) {
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case ok:
			figs = append(figs, f)
		}
	}
	if r.TraceFile != "" {
		td, err := readTrace(r.TraceFile, r.Summary.Duration)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s: %v", filepath.Base(r.TraceFile), err))
		case len(td.flows) == 0:
			problems = append(problems, "the trace holds no frame")
		default:
			if td.moreFlows {
				problems = append(problems, fmt.Sprintf("the trace has more than %d flows: the plots show the first %d", maxFlows, maxFlows))
			}
			f, err := delayPlot(td, bounds)
			add(f, true, err)
			f, err = cdfPlot(td, bounds)
			add(f, true, err)
			f, err = inFlightPlot(td)
			add(f, true, err)
			add(latenessPlot(td, bounds))
		}
	} else {
		problems = append(problems, "no trace: the delay and queue plots need one (--trace)")
	}
	if r.QueuesFile != "" {
		qd, err := readSignals(r.QueuesFile, r.Summary.Duration, buckets/3, false, queueColumns)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", filepath.Base(r.QueuesFile), err))
		} else if qd.rows > 0 { // a run that never started sampled nothing
			add(queuePlot(qd, bounds))
		}
	}
	if len(r.Summary.Models) > 0 {
		if r.SignalsFile == "" {
			problems = append(problems, "no signals file: the model plots need one (--signals)")
			return figs, problems
		}
		sd, err := readSignals(r.SignalsFile, 0, buckets, true, signalColumns(r.Summary.Models))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", filepath.Base(r.SignalsFile), err))
			return figs, problems
		}
		if sd.rows == 0 {
			return figs, problems
		}
		for _, m := range r.Summary.Models {
			for _, signal := range plottedSignals(sd.columns, m) {
				add(signalPlot(sd, m.Endpoint, signal, bounds))
			}
		}
	}
	return figs, problems
}

// plottedSignals are a model's signals worth a plot: the output of
// interest first, then the others the uncut model also computes, at most
// three.
func plottedSignals(columns []string, m record.ModelSummary) []string {
	var out []string
	if m.Output != nil {
		out = append(out, m.Output.Signal)
	}
	prefix := m.Endpoint + ".ideal."
	for _, c := range columns {
		if s, ok := strings.CutPrefix(c, prefix); ok && !slices.Contains(out, s) && len(out) < 3 {
			out = append(out, s)
		}
	}
	return out
}

// styleClasses give the styles of the page's plots names: gonum writes
// each element's style in full (a tick's, a label's), a fifth of the
// page's weight, where a class names it once.
type styleClasses struct {
	byStyle map[string]string
	order   []string
}

// inline is an SVG file as an element of the page: without its XML
// declaration and comments, its paths' coordinates to a tenth of a point
// (vgsvg writes five digits: a thousandth of a point, a hundredth of a
// pixel, a third of the page's weight), each style a class.
func (sc *styleClasses) inline(b []byte) template.HTML {
	s := string(b)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	res := svgPatterns()
	s = res.pathData.ReplaceAllStringFunc(s, func(d string) string { return res.decimals.ReplaceAllStringFunc(d, tenth) })
	s = res.styleAttr.ReplaceAllStringFunc(s, func(attr string) string {
		style := attr[strings.Index(attr, `"`)+1 : len(attr)-1]
		name, ok := sc.byStyle[style]
		if !ok {
			name = fmt.Sprintf("p%d", len(sc.order))
			sc.byStyle[style] = name
			sc.order = append(sc.order, style)
		}
		return ` class="` + name + `"`
	})
	return template.HTML(s) // gonum's SVG: its text is escaped by vgsvg
}

// css defines the classes, for the page's style.
func (sc *styleClasses) css() template.CSS {
	var b strings.Builder
	for i, style := range sc.order {
		fmt.Fprintf(&b, "figure svg .p%d { %s }\n", i, style)
	}
	return template.CSS(b.String()) // vgsvg's styles: properties and values it wrote
}

// svgPatterns are what inline rewrites in an SVG, compiled when a page is
// first drawn: every command of the one binary would compile them at its
// start otherwise (as pageTemplate).
var svgPatterns = sync.OnceValue(func() (res struct{ styleAttr, pathData, decimals *regexp.Regexp }) {
	res.styleAttr = regexp.MustCompile(`\s+style="[^"]*"`)
	res.pathData = regexp.MustCompile(`<path d="[^"]*"`)
	res.decimals = regexp.MustCompile(`-?[0-9]+\.[0-9]+`)
	return res
})

// tenth writes a number of a path to one decimal: 44.193 is 44.2, 8.04 is 8.
func tenth(num string) string {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return num
	}
	t := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	if t == "-0" {
		return "0"
	}
	return t
}

// pageTemplate is parsed when a page is first written, not at hilrig's
// start: parsing it was a third of a millisecond and 1 300 allocations of
// every command's start (GODEBUG=inittrace=1), most of which write no page.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{"deref": func(b *bool) bool { return *b }}).Parse(pageHTML))
})
