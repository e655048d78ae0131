package rig

import (
	"errors"
	"math"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/executor"
)

// Firmware plays a bench endpoint with device firmware (the reference PID
// or plant node, or a lab's own) on a virtual UART, on the executor's
// clock: the frames delivered to the endpoint are COBS-framed and given
// to the firmware's Receive at the instant they arrive, as its UART would
// have them, and what the firmware writes is cut into frames again and
// sent into the flow the endpoint feeds, at its ticks (Tick when Next has
// come) and at once in answer to what it received (a time response, an
// acknowledgement). In virtual time the firmware then runs exactly as on
// a device whose clock is the rig's, reproducible bit for bit; in real
// time it runs on the executor's thread. Nothing per frame allocates.
type Firmware struct {
	fw     device.Firmware
	uart   firmwareUART
	frames wire.Decoder
	flow   int
	answer func(flow int, payload []byte)
	inject func(flow int, payload []byte) // during Emit or Answer: where frames go
	emit   func(frame []byte, at time.Duration)
	in     []byte
	now    time.Duration // the last instant the firmware was given
}

var (
	_ Player               = (*Firmware)(nil)
	_ executor.TimedWriter = (*Firmware)(nil)
	_ executor.Answerer    = (*Firmware)(nil)
)

// NewFirmware plays the firmware build makes on the UART it is given,
// whose messages are at most maxMessage bytes (0: wire.DefaultMaxMessage).
func NewFirmware(maxMessage int, build func(uart device.UART) (device.Firmware, error)) (*Firmware, error) {
	if maxMessage <= 0 {
		maxMessage = wire.DefaultMaxMessage
	}
	f := &Firmware{flow: -1, frames: wire.COBS{}.NewDecoder(maxMessage), in: make([]byte, 0, 2+maxMessage+maxMessage/254+1)}
	f.uart.out = make([]byte, 0, 4*maxMessage)
	f.emit = f.sendFrame // a method value allocates: once, here
	fw, err := build(&f.uart)
	if err != nil {
		return nil, err
	}
	if fw == nil {
		return nil, errors.New("no firmware")
	}
	f.fw = fw
	return f, nil
}

// Device is the firmware played.
func (f *Firmware) Device() device.Firmware { return f.fw }

func (f *Firmware) Feed(flow int) { f.flow = flow }

func (f *Firmware) Answer(inject func(flow int, payload []byte)) { f.answer = inject }

// Next is when the firmware's next tick is due.
func (f *Firmware) Next() time.Duration {
	if f.flow < 0 && f.answer == nil {
		return math.MaxInt64
	}
	return f.fw.Next()
}

// Emit runs the firmware's tick and sends what it wrote.
func (f *Firmware) Emit(now time.Duration, inject func(flow int, payload []byte)) {
	f.now = now
	f.fw.Tick(now)
	f.flush(inject, now)
}

// WriteAt hands a frame delivered to the endpoint at at to the firmware,
// framed as its UART would carry it, and sends what it answered at once.
func (f *Firmware) WriteAt(payload []byte, at time.Duration) error {
	f.now = max(f.now, at)
	f.in = wire.COBS{}.Append(f.in[:0], payload)
	f.fw.Receive(f.in, at)
	f.flush(f.answer, at)
	return nil
}

// Write is WriteAt the last instant the firmware was given.
func (f *Firmware) Write(payload []byte) error { return f.WriteAt(payload, f.now) }

// flush cuts what the firmware wrote into frames and sends them.
func (f *Firmware) flush(inject func(flow int, payload []byte), at time.Duration) {
	if len(f.uart.out) == 0 {
		return
	}
	f.inject = inject
	f.frames.Feed(f.uart.out, at, f.emit)
	f.uart.out = f.uart.out[:0]
	f.inject = nil
}

func (f *Firmware) sendFrame(frame []byte, _ time.Duration) {
	if f.inject != nil && f.flow >= 0 {
		f.inject(f.flow, frame)
	}
}

// firmwareUART is the firmware's side of the virtual line: it keeps what
// the firmware writes until the player sends it. Nothing arrives by Read:
// the player gives the firmware its bytes by Receive.
type firmwareUART struct{ out []byte }

func (u *firmwareUART) Read([]byte) (int, error) { return 0, nil }

func (u *firmwareUART) Write(p []byte) (int, error) {
	u.out = append(u.out, p...)
	return len(p), nil
}
