package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/profiles/modelfile"
	"github.com/hilrig/hilrig/rig/report"
)

// coupleFlags are the flags of hilrig couple.
type coupleFlags struct {
	delay                         time.Duration
	output, input, cuts, csv, svg string
	params                        paramFlags
}

func coupleCommand() *cobra.Command {
	o := coupleFlags{delay: 20 * time.Millisecond, params: paramFlags{}}
	c := &cobra.Command{
		Use:   "couple MODEL",
		Short: "rank a model's coupling points by the distortion a round-trip delay causes (paper 001)",
		Long: `For each cut, the distortion is Θ = (P − Rd)/Rd over frequency, with Rd the
output's response to the input without delay and P the response with the
round trip 2τ in the loop (paper 001, equations 1–6), and the sensitivity
Sr is how much a relative change of the hardware part changes the response
(equation 7). The cut with the lowest peak distortion is ranked first.`,
		Args:              positional(1, 1),
		ValidArgsFunction: completeModels,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runCouple(args[0], o, c.OutOrStdout(), c.ErrOrStderr())
	})
	f := c.Flags()
	f.Var(durationFlag{d: &o.delay}, "delay", "the one-way delay `D`, τ (the round trip is 2τ)")
	f.StringVar(&o.output, "output", "", "the signal `NAME` whose response is distorted (default: the model's output)")
	f.StringVar(&o.input, "input", "", "the model input `NAME` driving it (default: the model's only input)")
	f.StringVar(&o.cuts, "cuts", "", "compare the cuts `C1,C2` (default: every cut the model offers)")
	f.StringVar(&o.csv, "csv", "", "write the frequency responses to `FILE`: cut,omega_rad_s,distortion_db,sensitivity_db")
	f.StringVar(&o.svg, "svg", "", "plot distortion and sensitivity against frequency to `FILE`")
	paramFlag(f, o.params)
	completeFlags(c)
	return c
}

func runCouple(model string, o coupleFlags, stdout, stderr io.Writer) int {
	delay, output, input := o.delay, o.output, o.input
	m, err := modelfile.LoadModel(model, o.params)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	if output == "" {
		if output = m.Output; output == "" {
			return fail(stderr, exitUsage, fmt.Errorf("model %s names no output: choose one with --output (its signals: %s)", m.Name, strings.Join(m.Signals(), ", ")))
		}
	}
	if input == "" {
		names := inputNames(m.Plant)
		if len(names) != 1 {
			return fail(stderr, exitUsage, fmt.Errorf("model %s has inputs %s: choose one with --input", m.Name, strings.Join(names, ", ")))
		}
		input = names[0]
	}
	cuts := m.CutNames()
	if o.cuts != "" {
		cuts = strings.Split(o.cuts, ",")
	}
	if len(cuts) == 0 {
		return fail(stderr, exitUsage, fmt.Errorf("model %s offers no cuts", m.Name))
	}
	if delay <= 0 {
		return fail(stderr, exitUsage, fmt.Errorf("--delay must be positive: without a delay there is no distortion to rank"))
	}
	var reads []namedFile
	if m.Builtin == nil {
		reads = madeFrom("model", m.Source, []string{m.Source})
	}
	if err := checkOutputs([]namedFile{{"--csv", o.csv}, {"--svg", o.svg}}, reads); err != nil {
		return fail(stderr, exitUsage, err)
	}
	omegas := plant.LogSpace(0.1, 1000, 50)
	// Cuts asked for must each be analysed; of every cut the model offers,
	// those that leave the input or the output on the bench are set aside
	// and said, so that a model (dc-motor) whose output lives on one side
	// of one cut and its input on one side of the other still ranks what
	// can be ranked, or says how to ask.
	var results []*plant.Analysis
	var setAside []string
	for _, cut := range cuts {
		a, err := plant.Analyse(m.Plant, strings.TrimSpace(cut), input, output, delay, omegas)
		switch {
		case err != nil && o.cuts != "":
			return fail(stderr, exitUsage, err)
		case err != nil:
			setAside = append(setAside, err.Error())
		default:
			results = append(results, a)
		}
	}
	if len(results) == 0 {
		return fail(stderr, exitUsage, fmt.Errorf("no cut of %s can be ranked for %s's response to %s:\n  %s\nchoose with --output and --input signals the rig simulates at a cut (hilrig models %s lists each cut's sides)",
			m.Name, output, input, strings.Join(setAside, "\n  "), m.Name))
	}
	printCoupling(stdout, m, results)
	for _, why := range setAside {
		fmt.Fprintf(stdout, "not ranked: %s\n", why)
	}
	if o.csv != "" {
		if err := writeFile(o.csv, func(w io.Writer) error { return couplingCSV(w, results) }); err != nil {
			return fail(stderr, exitUsage, err)
		}
	}
	if o.svg != "" {
		title := fmt.Sprintf("%s: %s from %s, τ = %v each way", m.Name, output, input, delay)
		if err := writeFile(o.svg, func(w io.Writer) error {
			svg, err := report.CouplingPlot(title, results)
			if err == nil {
				_, err = w.Write(svg)
			}
			return err
		}); err != nil {
			return fail(stderr, exitUsage, err)
		}
	}
	return exitOK
}

func inputNames(p *plant.Plant) []string {
	var names []string
	for _, in := range p.Inputs {
		names = append(names, in.Name)
	}
	return names
}

// writeFile creates path and writes it with fill.
func writeFile(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = fill(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printCoupling prints each cut's peaks, the cuts ranked by peak
// distortion, and which distorts least.
func printCoupling(w io.Writer, m *modelfile.LoadedModel, results []*plant.Analysis) {
	a0 := results[0]
	fmt.Fprintf(w, "%s: distortion of %s's response to %s, delay %v each way (round trip %v)", m.Name, a0.Output, a0.Input, a0.Delay, 2*a0.Delay)
	if !a0.Linear {
		fmt.Fprint(w, ", linearised at the initial state")
	}
	fmt.Fprint(w, "\n\n")
	ranked := slices.Clone(results)
	slices.SortStableFunc(ranked, func(a, b *plant.Analysis) int {
		da, _ := a.PeakDistortion()
		db, _ := b.PeakDistortion()
		return cmp.Compare(da, db)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "rank\tcut\tpeak distortion\tpeak sensitivity\ton the bench")
	var notes []string
	for i, a := range ranked {
		d, dw := a.PeakDistortion()
		s, sw := a.PeakSensitivity()
		var hw []string
		for _, c := range m.Cuts {
			if c.Name == a.Cut {
				hw = c.Hardware
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", i+1, a.Cut, peakCell(d, dw), peakCell(s, sw), strings.Join(hw, ", "))
		if math.IsInf(d, -1) {
			notes = append(notes, fmt.Sprintf("%s: no distortion: the round trip changes %s's response at no frequency, to a float64's precision", a.Cut, a.Output))
		}
		if math.IsInf(s, -1) {
			notes = append(notes, fmt.Sprintf("%s: no sensitivity: %s's response does not change with the hardware part's dynamics, to a float64's precision", a.Cut, a.Output))
		}
	}
	tw.Flush()
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
	if len(ranked) > 1 {
		best, _ := ranked[0].PeakDistortion()
		next, _ := ranked[1].PeakDistortion()
		switch {
		case math.IsInf(next, -1):
			fmt.Fprintf(w, "\n%s and %s do not distort %s's response at all.\n", ranked[0].Cut, ranked[1].Cut, a0.Output)
		case math.IsInf(best, -1):
			fmt.Fprintf(w, "\n%s distorts least: not at all.\n", ranked[0].Cut)
		default:
			fmt.Fprintf(w, "\n%s distorts least: its peak is %.1f dB below %s's.\n", ranked[0].Cut, next-best, ranked[1].Cut)
		}
	}
}

// peakCell writes a peak for the table; a response that is zero at every
// frequency has no peak in decibels (−∞), and is "none", which a note
// after the table explains.
func peakCell(db, omega float64) string {
	if math.IsInf(db, -1) {
		return "none"
	}
	return fmt.Sprintf("%.1f dB at %.3g rad/s", db, omega)
}

func couplingCSV(w io.Writer, results []*plant.Analysis) error {
	if _, err := fmt.Fprintln(w, "cut,omega_rad_s,distortion_db,sensitivity_db"); err != nil {
		return err
	}
	for _, a := range results {
		for i, om := range a.Omega {
			if _, err := fmt.Fprintf(w, "%s,%s,%s,%s\n", a.Cut, strconv.FormatFloat(om, 'g', 8, 64),
				strconv.FormatFloat(plant.DB(a.Distortion[i]), 'f', 4, 64), strconv.FormatFloat(plant.DB(a.Sensitivity[i]), 'f', 4, 64)); err != nil {
				return err
			}
		}
	}
	return nil
}
