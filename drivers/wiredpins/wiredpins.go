// Package wiredpins provides fake GPIO pins that can be wired together: an
// output wired to inputs produces real edges on them, with the edge kinds
// the inputs asked for, stamped by a clock the test controls. periph's own
// gpiotest pins do not wire. The pins implement periph's gpio.PinIO, so
// registered with gpioreg they stand in for a machine's pins in the same
// driver code.
package wiredpins

import (
	"errors"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/pin"
)

// Clock tells the time that edges are stamped with.
type Clock func() time.Duration

// Pin is a fake GPIO pin. Configured as an output, the level it is set to
// reaches every input wired to it; configured as an input, it reports the
// level it is driven to (or its pull, undriven) and queues the edges its
// edge setting selects.
type Pin struct {
	name   string
	number int
	clock  Clock

	mu     sync.Mutex
	output bool
	level  gpio.Level
	driven bool
	pull   gpio.Pull
	edge   gpio.Edge
	wired  []*Pin // inputs this pin drives as an output
	edges  chan edgeEvent
	last   edgeEvent // the edge WaitForEdge last returned
	halt   chan struct{}
}

type edgeEvent struct {
	at    time.Duration
	level gpio.Level
}

var _ gpio.PinIO = (*Pin)(nil)

// New returns an unconfigured pin whose edges are stamped by clock.
func New(name string, number int, clock Clock) *Pin {
	return &Pin{name: name, number: number, clock: clock, edges: make(chan edgeEvent, 4096), halt: make(chan struct{}, 1)}
}

// Wire connects output out to input in: levels set on out appear on in.
func Wire(out, in *Pin) {
	out.mu.Lock()
	out.wired = append(out.wired, in)
	level := out.level
	driving := out.output
	out.mu.Unlock()
	if driving {
		in.drive(level)
	}
}

// drive sets the level an input sees and queues the edge if it wants it.
func (p *Pin) drive(l gpio.Level) {
	p.mu.Lock()
	defer p.mu.Unlock()
	before := p.readLocked()
	p.level, p.driven = l, true
	if before == l || p.output {
		return
	}
	rising := l == gpio.High
	if p.edge == gpio.BothEdges || p.edge == gpio.RisingEdge && rising || p.edge == gpio.FallingEdge && !rising {
		select {
		case p.edges <- edgeEvent{at: p.clock(), level: l}:
		default: // a reader this far behind has lost edges, as on hardware
		}
	}
}

func (p *Pin) readLocked() gpio.Level {
	if p.driven || p.output {
		return p.level
	}
	return p.pull == gpio.PullUp
}

// In configures the pin as an input.
func (p *Pin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.output, p.pull, p.edge = false, pull, edge
	for len(p.edges) > 0 {
		<-p.edges
	}
	return nil
}

// Read returns the pin's level.
func (p *Pin) Read() gpio.Level {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.readLocked()
}

// WaitForEdge waits for an edge selected by In; a negative timeout waits
// until Halt. Without edge detection it returns false at once, as periph's
// pins do.
func (p *Pin) WaitForEdge(timeout time.Duration) bool {
	p.mu.Lock()
	edge := p.edge
	p.mu.Unlock()
	if edge == gpio.NoEdge {
		return false
	}
	select { // an edge already queued wins over a timeout of zero
	case e := <-p.edges:
		p.took(e)
		return true
	default:
	}
	var expired <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case e := <-p.edges:
		p.took(e)
		return true
	case <-p.halt:
		return false
	case <-expired:
		return false
	}
}

// Now is the time on the pin's clock.
func (p *Pin) Now() time.Duration { return p.clock() }

func (p *Pin) took(e edgeEvent) {
	p.mu.Lock()
	p.last = e
	p.mu.Unlock()
}

// LastEdge is when the edge WaitForEdge last returned happened, on the
// pin's clock, and the level it went to.
func (p *Pin) LastEdge() (time.Duration, gpio.Level) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.at, p.last.level
}

// Out configures the pin as an output at level l, which every wired input
// sees at once.
func (p *Pin) Out(l gpio.Level) error {
	p.mu.Lock()
	p.output, p.level = true, l
	wired := append([]*Pin(nil), p.wired...)
	p.mu.Unlock()
	for _, in := range wired {
		in.drive(l)
	}
	return nil
}

// PWM is not supported.
func (p *Pin) PWM(gpio.Duty, physic.Frequency) error {
	return errors.New("wiredpins: PWM is not supported")
}

// Halt unblocks a pending WaitForEdge.
func (p *Pin) Halt() error {
	select {
	case p.halt <- struct{}{}:
	default:
	}
	return nil
}

func (p *Pin) Name() string               { return p.name }
func (p *Pin) String() string             { return p.name }
func (p *Pin) Number() int                { return p.number }
func (p *Pin) Pull() gpio.Pull            { p.mu.Lock(); defer p.mu.Unlock(); return p.pull }
func (p *Pin) DefaultPull() gpio.Pull     { return gpio.PullNoChange }
func (p *Pin) Func() pin.Func             { return pin.FuncNone }
func (p *Pin) SupportedFuncs() []pin.Func { return []pin.Func{gpio.IN, gpio.OUT} }
func (p *Pin) SetFunc(pin.Func) error     { return errors.New("wiredpins: use In or Out") }

// Function describes the pin's current use.
func (p *Pin) Function() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.output {
		return "Out/" + p.level.String()
	}
	return "In/" + p.readLocked().String()
}
