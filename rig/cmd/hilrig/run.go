package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig"
)

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	benchPath := fs.String("bench", "", "the bench `file`: endpoints and the flows they carry")
	var duration, spin time.Duration
	fs.Var(durationFlag{&duration}, "duration", "how long to run (default: the profile's duration)")
	fs.Var(durationFlag{&spin}, "spin", "how long before a deadline the executor spins instead of sleeping (default 100us)")
	tracePath := fs.String("trace", "", "write a CSV trace of every frame to `file`")
	signalsPath := fs.String("signals", "", "write the model endpoints' signals, a row per exchange, as CSV to `file`")
	summaryPath := fs.String("summary", "", "write the JSON summary to `file` instead of stdout")
	priority := fs.Int("priority", 80, "SCHED_FIFO `priority` of the executor (0: do not change the scheduling)")
	var sets setFlags
	fs.Var(&sets, "set", "override a profile value, `path=value` (repeatable)")
	pos, code, ok := arguments(fs, args, 1, 1, stderr)
	if !ok {
		return code
	}
	if *benchPath == "" {
		fs.Usage()
		return exitUsage
	}
	p, err := profiles.Load(pos[0], sets...)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	b, err := profiles.LoadBench(*benchPath, p)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	opt := rig.Options{Duration: duration, Spin: spin, Priority: *priority, Log: stderr}
	out := stdout
	closeOutputs, err := createOutputs(output{*tracePath, &opt.Trace}, output{*signalsPath, &opt.Signals}, output{*summaryPath, &out})
	defer closeOutputs()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	summary, err := rig.Run(ctx, p, b, opt)
	var devErr *drivers.DeviceError
	if err != nil && summary.Profile == "" {
		// The run did not start: a device is missing or unusable.
		if errors.As(err, &devErr) {
			return fail(stderr, exitUsage, err)
		}
		return fail(stderr, exitFail, err)
	}
	if encErr := writeJSON(out, summary); encErr != nil {
		return fail(stderr, exitFail, encErr)
	}
	if err != nil {
		return fail(stderr, exitFail, fmt.Errorf("run stopped: %w", err))
	}
	return exitOK
}

func runPorts(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ports", stderr)
	_, code, ok := arguments(fs, args, 0, 0, stderr)
	if !ok {
		return code
	}
	ports, err := drivers.SerialPorts()
	if err != nil {
		fmt.Fprintf(stderr, "hilrig: listing serial ports: %v\n", err)
	}
	fmt.Fprintln(stdout, "serial ports:")
	if len(ports) == 0 {
		fmt.Fprintln(stdout, "  none")
	}
	for _, p := range ports {
		line := "  " + p.Name
		if p.USB {
			line += fmt.Sprintf("  USB %s:%s", p.VID, p.PID)
			if p.Serial != "" {
				line += " serial " + p.Serial
			}
			if p.Product != "" {
				line += " (" + p.Product + ")"
			}
		}
		fmt.Fprintln(stdout, line)
	}
	chips, err := drivers.GPIOChips()
	fmt.Fprintln(stdout, "GPIO chips:")
	if err != nil {
		fmt.Fprintf(stdout, "  none (%v)\n", err)
	} else if len(chips) == 0 {
		fmt.Fprintln(stdout, "  none (no /dev/gpiochip*)")
	}
	for _, c := range chips {
		fmt.Fprintf(stdout, "  %s %s (%s): %d lines\n", c.Name, c.Path, c.Label, len(c.Lines))
		for _, l := range c.Lines {
			fmt.Fprintf(stdout, "    %s\n", l)
		}
	}
	return exitOK
}
