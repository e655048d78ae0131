// Command pid runs the reference PID controller (firmware/pid) on a serial
// port or pseudo-terminal: it reads samples and sends commands in the rig
// wire protocol at a fixed rate, and raises its fault flag when the
// measurements stop. It prints nothing while it runs; on SIGINT or SIGTERM
// it stops and prints its counts on stderr.
//
//	pid --port /dev/ttyUSB0 --rate 200 --kp 2 --ki 5 --kd 0.01 --min -1 --max 1 --setpoint 0.5
package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hilrig/hilrig/firmware/cmd/internal/host"
	"github.com/hilrig/hilrig/firmware/pid"
)

const doc = `Runs the reference PID controller on a serial port or pseudo-terminal:
it reads samples and sends commands in the rig wire protocol at a fixed
rate, and raises its fault flag (sending no more commands) when the
measurements stop for longer than --timeout.`

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	cmd := host.NewCommand("pid", doc, stdout, stderr)
	fs := cmd.Flags
	var (
		rate        = fs.Float64("rate", 100, "control rate, Hz")
		kp          = fs.Float64("kp", 1, "proportional gain")
		ki          = fs.Float64("ki", 0, "integral gain, 1/s")
		kd          = fs.Float64("kd", 0, "derivative gain, s")
		filter      = fs.Duration("filter", 0, "derivative filter time constant (0: none)")
		tracking    = fs.Duration("tracking", 0, "anti-windup tracking time (0: √(Ti·Td), or Ti without derivative action)")
		outMin      = fs.Float64("min", -1, "lowest command")
		outMax      = fs.Float64("max", 1, "highest command")
		setpoint    = fs.Float64("setpoint", 0, "setpoint, unless --setpoint-field gives it")
		spField     = fs.Int("setpoint-field", 0, "field of the samples holding the setpoint, from 1 (0: use --setpoint)")
		yField      = fs.Int("measurement-field", 1, "field of the samples holding the measurement, from 1")
		sampleSpec  = fs.String("sample-layout", "f64le", "layout of the samples it reads: types with optional :scale:offset, comma-separated")
		commandSpec = fs.String("command-layout", "f64le", "layout of the commands it sends: one field")
		timeout     = fs.Duration("timeout", 100*time.Millisecond, "raise the fault flag when no measurement arrives for this long")
		heartbeat   = fs.Duration("heartbeat", 100*time.Millisecond, "heartbeat period (0: none)")
		maxMessage  = fs.Int("max-message", 0, "largest message taken, bytes (0: 512)")
	)
	if code, ok := cmd.Parse(args); !ok {
		return code
	}
	if *yField < 1 || *spField < 0 {
		return cmd.Usage("--measurement-field counts from 1, --setpoint-field too (0: none)")
	}
	period, samples, commands, err := host.ParseSignals(*rate, *sampleSpec, *commandSpec)
	if err != nil {
		return cmd.Usage("%v", err)
	}
	cfg := pid.Config{
		Law: pid.Law{Gains: pid.Gains{Kp: *kp, Ki: *ki, Kd: *kd}, Period: period, Min: *outMin, Max: *outMax,
			FilterTime: *filter, TrackingTime: *tracking},
		Measurement: samples, MeasurementField: *yField - 1,
		Setpoint: *setpoint, SetpointField: *spField - 1,
		Command: commands, Timeout: *timeout, Heartbeat: *heartbeat, MaxMessage: *maxMessage,
	}
	line := cmd.Line()
	c, err := pid.New(cfg, line, nil)
	if err != nil {
		fmt.Fprintln(stderr, err) // the package's error names it
		return 2
	}
	return cmd.Serve(line, c, host.NewClock(), func() {
		st, ls := c.Stats(), c.Link().Stats()
		fmt.Fprintf(stderr, "pid: %d ticks (%d periods skipped), %d measurements (%d refused), %d commands, %d faults, fault flag %v; received %d messages (%d CRC errors, %d malformed, %d missed, %d duplicates, %d late), sent %d (%d failed)\n",
			st.Ticks, st.Skipped, st.Measurements, st.Refused, st.Commands, st.Faults, c.Fault(),
			ls.Received.Messages, ls.Received.CRCErrors, ls.Received.Malformed, ls.Received.Missed, ls.Received.Duplicates, ls.Received.Late, ls.Sent, ls.WriteErrors)
	})
}
