package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
)

// demoFlags are the flags of hilrig demo.
type demoFlags struct {
	cut, profile, trace, signals, summary string
	duration                              time.Duration
	priority                              int
	expects                               *[]string
}

func demoCommand() *cobra.Command {
	o := demoFlags{duration: 10 * time.Second}
	c := &cobra.Command{
		Use:   "demo",
		Short: "a complete hardware-in-the-loop run with no hardware: paper 001's quarter car and a virtual seat on a pseudo-terminal",
		Long: `The rig simulates the quarter car cut at CP1 or CP2 in real time and
exchanges frames with a virtual seat on a pseudo-terminal through the
profile's network, then says what it measured: the frames, the exchanges,
and how far the loop strayed from the uncut car.`,
		Args:              positional(0, 0),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int { return runDemo(o, c.OutOrStdout(), c.ErrOrStderr()) })
	f := c.Flags()
	f.StringVar(&o.cut, "cut", "CP2", "cut the quarter car at `CP1|CP2`")
	f.StringVar(&o.profile, "profile", "internet-hil", "the network between the car and the seat: a `PROFILE` whose first two flows go to the seat and back")
	f.Var(durationFlag{&o.duration}, "duration", "run for `D`")
	f.StringVar(&o.trace, "trace", "", "write a CSV trace of every frame to `FILE`")
	f.StringVar(&o.signals, "signals", "", "write the model's signals, a row per exchange, as CSV to `FILE`")
	f.StringVar(&o.summary, "summary", "", "also write the JSON summary to `FILE`")
	f.IntVar(&o.priority, "priority", 80, "SCHED_FIFO priority `N` of the executor (0: do not change the scheduling)")
	o.expects = expectFlag(f)
	completeFlags(c)
	return c
}

func runDemo(o demoFlags, stdout, stderr io.Writer) int {
	opt := rig.DemoOptions{Cut: o.cut, Profile: o.profile, Duration: o.duration, Priority: o.priority, Log: stderr, Out: stdout}
	opt.Status = stderr // redrawn in place on a terminal, plain lines otherwise
	exps, err := demoExpectations(o)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	var summaryOut io.Writer
	closeOutputs, err := createOutputs(output{o.trace, &opt.Trace}, output{o.signals, &opt.Signals}, output{o.summary, &summaryOut})
	defer closeOutputs()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	sig := &expect.Signals{}
	opt.Signals = teeSignals(opt.Signals, sig, exps)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	summary, bench, err := rig.Demo(ctx, opt)
	if err != nil && summary.Profile == "" {
		return fail(stderr, exitUsage, profileSuggestion(o.profile, err))
	}
	printDemo(stdout, summary, bench)
	if summaryOut != nil {
		if werr := writeJSON(summaryOut, summary); werr != nil {
			return fail(stderr, exitFail, werr)
		}
	}
	if err != nil {
		return fail(stderr, exitFail, fmt.Errorf("run stopped: %w", err))
	}
	return judge(stderr, exps, &summary, sig)
}

// demoExpectations parses --expect against the demo's profile and bench.
// A profile or cut the demo cannot use is left for the demo to report, in
// its words.
func demoExpectations(o demoFlags) ([]*expect.Expectation, error) {
	if len(*o.expects) == 0 {
		return nil, nil
	}
	p, err := profiles.Load(o.profile)
	if err != nil || p.Flows.Len() < 2 {
		return nil, nil
	}
	b, err := profiles.ParseBench("demo bench", []byte(rig.DemoBench(o.cut, os.TempDir(), [2]string{p.Flows.Names[0], p.Flows.Names[1]})), p)
	if err != nil {
		return nil, nil
	}
	return expectations(*o.expects, p, b)
}

// printDemo reports what the demo measured, in words.
func printDemo(w io.Writer, s record.Summary, bench *profiles.LoadedBench) {
	fmt.Fprintf(w, "\nnetwork (%s), stopped by %s:\n", s.Profile, s.Stopped)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range s.Flows {
		lost := f.Sent - f.Delivered - f.InFlight
		line := fmt.Sprintf("  %s\t%d sent\t%d arrived\t%d lost\t%d in flight", f.Name, f.Sent, f.Delivered, lost, f.InFlight)
		if f.Delay != nil {
			line += fmt.Sprintf("\tdelay p50 %.1f ms, p99 %.1f ms", 1000*f.Delay.P50, 1000*f.Delay.P99)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	for _, m := range s.Models {
		fmt.Fprintf(w, "model %s cut at %s (%s, exchange every %v):\n", m.Model, m.Cut, m.Solver, time.Duration(m.ExchangeS*1e9))
		fmt.Fprintf(w, "  %d exchanges, %d overruns", m.Exchanges, m.Overruns)
		if l := m.StepLateness; l != nil {
			fmt.Fprintf(w, "; exchanges started %.1f µs late at the median, %.1f µs at p99", l.P50*1e6, l.P99*1e6)
		}
		fmt.Fprintf(w, "\n  frames: %d sent to the seat, %d taken up from it, %d undecodable\n", m.FramesOut, m.FramesIn, m.BadFrames)
		if o := m.Output; o != nil {
			fmt.Fprintf(w, "  %s: the uncut car peaks at %.2f mm; the HIL loop strayed from it by at most %.2f mm (%.1f %% of the peak)\n",
				o.Signal, 1000*o.Peak, 1000*o.MaxError, 100*o.OfPeak)
		}
	}
	t := s.Timing
	fmt.Fprintf(w, "executor: %s", t.Scheduler)
	var notes []string
	if t.MemoryLocked {
		notes = append(notes, "memory locked")
	}
	if t.IdlePolling {
		notes = append(notes, "idle CPUs polling")
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, ", %s", strings.Join(notes, ", "))
	}
	if l := t.WakeLateness; l != nil {
		fmt.Fprintf(w, "; woke %.1f µs late at p99", l.P99*1e6)
	}
	fmt.Fprintln(w)
	cut := ""
	if bench != nil && bench.Models["car"] != nil {
		cut = bench.Models["car"].Cut
	}
	switch cut {
	case "CP2":
		fmt.Fprintln(w, "\nPaper 001: cut at CP2 the loop follows the uncut car. Try --cut CP1: the same delay distorts it by about 20 dB and it oscillates.")
	case "CP1":
		fmt.Fprintln(w, "\nPaper 001: cut at CP1 the delay distorts the deflection by about 20 dB near 30 rad/s, hence the 0.2 s oscillation. Compare --cut CP2.")
	}
}
