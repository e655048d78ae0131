// Command plantnode runs the reference plant I/O node (firmware/plantnode)
// on a serial port or pseudo-terminal: it applies the commands it receives
// in the rig wire protocol to its outputs, samples its inputs at a fixed
// rate, and drives the outputs to their safe levels when commands stop.
// On a host there is nothing on its pins, so each output drives a
// simulated first-order lag whose output is the matching input (--plant).
// It prints nothing while it runs; on SIGINT or SIGTERM it drives the
// outputs safe, stops and prints its counts on stderr.
//
//	plantnode --port /tmp/hilrig-plant --rate 200 --watchdog 100ms --safe 0 --tau 200ms
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/hilrig/hilrig/firmware/cmd/internal/host"
	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/device/virtual"
	"github.com/hilrig/hilrig/firmware/plantnode"
)

const doc = `Runs the reference plant I/O node on a serial port or pseudo-terminal: it
applies the commands it receives in the rig wire protocol to its outputs,
samples its inputs at a fixed rate, and drives the outputs to their safe
levels when no command arrives for --watchdog. On a host the pins drive a
simulated plant (--plant).`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("plantnode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // a mistake gets its message and a pointer to --help, not the whole of it
	var (
		port        = fs.String("port", "", "serial port or pseudo-terminal to speak on (required)")
		baud        = fs.Int("baud", 115200, "baud rate (a pseudo-terminal ignores it)")
		rate        = fs.Float64("rate", 100, "sampling rate, Hz")
		watchdog    = fs.Duration("watchdog", 100*time.Millisecond, "drive the outputs safe when no command arrives for this long")
		safeSpec    = fs.String("safe", "0", "each output's safe level, comma-separated")
		sampleSpec  = fs.String("sample-layout", "f64le", "layout of the samples it sends, one field per input: types with optional :scale:offset, comma-separated")
		commandSpec = fs.String("command-layout", "f64le", "layout of the commands it takes, one field per output")
		heartbeat   = fs.Duration("heartbeat", 100*time.Millisecond, "heartbeat period (0: none)")
		ack         = fs.Bool("ack", false, "acknowledge every command")
		plant       = fs.String("plant", "lag", "what the pins drive: lag (output i drives a first-order lag read by input i) or echo (input i reads output i)")
		tau         = fs.Duration("tau", 100*time.Millisecond, "the lag's time constant")
		gain        = fs.Float64("gain", 1, "the lag's gain")
		reconnect   = fs.Duration("reconnect", 0, "when the port goes away, keep running and reopen it this often (0: stop with an error)")
		maxMessage  = fs.Int("max-message", 0, "largest message taken, bytes (0: 512)")
	)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprintf(stdout, "Usage: plantnode --port PATH [flags]\n\n%s\n\nFlags:\n", doc)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "plantnode: %v (see plantnode --help)\n", err)
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "plantnode: "+format+"\n", a...)
		return 2
	}
	if *port == "" || fs.NArg() > 0 {
		return usage("give the port with --port, and nothing else")
	}
	period, err := host.Hertz(*rate)
	if err != nil {
		return usage("--rate: %v", err)
	}
	samples, err := host.ParseLayout(*sampleSpec)
	if err != nil {
		return usage("--sample-layout: %v", err)
	}
	commands, err := host.ParseLayout(*commandSpec)
	if err != nil {
		return usage("--command-layout: %v", err)
	}
	safe, err := host.ParseFloats(*safeSpec)
	if err != nil {
		return usage("--safe: %v", err)
	}
	if len(samples.Fields) != len(commands.Fields) {
		return usage("the simulated plant pairs each output with an input: %d inputs, %d outputs", len(samples.Fields), len(commands.Fields))
	}
	clock := host.NewClock()
	var ins []device.AnalogIn
	var outs []device.AnalogOut
	for range commands.Fields {
		lag := &virtual.Lag{Tau: *tau, Gain: *gain, Clock: clock}
		switch *plant {
		case "lag":
		case "echo":
			lag.Tau, lag.Gain = 0, 1
		default:
			return usage("--plant: %q is not lag or echo", *plant)
		}
		ins, outs = append(ins, lag), append(outs, lag)
	}
	cfg := plantnode.Config{Period: period, Samples: samples, Commands: commands, Safe: safe,
		Watchdog: *watchdog, Heartbeat: *heartbeat, Ack: *ack, MaxMessage: *maxMessage}
	line := &host.Line{Path: *port, Baud: *baud}
	n, err := plantnode.New(cfg, line, ins, outs)
	if err != nil {
		fmt.Fprintln(stderr, err) // the package's error names it
		return 2
	}
	if err := line.Open(); err != nil && *reconnect <= 0 {
		fmt.Fprintf(stderr, "plantnode: %s: %v\n", *port, err)
		return 1
	}
	defer line.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = host.Run(ctx, line, n, clock, *reconnect,
		func(err error) {
			fmt.Fprintf(stderr, "plantnode: %s: %v; reopening every %v\n", *port, err, *reconnect)
		},
		func() { fmt.Fprintf(stderr, "plantnode: %s: back\n", *port) })
	n.GoSafe() // leave the plant safe
	st, ls := n.Stats(), n.Link().Stats()
	fmt.Fprintf(stderr, "plantnode: %d ticks (%d periods skipped), %d samples (%d read errors), %d commands (%d refused), %d watchdog trips; received %d messages (%d CRC errors, %d malformed, %d missed, %d duplicates, %d late), sent %d (%d failed); outputs safe at %v\n",
		st.Ticks, st.Skipped, st.Samples, st.ReadErrors, st.Commands, st.Refused, st.Trips,
		ls.Received.Messages, ls.Received.CRCErrors, ls.Received.Malformed, ls.Received.Missed, ls.Received.Duplicates, ls.Received.Late, ls.Sent, ls.WriteErrors, n.Outputs())
	if err != nil {
		fmt.Fprintf(stderr, "plantnode: %v\n", err)
		return 1
	}
	return 0
}
