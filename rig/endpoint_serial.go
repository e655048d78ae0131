package rig

import (
	"fmt"
	"io"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
)

func init() { registerDriver(serialEndpoint, listSerialPorts) }

func serialEndpoint(name string, s *benchfile.SerialPort, readerThread func()) (endpoint, error) {
	cfg, err := serialConfig(name, s.LineSettings, s.FrameSettings, s.Reconnect, readerThread)
	if err != nil {
		return endpoint{}, err
	}
	cfg.Device = string(s.Device)
	return endpoint{Endpoint: drivers.NewSerial(cfg), device: cfg.Device, reconnects: cfg.Reconnect > 0}, nil
}

// serialConfig is the driver's configuration of a serial line, real
// (serial) or virtual (pty).
func serialConfig(name string, line benchfile.LineSettings, frames benchfile.FrameSettings, reconnect *lang.Duration, readerThread func()) (drivers.SerialConfig, error) {
	baud, dataBits, parity, stopBits := line.Settings()
	cfg := drivers.SerialConfig{Name: name, Baud: baud, DataBits: dataBits, ReaderThread: readerThread}
	cfg.Parity = map[string]serial.Parity{"none": serial.NoParity, "odd": serial.OddParity, "even": serial.EvenParity, "mark": serial.MarkParity, "space": serial.SpaceParity}[parity]
	cfg.StopBits = map[string]serial.StopBits{"1": serial.OneStopBit, "1.5": serial.OnePointFiveStopBits, "2": serial.TwoStopBits}[stopBits]
	if reconnect != nil {
		cfg.Reconnect = time.Duration(*reconnect)
	}
	spec := frames.Spec()
	cfg.MaxFrame = spec.MaxFrame
	var err error
	cfg.Framing, err = makeFraming(spec, cfg.CharTime())
	return cfg, err
}

// listSerialPorts lists the serial ports, with their USB identity where
// known. A failure to list them is said on stderr, and none are listed.
func listSerialPorts(stdout, stderr io.Writer) {
	ports, err := drivers.SerialPorts()
	if err != nil {
		fmt.Fprintf(stderr, "hilrig: listing serial ports: %v\n", err)
	}
	fmt.Fprintln(stdout, "serial ports:")
	if len(ports) == 0 {
		fmt.Fprintln(stdout, "  none")
	}
	for _, p := range ports {
		line := "  " + p.Name
		if p.USB {
			line += fmt.Sprintf("  USB %s:%s", p.VID, p.PID)
			if p.Serial != "" {
				line += " serial " + p.Serial
			}
			if p.Product != "" {
				line += " (" + p.Product + ")"
			}
		}
		fmt.Fprintln(stdout, line)
	}
}
