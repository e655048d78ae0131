package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/modelfile"
	"github.com/hilrig/hilrig/rig/fmu"
)

// simulateFlags are the flags of hilrig simulate.
type simulateFlags struct {
	stop, step time.Duration
	iface      string
	input, out string
	params     paramFlags
	inProcess  bool
}

// maxSimulateRows bounds the rows a simulation writes: a step far too
// small for its stop time is a mistake, not a run to wait for.
const maxSimulateRows = 100_000_000

func simulateCommand() *cobra.Command {
	o := simulateFlags{params: paramFlags{}}
	c := &cobra.Command{
		Use:   "simulate MODEL",
		Short: "run a plant model alone, offline (an FMU, a built-in model or a model file) and write its outputs as CSV",
		Long: `MODEL is an .fmu (FMI 2.0 or 3.0), the name of a built-in model, or a
model file. The CSV has a header, time and then each output by its name,
and a row per step from the start time, its numbers printed so that they
parse back to the same float64.

An FMU runs from its default experiment's start time to its stop time
(--stop, or 1 s after the start when it names none) at its step (--step,
or its Co-Simulation fixed internal step, or a 500th of the run), in
Co-Simulation when it offers it, else in Model Exchange (--interface),
where hilrig's adaptive Dormand-Prince integrator steps it at the
tolerance it names (1e-6 when it names none) and locates its events. A
built-in model or a model file runs from 0 to --stop (10s) at --step
(1ms) with the trapezoidal solver, its outputs every signal its blocks
produce.

--input FILE.csv has the same shape, time and then inputs by name: each
input is sampled at the start of every step and held over it, linearly
interpolated between the file's rows for a continuous input and held from
row to row for a discrete one (an integer, a Boolean); before the first
row and after the last, the nearest row holds. --param name=value sets an
FMU's parameter (or start value) or a built-in model's parameter.

An FMU runs in a process of its own, as on a bench: a crash in it (a
segmentation fault, an abort) or its exit ends that process, and hilrig
reports it. --in-process runs it in hilrig's process instead, a few
microseconds a step faster, where a crash in the FMU ends hilrig.

The exit status is 2 for a problem with the input (the model, the file,
a flag), 1 when the FMU fails during the run (an error it returns, an
output that is not a number, a crash), with the rows before it written.
An FMU that ends the simulation itself ends the CSV where it did (exit
0).`,
		Args:              positional(1, 1),
		ValidArgsFunction: completeSimulateModel,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runSimulate(args[0], o, c.OutOrStdout(), c.ErrOrStderr())
	})
	f := c.Flags()
	f.Var(durationFlag{d: &o.stop, positive: true}, "stop", "the stop time `D` (default: the FMU's, or 10s)")
	f.Var(durationFlag{d: &o.step, positive: true}, "step", "the communication and output step `D` (default: the FMU's, or 1ms)")
	f.StringVar(&o.iface, "interface", "", "run an FMU's Co-Simulation or Model Exchange interface: `cs|me` (default: cs when offered)")
	f.StringVar(&o.input, "input", "", "the inputs from `FILE.csv`: time, then each input by name")
	f.StringVar(&o.out, "out", "", "write the outputs to `FILE.csv` (default: standard output)")
	f.Var(o.params, "param", "set a parameter: `name=value` (repeatable)")
	f.BoolVar(&o.inProcess, "in-process", false, "run an FMU in hilrig's process, not in a child process: faster, and a crash in the FMU ends hilrig")
	cobra.MarkFlagFilename(f, "input", "csv")
	cobra.MarkFlagFilename(f, "out", "csv")
	c.RegisterFlagCompletionFunc("interface", cobra.FixedCompletions([]string{"cs", "me"}, cobra.ShellCompDirectiveNoFileComp))
	for _, name := range []string{"stop", "step", "param"} {
		c.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return c
}

// completeSimulateModel offers the built-in models, and the FMUs and
// model files here.
func completeSimulateModel(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, directive := completeModels(c, args, toComplete)
	if directive == cobra.ShellCompDirectiveFilterFileExt {
		return append(names, "fmu"), directive
	}
	entries, _ := os.ReadDir(".")
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".fmu") && strings.HasPrefix(e.Name(), toComplete) {
			names = append(names, e.Name())
		}
	}
	return names, directive
}

// isFMU tells an FMU from a built-in model's name or a model file.
func isFMU(ref string) bool { return strings.EqualFold(filepath.Ext(ref), ".fmu") }

func runSimulate(model string, o simulateFlags, stdout, stderr io.Writer) int {
	out := stdout
	reads := []namedFile{{"the model", model}}
	if o.input != "" {
		reads = append(reads, namedFile{"--input", o.input})
	}
	closeOut, err := createOutputs(reads, output{"--out", o.out, &out})
	defer closeOut()
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	ctx, stop := untilStopped()
	defer stop()
	w := bufio.NewWriter(out)
	var code int
	if isFMU(model) {
		code = simulateFMU(ctx, model, o, w, stderr)
	} else {
		code = simulateModel(ctx, model, o, w, stderr)
	}
	err = w.Flush()
	if cerr := closeOut(); err == nil {
		err = cerr
	}
	if err != nil && code == exitOK {
		return fail(stderr, exitFail, err)
	}
	return code
}

// rowWriter writes the CSV of a simulation.
type rowWriter struct {
	w   *bufio.Writer
	buf []byte
}

func (r *rowWriter) header(names []string) {
	r.w.WriteString("time")
	for _, n := range names {
		r.w.WriteString("," + n)
	}
	r.w.WriteString("\n")
}

// row writes a time and values so that they parse back exactly.
func (r *rowWriter) row(t float64, values []float64) {
	r.buf = strconv.AppendFloat(r.buf[:0], t, 'g', -1, 64)
	for _, v := range values {
		r.buf = append(r.buf, ',')
		r.buf = strconv.AppendFloat(r.buf, v, 'g', -1, 64)
	}
	r.buf = append(r.buf, '\n')
	r.w.Write(r.buf)
}

// communicationPoints is how many steps reach stop from start, the last
// one shortened to end there.
func communicationPoints(start, stop, step float64) (int, error) {
	n := math.Ceil((stop-start)/step - 1e-9)
	if n > maxSimulateRows {
		return 0, fmt.Errorf("a step of %g s from %g s to %g s makes %.3g rows; hilrig writes at most %d: give a longer --step or an earlier --stop", step, start, stop, n, maxSimulateRows)
	}
	return max(int(n), 1), nil
}

func simulateFMU(ctx context.Context, path string, o simulateFlags, w *bufio.Writer, stderr io.Writer) int {
	u, err := fmu.Open(path)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	defer u.Close()
	d := u.Description
	kind, err := chooseInterface(d, o.iface)
	if err != nil {
		return fail(stderr, exitUsage, fmt.Errorf("%s: %w", path, err))
	}
	e := d.Experiment
	start, stop, step := e.Start, e.Stop, e.Step
	if o.stop > 0 {
		stop = o.stop.Seconds()
	} else if stop == 0 {
		stop = start + 1
	}
	if !(stop > start) {
		return fail(stderr, exitUsage, fmt.Errorf("--stop %v is not after the FMU's start time, %g s", o.stop, start))
	}
	switch {
	case o.step > 0:
		step = o.step.Seconds()
	case step > 0:
	case kind == fmi.CS && d.Interface(fmi.CS).FixedInternalStepSize > 0:
		step = d.Interface(fmi.CS).FixedInternalStepSize
	default:
		step = (stop - start) / 500
	}
	n, err := communicationPoints(start, stop, step)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	cfg := fmi.Config{Kind: kind, Experiment: fmi.Experiment{Start: start, Stop: stop, Tolerance: e.Tolerance}, Params: o.params, Inputs: []string{}}
	var table *inputTable
	if o.input != "" {
		if table, err = readInputTable(o.input, func(names []string) ([]columnType, error) { return fmuColumns(d, names) }); err != nil {
			return fail(stderr, exitUsage, err)
		}
		cfg.Inputs = table.names
		cfg.Initial = table.sample(start, nil)
	}
	s, err := u.Start(cfg, fmu.Options{Isolate: !o.inProcess})
	if err != nil {
		if !strings.HasPrefix(err.Error(), path+": ") { // the loading's errors name it already
			err = fmt.Errorf("%s: %w", path, err)
		}
		return fail(stderr, runErrorCode(err), err)
	}
	defer s.Close()
	if iso, ok := s.(*fmu.Isolated); ok {
		// A step that never returns returns when the user stops the run.
		defer context.AfterFunc(ctx, iso.Kill)()
	}
	for _, why := range skippedOutputs(d) {
		fmt.Fprintf(stderr, "hilrig: note: %s\n", why)
	}
	rows := &rowWriter{w: w}
	var names []string
	for _, sig := range s.OutputSignals() {
		names = append(names, sig.Name)
	}
	rows.header(names)
	outs := make([]float64, len(names))
	var ins []float64
	if table != nil {
		ins = make([]float64, len(table.names))
	}
	s.Outputs(outs)
	rows.row(start, outs)
	for k := 1; k <= n; k++ {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "hilrig: stopped at t = %g s\n", s.Time())
			return exitFail
		}
		if table != nil {
			s.Set(table.sample(s.Time(), ins))
		}
		tk := start + float64(float64(k)*step)
		if k == n {
			tk = stop
		}
		if err := s.Step(tk); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(stderr, "hilrig: stopped at t = %g s\n", s.Time())
				return exitFail
			}
			if errors.Is(err, fmi.ErrTerminated) {
				// The last row is where the FMU ended, if past the rows.
				if s.Time() > start+float64(float64(k-1)*step) {
					s.Outputs(outs)
					rows.row(s.Time(), outs)
				}
				fmt.Fprintf(stderr, "hilrig: %s: %v\n", path, err)
				return exitOK
			}
			return fail(stderr, exitFail, fmt.Errorf("%s: %w", path, err))
		}
		s.Outputs(outs)
		rows.row(tk, outs)
	}
	if err := s.Close(); err != nil {
		return fail(stderr, exitFail, fmt.Errorf("%s: %w", path, err))
	}
	return exitOK
}

// chooseInterface is the interface asked for, or Co-Simulation when the
// FMU offers it, else Model Exchange.
func chooseInterface(d *fmi.Description, asked string) (fmi.Kind, error) {
	offers := func(k fmi.Kind) bool { return d.Interface(k) != nil }
	switch asked {
	case "cs", "me":
		k := map[string]fmi.Kind{"cs": fmi.CS, "me": fmi.ME}[asked]
		if !offers(k) {
			var has []string
			for _, f := range d.Interfaces {
				has = append(has, f.Kind.String())
			}
			return 0, fmt.Errorf("the FMU does not offer %s (it offers %s)", k, strings.Join(has, " and "))
		}
		return k, nil
	case "":
		if offers(fmi.CS) {
			return fmi.CS, nil
		}
		if offers(fmi.ME) {
			return fmi.ME, nil
		}
		return 0, errors.New("the FMU offers neither Co-Simulation nor Model Exchange, which hilrig runs")
	}
	return 0, fmt.Errorf("--interface %q: want cs or me", asked)
}

// runErrorCode is the exit status of an error while starting an FMU: 1
// for the FMU's own failure as it initialises (an error it returns, an
// output that is not a number, its process's crash), 2 for the FMU that
// cannot be run (no library for this machine, a refused instantiation:
// a wrong GUID) and for what the user asked (a parameter that does not
// exist).
func runErrorCode(err error) int {
	var ce *fmi.CallError
	var oe *fmi.OutputError
	var crash *fmu.CrashError
	var exit *fmu.ExitError
	var timeout *fmu.TimeoutError
	switch {
	case errors.As(err, &ce):
		if strings.HasPrefix(ce.Function, fmt.Sprintf("fmi%dInstantiate", ce.Version)) {
			return exitUsage
		}
		return exitFail
	case errors.As(err, &oe), errors.As(err, &crash), errors.As(err, &exit), errors.As(err, &timeout):
		return exitFail
	}
	return exitUsage
}

// skippedOutputs says which outputs the CSV leaves out, and why.
func skippedOutputs(d *fmi.Description) []string {
	var out []string
	for _, k := range d.Outputs {
		if v := &d.Variables[k]; !v.Type.Numeric() {
			out = append(out, fmt.Sprintf("the %s output %s is not recorded: hilrig carries numbers only", v.TypeName, v.Name))
		}
	}
	return out
}

// fmuColumns resolves an input file's columns to the FMU's inputs.
func fmuColumns(d *fmi.Description, names []string) ([]columnType, error) {
	cols := make([]columnType, len(names))
	for i, name := range names {
		sigs, err := d.Signals([]string{name})
		if err == nil && len(sigs) != 1 {
			err = fmt.Errorf("%s is an array: name each element, %s", name, strings.Join(d.Variables[sigs[0].Variable].ElementNames(), ", "))
		}
		if err != nil {
			var inputs []string
			for _, v := range d.Variables {
				if v.Causality == fmi.Input {
					inputs = append(inputs, v.Name)
				}
			}
			if len(sigs) == 0 {
				return nil, fmt.Errorf("the FMU has no input %s%s (its inputs: %s)", name, suggest.DidYouMean(name, inputs), listOrNone(inputs))
			}
			return nil, err
		}
		v := &d.Variables[sigs[0].Variable]
		if v.Causality != fmi.Input {
			return nil, fmt.Errorf("%s is not an input of the FMU (its causality is %s)", name, v.Causality)
		}
		if !v.Type.Numeric() {
			return nil, fmt.Errorf("%s is a %s input: hilrig sets numbers only", name, v.TypeName)
		}
		t := v.Type
		cols[i] = columnType{hold: !sigs[0].Continuous, parse: func(s string) (float64, error) { return fmi.ParseValue(t, s) }}
	}
	return cols, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func simulateModel(ctx context.Context, ref string, o simulateFlags, w *bufio.Writer, stderr io.Writer) int {
	if o.iface != "" {
		return fail(stderr, exitUsage, fmt.Errorf("--interface chooses an FMU's interface; %s is not an FMU", ref))
	}
	if o.inProcess {
		return fail(stderr, exitUsage, fmt.Errorf("--in-process is for an FMU; %s is not an FMU", ref))
	}
	m, err := modelfile.LoadModel(ref, o.params)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	stop, step := 10*time.Second, time.Millisecond
	if o.stop > 0 {
		stop = o.stop
	}
	if o.step > 0 {
		step = o.step
	}
	n, err := communicationPoints(0, stop.Seconds(), step.Seconds())
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	p := m.Plant
	if o.input != "" {
		inputs := inputNames(p)
		table, err := readInputTable(o.input, func(names []string) ([]columnType, error) {
			cols := make([]columnType, len(names))
			for i, name := range names {
				if !slices.Contains(inputs, name) {
					return nil, fmt.Errorf("the model %s has no input %s%s (its inputs: %s)", m.Name, name, suggest.DidYouMean(name, inputs), listOrNone(inputs))
				}
				cols[i] = columnType{parse: func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }}
			}
			return cols, nil
		})
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		model := p.Model
		model.Inputs = slices.Clone(model.Inputs)
		for i := range model.Inputs {
			if col := slices.Index(table.names, model.Inputs[i].Name); col >= 0 {
				model.Inputs[i].Stimulus = tableStimulus{table, col}
			}
		}
		if p, err = plant.New(model); err != nil {
			return fail(stderr, exitUsage, err)
		}
	}
	whole := p.Whole()
	it, err := plant.NewIntegrator(whole, plant.Trapezoidal, step)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	names := whole.Produces()
	idx := make([]int, len(names))
	for i, name := range names {
		idx[i] = p.SignalIndex(name)
	}
	rows := &rowWriter{w: w}
	rows.header(names)
	values := make([]float64, len(names))
	sample := func() {
		it.Sample()
		for i, k := range idx {
			values[i] = it.Signal(k)
		}
		rows.row(it.Time().Seconds(), values)
	}
	sample()
	for range n {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "hilrig: stopped at t = %v\n", it.Time())
			return exitFail
		}
		it.Advance()
		sample()
	}
	return exitOK
}

// inputTable is an input file: a column of times and a column per input.
type inputTable struct {
	file  string
	names []string
	times []float64
	cols  [][]float64
	hold  []bool // per column: held from row to row, not interpolated
}

// columnType is how an input file's column is read.
type columnType struct {
	hold  bool
	parse func(string) (float64, error)
}

// readInputTable reads an input file: a header of time and input names,
// which resolve says how to read, and rows of numbers at times that do
// not decrease. Every problem is at the file's line and column.
func readInputTable(path string, resolve func(names []string) ([]columnType, error)) (*inputTable, error) {
	data, err := lang.ReadFile(path, lang.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return parseInputTable(path, data, resolve)
}

// parseInputTable reads an input file's text; path names it in messages.
func parseInputTable(path string, data []byte, resolve func(names []string) ([]columnType, error)) (*inputTable, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comment = '#'
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty; an input file starts with a header, time and the inputs' names", path)
	}
	if err != nil {
		return nil, csvError(path, err)
	}
	if header[0] != "time" {
		return nil, fmt.Errorf("%s:1:1: the first column is %q; an input file's is time", path, header[0])
	}
	t := &inputTable{file: path, names: header[1:]}
	if len(t.names) == 0 {
		return nil, fmt.Errorf("%s:1: no inputs: the header names them after time", path)
	}
	for i, name := range t.names {
		line, col := r.FieldPos(i + 1)
		switch {
		case name == "":
			return nil, fmt.Errorf("%s:%d:%d: column %d has no name", path, line, col, i+2)
		case slices.Index(t.names, name) < i:
			return nil, fmt.Errorf("%s:%d:%d: %s is given twice", path, line, col, name)
		}
	}
	types, err := resolve(t.names)
	if err != nil {
		return nil, fmt.Errorf("%s:1: %w", path, err)
	}
	t.cols = make([][]float64, len(t.names))
	for _, ct := range types {
		t.hold = append(t.hold, ct.hold)
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(path, err)
		}
		line, col := r.FieldPos(0)
		tm, err := strconv.ParseFloat(rec[0], 64)
		if err != nil || math.IsInf(tm, 0) || math.IsNaN(tm) {
			return nil, fmt.Errorf("%s:%d:%d: time %q is not a finite number", path, line, col, rec[0])
		}
		if n := len(t.times); n > 0 && tm < t.times[n-1] {
			return nil, fmt.Errorf("%s:%d:%d: time %g comes before the row above's, %g: the rows go forward in time", path, line, col, tm, t.times[n-1])
		}
		t.times = append(t.times, tm)
		for i, s := range rec[1:] {
			v, err := types[i].parse(s)
			if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				err = fmt.Errorf("%q is not a finite number", s)
			}
			if err != nil {
				line, col := r.FieldPos(i + 1)
				return nil, fmt.Errorf("%s:%d:%d: %s: %v", path, line, col, t.names[i], err)
			}
			t.cols[i] = append(t.cols[i], v)
		}
	}
	if len(t.times) == 0 {
		return nil, fmt.Errorf("%s: a header and no rows: give the inputs' values at one time at least", path)
	}
	return t, nil
}

func csvError(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: %v", path, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// sample writes every input's value at t into dst (a new slice when nil):
// for a continuous input, interpolated between the rows around t (from a
// row that repeats a time, the later value); for a discrete one, the last
// row's at or before t. Before the first row the first holds, after the
// last the last.
func (t *inputTable) sample(at float64, dst []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(t.names))
	}
	for c := range t.names {
		dst[c] = t.at(c, at)
	}
	return dst
}

// at is a column's value at t; see sample.
func (t *inputTable) at(c int, at float64) float64 {
	i := sort.Search(len(t.times), func(i int) bool { return t.times[i] > at }) - 1
	return t.between(c, i, at)
}

// before is a column's value just before t: where the file jumps at t,
// the value it jumps from.
func (t *inputTable) before(c int, at float64) float64 {
	j := sort.Search(len(t.times), func(i int) bool { return t.times[i] >= at })
	if j < len(t.times) && t.times[j] == at && !t.hold[c] {
		return t.cols[c][j] // the first row at t ends the ramp towards it
	}
	return t.between(c, j-1, at)
}

// between is a column's value at t, given i, the last row before or at t
// (−1 for none).
func (t *inputTable) between(c, i int, at float64) float64 {
	v := t.cols[c]
	switch {
	case i < 0:
		return v[0]
	case i == len(v)-1 || t.hold[c]:
		return v[i]
	}
	t0, t1 := t.times[i], t.times[i+1]
	return v[i] + (v[i+1]-v[i])*(at-t0)/(t1-t0)
}

// tableStimulus drives a built-in model's input from an input file.
type tableStimulus struct {
	t   *inputTable
	col int
}

func (s tableStimulus) At(t float64) float64     { return s.t.at(s.col, t) }
func (s tableStimulus) Before(t float64) float64 { return s.t.before(s.col, t) }
func (s tableStimulus) String() string {
	return fmt.Sprintf("column %s of %s", s.t.names[s.col], s.t.file)
}
