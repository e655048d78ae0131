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
	"fmt"
	"io"
	"os"
	"time"

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
	cmd := host.NewCommand("plantnode", doc, stdout, stderr)
	fs := cmd.Flags
	var (
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
		maxMessage  = fs.Int("max-message", 0, "largest message taken, bytes (0: 512)")
	)
	if code, ok := cmd.Parse(args); !ok {
		return code
	}
	period, samples, commands, err := host.ParseSignals(*rate, *sampleSpec, *commandSpec)
	if err != nil {
		return cmd.Usage("%v", err)
	}
	safe, err := host.ParseFloats(*safeSpec)
	if err != nil {
		return cmd.Usage("--safe: %v", err)
	}
	if len(samples.Fields) != len(commands.Fields) {
		return cmd.Usage("the simulated plant pairs each output with an input: %d inputs, %d outputs", len(samples.Fields), len(commands.Fields))
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
			return cmd.Usage("--plant: %q is not lag or echo", *plant)
		}
		ins, outs = append(ins, lag), append(outs, lag)
	}
	cfg := plantnode.Config{Period: period, Samples: samples, Commands: commands, Safe: safe,
		Watchdog: *watchdog, Heartbeat: *heartbeat, Ack: *ack, MaxMessage: *maxMessage}
	line := cmd.Line()
	n, err := plantnode.New(cfg, line, ins, outs)
	if err != nil {
		fmt.Fprintln(stderr, err) // the package's error names it
		return 2
	}
	return cmd.Serve(line, n, clock, func() {
		n.GoSafe() // leave the plant safe
		st, ls := n.Stats(), n.Link().Stats()
		fmt.Fprintf(stderr, "plantnode: %d ticks (%d periods skipped), %d samples (%d read errors), %d commands (%d refused), %d watchdog trips; received %d messages (%d CRC errors, %d malformed, %d missed, %d duplicates, %d late), sent %d (%d failed); outputs safe at %v\n",
			st.Ticks, st.Skipped, st.Samples, st.ReadErrors, st.Commands, st.Refused, st.Trips,
			ls.Received.Messages, ls.Received.CRCErrors, ls.Received.Malformed, ls.Received.Missed, ls.Received.Duplicates, ls.Received.Late, ls.Sent, ls.WriteErrors, n.Outputs())
	})
}
