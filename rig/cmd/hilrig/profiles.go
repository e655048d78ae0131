package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
)

// loadProfile is profiles.Load, suggesting a shipped profile when ref
// names none.
func loadProfile(ref string, sets ...string) (*profiles.Loaded, error) {
	p, err := profiles.Load(ref, sets...)
	return p, profileSuggestion(ref, err)
}

// profileSuggestion adds the shipped profile probably meant to err, an
// error about ref, when ref is a bare name (as profiles.Load looks up in
// the library) that is neither a file nor a shipped profile.
func profileSuggestion(ref string, err error) error {
	if err == nil || strings.ContainsAny(ref, `/\`) || filepath.Ext(ref) != "" ||
		!strings.Contains(err.Error(), ref) || strings.Contains(err.Error(), "did you mean") {
		return err
	}
	if _, statErr := os.Stat(ref); !errors.Is(statErr, fs.ErrNotExist) {
		return err
	}
	names := profiles.Shipped()
	if slices.Contains(names, ref) {
		return err
	}
	hint := suggest.DidYouMean(ref, names)
	if hint == "" {
		return err
	}
	return fmt.Errorf("%w%s", err, hint)
}

// checkFlags are the flags of hilrig check.
type checkFlags struct {
	bench string
	sets  *[]string
}

func checkCommand() *cobra.Command {
	var o checkFlags
	c := &cobra.Command{
		Use:   "check PROFILE|DIR...",
		Short: "validate profiles without running them (exit 0 if all are valid, 2 if not)",
		Long: `A directory stands for every .yaml below it, except in benches/, models/ and
suites/ directories (hilrig test checks a suite before it runs it). Every
problem is reported, with its file, line and column.`,
		Args:              positional(1, -1),
		ValidArgsFunction: completeProfiles,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int { return runCheck(args, o, c.OutOrStdout(), c.ErrOrStderr()) })
	f := c.Flags()
	f.StringVar(&o.bench, "bench", "", "also check the bench file `BENCH` against each profile: its endpoints, the flows it binds that the profile has, and that run can take the profile (a schedule recurring no faster than the real-time executor acts)")
	o.sets = setFlag(f)
	completeFlags(c)
	return c
}

func runCheck(args []string, o checkFlags, stdout, stderr io.Writer) int {
	var files []string
	for _, arg := range args {
		found, err := profileFiles(arg)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		files = append(files, found...)
	}
	bad := 0
	for _, file := range files {
		p, err := loadProfile(file, *o.sets...)
		if err != nil {
			bad++
			fail(stderr, exitUsage, err)
			continue
		}
		with := ""
		if o.bench != "" {
			b, err := benchfile.LoadBench(o.bench, p)
			if err == nil {
				err = rig.CheckRealTime(p) // a bench is what run runs
			}
			if err != nil {
				bad++
				fail(stderr, exitUsage, err)
				continue
			}
			with = fmt.Sprintf(", on bench %s: %s, %s bound", b.Name, count(b.Endpoints.Len(), "endpoint", "endpoints"), count(b.Bind.Len(), "flow", "flows"))
		}
		fmt.Fprintf(stdout, "ok  %s (%s, %s, %s%s)\n", file, count(p.Hops.Len(), "hop", "hops"), count(p.Flows.Len(), "flow", "flows"), count(len(p.Schedule), "schedule entry", "schedule entries"), with)
	}
	if len(files) > 1 {
		fmt.Fprintf(stdout, "%d profiles checked, %d with errors\n", len(files), bad)
	}
	if bad > 0 {
		return exitUsage
	}
	return exitOK
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprint(n, " ", many)
}

// profileFiles expands a directory into the .yaml files below it, sorted,
// leaving out directories named benches, models and suites (bench, model
// and suite files live there, beside the profiles they run with); anything
// else is one profile (a file or a shipped name).
func profileFiles(arg string) ([]string, error) {
	info, err := os.Stat(arg)
	if err != nil || !info.IsDir() {
		return []string{arg}, nil
	}
	var files []string
	err = filepath.WalkDir(arg, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "benches" || d.Name() == "models" || d.Name() == "suites") && path != arg {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("%s: no .yaml profiles in this directory", arg)
	}
	return files, err
}

func showCommand() *cobra.Command {
	var sets *[]string
	c := &cobra.Command{
		Use:               "show PROFILE",
		Short:             "print the profile as it will run: extends, overrides and defaults resolved",
		Args:              positional(1, 1),
		ValidArgsFunction: completeProfiles,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int {
		return runShow(args[0], *sets, c.OutOrStdout(), c.ErrOrStderr())
	})
	sets = setFlag(c.Flags())
	completeFlags(c)
	return c
}

func runShow(ref string, sets []string, stdout, stderr io.Writer) int {
	p, err := loadProfile(ref, sets...)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	fmt.Fprintf(stdout, "# %s, resolved", p.Source)
	for _, s := range sets {
		fmt.Fprintf(stdout, " --set %s", s)
	}
	fmt.Fprintln(stdout)
	stdout.Write(p.AsWritten())
	return exitOK
}

func profilesCommand() *cobra.Command {
	c := &cobra.Command{
		Use:               "profiles",
		Short:             "list the shipped profiles",
		Args:              positional(0, 0),
		ValidArgsFunction: cobra.NoFileCompletions,
	}
	c.RunE = action(func(c *cobra.Command, args []string) int { return runProfiles(c.OutOrStdout(), c.ErrOrStderr()) })
	return c
}

func runProfiles(stdout, stderr io.Writer) int {
	names := profiles.Shipped()
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		p, err := profiles.Load(n)
		if err != nil {
			return fail(stderr, exitFail, fmt.Errorf("shipped profile %s is broken: %w", n, err))
		}
		fmt.Fprintf(stdout, "%-*s  %s\n", width, n, p.Description)
	}
	return exitOK
}
