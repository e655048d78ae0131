package main

import (
	"cmp"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
)

// runFlags are the flags of hilrig run.
type runFlags struct {
	bench, trace, signals  string
	record, queues         string
	summary                summaryFlags
	duration, spin         time.Duration
	priority               int
	sets, replays, expects *[]string
	live                   liveFlags
}

func runCommand() *cobra.Command {
	o := runFlags{spin: realtime.DefaultSpin}
	c := &cobra.Command{
		Use:   "run PROFILE",
		Short: "forward frames between hardware endpoints through the emulated network, in real time",
		Long: `The bench names the endpoints (serial ports, pseudo-terminals, GPIO lines,
UDP and TCP sockets, plant models) and binds the profile's flows to them.
Exit 0 when it ran its duration or was stopped by a signal, 1 when a device
failed mid-run or an expectation did not hold, 2 when the profile or bench is
wrong, a device is missing at the start, or an output lost rows.`,
		Args:              positional(1, 1),
		ValidArgsFunction: completeProfiles,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int { return runRun(args[0], o, c.OutOrStdout(), c.ErrOrStderr()) })
	f := c.Flags()
	f.StringVar(&o.bench, "bench", "", "the bench file `BENCH`: endpoints and the flows they carry")
	c.MarkFlagRequired("bench")
	f.Var(durationFlag{d: &o.duration, positive: true}, "duration", "run for `D` (default: the profile's duration)")
	f.StringVar(&o.trace, "trace", "", "write a CSV trace of every frame to `FILE`")
	f.StringVar(&o.signals, "signals", "", "write the model endpoints' signals, a row per exchange, as CSV to `FILE`")
	addSummaryFlags(f, &o.summary)
	o.priority = 80
	f.Var(priorityFlag{&o.priority}, "priority", "SCHED_FIFO priority `N` of the executor (0: do not change the scheduling)")
	f.Var(durationFlag{d: &o.spin}, "spin", "spin instead of sleeping for at most the last `D` before a deadline (as long as the machine's wake-ups need)")
	o.sets = setFlag(f)
	o.expects = expectFlag(f)
	o.replays = replayFlag(f)
	f.StringVar(&o.queues, "queues", "", "write what each hop holds (bytes and frames waiting, frames held by an outage), a row every 10 ms, as CSV to `FILE`")
	f.StringVar(&o.record, "record", "", "record every frame read from a device and written to one, with its payload and times, to `FILE` (pcapng, which Wireshark reads; --replay plays it back)")
	addLiveFlags(c, &o.live)
	completeFlags(c)
	return c
}

func runRun(ref string, o runFlags, stdout, stderr io.Writer) int {
	p, err := loadProfile(ref, *o.sets...)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	b, err := benchfile.LoadBench(o.bench, p)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	exps, err := expectations(*o.expects, p, b, expect.Real, *o.replays)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	if err := o.live.check(); err != nil {
		return fail(stderr, exitUsage, err)
	}
	mon := &record.Monitor{}
	opt := rig.Options{Duration: o.duration, Spin: o.spin, Priority: o.priority, Log: stderr, Monitor: mon}
	if opt.Players, err = players(*o.replays); err != nil {
		return fail(stderr, exitUsage, err)
	}
	var summaryFile io.Writer
	reads := slices.Concat(madeFrom("profile", p.Source, p.Files()), benchReads(b), replayReads(*o.replays))
	outs := append([]output{{"--trace", o.trace, &opt.Trace}, {"--signals", o.signals, &opt.Signals}, {"--record", o.record, &opt.Record},
		{"--queues", o.queues, &opt.Queues}, {"--summary", o.summary.file, &summaryFile}}, ptyLinks(b)...)
	closeOutputs, err := createOutputs(reads, outs...)
	defer closeOutputs()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	sig := &expect.Signals{}
	opt.Signals = teeSignals(opt.Signals, sig, exps)
	ctx, stop := untilStopped()
	defer stop()
	var summary record.Summary
	s, err := rig.Open(p, b, rig.RealTime, opt)
	if err == nil {
		var r *running
		if r, err = o.live.serve(ctx, s, mon, cmp.Or(o.duration, p.RunDuration()), true, stderr); err != nil {
			s.Close()
			return fail(stderr, exitUsage, err)
		}
		summary, err = r.run(ctx)
	}
	var devErr *drivers.DeviceError
	var profileErr lang.ErrorList
	if err != nil && summary.Profile == "" {
		// The run did not start: a device is missing or unusable, or the
		// profile asks for what real time cannot do.
		if errors.As(err, &devErr) || errors.As(err, &profileErr) {
			return fail(stderr, exitUsage, err)
		}
		return fail(stderr, exitFail, err)
	}
	if encErr := o.summary.write(stdout, summaryFile, summary, outs); encErr != nil {
		return fail(stderr, exitFail, encErr)
	}
	if err != nil {
		return fail(stderr, runFailure(err), err) // a *rig.RunError: what stopped the run, and what it lost
	}
	return judge(stderr, exps, &summary, sig)
}
