package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hilrig/hilrig/profiles"
)

// setFlags collects repeated --set path=value overrides, in order.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("check", stderr)
	var sets setFlags
	fs.Var(&sets, "set", "override a value, `path=value` (repeatable)")
	benchPath := fs.String("bench", "", "also check the bench `file` against each profile: its endpoints, and flows it binds that the profile has")
	pos, code, ok := arguments(fs, args, 1, -1, stderr)
	if !ok {
		return code
	}
	var files []string
	for _, arg := range pos {
		found, err := profileFiles(arg)
		if err != nil {
			return fail(stderr, exitUsage, err)
		}
		files = append(files, found...)
	}
	bad := 0
	for _, file := range files {
		p, err := profiles.Load(file, sets...)
		if err != nil {
			bad++
			fail(stderr, exitUsage, err)
			continue
		}
		with := ""
		if *benchPath != "" {
			b, err := profiles.LoadBench(*benchPath, p)
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
// leaving out directories named benches and models (bench and model files
// live there, beside the profiles they run with); anything else is one
// profile (a file or a shipped name).
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
		if d.IsDir() && (d.Name() == "benches" || d.Name() == "models") && path != arg {
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

func runShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("show", stderr)
	var sets setFlags
	fs.Var(&sets, "set", "override a value, `path=value` (repeatable)")
	pos, code, ok := arguments(fs, args, 1, 1, stderr)
	if !ok {
		return code
	}
	p, err := profiles.Load(pos[0], sets...)
	if err != nil {
		return fail(stderr, exitUsage, err)
	}
	fmt.Fprintf(stdout, "# %s, resolved", p.Source)
	for _, s := range sets {
		fmt.Fprintf(stdout, " --set %s", s)
	}
	fmt.Fprintln(stdout)
	stdout.Write(p.YAML())
	return exitOK
}

func runProfiles(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("profiles", stderr)
	_, code, ok := arguments(fs, args, 0, 0, stderr)
	if !ok {
		return code
	}
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
