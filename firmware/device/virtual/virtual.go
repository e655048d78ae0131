// Package virtual is hardware for firmware without hardware: a clock that
// moves when told, a first-order plant on a pin pair, digital pins that
// remember their level, and a cable between two UARTs that can be cut.
// Tests drive the reference firmware with it; the host builds in
// firmware/cmd use its plant when there is nothing on the pins.
package virtual

import (
	"math"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
)

var (
	_ device.Clock      = (*Clock)(nil)
	_ device.AnalogIn   = (*Lag)(nil)
	_ device.AnalogOut  = (*Lag)(nil)
	_ device.DigitalIn  = (*Pin)(nil)
	_ device.DigitalOut = (*Pin)(nil)
	_ device.UART       = (*End)(nil)
)

// Clock is a clock that reads what it was last set to.
type Clock struct{ T time.Duration }

func (c *Clock) Now() time.Duration { return c.T }

// Lag is a first-order plant, τ·dy/dt = K·u − y, on an output (u) and an
// input (y) pin pair, integrated exactly under a held u up to the clock's
// time whenever either pin is used: y(t+h) = K·u + (y(t) − K·u)·e^(−h/τ).
// A Tau of 0 makes y follow K·u at once.
type Lag struct {
	Tau   time.Duration
	Gain  float64
	Clock device.Clock

	y, u float64
	at   time.Duration
	init bool
}

// advance integrates to the clock's time.
func (l *Lag) advance() {
	now := l.Clock.Now()
	if !l.init {
		l.init, l.at = true, now
	}
	if h := now - l.at; h > 0 {
		target := float64(l.Gain * l.u) // rounded: it is added below
		if l.Tau <= 0 {
			l.y = target
		} else {
			l.y = target + float64((l.y-target)*math.Exp(-float64(h)/float64(l.Tau)))
		}
		l.at = now
	}
}

// Out sets u from now on.
func (l *Lag) Out(u float64) error {
	l.advance()
	l.u = u
	if l.Tau <= 0 {
		l.y = l.Gain * u
	}
	return nil
}

// Read is y now.
func (l *Lag) Read() (float64, error) {
	l.advance()
	return l.y, nil
}

// Drive is the last u set.
func (l *Lag) Drive() float64 { return l.u }

// Pin is a digital pin that reads the level last driven on it.
type Pin struct{ L device.Level }

func (p *Pin) Read() device.Level { return p.L }

func (p *Pin) Out(l device.Level) error {
	p.L = l
	return nil
}

// Cable joins two UART ends: what one end writes the other reads, in
// order, unless the cable is cut, when writes vanish (counted). Reads
// never block. It is not safe for concurrent use; a test drives both
// ends from one goroutine.
type Cable struct {
	A, B End
	Cut  bool
}

// NewCable returns a cable with its ends joined.
func NewCable() *Cable {
	c := &Cable{}
	c.A.cable, c.A.peer = c, &c.B
	c.B.cable, c.B.peer = c, &c.A
	return c
}

// End is one end of a Cable.
type End struct {
	cable   *Cable
	peer    *End
	queue   []byte // what this end has yet to read
	Lost    uint64 // bytes written while the cable was cut
	Written uint64
}

func (e *End) Read(p []byte) (int, error) {
	n := copy(p, e.queue)
	e.queue = e.queue[:copy(e.queue, e.queue[n:])]
	return n, nil
}

func (e *End) Write(p []byte) (int, error) {
	e.Written += uint64(len(p))
	if e.cable.Cut {
		e.Lost += uint64(len(p))
		return len(p), nil
	}
	e.peer.queue = append(e.peer.queue, p...)
	return len(p), nil
}
