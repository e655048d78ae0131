// Package host runs a reference firmware on a host (a Raspberry Pi, a
// lab PC) on a serial port or pseudo-terminal: it opens the line, waits
// for bytes or the firmware's next tick, whichever comes first, and
// reopens a line that went away while the firmware keeps ticking (so a
// watchdog trips while the link is down, as it would on a device).
package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/wire"
)

// Clock is the host's monotonic clock, from its creation.
type Clock struct{ start time.Time }

// NewClock starts a clock at 0.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// Now reads the monotonic clock (time.Since uses it, not the wall clock).
func (c *Clock) Now() time.Duration { return time.Since(c.start) }

var (
	_ device.Clock = (*Clock)(nil)
	_ device.UART  = (*Line)(nil)
)

// Line is a serial line by path, the firmware's UART across reopenings.
// Writes while it is down fail, and the firmware counts them.
type Line struct {
	Path string
	Baud int
	port serial.Port
}

var errDown = errors.New("the line is down")

// Open opens the line.
func (l *Line) Open() error {
	p, err := serial.Open(l.Path, &serial.Mode{BaudRate: l.Baud})
	if err != nil {
		return err
	}
	l.port = p
	return nil
}

// Close closes the line.
func (l *Line) Close() error {
	if l.port == nil {
		return nil
	}
	err := l.port.Close()
	l.port = nil
	return err
}

// Write writes to the line.
func (l *Line) Write(p []byte) (int, error) {
	if l.port == nil {
		return 0, errDown
	}
	return l.port.Write(p)
}

// Read returns what has arrived without waiting.
func (l *Line) Read(p []byte) (int, error) { return l.read(p, 0) }

func (l *Line) read(p []byte, wait time.Duration) (int, error) {
	if l.port == nil {
		return 0, errDown
	}
	if err := l.port.SetReadTimeout(wait); err != nil {
		return 0, err
	}
	return l.port.Read(p)
}

// maxWait bounds a wait for bytes, so that a stop is noticed soon
// whatever the firmware's period.
const maxWait = 50 * time.Millisecond

// Run runs fw on line until ctx ends: bytes go in as they arrive, stamped
// with clock, and Tick runs when due. The line must be open. If it fails
// and reconnect is positive, Run keeps the firmware ticking and tries to
// reopen it every reconnect; otherwise it returns the error. lost and
// back, if not nil, hear of the line going and coming back.
func Run(ctx context.Context, line *Line, fw device.Firmware, clock device.Clock, reconnect time.Duration, lost func(error), back func()) error {
	buf := make([]byte, 1024)
	var retryAt time.Duration
	for ctx.Err() == nil {
		now := clock.Now()
		if fw.Next() <= now {
			fw.Tick(now)
		}
		wait := min(max(fw.Next()-clock.Now(), 0), maxWait)
		if line.port == nil {
			if now >= retryAt {
				if line.Open() == nil {
					if back != nil {
						back()
					}
					continue
				}
				retryAt = now + reconnect
			}
			time.Sleep(min(wait, max(retryAt-now, 0)))
			continue
		}
		n, err := line.read(buf, wait)
		if n > 0 {
			fw.Receive(buf[:n], clock.Now())
		}
		if err != nil {
			line.Close()
			if reconnect <= 0 {
				return fmt.Errorf("%s: %w", line.Path, err)
			}
			if lost != nil {
				lost(err)
			}
			retryAt = clock.Now() + reconnect
		}
	}
	return nil
}

// ParseLayout reads a signal layout: field types separated by commas,
// each with an optional scale and offset (value = raw·scale + offset),
// as in "f32le,i16le:0.01,u16le:0.1:-40".
func ParseLayout(s string) (*wire.Struct, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("an empty layout")
	}
	var fields []wire.Field
	for i, spec := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(spec), ":")
		if len(parts) > 3 {
			return nil, fmt.Errorf("field %d: %q is type[:scale[:offset]]", i+1, spec)
		}
		f := wire.Field{Type: wire.FieldType(parts[0])}
		if f.Type.Code() == 0 {
			return nil, fmt.Errorf("field %d: no type %q (want one of %s)", i+1, parts[0], fieldTypeNames())
		}
		for j, p := range parts[1:] {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (j == 0 && v == 0) {
				return nil, fmt.Errorf("field %d: %q is not a %s", i+1, p, [...]string{"non-zero scale", "finite offset"}[j])
			}
			if j == 0 {
				f.Scale = v
			} else {
				f.Offset = v
			}
		}
		fields = append(fields, f)
	}
	if len(fields) > wire.MaxFields {
		return nil, fmt.Errorf("%d fields; a message carries at most %d", len(fields), wire.MaxFields)
	}
	return wire.NewStruct(fields)
}

func fieldTypeNames() string {
	var names []string
	for _, t := range wire.FieldTypes {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

// ParseFloats reads numbers separated by commas.
func ParseFloats(s string) ([]float64, error) {
	var out []float64
	for i, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("value %d: %q is not a finite number", i+1, strings.TrimSpace(f))
		}
		out = append(out, v)
	}
	return out, nil
}

// ParseSignals reads the flags every firmware program takes for what it
// exchanges with the rig, --rate, --sample-layout and --command-layout:
// the period for the rate, and the two layouts. Its error names the flag
// at fault, the first of the three in that order.
func ParseSignals(rate float64, sampleLayout, commandLayout string) (period time.Duration, samples, commands *wire.Struct, err error) {
	if period, err = Hertz(rate); err != nil {
		return 0, nil, nil, fmt.Errorf("--rate: %w", err)
	}
	if samples, err = ParseLayout(sampleLayout); err != nil {
		return 0, nil, nil, fmt.Errorf("--sample-layout: %w", err)
	}
	if commands, err = ParseLayout(commandLayout); err != nil {
		return 0, nil, nil, fmt.Errorf("--command-layout: %w", err)
	}
	return period, samples, commands, nil
}

// Hertz converts a rate to a period.
func Hertz(rate float64) (time.Duration, error) {
	if !(rate > 0) || math.IsInf(rate, 0) || rate > 1e6 {
		return 0, fmt.Errorf("a rate of %v Hz (want more than 0, at most 1 MHz)", rate)
	}
	return time.Duration(math.Round(float64(time.Second) / rate)), nil
}
