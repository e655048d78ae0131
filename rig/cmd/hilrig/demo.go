package main

import (
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
)

// demoFlags are the flags of hilrig demo.
type demoFlags struct {
	scenario, cut, profile, trace, signals, summary string
	cutGiven                                        bool // --cut was given: the quarter car, unless --scenario says otherwise
	duration                                        time.Duration
	priority                                        int
	expects                                         *[]string
}

func demoCommand() *cobra.Command {
	o := demoFlags{duration: 10 * time.Second}
	c := &cobra.Command{
		Use:   "demo",
		Short: "a complete hardware-in-the-loop run with no hardware: reference firmware on a pseudo-terminal, the plant simulated by the rig",
		Long: `The rig simulates a plant cut at a coupling point in real time and
exchanges the variables that cross the cut, in the rig wire protocol,
with reference firmware on a pseudo-terminal through the profile's
network, then says what it measured.

Scenario firmware (the default): the reference PID firmware controls the
speed of a DC motor the rig simulates (motor-speed); the live line shows
the speed against its setpoint and the uncut loop's, the firmware's
messages and its fault flag. Scenario quarter-car: paper 001's quarter car
cut at CP1 or CP2, the seat played by the reference plant node with the
seat's physics on its pins.`,
		Args:              positional(0, 0),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		o.cutGiven = c.Flags().Changed("cut")
		return runDemo(o, c.OutOrStdout(), c.ErrOrStderr())
	})
	f := c.Flags()
	f.StringVar(&o.scenario, "scenario", "", "`firmware|quarter-car` (default firmware; quarter-car with --cut)")
	f.StringVar(&o.cut, "cut", "CP2", "cut the quarter car at `CP1|CP2` (the quarter-car scenario)")
	f.StringVar(&o.profile, "profile", "internet-hil", "the network between the rig and the device: a `PROFILE` whose first two flows go to the device and back")
	f.Var(durationFlag{d: &o.duration, positive: true}, "duration", "run for `D`")
	f.StringVar(&o.trace, "trace", "", "write a CSV trace of every frame to `FILE`")
	f.StringVar(&o.signals, "signals", "", "write the model's signals, a row per exchange, as CSV to `FILE`")
	f.StringVar(&o.summary, "summary", "", "also write the JSON summary to `FILE`")
	o.priority = 80
	f.Var(priorityFlag{&o.priority}, "priority", "SCHED_FIFO priority `N` of the executor (0: do not change the scheduling)")
	o.expects = expectFlag(f)
	completeFlags(c)
	c.RegisterFlagCompletionFunc("scenario", cobra.FixedCompletions(rig.DemoScenarios, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// options are the demo's options from its flags: a cut given alone
// chooses the quarter car.
func (o demoFlags) options() rig.DemoOptions {
	opt := rig.DemoOptions{Scenario: o.scenario, Profile: o.profile, Duration: o.duration, Priority: o.priority}
	if opt.Scenario == "" && o.cutGiven {
		opt.Scenario = rig.ScenarioQuarterCar
	}
	if o.cutGiven || opt.Scenario == rig.ScenarioQuarterCar {
		opt.Cut = o.cut
	}
	return opt
}

func runDemo(o demoFlags, stdout, stderr io.Writer) int {
	opt := o.options()
	opt.Log, opt.Out = stderr, stdout
	opt.Status = stderr // redrawn in place on a terminal, plain lines otherwise
	// The demo's profile and bench as it will set them up, for --expect
	// and for the files its outputs may not overwrite; a scenario,
	// profile or cut the demo cannot use is left for the demo to report,
	// in its words.
	setup, setupErr := rig.SetUpDemo(o.options(), os.TempDir())
	var reads []namedFile
	if setupErr == nil {
		reads = madeFrom("profile", setup.Profile.Source, setup.Profile.Files())
	}
	exps, err := demoExpectations(*o.expects, setup)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	var summaryOut io.Writer
	outs := []output{{"--trace", o.trace, &opt.Trace}, {"--signals", o.signals, &opt.Signals}, {"--summary", o.summary, &summaryOut}}
	closeOutputs, err := createOutputs(reads, outs...)
	defer closeOutputs()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	sig := &expect.Signals{}
	opt.Signals = teeSignals(opt.Signals, sig, exps)
	ctx, stop := untilStopped()
	defer stop()
	summary, setup, err := rig.Demo(ctx, opt)
	if err != nil && summary.Profile == "" {
		return fail(stderr, exitUsage, profileSuggestion(o.profile, err))
	}
	printSummary(stdout, summary, setup, outs)
	if summaryOut != nil {
		if werr := writeJSON(summaryOut, summary); werr != nil {
			return fail(stderr, exitFail, werr)
		}
	}
	if err != nil {
		return fail(stderr, runFailure(err), err) // a *rig.RunError: what stopped the run, and what it lost
	}
	return judge(stderr, exps, &summary, sig)
}

// demoExpectations parses --expect against the demo's profile and bench,
// as set up (nil: the demo cannot use its options, and says so when it
// runs).
func demoExpectations(texts []string, setup *rig.DemoSetup) ([]*expect.Expectation, error) {
	if len(texts) == 0 || setup == nil {
		return nil, nil
	}
	return expectations(texts, setup.Profile, setup.Bench, expect.Real, nil)
}
