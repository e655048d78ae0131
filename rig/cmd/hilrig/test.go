package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/rig/report"
	"github.com/hilrig/hilrig/rig/suite"
)

// testFlags are the flags of hilrig test.
type testFlags struct {
	junit, report, shard string
	priority             int
	spin                 time.Duration
}

func testCommand() *cobra.Command {
	o := testFlags{spin: realtime.DefaultSpin}
	c := &cobra.Command{
		Use:   "test SUITE",
		Short: "run a regression suite: profiles on a bench, with expectations and scripts; JUnit XML and an HTML report",
		Long: `SUITE is a suite file (profiles/suites holds examples): a bench and cases, each a
profile run in virtual or real time, with expectations on what it measures
and, optionally, a script that talks to the controller under test through the
emulated network. The whole suite is checked before anything runs. Exit 0 when
every case passed (or the part --shard asks for holds no case, which it says),
1 when one failed, 2 when the suite is wrong (every problem at its line and
column) or an output could not be written (each said, with its file; the
others are written all the same).`,
		Args: positional(1, 1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return yamlFiles()
		},
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runTest(args[0], o, c.OutOrStdout(), c.ErrOrStderr())
	})
	f := c.Flags()
	f.StringVar(&o.junit, "junit", "", "write the results as JUnit XML to `FILE`, for GitLab, Jenkins and GitHub")
	f.StringVar(&o.report, "report", "", "write the HTML report, and each case's summary, trace and signals, into `DIR`")
	f.StringVar(&o.shard, "shard", "", "run part `i/n` of the suite only, e.g. $CI_NODE_INDEX/$CI_NODE_TOTAL: the n parts are the suite, each case once")
	o.priority = 80
	f.Var(priorityFlag{&o.priority}, "priority", "SCHED_FIFO priority `N` of the executor in real-time cases (0: do not change the scheduling)")
	f.Var(durationFlag{d: &o.spin}, "spin", "in real-time cases, spin instead of sleeping for at most the last `D` before a deadline (as long as the machine's wake-ups need)")
	completeFlags(c)
	return c
}

func runTest(path string, o testFlags, stdout, stderr io.Writer) int {
	s, err := suite.Load(path)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	cases, empty := s.Cases, ""
	if o.shard != "" {
		i, n, err := suite.ParseShard(o.shard)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		if cases = s.Shard(i, n); len(cases) == 0 {
			empty = s.EmptyShard(i, n)
		}
	}
	// What the results go into is checked and made before anything runs,
	// so that a path that cannot be written, or that is another output or
	// a file the suite reads, is a usage error and not a lost run.
	writes := []namedFile{{"--junit", o.junit}}
	if o.report != "" {
		for _, f := range suite.ReportFiles(o.report, cases) {
			writes = append(writes, namedFile{"--report", f})
		}
	}
	if err := checkOutputs(writes, madeFrom("suite", s.Source, s.Files())); err != nil {
		return fail(stderr, exitUsage, err)
	}
	if o.report != "" {
		if err := os.MkdirAll(o.report, 0o755); err != nil {
			return fail(stderr, exitUsage, err)
		}
	}
	var junit io.Writer
	closeJUnit, err := createOutputs(nil, output{"--junit", o.junit, &junit})
	defer closeJUnit()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	ctx, stop := untilStopped()
	defer stop()
	part := ""
	if o.shard != "" {
		part = fmt.Sprintf(", part %s", o.shard)
	}
	fmt.Fprintf(stdout, "hilrig test %s: %d of its %d cases%s\n", s.Name, len(cases), len(s.Cases), part)
	start := time.Now()
	results := suite.Run(ctx, cases, suite.Options{Dir: o.report, Priority: o.priority, Spin: o.spin, Log: stderr, Progress: stdout})
	code := exitOK
	unwritten := 0 // the cases' files that could not be written, said under each
	for _, r := range results {
		if !r.Passed() {
			code = exitFail
		}
		unwritten += len(r.OutputErrors)
	}
	if len(results) < len(cases) {
		fmt.Fprintf(stdout, "interrupted: %d of %d cases ran\n", len(results), len(cases))
		code = exitFail
	}
	// The report, the JUnit XML and the verdict line each come whatever
	// became of the others: an output that cannot be written costs
	// itself, and makes the exit code 2.
	var failed []error
	reportPath := ""
	if o.report != "" {
		path, err := suite.WriteReport(o.report, s, results, o.shard, empty)
		if err != nil {
			failed = append(failed, fmt.Errorf("the report: %w", err))
		} else {
			reportPath = path
		}
	}
	if junit != nil {
		err := suite.WriteJUnit(junit, s, results, suite.JUnitOptions{Shard: o.shard, Report: reportPath, Start: start, Note: empty})
		if cerr := closeJUnit(); err == nil {
			err = cerr
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("the JUnit XML: %w", err))
		}
	}
	// An empty part is no failure: the other parts run every case. It
	// is said in place of the verdict, so that no one reads a pass.
	if empty != "" {
		fmt.Fprintf(stdout, "NO CASES: %s\n", empty)
	} else {
		fmt.Fprintln(stdout, suite.Summary(results))
	}
	if reportPath != "" {
		fmt.Fprintf(stdout, "report: %s\n", reportPath)
	}
	if unwritten > 0 {
		failed = append(failed, fmt.Errorf("%s of the cases could not be written (each said under its case)", count(unwritten, "file", "files")))
	}
	if len(failed) > 0 {
		for _, err := range failed {
			fail(stderr, exitUsage, fmt.Errorf("not written: %w", err))
		}
		return exitUsage
	}
	return code
}

// reportFlags are the flags of hilrig report.
type reportFlags struct{ out string }

func reportCommand() *cobra.Command {
	var o reportFlags
	c := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "make the HTML report of a run's outputs, or of a suite's report directory",
		Long: `RUN_DIR holds a run's JSON summary and, for the plots, its trace and signals
(as hilrig sim, run and demo write them with --summary, --trace and --signals;
they are found by their content, whatever their names), or is the directory
of hilrig test --report. The report is one self-contained HTML page.`,
		Args:              positional(1, 1),
		ValidArgsFunction: cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs),
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runReport(args[0], o, c.OutOrStdout(), c.ErrOrStderr())
	})
	c.Flags().StringVar(&o.out, "out", "", "write the page to `FILE` (default: report.html in RUN_DIR)")
	completeFlags(c)
	return c
}

func runReport(dir string, o reportFlags, stdout, stderr io.Writer) int {
	page, err := report.LoadDir(dir)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	out, flag := o.out, "--out"
	if out == "" {
		out, flag = filepath.Join(dir, "report.html"), "the page"
	}
	if err := checkOutputs([]namedFile{{flag, out}}, madeFrom("report", "", page.Files())); err != nil {
		return fail(stderr, exitUsage, err)
	}
	if err := report.WriteFile(out, page); err != nil {
		return fail(stderr, exitUsage, err)
	}
	fmt.Fprintln(stdout, out)
	return exitOK
}
