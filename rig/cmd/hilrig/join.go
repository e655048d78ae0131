package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/rig/report"
)

// joinFlags are the flags of hilrig join.
type joinFlags struct{ out string }

func joinCommand() *cobra.Command {
	var o joinFlags
	c := &cobra.Command{
		Use:   "join SITE_A_DIR SITE_B_DIR",
		Short: "join the runs of two sites coupled in one loop (two rigs, paper 001) into one report",
		Long: `Each directory holds one site's outputs of the same loop (hilrig run --summary,
--trace, --signals): a model cut at a coupling point, one side simulated at
each site, the sites exchanging the coupling variables in the wire protocol
over a udp or tcp endpoint. join says what each site measured of the
direction that reaches it (one-way delay, jitter, loss, reordering, the
other site's clock), how far the loop strayed from the uncut model, and
paper 001's distortion over frequency beside the prediction of couple for
the delay measured. With --out it writes one HTML page: the loop, then
each site's run.`,
		Args:              positional(2, 2),
		ValidArgsFunction: cobra.FixedCompletions(nil, cobra.ShellCompDirectiveFilterDirs),
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runJoin(args[0], args[1], o, c.OutOrStdout(), c.ErrOrStderr())
	})
	c.Flags().StringVar(&o.out, "out", "", "write the page to `FILE`")
	completeFlags(c)
	return c
}

func runJoin(dirA, dirB string, o joinFlags, stdout, stderr io.Writer) int {
	var runs [2]*report.Run
	for i, dir := range []string{dirA, dirB} {
		r, err := report.LoadRun(dir)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		runs[i] = r
	}
	sites, err := report.JoinSites(runs[0], runs[1])
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	page := report.Page{Title: fmt.Sprintf("hilrig join: %s and %s", sites.Site(0), sites.Site(1)), Source: dirA + " and " + dirB, Runs: runs[:], Sites: sites}
	if o.out != "" {
		if err := checkOutputs([]namedFile{{"--out", o.out}}, madeFrom("join", "", page.Files())); err != nil {
			return fail(stderr, exitUsage, err)
		}
		if err := report.WriteFile(o.out, page); err != nil {
			return fail(stderr, exitUsage, err)
		}
	}
	fmt.Fprint(stdout, sites.Words())
	if o.out != "" {
		fmt.Fprintln(stdout, o.out)
	}
	return exitOK
}
