package suite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/report"
)

// Options control how a suite runs.
type Options struct {
	// Dir, when set, keeps each case's outputs in a directory of its own
	// under it (Case.Dir): summary.json, trace.csv, queues.csv, the
	// verdict and, when the case has models, signals.csv; the report is
	// made from them.
	Dir string
	// Real time only: the executor's SCHED_FIFO priority (0: leave the
	// scheduling alone) and how long it spins before a deadline (0: the
	// default).
	Priority int
	Spin     time.Duration
	// Log receives the sessions' warnings; Progress a line per case as it
	// ends, its failures and the files it could not write. Either may be
	// nil.
	Log, Progress io.Writer
}

// The files of a case's directory.
const (
	SummaryFile = "summary.json"
	TraceFile   = "trace.csv"
	SignalsFile = "signals.csv"
	QueuesFile  = "queues.csv"
)

// Result is what became of a case.
type Result struct {
	Case    *Case
	Dir     string // its outputs, or empty
	Summary record.Summary
	Expect  []expect.Result
	Script  []StepResult
	// Err is the run's own failure: it could not start (Started is
	// false), or a device failed. The case then fails whatever its
	// expectations say.
	Err     error
	Started bool
	Elapsed time.Duration
	// OutputErrors are the case's files that could not be written (each
	// error names its file): the run and its verdict stand without them.
	OutputErrors []error
	written      []string // the files of Dir this run made
}

// Passed reports whether the run went through and met every expectation
// and step of its script.
func (r *Result) Passed() bool {
	if r.Err != nil || len(expect.Failed(r.Expect)) > 0 {
		return false
	}
	for _, s := range r.Script {
		if !s.OK {
			return false
		}
	}
	return true
}

// Failures are the lines that say why the case failed: first, that the
// run did not start or failed, and why.
func (r *Result) Failures() []string {
	var out []string
	switch {
	case r.Err != nil && !r.Started:
		out = append(out, "the run did not start: "+r.Err.Error())
	case r.Err != nil:
		out = append(out, "the run failed: "+r.Err.Error())
	}
	for _, e := range expect.Failed(r.Expect) {
		out = append(out, e.String())
	}
	for _, s := range r.Script {
		if !s.OK {
			out = append(out, s.String())
		}
	}
	return out
}

// Run runs the cases one after the other and returns their results, in
// order. It stops early, leaving later cases out, when ctx is done.
func Run(ctx context.Context, cases []*Case, opt Options) []*Result {
	if opt.Dir != "" && opt.Log != nil {
		if stale := Stale(opt.Dir, cases); len(stale) > 0 {
			const most = 8
			list := strings.Join(stale[:min(len(stale), most)], ", ")
			if len(stale) > most {
				list += fmt.Sprintf(", … (%d in all)", len(stale))
			}
			fmt.Fprintf(opt.Log, "hilrig: %s holds case directories that are not this run's, left as they are: %s (its index.html is this run's; hilrig report %s would show them too)\n", opt.Dir, list, opt.Dir)
		}
	}
	var out []*Result
	for _, c := range cases {
		if ctx.Err() != nil {
			break
		}
		r := RunCase(ctx, c, opt)
		out = append(out, r)
		if opt.Progress != nil {
			verdict := "PASS"
			if !r.Passed() {
				verdict = "FAIL"
			}
			fmt.Fprintf(opt.Progress, "--- %s: %s (%.2fs)\n", verdict, c.ID, r.Elapsed.Seconds())
			for _, f := range r.Failures() {
				fmt.Fprintf(opt.Progress, "    %s\n", f)
			}
			for _, err := range r.OutputErrors {
				fmt.Fprintf(opt.Progress, "    not written: %v\n", err)
			}
		}
	}
	return out
}

// Stale lists the case directories in dir (those with a verdict) that are
// not those of cases: an earlier run's, kept in the same directory.
func Stale(dir string, cases []*Case) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	mine := map[string]bool{}
	for _, c := range cases {
		mine[c.Dir()] = true
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() || mine[e.Name()] {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), report.VerdictFile)); err == nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// RunCase runs one case.
func RunCase(ctx context.Context, c *Case, opt Options) *Result {
	r := &Result{Case: c}
	began := time.Now()
	mode := rig.Virtual
	if c.Real {
		mode = rig.RealTime
	}
	defer func() {
		r.Elapsed = time.Since(began)
		// A run that did not start has a summary that says so, and
		// nothing else: no expectation was measured, no step ran.
		if !r.Started {
			r.Summary = record.Summary{Profile: c.Profile.Name, Clock: mode.String(), Stopped: "did not start"}
			if c.Bench != nil {
				r.Summary.Bench = c.Bench.Name
			}
			r.Expect, r.Script = nil, nil
		}
		if r.Dir != "" {
			r.save()
		}
	}()
	sig := &expect.Signals{}
	ropt := rig.Options{Duration: c.Duration, Seed: c.Seed, Priority: opt.Priority, Spin: opt.Spin, Log: opt.Log, Signals: sig}
	var files []*caseFile
	if opt.Dir != "" {
		files = r.createFiles(filepath.Join(opt.Dir, c.Dir()), &ropt)
		if ropt.Signals != sig {
			ropt.Signals = io.MultiWriter(ropt.Signals, sig)
		}
	}
	var script *Script
	if len(c.Script) > 0 {
		script = NewScript(c.Script)
		ropt.Players = script.Players()
	}
	s, err := rig.Open(c.Profile, c.Bench, mode, ropt)
	if err != nil {
		r.Err = err
		r.closeFiles(files)
		return r
	}
	end := c.Duration
	if end <= 0 {
		end = c.Profile.RunDuration()
	}
	if script != nil {
		script.Start(s.Executor().Network(), end)
	}
	r.Summary, r.Err = s.Run(ctx)
	r.Started = r.Summary.Profile != "" // a device that cannot be opened stops it before
	r.closeFiles(files)
	if script != nil {
		r.Script = script.Results()
	}
	r.Expect = expect.Evaluate(c.Expect, &r.Summary, sig)
	return r
}

// createFiles makes the case's directory, dir, and its files for the run
// to write into, those it can: one that cannot be made is an output error,
// and the case runs without it.
func (r *Result) createFiles(dir string, ropt *rig.Options) []*caseFile {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.OutputErrors = append(r.OutputErrors, err)
		return nil
	}
	r.Dir = dir
	var files []*caseFile
	into := map[string]*io.Writer{TraceFile: &ropt.Trace, QueuesFile: &ropt.Queues, SignalsFile: &ropt.Signals}
	for _, name := range r.Case.runFiles() {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			r.OutputErrors = append(r.OutputErrors, err)
			continue
		}
		cf := &caseFile{f: f, name: name}
		files = append(files, cf)
		*into[name] = cf
		r.written = append(r.written, name)
	}
	if !slices.Contains(r.Case.runFiles(), SignalsFile) {
		// A case without a model records no signals: the file an
		// earlier run of the case left goes, as the others are
		// overwritten.
		if err := os.Remove(filepath.Join(dir, SignalsFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.OutputErrors = append(r.OutputErrors, err)
		}
	}
	return files
}

// ReportFiles are the files a run of cases with Options.Dir set to dir
// (Run) and its report (WriteReport) write, for a caller to check before
// anything is written.
func ReportFiles(dir string, cases []*Case) []string {
	files := []string{filepath.Join(dir, ReportFile)}
	for _, c := range cases {
		for _, name := range append(c.runFiles(), SummaryFile, report.VerdictFile) {
			files = append(files, filepath.Join(dir, c.Dir(), name))
		}
	}
	return files
}

// runFiles are the files a run of the case writes into its directory;
// save adds the summary and the verdict.
func (c *Case) runFiles() []string {
	files := []string{TraceFile, QueuesFile}
	if c.Bench != nil && len(c.Bench.Models) > 0 { // signals are the models'
		files = append(files, SignalsFile)
	}
	return files
}

// save writes the summary and the verdict into the case's directory.
func (r *Result) save() {
	data, err := json.MarshalIndent(r.Summary, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(r.Dir, SummaryFile), append(data, '\n'), 0o644)
	}
	if err != nil {
		r.OutputErrors = append(r.OutputErrors, err)
	} else {
		r.written = append(r.written, SummaryFile)
	}
	// The verdict is the last, and lists the files that could not be
	// written; if it cannot be written itself, that is only said.
	if err := report.WriteVerdict(r.Dir, r.Verdict()); err != nil {
		r.OutputErrors = append(r.OutputErrors, err)
	}
}

// writtenFile is the path of the case's file name if this run made it,
// else "".
func (r *Result) writtenFile(name string) string {
	if r.Dir == "" || !slices.Contains(r.written, name) {
		return ""
	}
	return filepath.Join(r.Dir, name)
}

// Verdict is the result as the report shows it.
func (r *Result) Verdict() report.Verdict {
	v := report.Verdict{Name: r.Case.ID, Description: r.Case.Description, Passed: r.Passed(), ElapsedS: r.Elapsed.Seconds()}
	if r.Err != nil {
		v.Error = r.Err.Error()
	}
	for _, err := range r.OutputErrors {
		v.Unwritten = append(v.Unwritten, err.Error())
	}
	for _, e := range r.Expect {
		ch := report.Check{Text: e.Canonical(), OK: e.OK, Measured: e.Measured, Limit: e.Limit()}
		if e.Measured == "" {
			ch.Detail = "nothing measured: " + e.Missing
		}
		v.Expect = append(v.Expect, ch)
	}
	for _, s := range r.Script {
		v.Script = append(v.Script, report.Check{Text: s.Step, OK: s.OK, Detail: s.Detail})
	}
	return v
}

// caseFile is a file of a case's directory that a run writes into (the
// run buffers what it writes), and remembers the first error it met.
type caseFile struct {
	f    *os.File
	name string
	err  error
}

func (cf *caseFile) Write(p []byte) (int, error) {
	n, err := cf.f.Write(p)
	if err != nil && cf.err == nil {
		cf.err = err
	}
	return n, err
}

// closeFiles closes the files the run wrote into; one that met an error
// (its first write error, or its close's) is an output error, and not
// among the files written.
func (r *Result) closeFiles(files []*caseFile) {
	for _, cf := range files {
		err := cf.f.Close()
		if cf.err != nil {
			err = cf.err
		}
		if err != nil {
			r.OutputErrors = append(r.OutputErrors, err)
			r.written = slices.DeleteFunc(r.written, func(name string) bool { return name == cf.name })
		}
	}
}

// Summary says how many cases passed, for the last line of a run:
// "PASS 5 cases" or "FAIL 1 of 5 cases: delay[lte]".
func Summary(results []*Result) string {
	var failed []string
	for _, r := range results {
		if !r.Passed() {
			failed = append(failed, r.Case.ID)
		}
	}
	cases := "cases"
	if len(results) == 1 {
		cases = "case"
	}
	if len(failed) == 0 {
		return fmt.Sprintf("PASS %d %s", len(results), cases)
	}
	return fmt.Sprintf("FAIL %d of %d %s: %s", len(failed), len(results), cases, strings.Join(failed, ", "))
}

// ReportFile is the name of a suite's HTML report in its directory.
const ReportFile = "index.html"

// WriteReport writes the suite's HTML report into dir, where Run kept the
// cases' outputs (Options.Dir), and returns its path. shard, when the
// suite was sharded, says which part this is; note, when not empty, why
// it holds no case (Suite.EmptyShard).
func WriteReport(dir string, s *Suite, results []*Result, shard, note string) (string, error) {
	page := report.Page{Title: "hilrig test " + s.Name, Description: s.Description, Source: s.Source, Note: note}
	if shard != "" {
		page.Source += ", part " + shard
	}
	// Each run as it is in memory, with the files it wrote for the plots:
	// a file that could not be written costs its plots, not the page.
	for _, r := range results {
		v := r.Verdict()
		run := &report.Run{Summary: &r.Summary, Verdict: &v, SummaryFile: r.writtenFile(SummaryFile),
			TraceFile: r.writtenFile(TraceFile), SignalsFile: r.writtenFile(SignalsFile), QueuesFile: r.writtenFile(QueuesFile)}
		page.Runs = append(page.Runs, run)
	}
	path := filepath.Join(dir, ReportFile)
	return path, report.WriteFile(path, page)
}
