package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
)

// expectFlag defines --expect on fs: repeated expectations on the run.
func expectFlag(fs *pflag.FlagSet) *[]string {
	return fs.StringArray("expect", nil, "exit 1 unless the run meets `EXPR`, e.g. 'flows.m2s.delay.p95 < 60ms' (repeatable; hilrig help expect lists what it may name)")
}

// expectations parses the --expect flags against what a run of p on b
// will report, before it runs: a misspelt flow is a usage error, not a
// failed run.
func expectations(texts []string, p *profiles.Loaded, b *benchfile.LoadedBench, clock string, replays []string) ([]*expect.Expectation, error) {
	names := expect.NamesOf(p, b)
	names.Clock = clock         // what a run on it can measure (timing only in real time)
	for _, r := range replays { // ENDPOINT=FILE: played from a recording, no stand-in there
		if endpoint, _, ok := strings.Cut(r, "="); ok {
			names.Played = append(names.Played, endpoint)
		}
	}
	var out []*expect.Expectation
	var problems []string
	for _, text := range texts {
		x, err := expect.Parse(text, names)
		if err != nil {
			problems = append(problems, "--expect "+err.Error())
			continue
		}
		out = append(out, x)
	}
	if problems != nil {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return out, nil
}

// judge evaluates the expectations on a run and says, on stderr, what was
// measured against each; it returns exitFail when one was not met.
func judge(stderr io.Writer, exps []*expect.Expectation, sum *record.Summary, sig *expect.Signals) int {
	code := exitOK
	for _, r := range expect.Evaluate(exps, sum, sig) {
		fmt.Fprintf(stderr, "hilrig: expect %s\n", r)
		if !r.OK {
			code = exitFail
		}
	}
	return code
}

// expectTopic is `hilrig help expect`: the language, and every path. Its
// text is written when asked for: walking the summary's types for the paths
// was a tenth of every command's start.
func expectTopic() *cobra.Command {
	c := &cobra.Command{Use: "expect", Short: "the expectations of --expect and of suites"}
	c.SetHelpFunc(func(c *cobra.Command, _ []string) { fmt.Fprint(c.OutOrStdout(), expectHelp()) })
	return c
}

// expectHelp is the text of `hilrig help expect`.
func expectHelp() string {
	var b strings.Builder
	b.WriteString(`An expectation is PATH OP VALUE, checked when the run is over:

  flows.m2s.delay.p95 < 60ms
  flows.m2s.lost == 0
  models.car.deflection.error_pct < 1
  timing.release_lateness.p99 < 300us

OP is <, <=, >, >=, == or !=. A time is written with its unit (60ms, 2s,
300us), a size too (1500B, 30kB, 64KiB), a ratio as 1% or 0.01; a count is
a plain number; text and true/false compare with == and !=. PATH names a
value of the run's summary by its JSON keys, flows, hops, phases,
endpoints and models by their names; a list without names means how many
it holds, dropped its sum. models.MODEL.SIGNAL.STAT is a statistic of a
model's recorded signal. A path is checked against the profile and bench
before the run starts. A failed expectation makes hilrig exit 1 and says
what was measured against what limit.

The paths (FLOW, HOP, PHASE, ENDPOINT, MODEL, OUTPUT, SIGNAL and REASON
stand for names):

`)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, p := range expect.Paths() {
		if strings.HasSuffix(p.Path, ".name") || strings.HasSuffix(p.Path, ".endpoint") {
			continue // a name is how the path got there
		}
		doc := p.Unit.String()
		if p.Doc != "" {
			doc += ": " + p.Doc
		}
		fmt.Fprintf(tw, "  %s\t%s\n", p.Path, doc)
	}
	tw.Flush()
	return b.String()
}

// teeSignals adds the accumulator of the expectations' signals to the
// signals file w (nil: none), when there are expectations.
func teeSignals(w io.Writer, sig *expect.Signals, exps []*expect.Expectation) io.Writer {
	switch {
	case len(exps) == 0:
		return w
	case w == nil:
		return sig
	}
	return io.MultiWriter(w, sig)
}
