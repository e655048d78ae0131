package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
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
	closeOutputs, err := createOutputs(reads, output{"--trace", o.trace, &opt.Trace}, output{"--signals", o.signals, &opt.Signals}, output{"--summary", o.summary, &summaryOut})
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
	printDemo(stdout, summary, setup)
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

// printDemo reports what the demo measured, in words.
func printDemo(w io.Writer, s record.Summary, d *rig.DemoSetup) {
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
	device := "the device"
	if d != nil {
		device = map[string]string{rig.ScenarioFirmware: "the controller", rig.ScenarioQuarterCar: "the seat"}[d.Scenario]
	}
	for _, m := range s.Models {
		fmt.Fprintf(w, "model %s cut at %s (%s, exchange every %v):\n", m.Model, m.Cut, m.Solver, time.Duration(m.ExchangeS*1e9))
		fmt.Fprintf(w, "  %d exchanges, %d overruns", m.Exchanges, m.Overruns)
		if l := m.StepLateness; l != nil {
			fmt.Fprintf(w, "; exchanges started %.1f µs late at the median, %.1f µs at p99", l.P50*1e6, l.P99*1e6)
		}
		fmt.Fprintf(w, "\n  frames: %d sent to %s, %d taken up from it, %d undecodable\n", m.FramesOut, device, m.FramesIn, m.BadFrames)
		if o := m.Output; o != nil {
			switch {
			case d != nil && d.Scenario == rig.ScenarioFirmware:
				fmt.Fprintf(w, "  %s: the load's speed, against the same loop without the network (the firmware's law in the model), peaks at %.2f rad/s; the loop through the network strayed from it by at most %.3f rad/s (%.1f %% of the peak)\n",
					o.Signal, o.Peak, o.MaxError, 100*o.OfPeak)
			default:
				fmt.Fprintf(w, "  %s: the uncut car peaks at %.2f mm; the HIL loop strayed from it by at most %.2f mm (%.1f %% of the peak)\n",
					o.Signal, 1000*o.Peak, 1000*o.MaxError, 100*o.OfPeak)
			}
		}
	}
	for _, e := range s.Endpoints {
		if x := e.Wire; x != nil {
			fmt.Fprintf(w, "%s (%s, wire protocol): %d messages, %d CRC failures, %d malformed, %d missed, %d duplicates, %d late, %d restarts",
				e.Name, e.Device, x.Messages, x.CRCErrors, x.Malformed, x.Missed, x.Duplicates, x.Late, x.Restarts)
			if x.Status != "" {
				fmt.Fprintf(w, "; its heartbeat says %s", x.Status)
			}
			fmt.Fprintln(w)
			if x.ClockOffsetS != nil {
				fmt.Fprintf(w, "  its clock: %.6f s from the rig's, drifting %.1f ppm (%d time exchanges)", *x.ClockOffsetS, 1e6**x.ClockDrift, x.TimeExchanges)
				if l := x.OneWayDelay; l != nil {
					fmt.Fprintf(w, "; from its stamps, its messages took %.0f µs to reach the rig at the median, %.0f µs at p99", l.P50*1e6, l.P99*1e6)
				}
				fmt.Fprintln(w)
			}
		}
	}
	for _, m := range s.Models {
		if x := m.Wire; x != nil && x.OneWayDelay != nil {
			fmt.Fprintf(w, "  through the network, %s's messages took %.1f ms to reach the model at the median, %.1f ms at p99, %d missed\n", device, 1000*x.OneWayDelay.P50, 1000*x.OneWayDelay.P99, x.Missed)
		}
	}
	for _, e := range s.Events {
		fmt.Fprintf(w, "event at %.3f s: %s: %s\n", e.AtS, e.Kind, e.Detail)
	}
	t := s.Timing
	if t == nil {
		t = &record.TimingSummary{}
	}
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
	if d == nil {
		return
	}
	switch d.Scenario {
	case rig.ScenarioFirmware:
		fmt.Fprintln(w, "\nThe rig ran the motor; the firmware, on its own clock behind a pseudo-terminal, ran the speed loop through the network. "+
			"Try --profile geo-satellite (a 600 ms round trip): more delay than the loop's phase margin allows, and the speed oscillates between the voltage limits; "+
			"--profile flaky-link --duration 20s: its outage at 15 s raises the firmware's fault flag, "+
			"and it holds its last command until measurements come back; --scenario quarter-car for paper 001's quarter car.")
	default:
		cut := d.Bench.Models["car"].Cut
		switch cut {
		case "CP2":
			fmt.Fprintln(w, "\nPaper 001: cut at CP2 the loop follows the uncut car. Try --cut CP1: the same delay distorts it by up to 19 dB at 19 ms each way, 24 dB at 20 ms (hilrig couple quarter-car --delay 19ms), and it oscillates.")
		case "CP1":
			fmt.Fprintln(w, "\nPaper 001: cut at CP1 the delay distorts the deflection most near 30 rad/s, by 19.2 dB at 33.1 rad/s with 19 ms each way and 24.0 dB at 31.6 rad/s with 20 ms (hilrig couple quarter-car --delay 19ms), hence the 0.2 s oscillation. Compare --cut CP2.")
		}
	}
}
