// Package plantnode is a reference plant I/O node, the part paper 004's
// Arduino plays on the Desktop Robotti (its wheels' control parameters
// arrive over a serial link from the Raspberry Pi): it applies the
// commands it receives to its outputs as they arrive, samples its inputs
// at a fixed rate and sends them, over the rig wire protocol; and a
// watchdog drives the outputs to their safe levels when commands stop
// arriving, so a lost link or a dead controller leaves the plant safe.
package plantnode

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/wire"
)

// Config sets up a Node.
type Config struct {
	// Period is the sampling period: a sample of every input each period.
	Period time.Duration
	// Samples is the layout of the samples it sends, one field per input;
	// Commands the layout of the commands it takes, one per output.
	Samples, Commands *wire.Struct
	// Safe is each output's safe level, driven at the start and whenever
	// the watchdog trips.
	Safe []float64
	// Watchdog is how long the outputs hold a command: when no command
	// has arrived for longer, the watchdog drives them to Safe until the
	// next. It trips within a Period of its time.
	Watchdog time.Duration
	// Heartbeat is how often it sends a heartbeat saying whether its
	// outputs are safe (0: never).
	Heartbeat time.Duration
	// Ack makes it acknowledge every command (Applied or Rejected).
	Ack bool
	// MaxMessage limits the messages it takes (0: wire.DefaultMaxMessage).
	MaxMessage int
}

// Check says what is wrong with a configuration for inputs and outputs
// pins.
func (c *Config) Check(inputs, outputs int) error {
	switch {
	case c.Period <= 0:
		return errors.New("plantnode: the sampling period must be positive")
	case c.Samples == nil || c.Commands == nil:
		return errors.New("plantnode: the sample and command layouts are needed")
	case len(c.Samples.Fields) != inputs:
		return fmt.Errorf("plantnode: %d inputs for a sample of %d fields", inputs, len(c.Samples.Fields))
	case len(c.Commands.Fields) != outputs:
		return fmt.Errorf("plantnode: %d outputs for a command of %d fields", outputs, len(c.Commands.Fields))
	case len(c.Safe) != outputs:
		return fmt.Errorf("plantnode: %d safe levels for %d outputs", len(c.Safe), outputs)
	case c.Watchdog <= 0:
		return errors.New("plantnode: the watchdog time must be positive")
	case c.Heartbeat < 0:
		return errors.New("plantnode: the heartbeat period must not be negative")
	}
	if err := wire.CheckValues(c.Samples, c.MaxMessage); err != nil {
		return fmt.Errorf("plantnode: its samples: %w", err)
	}
	if err := wire.CheckValues(c.Commands, c.MaxMessage); err != nil {
		return fmt.Errorf("plantnode: its commands: %w", err)
	}
	for i, v := range c.Safe {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("plantnode: output %d's safe level is %v", i+1, v)
		}
	}
	return nil
}

// Node is the plant node firmware, driven by Poll or Receive (bytes in)
// and Tick (periodic work), from one thread.
type Node struct {
	cfg     Config
	inputs  []device.AnalogIn
	outputs []device.AnalogOut
	loop    device.Periodic // the link to the rig, the sampling period and the heartbeat

	sample, command, applied []float64
	lastAt                   time.Duration
	safe                     bool
	stats                    Stats
}

// Stats count what a node did.
type Stats struct {
	Samples      uint64 // sent
	ReadErrors   uint64 // samples not sent because an input failed
	Commands     uint64 // applied
	Refused      uint64 // commands of another layout, or with a value not finite
	Ignored      uint64 // messages of types it does not take
	OutputErrors uint64 // output writes that failed
	Trips        uint64 // times the watchdog drove the outputs safe
	Ticks        uint64
	Skipped      uint64 // periods missed (the loop ran late)
}

var _ device.Firmware = (*Node)(nil)

// New returns a node speaking on uart, sampling inputs and driving
// outputs, which it sets to their safe levels at once.
func New(cfg Config, uart device.UART, inputs []device.AnalogIn, outputs []device.AnalogOut) (*Node, error) {
	if err := cfg.Check(len(inputs), len(outputs)); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, inputs: inputs, outputs: outputs,
		sample: make([]float64, len(inputs)), command: make([]float64, len(outputs)), applied: make([]float64, len(outputs))}
	n.loop = device.NewPeriodic(device.NewLink(uart, cfg.MaxMessage, n.handle), cfg.Period, cfg.Heartbeat)
	n.drive(cfg.Safe)
	n.safe = true
	return n, nil
}

func (n *Node) handle(m wire.Message, at time.Duration) {
	if m.Type != wire.Command {
		n.stats.Ignored++
		if n.cfg.Ack && m.Type == wire.Sample {
			n.loop.Link().SendAck(at, wire.Acknowledgement{Seq: m.Seq, Type: m.Type, Result: wire.Unsupported})
		}
		return
	}
	result := wire.Applied
	if m.Values(n.cfg.Commands, n.command) != nil || !finite(n.command) {
		result = wire.Rejected
		n.stats.Refused++
	} else {
		n.drive(n.command)
		n.lastAt, n.safe = at, false
		n.stats.Commands++
	}
	if n.cfg.Ack {
		n.loop.Link().SendAck(at, wire.Acknowledgement{Seq: m.Seq, Type: m.Type, Result: result})
	}
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func (n *Node) drive(values []float64) {
	for i, out := range n.outputs {
		if out.Out(values[i]) != nil {
			n.stats.OutputErrors++
		}
		n.applied[i] = values[i]
	}
}

// Poll takes in what the UART has.
func (n *Node) Poll(now time.Duration) error { return n.loop.Poll(now) }

// Receive takes in bytes that arrived at at.
func (n *Node) Receive(p []byte, at time.Duration) { n.loop.Receive(p, at) }

// Next is when the next tick is due.
func (n *Node) Next() time.Duration { return n.loop.Next() }

// Tick does the periodic work due at now: the watchdog, a sample of the
// inputs once a period, the heartbeat. Calling it early does nothing.
func (n *Node) Tick(now time.Duration) {
	if n.loop.Due(now) {
		if !n.safe && now-n.lastAt > n.cfg.Watchdog {
			n.stats.Trips++
			n.GoSafe()
		}
		n.sampleInputs(now)
	}
	var status wire.Status
	if n.safe {
		status |= wire.StatusSafe
	}
	n.loop.Heartbeat(now, status)
}

func (n *Node) sampleInputs(now time.Duration) {
	for i, in := range n.inputs {
		v, err := in.Read()
		if err != nil {
			n.stats.ReadErrors++
			return
		}
		n.sample[i] = v
	}
	if n.loop.Link().SendValues(wire.Sample, now, n.cfg.Samples, n.sample) == nil {
		n.stats.Samples++
	}
}

// GoSafe drives the outputs to their safe levels until the next command,
// as the watchdog does (but not counted as a trip); a host build calls it
// when it stops.
func (n *Node) GoSafe() {
	n.drive(n.cfg.Safe)
	n.safe = true
}

// Safe reports whether the outputs are at their safe levels (from the
// start or a trip, until the next command).
func (n *Node) Safe() bool { return n.safe }

// Outputs are the levels the outputs were last driven to.
func (n *Node) Outputs() []float64 { return n.applied }

// Link is the node's link to the rig.
func (n *Node) Link() *device.Link { return n.loop.Link() }

// Stats are the node's counts so far.
func (n *Node) Stats() Stats {
	s := n.stats
	s.Ticks, s.Skipped = n.loop.Ticks(), n.loop.Skipped()
	return s
}
