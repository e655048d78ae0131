// Command hilrig is a hardware-in-the-loop rig controller: it inserts
// emulated network impairment between a controller and its plant and runs
// the same impairment engine in virtual time for design studies and CI.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitFail  = 1 // a test or assertion failed, or the run failed
	exitUsage = 2 // usage or input error
)

type command struct {
	name, args, summary string
	run                 func(args []string, stdout, stderr io.Writer) int
}

var commands []command

func init() {
	commands = []command{
		{"demo", "[--cut CP1|CP2] [--profile PROFILE] [--duration D] [--trace FILE] [--signals FILE] [--summary FILE]",
			"a complete hardware-in-the-loop run with no hardware: paper 001's quarter car and a virtual seat on a pseudo-terminal", runDemo},
		{"sim", "PROFILE [--duration D] [--seed N] [--trace FILE] [--summary FILE] [--bench BENCH [--signals FILE]] [--set path=value]...",
			"run a profile in virtual time and print its summary", runSim},
		{"check", "PROFILE|DIR... [--set path=value]...",
			"validate profiles without running them (exit 0 if all are valid, 2 if not)", runCheck},
		{"show", "PROFILE [--set path=value]...",
			"print the profile as it will run: extends, overrides and defaults resolved", runShow},
		{"profiles", "", "list the shipped profiles", runProfiles},
		{"run", "--bench BENCH PROFILE [--duration D] [--trace FILE] [--summary FILE] [--priority N] [--spin D] [--set path=value]...",
			"forward frames between hardware endpoints through the emulated network, in real time", runRun},
		{"ports", "", "list serial ports and GPIO chips", runPorts},
		{"models", "[MODEL] [--param name=value]...", "list the built-in plant models, or describe one (or a model file): signals, cuts, parameters", runModels},
		{"couple", "MODEL [--delay D] [--output NAME] [--input NAME] [--cuts C1,C2] [--csv FILE] [--svg FILE] [--param name=value]...",
			"rank a model's coupling points by the distortion a round-trip delay causes (paper 001)", runCouple},
	}
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hilrig: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: hilrig COMMAND [ARGS]")
	fmt.Fprintln(w)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n  %-8s   %s\n", c.name, c.args, "", c.summary)
	}
}

// parseFlags parses flags wherever they appear among the arguments, so that
// `hilrig sim PROFILE --seed 3` works as well as `hilrig sim --seed 3 PROFILE`.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// arguments parses the flags and wants from min to max positional
// arguments (max < 0: no limit). When they are wrong it prints the usage
// and returns ok false with the exit code.
func arguments(fs *flag.FlagSet, args []string, min, max int, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, flagError(stderr, err), false
	}
	if len(pos) < min || max >= 0 && len(pos) > max {
		fs.Usage()
		return nil, exitUsage, false
	}
	return pos, exitOK, true
}

// output is a file a flag asks for, and the writer to point at it.
type output struct {
	path string
	into *io.Writer
}

// createOutputs creates the files asked for (an empty path is not asked
// for) and points their writers at them, before anything runs, so that a
// path that cannot be written is a usage error and not a lost run. close
// closes what was created, also after an error.
func createOutputs(outs ...output) (close func(), err error) {
	var files []*os.File
	close = func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		f, err := os.Create(o.path)
		if err != nil {
			return close, err
		}
		files = append(files, f)
		*o.into = f
	}
	return close, nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newFlagSet returns a flag set that reports usage errors to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("hilrig "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, c := range commands {
		if c.name == name {
			fs.Usage = func() {
				fmt.Fprintf(stderr, "usage: hilrig %s %s\n", c.name, c.args)
				fs.PrintDefaults()
			}
		}
	}
	return fs
}

// flagError reports a usage error and returns its exit code.
func flagError(stderr io.Writer, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	return exitUsage
}

// fail prints an error, one problem per line, prefixed with "hilrig: ".
func fail(stderr io.Writer, code int, err error) int {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "hilrig: "+line)
	}
	return code
}
