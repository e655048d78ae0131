package device

import (
	"io"
	"time"
)

// Clock tells the device's time: a monotonic clock, from any origin.
type Clock interface {
	Now() time.Duration
}

// UART is a serial line. Read must not block: it returns what has
// arrived, possibly nothing (0, nil), as a microcontroller's buffered
// UART does. Write may block until the bytes are queued.
type UART interface {
	io.Reader
	io.Writer
}

// Level is a digital pin's level.
type Level bool

// The levels.
const (
	Low  Level = false
	High Level = true
)

func (l Level) String() string {
	if l {
		return "High"
	}
	return "Low"
}

// DigitalIn is a digital input pin.
type DigitalIn interface {
	Read() Level
}

// DigitalOut is a digital output pin.
type DigitalOut interface {
	Out(l Level) error
}

// AnalogIn is an analog input in its signal's unit (the pin's driver
// scales ADC counts).
type AnalogIn interface {
	Read() (float64, error)
}

// AnalogOut is an analog output (a DAC, a PWM duty, a motor drive) in its
// signal's unit.
type AnalogOut interface {
	Out(v float64) error
}

// DigitalInput reads a digital pin as an analog input: 1 when High, 0
// when Low.
type DigitalInput struct{ Pin DigitalIn }

// DigitalOutput drives a digital pin as an analog output: High when the
// value is at least Threshold, Low otherwise (and for NaN).
type DigitalOutput struct {
	Pin       DigitalOut
	Threshold float64
}

var (
	_ AnalogIn  = DigitalInput{}
	_ AnalogOut = DigitalOutput{}
)

func (d DigitalInput) Read() (float64, error) {
	if d.Pin.Read() {
		return 1, nil
	}
	return 0, nil
}

func (d DigitalOutput) Out(v float64) error { return d.Pin.Out(Level(v >= d.Threshold)) }

// Schedule keeps a fixed rate: Due says when the next period has come.
// A tick that comes more than a period late skips the periods missed
// (counted), rather than running them back to back: a control law's
// period is its sampling time, and a burst of catch-up ticks would not
// sample anything new.
type Schedule struct {
	Period  time.Duration
	next    time.Duration
	started bool
	ticks   uint64
	skipped uint64
}

// Due reports whether a tick is due at now, and if so takes it.
func (s *Schedule) Due(now time.Duration) bool {
	if !s.started {
		s.started, s.next = true, now
	}
	if now < s.next {
		return false
	}
	s.ticks++
	s.next += s.Period
	if now >= s.next {
		missed := (now-s.next)/s.Period + 1
		s.skipped += uint64(missed)
		s.next += missed * s.Period
	}
	return true
}

// Next is when the next tick is due (0 before the first).
func (s *Schedule) Next() time.Duration { return s.next }

// Ticks and Skipped count the ticks taken and the periods missed.
func (s *Schedule) Ticks() uint64   { return s.ticks }
func (s *Schedule) Skipped() uint64 { return s.skipped }

// Firmware is what a device runs, from one thread: bytes in (Poll on a
// UART that does not block, or Receive from a host's reader) and periodic
// work (Tick, due at Next). A microcontroller's main loop is
//
//	for {
//		now := clock.Now()
//		fw.Poll(now)
//		fw.Tick(now)
//	}
type Firmware interface {
	Poll(now time.Duration) error
	Receive(p []byte, at time.Duration)
	Tick(now time.Duration)
	Next() time.Duration
}
