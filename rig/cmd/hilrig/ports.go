package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/rig"
)

func portsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:               "ports",
		Short:             "list serial ports and GPIO chips",
		Args:              positional(0, 0),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int { return runPorts(c.OutOrStdout(), c.ErrOrStderr()) })
	return c
}

// runPorts lists the devices of each device kind that has some to list;
// a kind that cannot list them says why, and the others are still listed.
func runPorts(stdout, stderr io.Writer) int {
	rig.ListPorts(stdout, stderr)
	return exitOK
}
