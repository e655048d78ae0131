package pid

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/wire"
)

// Config sets up a Controller.
type Config struct {
	Law Law // gains, period, limits, filter and tracking times

	// Measurement is the layout of the samples the controller reads;
	// MeasurementField the field that holds the measurement y.
	Measurement      *wire.Struct
	MeasurementField int
	// Setpoint is r, unless SetpointField names a field of the samples
	// that carries it (−1: none).
	Setpoint      float64
	SetpointField int
	// Command is the layout of the commands it sends: one field, u.
	Command *wire.Struct

	// Timeout is how long the controller runs on its last measurement:
	// when none has arrived for longer (or none since the start), it
	// raises its fault flag, holds its last command and sends no more
	// commands, so that the plant's own watchdog takes over.
	Timeout time.Duration
	// Heartbeat is how often it sends a heartbeat with its fault flag
	// (0: never).
	Heartbeat time.Duration
	// MaxMessage limits the messages it takes (0: wire.DefaultMaxMessage).
	MaxMessage int
}

// Check says what is wrong with a configuration.
func (c *Config) Check() error {
	if err := c.Law.Check(); err != nil {
		return err
	}
	switch {
	case c.Measurement == nil || c.Command == nil:
		return errors.New("pid: the measurement and command layouts are needed")
	case c.MeasurementField < 0 || c.MeasurementField >= len(c.Measurement.Fields):
		return fmt.Errorf("pid: the measurement is field %d of a sample of %d fields", c.MeasurementField, len(c.Measurement.Fields))
	case c.SetpointField >= len(c.Measurement.Fields) || c.SetpointField < -1:
		return fmt.Errorf("pid: the setpoint is field %d of a sample of %d fields", c.SetpointField, len(c.Measurement.Fields))
	case len(c.Command.Fields) != 1:
		return fmt.Errorf("pid: a command has one field, u, not %d", len(c.Command.Fields))
	case c.Timeout <= 0:
		return errors.New("pid: the measurement timeout must be positive")
	case c.Heartbeat < 0:
		return errors.New("pid: the heartbeat period must not be negative")
	}
	if err := wire.CheckValues(c.Measurement, c.MaxMessage); err != nil {
		return fmt.Errorf("pid: its measurements: %w", err)
	}
	if err := wire.CheckValues(c.Command, c.MaxMessage); err != nil {
		return fmt.Errorf("pid: its commands: %w", err)
	}
	return nil
}

// Controller is the PID firmware: once a period it runs the law on the
// latest measurement and sends the command. It is driven by Poll or
// Receive (bytes in) and Tick (periodic work), from one thread.
type Controller struct {
	cfg      Config
	law      Law
	loop     device.Periodic // the link to the rig, the control period and the heartbeat
	faultPin device.DigitalOut

	values       []float64
	y, r         float64
	have         bool          // a measurement arrived since the start or the last fault
	lastAt       time.Duration // when the latest measurement arrived (or the first tick)
	command      [1]float64
	commanded    bool
	fault        bool
	stats        Stats
	startPending bool
}

// Stats count what a controller did.
type Stats struct {
	Measurements uint64 // taken
	Refused      uint64 // samples of another layout, or a NaN measurement
	Ignored      uint64 // messages of types it does not take
	Commands     uint64 // sent
	Faults       uint64 // times the fault flag went up
	Ticks        uint64
	Skipped      uint64 // periods missed (the loop ran late)
}

var _ device.Firmware = (*Controller)(nil)

// New returns a controller speaking on uart, raising faultPin (if not
// nil) with its fault flag.
func New(cfg Config, uart device.UART, faultPin device.DigitalOut) (*Controller, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	c := &Controller{cfg: cfg, law: cfg.Law, faultPin: faultPin, r: cfg.Setpoint,
		values: make([]float64, len(cfg.Measurement.Fields)), startPending: true}
	c.law.i, c.law.d, c.law.primed, c.law.u = 0, 0, false, 0
	c.loop = device.NewPeriodic(device.NewLink(uart, cfg.MaxMessage, c.handle), cfg.Law.Period, cfg.Heartbeat)
	return c, nil
}

func (c *Controller) handle(m wire.Message, at time.Duration) {
	if m.Type != wire.Sample {
		c.stats.Ignored++
		return
	}
	if m.Values(c.cfg.Measurement, c.values) != nil {
		c.stats.Refused++
		return
	}
	y := c.values[c.cfg.MeasurementField]
	r := c.cfg.Setpoint
	if c.cfg.SetpointField >= 0 {
		r = c.values[c.cfg.SetpointField]
	}
	if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(r) || math.IsInf(r, 0) {
		c.stats.Refused++
		return
	}
	c.y, c.r, c.have, c.lastAt = y, r, true, at
	c.stats.Measurements++
}

// Poll takes in what the UART has.
func (c *Controller) Poll(now time.Duration) error { return c.loop.Poll(now) }

// Receive takes in bytes that arrived at at.
func (c *Controller) Receive(p []byte, at time.Duration) { c.loop.Receive(p, at) }

// Next is when the next tick is due.
func (c *Controller) Next() time.Duration { return c.loop.Next() }

// Tick does the periodic work due at now: the control law once a period,
// the fault flag, the heartbeat. Calling it early does nothing.
func (c *Controller) Tick(now time.Duration) {
	if c.startPending {
		c.startPending, c.lastAt = false, now // the timeout runs from the start
	}
	if c.loop.Due(now) {
		c.control(now)
	}
	var status wire.Status
	if c.fault {
		status |= wire.StatusFault
	}
	c.loop.Heartbeat(now, status)
}

func (c *Controller) control(now time.Duration) {
	stale := now-c.lastAt > c.cfg.Timeout
	switch {
	case stale && !c.fault:
		c.fault, c.have = true, false
		c.stats.Faults++
		c.setFaultPin(device.High)
	case !stale && c.fault && c.have:
		c.fault = false
		c.law.Forget() // do not difference against the measurement before the outage
		c.setFaultPin(device.Low)
	}
	if c.fault || !c.have {
		return // hold the last command: send nothing
	}
	c.command[0] = c.law.Update(c.r, c.y)
	c.commanded = true
	if c.loop.Link().SendValues(wire.Command, now, c.cfg.Command, c.command[:]) == nil {
		c.stats.Commands++
	}
}

func (c *Controller) setFaultPin(l device.Level) {
	if c.faultPin != nil {
		c.faultPin.Out(l)
	}
}

// Fault reports whether the fault flag is up.
func (c *Controller) Fault() bool { return c.fault }

// Command is the last command computed (held while the fault flag is up);
// ok is false before the first.
func (c *Controller) Command() (u float64, ok bool) { return c.command[0], c.commanded }

// Law is the controller's control law, with its state.
func (c *Controller) Law() *Law { return &c.law }

// Link is the controller's link to the rig.
func (c *Controller) Link() *device.Link { return c.loop.Link() }

// Stats are the controller's counts so far.
func (c *Controller) Stats() Stats {
	s := c.stats
	s.Ticks, s.Skipped = c.loop.Ticks(), c.loop.Skipped()
	return s
}
