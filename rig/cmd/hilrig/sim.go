package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
)

// simFlags are the flags of hilrig sim.
type simFlags struct {
	duration                    time.Duration
	seed, trace, bench, signals string
	summary                     summaryFlags
	sets, replays, expects      *[]string
	record, queues              string
	realtimeView                bool
	live                        liveFlags
}

func simCommand() *cobra.Command {
	var o simFlags
	c := &cobra.Command{
		Use:   "sim PROFILE",
		Short: "run a profile in virtual time and print its summary",
		Long: `The profile's generators stand in for the hardware, and the run is
reproducible bit for bit from the seed. PROFILE is a file or the name of a
shipped profile (hilrig profiles lists them). Exit 0 when it ran, 1 when a
model diverged or an expectation did not hold, 2 when the profile or bench is
wrong or an output lost rows.`,
		Args:              positional(1, 1),
		ValidArgsFunction: completeProfiles,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int { return runSim(args[0], o, c.OutOrStdout(), c.ErrOrStderr()) })
	f := c.Flags()
	f.Var(durationFlag{d: &o.duration, positive: true}, "duration", "run for `D` of virtual time (default: the profile's duration)")
	f.StringVar(&o.seed, "seed", "", "seed the random generators with `N` (default: the profile's seed)")
	f.StringVar(&o.trace, "trace", "", "write a CSV trace of every frame to `FILE`")
	addSummaryFlags(f, &o.summary)
	f.StringVar(&o.bench, "bench", "", "co-simulate the model endpoints of the bench file `BENCH`, their hardware parts standing in for the hardware")
	f.StringVar(&o.signals, "signals", "", "write the model signals, a row per exchange step, as CSV to `FILE` (with --bench)")
	o.sets = setFlag(f)
	o.expects = expectFlag(f)
	o.replays = replayFlag(f)
	f.StringVar(&o.queues, "queues", "", "write what each hop holds (bytes and frames waiting, frames held by an outage), a row every 10 ms, as CSV to `FILE`")
	f.StringVar(&o.record, "record", "", "with --bench, record the frames its endpoints played in software sent and were sent to `FILE` (pcapng), in virtual time")
	f.BoolVar(&o.realtimeView, "realtime-view", false, "pace the run to the wall clock, so that it can be watched (a status line; the dashboard with --listen) and changed live; it records what the run records as fast as the CPU allows")
	addLiveFlags(c, &o.live)
	completeFlags(c)
	return c
}

func runSim(ref string, o simFlags, stdout, stderr io.Writer) int {
	p, err := loadProfile(ref, *o.sets...)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	opt := rig.Options{Duration: o.duration, Log: stderr} // the run's events as they happen (a supervisor's alarms)
	var bench *benchfile.LoadedBench
	if o.seed != "" {
		s, err := strconv.ParseUint(o.seed, 10, 64)
		if err != nil {
			return fail(stderr, exitUsage, fmt.Errorf("--seed %q is not a whole number", o.seed))
		}
		opt.Seed = &s
	}
	if o.signals != "" && o.bench == "" {
		return fail(stderr, exitUsage, fmt.Errorf("--signals records the models of a bench: give --bench too"))
	}
	if opt.Players, err = players(*o.replays); err != nil {
		return fail(stderr, exitUsage, err)
	}
	if (len(opt.Players) > 0 || o.record != "") && o.bench == "" {
		return fail(stderr, exitUsage, fmt.Errorf("--replay and --record play a bench's endpoints: give --bench too"))
	}
	if o.bench != "" {
		b, err := benchfile.LoadBench(o.bench, p)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		bench = b
	}
	exps, err := expectations(*o.expects, p, bench, expect.Virtual, *o.replays)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	if err := o.live.check(); err != nil {
		return fail(stderr, exitUsage, err)
	}
	if o.live.listen != "" && !o.realtimeView {
		return fail(stderr, exitUsage, fmt.Errorf("--listen serves a sim paced to the wall clock: give --realtime-view too (without it the run is over in milliseconds)"))
	}
	var summaryFile io.Writer
	reads := slices.Concat(madeFrom("profile", p.Source, p.Files()), benchReads(bench), replayReads(*o.replays))
	outs := []output{{"--trace", o.trace, &opt.Trace}, {"--signals", o.signals, &opt.Signals},
		{"--record", o.record, &opt.Record}, {"--queues", o.queues, &opt.Queues}, {"--summary", o.summary.file, &summaryFile}}
	closeOutputs, err := createOutputs(reads, outs...)
	defer closeOutputs()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	sig := &expect.Signals{}
	opt.Signals = teeSignals(opt.Signals, sig, exps)
	var mon *record.Monitor
	if o.realtimeView {
		mon = &record.Monitor{}
		opt.Monitor, opt.Paced = mon, true
	}
	s, err := rig.Open(p, bench, rig.Virtual, opt)
	if err != nil {
		return fail(stderr, exitUsage, err) // the bench, its bindings or its recordings
	}
	var summary record.Summary
	if o.realtimeView {
		summary, err = simLive(s, mon, p, o, stderr)
	} else {
		summary, err = s.Run(context.Background())
	}
	if err != nil && summary.Profile == "" {
		return fail(stderr, exitFail, err)
	}
	// A run that failed (a model that fell out of sync with on_out_of_sync:
	// stop, or waited past its timeout) has its summary all the same: what
	// happened up to the instant it stopped, and why.
	if encErr := o.summary.write(stdout, summaryFile, summary, outs); encErr != nil {
		return fail(stderr, exitFail, encErr)
	}
	if err != nil {
		return fail(stderr, runFailure(err), err) // a *rig.RunError: what stopped the run, and what it lost
	}
	return judge(stderr, exps, &summary, sig)
}

// simLive runs a sim paced to the wall clock, with a status line, and
// serves it with --listen.
func simLive(s *rig.Session, mon *record.Monitor, p *profiles.Loaded, o simFlags, stderr io.Writer) (record.Summary, error) {
	ctx, stop := untilStopped()
	defer stop()
	r, err := o.live.serve(ctx, s, mon, cmp.Or(o.duration, p.RunDuration()), true, stderr)
	if err != nil {
		s.Close()
		return record.Summary{}, err
	}
	return r.run(ctx)
}
