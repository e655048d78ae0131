package host

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/hilrig/hilrig/firmware/device"
)

// Command is what the firmware programs' command lines share, so that
// they keep one set of conventions: the line's flags (--port, --baud,
// --reconnect), --help on stdout, a mistake on stderr as "name: what"
// with exit status 2, and running until SIGINT or SIGTERM with the line's
// going and coming back said on stderr. Each program adds its own flags
// to Flags, its configuration and its counts.
type Command struct {
	// Flags is the command's flag set, with the line's flags on it.
	Flags *flag.FlagSet

	name, doc      string
	stdout, stderr io.Writer
	port           *string
	baud           *int
	reconnect      *time.Duration
}

// NewCommand returns the command line of a firmware program, described
// by doc in its --help, writing on stdout and stderr.
func NewCommand(name, doc string, stdout, stderr io.Writer) *Command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // a mistake gets its message and a pointer to --help, not the whole of it
	return &Command{Flags: fs, name: name, doc: doc, stdout: stdout, stderr: stderr,
		port:      fs.String("port", "", "serial port or pseudo-terminal to speak on (required)"),
		baud:      fs.Int("baud", 115200, "baud rate (a pseudo-terminal ignores it)"),
		reconnect: fs.Duration("reconnect", 0, "when the port goes away, keep running and reopen it this often (0: stop with an error)"),
	}
}

// Parse parses args. If the program is to stop there (--help, given or
// not), ok is false and code is its exit status: 0 after --help, 2 after
// a mistake, said on stderr with a pointer to --help.
func (c *Command) Parse(args []string) (code int, ok bool) {
	if err := c.Flags.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintf(c.stdout, "Usage: %s --port PATH [flags]\n\n%s\n\nFlags:\n", c.name, c.doc)
			c.Flags.SetOutput(c.stdout)
			c.Flags.PrintDefaults()
			return 0, false
		}
		fmt.Fprintf(c.stderr, "%s: %v (see %s --help)\n", c.name, err, c.name)
		return 2, false
	}
	if *c.port == "" || c.Flags.NArg() > 0 {
		return c.Usage("give the port with --port, and nothing else"), false
	}
	return 0, true
}

// Usage says a mistake in the command line on stderr, after the
// command's name, and returns the exit status for it, 2.
func (c *Command) Usage(format string, a ...any) int {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", a...)
	return 2
}

// Line is the line --port and --baud name, not yet open: the firmware is
// made on it before Serve opens it.
func (c *Command) Line() *Line { return &Line{Path: *c.port, Baud: *c.baud} }

// Serve opens line and runs fw on it until SIGINT or SIGTERM, reopening
// it as --reconnect says; then report says the program's counts, while
// the line is still open and the signals still caught. It returns the
// exit status: 1 if the line cannot be opened (without --reconnect) or
// went away (idem), said on stderr; 0 otherwise.
func (c *Command) Serve(line *Line, fw device.Firmware, clock device.Clock, report func()) int {
	reconnect := *c.reconnect
	if err := line.Open(); err != nil && reconnect <= 0 {
		fmt.Fprintf(c.stderr, "%s: %s: %v\n", c.name, line.Path, err)
		return 1
	}
	defer line.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, line, fw, clock, reconnect,
		func(err error) {
			fmt.Fprintf(c.stderr, "%s: %s: %v; reopening every %v\n", c.name, line.Path, err, reconnect)
		},
		func() { fmt.Fprintf(c.stderr, "%s: %s: back\n", c.name, line.Path) })
	report()
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", c.name, err)
		return 1
	}
	return 0
}
