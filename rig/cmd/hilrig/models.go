package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/profiles/modelfile"
)

func modelsCommand() *cobra.Command {
	params := paramFlags{}
	c := &cobra.Command{
		Use:               "models [MODEL]",
		Short:             "list the built-in plant models, or describe one (or a model file): signals, cuts, parameters",
		Args:              positional(0, 1),
		ValidArgsFunction: completeModels,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runModels(args, params, c.OutOrStdout(), c.ErrOrStderr())
	})
	paramFlag(c.Flags(), params)
	completeFlags(c)
	return c
}

// paramFlag defines --param on fs, collected into params.
func paramFlag(fs *pflag.FlagSet, params paramFlags) {
	fs.Var(params, "param", "change a built-in model's parameter: `name=value` (repeatable)")
}

func runModels(args []string, params paramFlags, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		for _, b := range plant.Builtins() {
			fmt.Fprintf(tw, "%s\t%s\n", b.Name, b.Description)
		}
		tw.Flush()
		fmt.Fprintln(stdout, "\nhilrig models NAME describes one: its signals, cuts and parameters.")
		return exitOK
	case 1:
		if isFMU(args[0]) {
			return runModelsFMU(args[0], params, stdout, stderr)
		}
		m, err := modelfile.LoadModel(args[0], params)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		describeModel(stdout, m)
		return exitOK
	}
	panic("models takes at most one argument") // checked by positional
}

// describeModel prints what a bench and a device need to know of a model:
// its blocks and signals, its inputs, its cuts with what crosses each way
// (the frame's layout), and a built-in's parameters.
func describeModel(w io.Writer, m *modelfile.LoadedModel) {
	fmt.Fprintf(w, "%s (%s)\n", m.Name, m.Source)
	if m.Description != "" {
		fmt.Fprintf(w, "  %s\n", m.Description)
	}
	if m.Builtin != nil && m.Builtin.Source != "" {
		fmt.Fprintf(w, "  source: %s\n", m.Builtin.Source)
	}
	fmt.Fprintln(w, "\nsubsystems:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range m.Subsystems {
		kind := "linear"
		if s.Equations != nil {
			kind = "nonlinear"
		}
		fmt.Fprintf(tw, "  %s\t%s\tstates %s\treads %s\tproduces %s\n", s.Name, kind, list(s.States), list(s.Inputs), list(s.Outputs))
	}
	tw.Flush()
	fmt.Fprintln(w, "\ninputs:")
	for _, in := range m.Inputs {
		fmt.Fprintf(w, "  %s: %s\n", in.Name, in.Stimulus)
	}
	if m.Output != "" {
		fmt.Fprintf(w, "\noutput of interest: %s\n", m.Output)
	}
	if len(m.Cuts) > 0 {
		fmt.Fprintln(w, "\ncuts (the rig simulates the rest; frames carry the variables in this order):")
		for _, c := range m.Cuts {
			sim, _, err := m.Cut(c.Name)
			if err != nil {
				continue
			}
			fmt.Fprintf(w, "  %s: %s\n", c.Name, c.Description)
			fmt.Fprintf(w, "    on the bench: %s\n", strings.Join(c.Hardware, ", "))
			fmt.Fprintf(w, "    the rig sends: %s\n", list(sim.Out()))
			fmt.Fprintf(w, "    the rig receives: %s\n", list(sim.In()))
		}
	}
	if m.Builtin != nil && len(m.Builtin.Params) > 0 {
		fmt.Fprintln(w, "\nparameters, with their defaults and the values they take (change them with --param, or params in a bench):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, p := range m.Builtin.Params {
			fmt.Fprintf(tw, "  %s\t%g %s\t%s, %s\t%s\n", p.Name, p.Value, p.Unit, p.Domain.Kind, p.Domain, p.Meaning)
		}
		tw.Flush()
	}
}

func list(names []string) string {
	if len(names) == 0 {
		return "nothing"
	}
	return strings.Join(names, ", ")
}
