package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/record"
)

// A run's summary goes, at its end, as JSON to --summary FILE, and to
// stdout with --json or when stdout is not a terminal (a pipe, a file:
// what CI and scripts read, as before) and no --summary takes it; a
// person at a terminal gets it in words (printSummary).

// summaryFlags are the flags that say where a run's summary goes.
type summaryFlags struct {
	file string
	json bool
}

// addSummaryFlags defines --summary and --json on fs.
func addSummaryFlags(fs *pflag.FlagSet, o *summaryFlags) {
	fs.StringVar(&o.file, "summary", "", "write the JSON summary to `FILE` rather than stdout (which has it in words on a terminal)")
	fs.BoolVar(&o.json, "json", false, "print the JSON summary on stdout even on a terminal, where it is otherwise in words (when stdout is not a terminal it is JSON unless --summary takes it)")
}

// write writes the run's summary where o says, files being the
// outputs the run wrote (for the summary in words to say where they are).

func (o summaryFlags) write(stdout, file io.Writer, s record.Summary, files []output) error {
	if file != nil {
		if err := writeJSON(file, s); err != nil {
			return err
		}
	}
	_, terminal := rig.TerminalFd(stdout)
	switch {
	case o.json || !terminal && file == nil:
		return writeJSON(stdout, s)
	case terminal:
		printSummary(stdout, s, nil, files)
	}
	return nil
}

// printSummary says what a run measured, in words, for a person: the
// run, each flow's frames and delay, the hops that queued or dropped, the
// phases, what the endpoints and models saw, the events, how the executor
// kept time, what failed, and where the run's files are (files: the
// outputs asked for; a path "-" or empty is left out). The JSON summary
// has every figure. d is the demo's set-up, nil for another run.
func printSummary(w io.Writer, s record.Summary, d *rig.DemoSetup, files []output) {
	head := "network " + s.Profile
	if s.Bench != "" {
		head += " on bench " + s.Bench
	}
	fmt.Fprintf(w, "\n%s, %s time, %s, seed %d; stopped: %s\n", head, s.Clock, seconds(s.Duration), s.Seed, s.Stopped)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range s.Flows {
		lost := f.Sent - f.Delivered - f.InFlight
		line := fmt.Sprintf("  %s\t%d sent\t%d arrived\t%d lost\t%d in flight", f.Name, f.Sent, f.Delivered, lost, f.InFlight)
		if f.Delay != nil {
			line += fmt.Sprintf("\tdelay p50 %s, p99 %s, max %s", seconds(f.Delay.P50), seconds(f.Delay.P99), seconds(f.Delay.Max))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	for _, h := range s.Hops {
		drops := dropList(h.Dropped)
		if h.PeakQueueBytes == 0 && h.PeakHeldFrames == 0 && drops == "" {
			continue
		}
		var parts []string
		if h.PeakQueueBytes > 0 {
			parts = append(parts, fmt.Sprintf("at most %d B (%d frames) waiting", h.PeakQueueBytes, h.PeakQueueFrames))
		}
		if h.PeakHeldFrames > 0 {
			parts = append(parts, fmt.Sprintf("at most %d frames held by an outage", h.PeakHeldFrames))
		}
		if drops != "" {
			parts = append(parts, "dropped "+drops)
		}
		fmt.Fprintf(w, "hop %s: %s\n", h.Name, strings.Join(parts, "; "))
	}
	for _, p := range s.Phases {
		var parts []string
		for _, f := range p.Flows {
			part := fmt.Sprintf("%s %d of %d arrived", f.Name, f.Delivered, f.Sent)
			if f.Delay != nil {
				part += ", p99 " + seconds(f.Delay.P99)
			}
			parts = append(parts, part)
		}
		fmt.Fprintf(w, "phase %s (%d windows): %s\n", p.Name, int64(len(p.Windows))+p.WindowsNotListed, strings.Join(parts, "; "))
	}
	device := "the device"
	if d != nil {
		device = map[string]string{rig.ScenarioFirmware: "the controller", rig.ScenarioQuarterCar: "the seat"}[d.Scenario]
	}
	for _, e := range s.Endpoints {
		if e.Kind != "played" {
			line := fmt.Sprintf("endpoint %s (%s): %d frames in, %d out, %d bad", e.Name, cmp.Or(e.Device, e.Kind), e.FramesIn, e.FramesOut, e.BadFrames)
			if e.WriteErrors > 0 {
				line += fmt.Sprintf(", %d write errors", e.WriteErrors)
			}
			if len(e.Gaps) > 0 {
				away := 0.0
				for _, g := range e.Gaps {
					away += g[1] - g[0]
				}
				line += fmt.Sprintf("; away %s, %s in all", count(len(e.Gaps), "time", "times"), seconds(away))
			}
			if e.Error != "" {
				line += "; " + e.Error
			}
			fmt.Fprintln(w, line)
		}
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
					fmt.Fprintf(w, "; from its stamps, its messages took %s to reach the rig at the median, %s at p99", seconds(l.P50), seconds(l.P99))
				}
				fmt.Fprintln(w)
			}
		}
	}
	for _, m := range s.Models {
		fmt.Fprintf(w, "model %s cut at %s (%s, exchange every %v):\n", m.Model, m.Cut, m.Solver, time.Duration(m.ExchangeS*1e9))
		fmt.Fprintf(w, "  %d exchanges, %d overruns", m.Exchanges, m.Overruns)
		if l := m.StepLateness; l != nil {
			fmt.Fprintf(w, "; exchanges started %s late at the median, %s at p99", seconds(l.P50), seconds(l.P99))
		}
		fmt.Fprintf(w, "\n  frames: %d sent to %s, %d taken up from it, %d undecodable\n", m.FramesOut, device, m.FramesIn, m.BadFrames)
		if o := m.Output; o != nil {
			switch {
			case d != nil && d.Scenario == rig.ScenarioFirmware:
				fmt.Fprintf(w, "  %s: the load's speed, against the same loop without the network (the firmware's law in the model), peaks at %.2f rad/s; the loop through the network strayed from it by at most %.3f rad/s (%.1f %% of the peak)\n",
					o.Signal, o.Peak, o.MaxError, 100*o.OfPeak)
			case d != nil:
				fmt.Fprintf(w, "  %s: the uncut car peaks at %.2f mm; the HIL loop strayed from it by at most %.2f mm (%.1f %% of the peak)\n",
					o.Signal, 1000*o.Peak, 1000*o.MaxError, 100*o.OfPeak)
			default:
				fmt.Fprintf(w, "  %s: the uncut model peaks at %.4g; the loop through the network strayed from it by at most %.4g (%.1f %% of the peak)\n",
					o.Signal, o.Peak, o.MaxError, 100*o.OfPeak)
			}
			if o.DivergedS != nil {
				fmt.Fprintf(w, "  it diverged at %.3f s\n", *o.DivergedS)
			}
		}
		if f := m.FMU; f != nil {
			where := "in hilrig's process"
			if f.Isolated {
				where = "in a process of its own"
			}
			fmt.Fprintf(w, "  FMU %s (%s, %s): %d steps", filepath.Base(f.File), f.Interface, where, f.Steps)
			if f.Error != "" {
				fmt.Fprintf(w, "; failed: %s", f.Error)
			}
			fmt.Fprintln(w)
		}
		if x := m.Wire; x != nil && x.OneWayDelay != nil {
			fmt.Fprintf(w, "  through the network, %s's messages took %s to reach the model at the median, %s at p99, %d missed\n", device, seconds(x.OneWayDelay.P50), seconds(x.OneWayDelay.P99), x.Missed)
		}
	}
	const mostEvents = 10 // a flapping device makes hundreds: the JSON has them all
	for i, e := range s.Events {
		if i == mostEvents {
			fmt.Fprintf(w, "… and %d more events (the JSON summary lists them all)\n", len(s.Events)-mostEvents)
			break
		}
		fmt.Fprintf(w, "event at %.3f s: %s: %s\n", e.AtS, e.Kind, e.Detail)
	}
	if t := s.Timing; t != nil {
		fmt.Fprintf(w, "executor: %s", t.Scheduler)
		var notes []string
		if t.MemoryLocked {
			notes = append(notes, "memory locked")
		}
		if t.IdlePolling {
			notes = append(notes, "idle CPUs polling")
		}
		if t.KernelPreemption != "" {
			notes = append(notes, "kernel preemption "+t.KernelPreemption)
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, ", %s", strings.Join(notes, ", "))
		}
		if l := t.WakeLateness; l != nil {
			fmt.Fprintf(w, "; woke %s late at p99", seconds(l.P99))
		}
		if l := t.ReleaseLateness; l != nil {
			fmt.Fprintf(w, "; released frames %s late at p99, %s at most", seconds(l.P99), seconds(l.Max))
		}
		fmt.Fprintf(w, "; busy %.1f %% of the run", 100*t.Busy)
		if t.Overloads > 0 {
			fmt.Fprintf(w, "; overloaded %s, %s in all", count(int(t.Overloads), "time", "times"), seconds(t.OverloadS))
		}
		fmt.Fprintln(w)
	}
	for _, f := range s.Failures {
		fmt.Fprintf(w, "FAILED: %s\n", f)
	}
	printFiles(w, s, files)
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

// printFiles says where the run's files are, with the rows each holds.
func printFiles(w io.Writer, s record.Summary, files []output) {
	accounts := map[string]record.OutputSummary{}
	for _, o := range s.Outputs {
		accounts[o.Output] = o
	}
	// The flags' outputs as the summary's accounts name them.
	named := map[string]string{"--trace": record.OutputTrace, "--signals": record.OutputSignals, "--queues": record.OutputQueues, "--record": record.OutputRecording}
	var lines []string
	for _, f := range files {
		if f.path == "" || f.path == "-" || f.into == nil {
			continue
		}
		line := fmt.Sprintf("  %s\t%s", strings.TrimPrefix(f.flag, "--"), f.path)
		if a, ok := accounts[named[f.flag]]; ok {
			units := "rows"
			if f.flag == "--record" {
				units = "frames"
			}
			line += fmt.Sprintf("\t%d %s", a.Written, units)
			if a.Lost > 0 {
				line += fmt.Sprintf(", %d lost", a.Lost)
			}
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "files:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	tw.Flush()
}

// dropList is a drop count by reason as "12 queue_drop, 3 loss_drop",
// those that happened, or "".
func dropList(dropped map[string]uint64) string {
	var parts []string
	for _, reason := range slices.Sorted(maps.Keys(dropped)) {
		if n := dropped[reason]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, reason))
		}
	}
	return strings.Join(parts, ", ")
}

// seconds writes a time for a person: 65.8ms, 13.2us, 2s.
func seconds(v float64) string { return expect.Rounded(v, expect.Seconds) }
