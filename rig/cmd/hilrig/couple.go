package main

import (
	"bufio"
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
	"github.com/hilrig/hilrig/profiles"
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
	f.Var(durationFlag{&o.delay}, "delay", "the one-way delay `D`, τ (the round trip is 2τ)")
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
	m, err := profiles.LoadModel(model, o.params)
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
	if delay < 0 {
		return fail(stderr, exitUsage, fmt.Errorf("--delay must not be negative"))
	}
	omegas := plant.LogSpace(0.1, 1000, 50)
	var results []*plant.Analysis
	for _, cut := range cuts {
		a, err := plant.Analyse(m.Plant, strings.TrimSpace(cut), input, output, delay, omegas)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		results = append(results, a)
	}
	printCoupling(stdout, m, results)
	if o.csv != "" {
		if err := writeFile(o.csv, func(w io.Writer) error { return couplingCSV(w, results) }); err != nil {
			return fail(stderr, exitFail, err)
		}
	}
	if o.svg != "" {
		title := fmt.Sprintf("%s: %s from %s, τ = %v each way", m.Name, output, input, delay)
		if err := writeFile(o.svg, func(w io.Writer) error { return couplingSVG(w, title, results) }); err != nil {
			return fail(stderr, exitFail, err)
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
func printCoupling(w io.Writer, m *profiles.LoadedModel, results []*plant.Analysis) {
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
		return cmpFloat(da, db)
	})
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintln(tw, "rank\tcut\tpeak distortion\tpeak sensitivity\ton the bench")
	for i, a := range ranked {
		d, dw := a.PeakDistortion()
		s, sw := a.PeakSensitivity()
		var hw []string
		for _, c := range m.Cuts {
			if c.Name == a.Cut {
				hw = c.Hardware
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f dB at %.3g rad/s\t%.1f dB at %.3g rad/s\t%s\n", i+1, a.Cut, d, dw, s, sw, strings.Join(hw, ", "))
	}
	tw.Flush()
	if len(ranked) > 1 {
		best, _ := ranked[0].PeakDistortion()
		next, _ := ranked[1].PeakDistortion()
		fmt.Fprintf(w, "\n%s distorts least: its peak is %.1f dB below %s's.\n", ranked[0].Cut, next-best, ranked[1].Cut)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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

// couplingSVG draws distortion and sensitivity in dB against log ω, one
// panel each, one line per cut.
func couplingSVG(w io.Writer, title string, results []*plant.Analysis) error {
	const (
		width, height    = 760, 620
		left, right      = 70, 20
		panelH, gap, top = 230, 70, 50
	)
	colors := []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}
	b := &strings.Builder{}
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(b, `<text x="%d" y="24" font-size="14">%s</text>`+"\n", left, escapeXML(title))
	lo, hi := results[0].Omega[0], results[0].Omega[len(results[0].Omega)-1]
	xOf := func(om float64) float64 {
		return left + (math.Log10(om)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(width-left-right)
	}
	for p, panel := range []struct {
		name string
		get  func(a *plant.Analysis, i int) float64
	}{
		{"distortion |Θ| (dB)", func(a *plant.Analysis, i int) float64 { return plant.DB(a.Distortion[i]) }},
		{"sensitivity |Sr| (dB)", func(a *plant.Analysis, i int) float64 { return plant.DB(a.Sensitivity[i]) }},
	} {
		y0 := float64(top + p*(panelH+gap))
		ymin, ymax := math.Inf(1), math.Inf(-1)
		for _, a := range results {
			for i := range a.Omega {
				v := panel.get(a, i)
				if !math.IsInf(v, 0) && !math.IsNaN(v) {
					ymin, ymax = min(ymin, v), max(ymax, v)
				}
			}
		}
		ymin, ymax = 20*math.Floor(ymin/20), 20*math.Ceil(ymax/20)
		if ymax == ymin {
			ymax = ymin + 20
		}
		yOf := func(v float64) float64 { return y0 + (ymax-v)/(ymax-ymin)*panelH }
		fmt.Fprintf(b, `<rect x="%d" y="%.0f" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", left, y0, width-left-right, panelH)
		for v := ymin; v <= ymax; v += 20 {
			fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%.0f</text>`+"\n", left, width-right, yOf(v), yOf(v), left-6, yOf(v)+4, v)
		}
		for e := math.Ceil(math.Log10(lo) - 1e-9); e <= math.Log10(hi)+1e-9; e++ {
			x := xOf(math.Pow(10, e))
			fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%g</text>`+"\n", x, x, y0, y0+panelH, x, y0+panelH+16, math.Pow(10, e))
		}
		fmt.Fprintf(b, `<text x="%d" y="%.0f">%s</text>`+"\n", left, y0-8, panel.name)
		fmt.Fprintf(b, `<text x="%d" y="%.0f" text-anchor="middle">ω (rad/s)</text>`+"\n", (width+left)/2, y0+panelH+34)
		for c, a := range results {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="`, colors[c%len(colors)])
			for i, om := range a.Omega {
				v := panel.get(a, i)
				if math.IsInf(v, 0) || math.IsNaN(v) {
					continue
				}
				fmt.Fprintf(b, "%.1f,%.1f ", xOf(om), yOf(v))
			}
			fmt.Fprint(b, `"/>`+"\n")
			fmt.Fprintf(b, `<text x="%d" y="%.0f" fill="%s">%s</text>`+"\n", width-right-60, y0+18+float64(c)*16, colors[c%len(colors)], escapeXML(a.Cut))
		}
	}
	fmt.Fprintln(b, "</svg>")
	_, err := io.WriteString(w, b.String())
	return err
}

func escapeXML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
