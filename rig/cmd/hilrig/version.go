package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is hilrig's module version as the Go toolchain stamped it into
// the binary, with the commit it was built from and when that was made
// when the build knew them: "(devel)" for a build without a version.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var b strings.Builder
	if rev := settings["vcs.revision"]; rev != "" {
		b.WriteString("commit " + rev)
		if at := settings["vcs.time"]; at != "" {
			b.WriteString(" of " + at)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("; ")
	}
	b.WriteString("built with " + info.GoVersion)
	return v + " (" + b.String() + ")"
}

func versionCommand() *cobra.Command {
	c := &cobra.Command{
		Use:               "version",
		Short:             "print hilrig's version (as --version does)",
		Args:              positional(0, 0),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		fmt.Fprintf(c.OutOrStdout(), "hilrig %s\n", version())
		return exitOK
	})
	return c
}
