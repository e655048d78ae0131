// Command hilrig is a hardware-in-the-loop rig controller: it inserts
// emulated network impairment between a controller and its plant and runs
// the same impairment engine in virtual time for design studies and CI.
//
// The command line is built with cobra and pflag: double-dash flags that
// may come before or after the positional arguments, help on stdout,
// "did you mean" for commands, flags and shipped profile names (all through
// emulator/suggest, as the profile language does), shell completion, and a
// usage line per command generated from its flags, which README.md's
// command reference is checked against (tests/cli_test.go). go generate
// rewrites the README's blocks made from the code: that reference, and
// the list of fuzz targets (tests/hardening_ux_test.go).
//
//go:generate go test ../../../tests -run TestCLIReadmeCommands|TestReadmeFuzzTargets -update-readme
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/rig/fmu"
	"github.com/hilrig/hilrig/rig/record"
)

// Exit codes.
const (
	exitOK    = 0 // success
	exitFail  = 1 // a test or assertion failed, or the run failed
	exitUsage = 2 // usage or input error
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == fmu.HostCommand {
		// An isolated FMU's process (rig/fmu.Isolated starts hilrig again
		// so), not for people: before anything opens a descriptor that
		// the FMU's process must not hold.
		os.Exit(fmu.ServeHost())
	}
	os.Exit(run(os.Args[1:], newPipeOutput(os.Stdout), newPipeOutput(os.Stderr)))
}

// run runs hilrig with args and returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		// An unknown command followed by flags would otherwise be reported
		// as the flags' error, root having none.
		if err := knownCommand(root, args[0]); err != nil {
			return usageError(root, stderr, err)
		}
	}
	c, err := root.ExecuteC()
	var status exitStatus
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &status):
		return int(status) // reported by the command
	default:
		return usageError(c, stderr, err)
	}
}

// newRoot builds the command tree. The commands are listed in this order,
// the most used first.
func newRoot() *cobra.Command {
	cobra.EnableCommandSorting = false
	root := &cobra.Command{
		Use:     "hilrig",
		Short:   "a hardware-in-the-loop rig controller",
		Long:    "hilrig inserts emulated network impairment between a controller and its plant,\nand runs the same impairment engine in virtual time for design studies and CI.",
		Version: version(),
		RunE: func(c *cobra.Command, args []string) error {
			// No command: the usage, as an error.
			fmt.Fprint(c.ErrOrStderr(), rootHelp(c))
			return exitStatus(exitUsage)
		},
		SilenceErrors:     true,
		SilenceUsage:      true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return knownCommand(c, args[0])
	}
	root.SetVersionTemplate("hilrig {{.Version}}\n")
	root.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if c == root {
			fmt.Fprint(c.OutOrStdout(), rootHelp(c))
			return
		}
		fmt.Fprint(c.OutOrStdout(), commandHelp(c))
	})
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(demoCommand(), simCommand(), runCommand(), testCommand(), reportCommand(), joinCommand(), coupleCommand(), simulateCommand(), modelsCommand(),
		checkCommand(), showCommand(), profilesCommand(), portsCommand(),
		versionCommand(), completionCommand(root), expectTopic(), serveLiveCommand())
	root.SetHelpCommand(helpCommand(root))
	// What cobra would add when it executes, added now, so that help shows
	// the whole tree however it is asked for.
	root.InitDefaultHelpCmd()
	root.InitDefaultVersionFlag()
	root.InitDefaultHelpFlag()
	for _, c := range root.Commands() {
		c.Flags().SortFlags = false // as defined: the most used first
		c.InitDefaultHelpFlag()
	}
	return root
}

// exitStatus is the error of a command that has reported its failure
// itself, and exits with this code.
type exitStatus int

func (s exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// action adapts a command written as returning its exit code to cobra.
func action(run func(c *cobra.Command, args []string) int) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		if code := run(c, args); code != exitOK {
			return exitStatus(code)
		}
		return nil
	}
}

// positional wants from min to max positional arguments (max < 0: any
// number), named in the command's Use after its name.
func positional(min, max int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) < min {
			return fmt.Errorf("missing %s", argumentNames(c))
		}
		if max >= 0 && len(args) > max {
			return fmt.Errorf("unexpected argument %q", args[max])
		}
		return nil
	}
}

// argumentNames is what the command takes besides flags, as written in
// its Use: "PROFILE", "[MODEL]".
func argumentNames(c *cobra.Command) string {
	_, args, _ := strings.Cut(c.Use, " ")
	return args
}

// knownCommand reports name as an unknown command, with the command it
// probably is.
func knownCommand(root *cobra.Command, name string) error {
	var names []string
	for _, c := range root.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return nil
		}
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if name == cobra.ShellCompRequestCmd || name == cobra.ShellCompNoDescRequestCmd {
		return nil // added by cobra when it executes
	}
	return fmt.Errorf("unknown command %q%s", name, suggest.DidYouMean(name, names))
}

// flagError adds the flag probably meant to an unknown flag's error.
func flagError(c *cobra.Command, err error) error {
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) {
		return err
	}
	name := unknown.GetSpecifiedName()
	if group := unknown.GetSpecifiedShortnames(); group != "" {
		name = group // -duration: a long flag with one dash, as Go's flag package took it
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	})
	return fmt.Errorf("%w%s", err, suggest.DidYouMean("--"+name, names))
}

// usageError reports a usage error of c with c's usage line, and returns
// the exit code for it.
func usageError(c *cobra.Command, stderr io.Writer, err error) int {
	if c.HasParent() {
		fmt.Fprintf(stderr, "hilrig %s: %v\n", c.Name(), err)
		fmt.Fprintf(stderr, "usage: %s\n(hilrig %s --help shows the flags)\n", synopsis(c), c.Name())
	} else {
		fmt.Fprintf(stderr, "hilrig: %v\n", err)
		fmt.Fprintln(stderr, "usage: hilrig COMMAND [ARGS] (hilrig help lists the commands)")
	}
	return exitUsage
}

// synopsis is a command's usage line, made from its Use and its flags, so
// that it cannot drift from them: required flags first, then the
// positional arguments, then the optional flags in the order they were
// defined; a repeatable flag is followed by "...".
func synopsis(c *cobra.Command) string {
	words := []string{c.CommandPath()}
	var optional []string
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" || f.Name == "version" {
			return
		}
		word := "--" + f.Name
		if name, _ := pflag.UnquoteUsage(f); name != "" {
			word += " " + name
		}
		if _, required := f.Annotations[cobra.BashCompOneRequiredFlag]; required {
			words = append(words, word)
			return
		}
		word = "[" + word + "]"
		if _, repeatable := f.Value.(pflag.SliceValue); repeatable {
			word += "..."
		}
		optional = append(optional, word)
	})
	if args := argumentNames(c); args != "" {
		words = append(words, args)
	}
	return strings.Join(append(words, optional...), " ")
}

// rootHelp lists every command with its usage line; README.md's command
// reference is these lines.
func rootHelp(root *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nusage: hilrig COMMAND [ARGS]\n\n", root.Long)
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			fmt.Fprintf(&b, "  %s\n      %s\n", synopsis(c), c.Short)
		}
	}
	fmt.Fprintf(&b, "\nflags:\n%s\nhilrig COMMAND --help describes a command and its flags.\n", root.LocalFlags().FlagUsages())
	return b.String()
}

// commandHelp is a command's usage line, what it does and its flags.
func commandHelp(c *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: %s\n\n%s", synopsis(c), c.Short)
	if c.Long != "" {
		fmt.Fprintf(&b, ".\n\n%s\n", strings.TrimSpace(c.Long))
	} else {
		b.WriteString(".\n")
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "\nflags:\n%s", c.LocalFlags().FlagUsages())
	}
	return b.String()
}

// helpCommand is `hilrig help [COMMAND]`: like --help, and an unknown
// command is a usage error, as anywhere else.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:   "help [COMMAND]",
		Short: "describe hilrig, or a command and its flags",
		Args:  positional(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return root.Help()
			}
			if err := knownCommand(root, args[0]); err != nil {
				return err
			}
			target, _, err := root.Find(args)
			if err != nil {
				return err
			}
			return target.Help()
		},
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var names []cobra.Completion
			for _, sub := range root.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					names = append(names, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return names, cobra.ShellCompDirectiveNoFileComp
		},
	}
}

// fail prints an error, one problem per line, prefixed with "hilrig: ".
func fail(stderr io.Writer, code int, err error) int {
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintln(stderr, "hilrig: "+line)
	}
	return code
}

// runFailure is the exit code of a run that failed: 2 when an output lost
// records (the result is not all that was asked for, through no fault of
// what was tested: a full disk), whatever else happened, as hilrig test
// does; 1 otherwise (a device failed mid-run, a model diverged).
func runFailure(err error) int {
	if errors.Is(err, record.ErrOutputLost) {
		return exitUsage
	}
	return exitFail
}

// untilStopped is the context of a run that the user may end: Ctrl-C,
// SIGTERM, or the reader of its output going away (readerGone). Each ends
// the run as its duration would: outputs safe, links removed, files
// written.
func untilStopped() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-readerGone:
			stop()
		case <-ctx.Done():
		}
	}()
	return ctx, stop
}

// readerGone is closed when a write to hilrig's standard output or error
// finds the pipe closed (`hilrig run … 2>&1 | head` once head has its
// lines). Written to as os.Stdout and os.Stderr, such a write would kill
// the process with SIGPIPE on the spot, leaving its pseudo-terminals and
// an unwritten summary behind; asking for SIGPIPE instead would also
// deliver the ones of sockets (a dashboard closed mid-write, a TCP
// endpoint's peer gone), which must not stop a run. So hilrig writes to
// copies of the two descriptors, where a closed pipe is an error it sees.
var (
	readerGone     = make(chan struct{})
	readerGoneOnce sync.Once
)

// pipeOutput writes to a copy of the descriptor fd, and closes readerGone
// when its reader has gone.
type pipeOutput struct{ f *os.File }

func newPipeOutput(std *os.File) io.Writer {
	// Close-on-exec, as every descriptor Go opens: a child of hilrig's
	// (serve-live, an FMU's host, a test's) must not hold hilrig's
	// output open after hilrig has gone.
	fd, err := unix.FcntlInt(std.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return std
	}
	return pipeOutput{os.NewFile(uintptr(fd), std.Name())}
}

// Fd is the copy's descriptor, for whoever asks whether it is a
// terminal (rig.TerminalFd).
func (w pipeOutput) Fd() uintptr { return w.f.Fd() }

func (w pipeOutput) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if errors.Is(err, syscall.EPIPE) {
		readerGoneOnce.Do(func() { close(readerGone) })
	}
	return n, err
}
