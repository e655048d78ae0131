package rig

import (
	"fmt"
	"time"

	"go.bug.st/serial"
	"periph.io/x/conn/v3/gpio"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
)

// endpoint is a bench's device ready to start, with what the rig needs to
// know about it.
type endpoint struct {
	drivers.Endpoint
	kind       string // serial, pty, gpio, udp, tcp
	device     string // what the user called it: a path, an address, pins
	reconnects bool
	wire       bool // codec wire
}

// buildEndpoints makes the drivers for a bench's devices: every endpoint
// but the models, which the executor steps itself, and those played in
// software. readerThread runs on each reader's thread before it reads.
func buildEndpoints(b *profiles.LoadedBench, players map[string]Player, readerThread func()) ([]endpoint, error) {
	var out []endpoint
	for i, name := range b.Endpoints.Names {
		e := b.Endpoints.Values[i]
		if _, played := players[name]; e.Model != nil || played {
			continue
		}
		var ep endpoint
		var err error
		switch {
		case e.Serial != nil:
			var cfg drivers.SerialConfig
			if cfg, err = serialConfig(name, e.Serial.LineSettings, e.Serial.FrameSettings, e.Serial.Reconnect, readerThread); err == nil {
				cfg.Device = string(e.Serial.Device)
				ep = endpoint{drivers.NewSerial(cfg), "serial", cfg.Device, cfg.Reconnect > 0, false}
			}
		case e.Pty != nil:
			var cfg drivers.SerialConfig
			reconnect := e.Pty.Reconnect
			if reconnect == nil {
				d := profiles.Duration(profiles.DefaultPtyReconnect)
				reconnect = &d
			}
			if cfg, err = serialConfig(name, e.Pty.LineSettings, e.Pty.FrameSettings, reconnect, readerThread); err == nil {
				link := ""
				if e.Pty.Link != nil {
					link = *e.Pty.Link
				}
				ep = endpoint{drivers.NewPty(cfg, link), "pty", "pseudo-terminal", cfg.Reconnect > 0, false}
			}
		case e.GPIO != nil:
			ep = gpioEndpoint(name, e.GPIO, readerThread)
		case e.UDP != nil:
			cfg := drivers.UDPConfig{Name: name, ReaderThread: readerThread}
			cfg.Listen, cfg.Dial, cfg.Peer = deref(e.UDP.Listen), deref(e.UDP.Dial), deref(e.UDP.Peer)
			if e.UDP.MaxFrame != nil {
				cfg.MaxFrame = int(*e.UDP.MaxFrame)
			}
			ep = endpoint{drivers.NewUDP(cfg), "udp", "udp " + cfg.Listen + cfg.Dial, false, false}
		case e.TCP != nil:
			var framing wire.Framing
			spec := e.TCP.FrameSettings.Spec()
			if framing, err = makeFraming(spec, 0); err == nil {
				cfg := drivers.TCPConfig{Name: name, Listen: deref(e.TCP.Listen), Dial: deref(e.TCP.Dial), Framing: framing, MaxFrame: spec.MaxFrame, ReaderThread: readerThread}
				if e.TCP.Reconnect != nil {
					cfg.Reconnect = time.Duration(*e.TCP.Reconnect)
				}
				// A listening endpoint always waits for its next client.
				ep = endpoint{drivers.NewTCP(cfg), "tcp", "tcp " + cfg.Listen + cfg.Dial, cfg.Reconnect > 0 || cfg.Listen != "", false}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: endpoints.%s: %w", b.Source, name, err)
		}
		ep.wire = e.SpeaksWire()
		out = append(out, ep)
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func serialConfig(name string, line profiles.LineSettings, frames profiles.FrameSettings, reconnect *profiles.Duration, readerThread func()) (drivers.SerialConfig, error) {
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

// makeFraming builds a framing; an idle framing without a gap waits 3.5
// character times.
func makeFraming(spec profiles.FramingSpec, charTime time.Duration) (wire.Framing, error) {
	gap := spec.Gap
	if spec.Name == "idle" && gap == 0 {
		if charTime == 0 {
			return nil, fmt.Errorf("idle framing over TCP needs a gap")
		}
		gap = 7 * charTime / 2
	}
	return wire.NewFraming(spec.Name, wire.FramingOptions{Delimiter: []byte(spec.Delimiter), AnyLineEnd: spec.AnyLineEnd, Size: spec.Size, Gap: gap})
}

func gpioEndpoint(name string, g *profiles.GPIOPins, readerThread func()) endpoint {
	cfg := drivers.GPIOConfig{Name: name, ReaderThread: readerThread}
	pulls := map[string]gpio.Pull{"none": gpio.Float, "up": gpio.PullUp, "down": gpio.PullDown}
	edges := map[string]gpio.Edge{"rising": gpio.RisingEdge, "falling": gpio.FallingEdge, "both": gpio.BothEdges}
	device := "gpio"
	for _, in := range g.Inputs {
		pull, edge := gpio.Float, gpio.BothEdges
		if in.Pull != nil {
			pull = pulls[string(*in.Pull)]
		}
		if in.Edge != nil {
			edge = edges[string(*in.Edge)]
		}
		cfg.Inputs = append(cfg.Inputs, drivers.GPIOInput{Pin: string(in.Pin), Pull: pull, Edge: edge})
		device += " " + string(in.Pin)
	}
	for _, out := range g.Outputs {
		cfg.Outputs = append(cfg.Outputs, drivers.GPIOOutput{Pin: string(out.Pin), Safe: out.Safe == "high"})
		device += " " + string(out.Pin)
	}
	return endpoint{drivers.NewGPIO(cfg), "gpio", device, false, false}
}
