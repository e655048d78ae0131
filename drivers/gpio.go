package drivers

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
)

// GPIO edge frames carry one edge: the index of the input pin it happened
// on (in the endpoint's list of inputs) and the level it went to.
const EdgeFrameSize = 2

// EdgeFrame returns the frame for an edge to level on input pin index.
func EdgeFrame(dst []byte, index int, level gpio.Level) []byte {
	l := byte(0)
	if level {
		l = 1
	}
	return append(dst, byte(index), l)
}

// GPIOInput is an input pin whose edges become frames.
type GPIOInput struct {
	Pin  string
	Pull gpio.Pull
	Edge gpio.Edge
}

// GPIOOutput is an output pin that replays edge frames. Safe is the level
// it is driven to at start, on stop and on error.
type GPIOOutput struct {
	Pin  string
	Safe gpio.Level
}

// GPIOConfig describes a GPIO endpoint. Edge frames from input i are
// replayed on output i of the endpoint they are bound to.
type GPIOConfig struct {
	Name         string
	Inputs       []GPIOInput
	Outputs      []GPIOOutput
	ReaderThread func()
}

// An EdgeStamper knows when the edge WaitForEdge last returned happened,
// and the level it went to, on a clock of its own whose current time is
// Now. Such pins' frames carry that edge's time (converted to the rig's
// clock) and level; other pins' frames carry the time the reader woke and
// the level read then, which a second edge in between can change.
type EdgeStamper interface {
	LastEdge() (time.Duration, gpio.Level)
	Now() time.Duration
}

// GPIO is an endpoint of GPIO pins found through periph's registry: real
// pins of the machine's GPIO chips, or registered stand-ins.
type GPIO struct {
	cfg      GPIOConfig
	ins      []gpio.PinIO
	outs     []gpio.PinIO
	stopping atomic.Bool
	readers  sync.WaitGroup
	counts   atomicCounts
}

var (
	_ Endpoint = (*GPIO)(nil)
	_ Safer    = (*GPIO)(nil)
)

// NewGPIO returns a GPIO endpoint; Start finds and configures its pins.
func NewGPIO(cfg GPIOConfig) *GPIO { return &GPIO{cfg: cfg} }

func (g *GPIO) Name() string { return g.cfg.Name }

// findPin looks a pin up by name; if it does not exist, the error says what
// does.
func (g *GPIO) findPin(name string) (gpio.PinIO, error) {
	_ = initHost()
	if p := gpioreg.ByName(name); p != nil {
		return p, nil
	}
	chips := gpioChipPaths()
	pins := GPIOPins()
	switch {
	case len(chips) == 0 && len(pins) == 0:
		return nil, fmt.Errorf("no pin %s: this machine has no GPIO chips (no /dev/gpiochip*) and no pins", name)
	case len(pins) == 0:
		return nil, fmt.Errorf("no pin %s: GPIO chips %s expose no pins", name, strings.Join(chips, ", "))
	}
	if len(pins) > 40 {
		pins = append(pins[:40], fmt.Sprintf("and %d more", len(pins)-40))
	}
	return nil, fmt.Errorf("no pin %s (pins here: %s)", name, strings.Join(pins, ", "))
}

func (g *GPIO) Start(clock Clock, sink Sink, index int) error {
	fail := func(pin string, err error) error {
		g.Safe()
		return &DeviceError{Endpoint: g.cfg.Name, Device: "gpio " + pin, Err: err}
	}
	for _, o := range g.cfg.Outputs {
		p, err := g.findPin(o.Pin)
		if err != nil {
			return fail(o.Pin, err)
		}
		if err := p.Out(o.Safe); err != nil {
			return fail(o.Pin, err)
		}
		g.outs = append(g.outs, p)
	}
	for _, in := range g.cfg.Inputs {
		p, err := g.findPin(in.Pin)
		if err != nil {
			return fail(in.Pin, err)
		}
		if err := p.In(in.Pull, in.Edge); err != nil {
			return fail(in.Pin, err)
		}
		g.ins = append(g.ins, p)
	}
	for i, p := range g.ins {
		g.readers.Add(1)
		go g.watch(i, p, clock, sink, index)
	}
	return nil
}

// watch turns one input's edges into frames, on its own locked thread.
func (g *GPIO) watch(i int, p gpio.PinIO, clock Clock, sink Sink, index int) {
	defer g.readers.Done()
	checkIn := lockReaderThread(g.cfg.ReaderThread)
	stamper, stamps := p.(EdgeStamper)
	var frame [EdgeFrameSize]byte
	var meter ReaderMeter
	for !g.stopping.Load() {
		checkIn.Pass()
		if !p.WaitForEdge(100 * time.Millisecond) {
			continue // a timeout, so that stopping is noticed
		}
		var at time.Duration
		var level gpio.Level
		if stamps {
			// The edge's age is taken before the rig's clock is read, so
			// the stamp errs late, never early: the rig never replays an
			// edge sooner than the profile's delay after it happened.
			edge, l := stamper.LastEdge()
			age := stamper.Now() - edge
			at, level = clock.Now()-age, l
		} else {
			at, level = clock.Now(), p.Read()
		}
		g.counts.framesIn.Add(1)
		g.counts.bytesIn.Add(EdgeFrameSize)
		sink.Frame(index, EdgeFrame(frame[:0], i, level), at)
		sink.Read(index, &meter, at)
	}
}

// Write replays an edge frame on the output with the frame's input index.
func (g *GPIO) Write(payload []byte) error {
	if len(payload) != EdgeFrameSize || int(payload[0]) >= len(g.outs) {
		g.counts.writeErrors.Add(1)
		return errors.New("not an edge frame for one of this endpoint's outputs")
	}
	if err := g.outs[payload[0]].Out(payload[1] != 0); err != nil {
		g.counts.writeErrors.Add(1)
		return err
	}
	g.counts.framesOut.Add(1)
	g.counts.bytesOut.Add(EdgeFrameSize)
	return nil
}

// Safe drives every output to its safe level.
func (g *GPIO) Safe() error {
	var errs []error
	for i, p := range g.outs {
		if err := p.Out(g.cfg.Outputs[i].Safe); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Name(), err))
		}
	}
	return errors.Join(errs...)
}

func (g *GPIO) Stop() error {
	if g.stopping.Swap(true) {
		return nil
	}
	for _, p := range g.ins {
		p.Halt() // unblocks a pending WaitForEdge
	}
	g.readers.Wait()
	return g.Safe()
}

func (g *GPIO) Counts() Counts { return g.counts.snapshot() }
