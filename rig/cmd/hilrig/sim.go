package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig"
)

// durationFlag is a flag.Value for durations written as in profiles.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(s string) error {
	d, err := profiles.ParseDuration(s)
	*f.d = d
	return err
}

func runSim(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sim", stderr)
	var duration time.Duration
	fs.Var(durationFlag{&duration}, "duration", "virtual `time` to run (default: the profile's duration)")
	seed := fs.String("seed", "", "random `seed` (default: the profile's)")
	tracePath := fs.String("trace", "", "write a CSV trace of every frame to `file`")
	summaryPath := fs.String("summary", "", "write the JSON summary to `file` instead of stdout")
	benchPath := fs.String("bench", "", "co-simulate the model endpoints of the bench `file`, their hardware parts standing in for the hardware")
	signalsPath := fs.String("signals", "", "write the model signals, a row per exchange step, as CSV to `file` (with --bench)")
	var sets setFlags
	fs.Var(&sets, "set", "override a profile value, `path=value` (repeatable)")
	pos, code, ok := arguments(fs, args, 1, 1, stderr)
	if !ok {
		return code
	}
	p, err := profiles.Load(pos[0], sets...)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	opt := rig.Options{Duration: duration}
	var bench *profiles.LoadedBench
	if *seed != "" {
		s, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			return fail(stderr, exitUsage, fmt.Errorf("--seed %q is not a whole number", *seed))
		}
		opt.Seed = &s
	}
	if *signalsPath != "" && *benchPath == "" {
		return fail(stderr, exitUsage, fmt.Errorf("--signals records the models of a bench: give --bench too"))
	}
	if *benchPath != "" {
		b, err := profiles.LoadBench(*benchPath, p)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		if len(b.Models) == 0 {
			return fail(stderr, exitUsage, fmt.Errorf("%s has no model endpoint; in sim the profile's traffic stands in for hardware, so a bench matters only for the models it cuts", *benchPath))
		}
		bench = b
	}
	out := stdout
	closeOutputs, err := createOutputs(output{*tracePath, &opt.Trace}, output{*signalsPath, &opt.Signals}, output{*summaryPath, &out})
	defer closeOutputs()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	summary, err := rig.Sim(p, bench, opt)
	if err != nil {
		return fail(stderr, exitFail, err)
	}
	if err := writeJSON(out, summary); err != nil {
		return fail(stderr, exitFail, err)
	}
	return exitOK
}
