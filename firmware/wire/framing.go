package wire

import (
	"bytes"
	"fmt"
	"time"
)

// A Framing cuts a byte stream into frames and writes frames back as bytes.
// Each framing is one small type, registered by name in Framings.
type Framing interface {
	// NewDecoder returns a decoder that keeps frames of at most max bytes.
	NewDecoder(max int) Decoder
	// Append appends the bytes that carry payload on the wire to dst.
	Append(dst, payload []byte) []byte
	// Name is the framing's name in a bench file.
	Name() string
}

// A Decoder turns received bytes into frames.
type Decoder interface {
	// Feed consumes bytes that arrived at time at, calling emit for each
	// complete frame with the time its last byte arrived. The frame is
	// valid only during the call.
	Feed(p []byte, at time.Duration, emit func(frame []byte, at time.Duration))
	// Gap is called when the line has been silent for the framing's gap;
	// framings that are not cut by silence ignore it.
	Gap(emit func(frame []byte, at time.Duration))
	// Errors counts frames dropped as malformed or too long (Stats'
	// BadFrames).
	Errors() uint64
	// Stats accounts for every byte fed so far.
	Stats() DecoderStats
	// Discard drops the frame begun but not ended, counting it bad: the
	// line was cut (a device unplugged) and what follows starts afresh.
	Discard()
}

// DecoderStats account for every byte a decoder was fed: each is in a
// frame, a bad frame, a delimiter that ended no frame, or the frame still
// pending, so Bytes = FrameBytes + BadBytes + IdleBytes + Pending.
type DecoderStats struct {
	Bytes      uint64 // fed
	Frames     uint64 // frames emitted
	FrameBytes uint64 // the bytes that carried them: delimiters and escapes included
	BadFrames  uint64 // frames dropped: too long, or undecodable
	BadBytes   uint64 // the bytes of the dropped frames
	IdleBytes  uint64 // delimiters that ended no frame (an empty frame a framing ignores)
	Pending    uint64 // bytes of a frame begun and not yet ended
}

// Add adds o to s: a driver that replaces its decoder (after reopening
// a device) keeps the sum.
func (s *DecoderStats) Add(o DecoderStats) {
	s.Bytes += o.Bytes
	s.Frames += o.Frames
	s.FrameBytes += o.FrameBytes
	s.BadFrames += o.BadFrames
	s.BadBytes += o.BadBytes
	s.IdleBytes += o.IdleBytes
	s.Pending += o.Pending
}

var (
	_ Framing = Line{}
	_ Framing = AnyLine{}
	_ Framing = SLIP{}
	_ Framing = COBS{}
	_ Framing = Fixed{}
	_ Framing = Idle{}
	_ Decoder = (*lineDecoder)(nil)
	_ Decoder = (*anyLineDecoder)(nil)
	_ Decoder = (*slipDecoder)(nil)
	_ Decoder = (*cobsDecoder)(nil)
	_ Decoder = (*fixedDecoder)(nil)
	_ Decoder = (*idleDecoder)(nil)
)

// Framings are the framings a bench may name.
var Framings = map[string]func(FramingOptions) (Framing, error){
	"line":  newLine,
	"slip":  func(FramingOptions) (Framing, error) { return SLIP{}, nil },
	"cobs":  func(FramingOptions) (Framing, error) { return COBS{}, nil },
	"fixed": newFixed,
	"idle":  func(o FramingOptions) (Framing, error) { return Idle{Silence: o.Gap}, nil },
}

// FramingOptions are the parameters some framings take.
type FramingOptions struct {
	Delimiter  []byte        // line: what ends a frame; with AnyLineEnd, what ends a written one
	AnyLineEnd bool          // line: CR, LF or CRLF ends a received frame (see AnyLine)
	Size       int           // fixed
	Gap        time.Duration // idle
}

// NewFraming returns the named framing.
func NewFraming(name string, o FramingOptions) (Framing, error) {
	f, ok := Framings[name]
	if !ok {
		return nil, fmt.Errorf("unknown framing %q", name)
	}
	return f(o)
}

// accumulator collects a frame's bytes up to a maximum; a frame that grows
// past it is dropped whole and counted. It accounts for the bytes on the
// wire: raw counts the current frame's, delimiters and escapes included.
type accumulator struct {
	buf      []byte
	max      int
	overflow bool
	raw      uint64
	stats    DecoderStats
}

func (a *accumulator) add(b ...byte) {
	if a.overflow {
		return
	}
	if len(a.buf)+len(b) > a.max {
		a.overflow = true
		return
	}
	a.buf = append(a.buf, b...)
}

// emitted, dropped and idle end the current frame: handed on, counted
// bad, or empty and ignored. The frame's bytes stay in buf until the next
// add, so a caller may emit them after.
func (a *accumulator) emitted() {
	a.stats.Frames++
	a.stats.FrameBytes += a.raw
	a.reset()
}

func (a *accumulator) dropped() {
	a.stats.BadFrames++
	a.stats.BadBytes += a.raw
	a.reset()
}

func (a *accumulator) idle() {
	a.stats.IdleBytes += a.raw
	a.reset()
}

func (a *accumulator) reset() { a.buf, a.overflow, a.raw = a.buf[:0], false, 0 }

func (a *accumulator) Errors() uint64 { return a.stats.BadFrames }

func (a *accumulator) Stats() DecoderStats {
	s := a.stats
	s.Pending = a.raw
	return s
}

func (a *accumulator) Discard() {
	if a.raw > 0 {
		a.dropped()
	}
}

func (a *accumulator) Gap(func([]byte, time.Duration)) {}

// Line frames end with a delimiter ("\n" by default), which is not part of
// the payload. Empty lines are frames too.
type Line struct{ Delimiter []byte }

func newLine(o FramingOptions) (Framing, error) {
	if o.AnyLineEnd {
		return newAnyLine(o)
	}
	d := o.Delimiter
	if d == nil {
		d = []byte("\n")
	}
	if len(d) == 0 {
		return nil, fmt.Errorf("line framing needs a non-empty delimiter")
	}
	return Line{Delimiter: d}, nil
}

func (Line) Name() string { return "line" }

func (l Line) Append(dst, payload []byte) []byte {
	return append(append(dst, payload...), l.Delimiter...)
}

func (l Line) NewDecoder(max int) Decoder {
	return &lineDecoder{delim: l.Delimiter, accumulator: accumulator{max: max + len(l.Delimiter), buf: make([]byte, 0, max+len(l.Delimiter))}}
}

type lineDecoder struct {
	accumulator
	delim []byte
}

func (d *lineDecoder) Feed(p []byte, at time.Duration, emit func([]byte, time.Duration)) {
	d.stats.Bytes += uint64(len(p))
	last := d.delim[len(d.delim)-1]
	for _, b := range p {
		d.raw++
		d.add(b)
		switch {
		case b != last:
		case d.overflow:
			d.dropped() // resynchronise on the delimiter after a too-long line
		case bytes.HasSuffix(d.buf, d.delim):
			frame := d.buf[:len(d.buf)-len(d.delim)]
			d.emitted()
			emit(frame, at)
		}
	}
}

// AnyLine frames are text lines as terminals send them: CR, LF or CRLF
// ends a line (picocom and screen send CR for Enter, most programs LF,
// Windows ones CRLF), and an LF straight after a CR belongs to that CR, so
// CRLF is one line end, not an empty line. Written frames end with
// Delimiter. It is the line framing with FramingOptions.AnyLineEnd.
type AnyLine struct{ Delimiter []byte }

func newAnyLine(o FramingOptions) (Framing, error) {
	switch d := string(o.Delimiter); d {
	case "":
		return AnyLine{Delimiter: []byte("\n")}, nil
	case "\n", "\r", "\r\n":
		return AnyLine{Delimiter: []byte(d)}, nil
	default:
		return nil, fmt.Errorf("a line framing that takes any line end writes \\n, \\r or \\r\\n, not %q", d)
	}
}

func (AnyLine) Name() string { return "line" }

func (l AnyLine) Append(dst, payload []byte) []byte {
	return append(append(dst, payload...), l.Delimiter...)
}

func (AnyLine) NewDecoder(max int) Decoder {
	return &anyLineDecoder{accumulator: accumulator{max: max, buf: make([]byte, 0, max)}}
}

type anyLineDecoder struct {
	accumulator
	afterCR bool // the last byte was a CR that ended a line
	lastBad bool // and that line was dropped
}

func (d *anyLineDecoder) Feed(p []byte, at time.Duration, emit func([]byte, time.Duration)) {
	d.stats.Bytes += uint64(len(p))
	for _, b := range p {
		if b == '\n' && d.afterCR {
			// The LF of a CRLF: a byte of the line the CR ended.
			d.afterCR = false
			if d.lastBad {
				d.stats.BadBytes++
			} else {
				d.stats.FrameBytes++
			}
			continue
		}
		d.afterCR = b == '\r'
		d.raw++
		if b != '\r' && b != '\n' {
			d.add(b)
			continue
		}
		d.lastBad = d.overflow
		if d.overflow {
			d.dropped()
			continue
		}
		frame := d.buf
		d.emitted()
		emit(frame, at)
	}
}

// SLIP is RFC 1055 framing: frames end with END (0xC0); END and ESC (0xDB)
// inside a frame are escaped as ESC ESC_END (0xDC) and ESC ESC_ESC (0xDD).
// Written frames start with END too, to flush line noise, as RFC 1055
// suggests; empty frames are ignored.
type SLIP struct{}

const (
	slipEnd    = 0xC0
	slipEsc    = 0xDB
	slipEscEnd = 0xDC
	slipEscEsc = 0xDD
)

func (SLIP) Name() string { return "slip" }

func (SLIP) Append(dst, payload []byte) []byte {
	dst = append(dst, slipEnd)
	for _, b := range payload {
		switch b {
		case slipEnd:
			dst = append(dst, slipEsc, slipEscEnd)
		case slipEsc:
			dst = append(dst, slipEsc, slipEscEsc)
		default:
			dst = append(dst, b)
		}
	}
	return append(dst, slipEnd)
}

func (SLIP) NewDecoder(max int) Decoder {
	return &slipDecoder{accumulator: accumulator{max: max, buf: make([]byte, 0, max)}}
}

type slipDecoder struct {
	accumulator
	escaped bool
	bad     bool // a malformed escape: drop the frame at its END
}

func (d *slipDecoder) Feed(p []byte, at time.Duration, emit func([]byte, time.Duration)) {
	d.stats.Bytes += uint64(len(p))
	for _, b := range p {
		d.raw++
		switch {
		case b == slipEnd:
			switch {
			case d.bad || d.escaped || d.overflow:
				d.dropped()
			case len(d.buf) > 0:
				frame := d.buf
				d.emitted()
				emit(frame, at)
			default:
				d.idle()
			}
			d.escaped, d.bad = false, false
		case d.escaped:
			d.escaped = false
			switch b {
			case slipEscEnd:
				d.add(slipEnd)
			case slipEscEsc:
				d.add(slipEsc)
			default:
				d.bad = true
			}
		case b == slipEsc:
			d.escaped = true
		default:
			d.add(b)
		}
	}
}

func (d *slipDecoder) Discard() {
	d.accumulator.Discard()
	d.escaped, d.bad = false, false
}

// COBS is Consistent Overhead Byte Stuffing (Cheshire & Baker, 1999):
// frames are COBS-encoded, so they contain no zero byte, and end with 0x00.
// Written frames start with 0x00 too, as SLIP's start with END: noise on
// the line, or a frame whose end was lost, then ends there instead of
// swallowing the frame that follows, so damage costs only the frame it
// hits. Empty frames (a zero after a zero) are ignored.
type COBS struct{}

func (COBS) Name() string { return "cobs" }

func (COBS) Append(dst, payload []byte) []byte {
	dst = append(dst, 0)
	codeAt := len(dst)
	dst = append(dst, 0)
	code := byte(1)
	for _, b := range payload {
		if b == 0 {
			dst[codeAt] = code
			codeAt, code = len(dst), 1
			dst = append(dst, 0)
			continue
		}
		dst = append(dst, b)
		code++
		if code == 0xFF {
			dst[codeAt] = code
			codeAt, code = len(dst), 1
			dst = append(dst, 0)
		}
	}
	dst[codeAt] = code
	return append(dst, 0)
}

func (COBS) NewDecoder(max int) Decoder {
	// An encoded frame is at most max + max/254 + 1 bytes long.
	limit := max + max/254 + 2
	return &cobsDecoder{accumulator: accumulator{max: limit, buf: make([]byte, 0, limit)}, out: make([]byte, 0, max), maxOut: max}
}

type cobsDecoder struct {
	accumulator
	out    []byte
	maxOut int
}

func (d *cobsDecoder) Feed(p []byte, at time.Duration, emit func([]byte, time.Duration)) {
	d.stats.Bytes += uint64(len(p))
	for _, b := range p {
		d.raw++
		if b != 0 {
			d.add(b)
			continue
		}
		switch {
		case d.overflow:
			d.dropped()
		case len(d.buf) == 0:
			d.idle()
		default:
			if frame, ok := d.decode(d.buf); ok {
				d.emitted()
				emit(frame, at)
			} else {
				d.dropped()
			}
		}
	}
}

// decode undoes COBS; it fails on a block that runs past the frame.
func (d *cobsDecoder) decode(in []byte) ([]byte, bool) {
	out := d.out[:0]
	for i := 0; i < len(in); {
		code := int(in[i])
		if code == 0 || i+code > len(in) {
			return nil, false
		}
		out = append(out, in[i+1:i+code]...)
		i += code
		if code < 0xFF && i < len(in) {
			out = append(out, 0)
		}
	}
	if len(out) > d.maxOut {
		return nil, false
	}
	d.out = out
	return out, true
}

// Fixed frames are exactly Size bytes, one after another. Written frames
// are the payload as is.
type Fixed struct{ Size int }

func newFixed(o FramingOptions) (Framing, error) {
	if o.Size <= 0 {
		return nil, fmt.Errorf("fixed framing needs a frame size")
	}
	return Fixed{Size: o.Size}, nil
}

func (Fixed) Name() string                      { return "fixed" }
func (Fixed) Append(dst, payload []byte) []byte { return append(dst, payload...) }

func (f Fixed) NewDecoder(int) Decoder {
	return &fixedDecoder{size: f.Size, buf: make([]byte, 0, f.Size)}
}

type fixedDecoder struct {
	size  int
	buf   []byte
	stats DecoderStats
}

func (d *fixedDecoder) Feed(p []byte, at time.Duration, emit func([]byte, time.Duration)) {
	d.stats.Bytes += uint64(len(p))
	for len(p) > 0 {
		n := min(d.size-len(d.buf), len(p))
		d.buf = append(d.buf, p[:n]...)
		p = p[n:]
		if len(d.buf) == d.size {
			d.stats.Frames++
			d.stats.FrameBytes += uint64(d.size)
			emit(d.buf, at)
			d.buf = d.buf[:0]
		}
	}
}

func (d *fixedDecoder) Gap(func([]byte, time.Duration)) {}
func (d *fixedDecoder) Errors() uint64                  { return d.stats.BadFrames }

func (d *fixedDecoder) Stats() DecoderStats {
	s := d.stats
	s.Pending = uint64(len(d.buf))
	return s
}

func (d *fixedDecoder) Discard() {
	if len(d.buf) > 0 {
		d.stats.BadFrames++
		d.stats.BadBytes += uint64(len(d.buf))
		d.buf = d.buf[:0]
	}
}

// Idle frames end when the line falls silent for Silence, as in Modbus RTU
// (3.5 character times). Written frames are the payload as is; the silence
// between them comes from their timing.
type Idle struct{ Silence time.Duration }

func (Idle) Name() string                      { return "idle" }
func (Idle) Append(dst, payload []byte) []byte { return append(dst, payload...) }

func (Idle) NewDecoder(max int) Decoder {
	return &idleDecoder{accumulator: accumulator{max: max, buf: make([]byte, 0, max)}}
}

type idleDecoder struct {
	accumulator
	last time.Duration
}

func (d *idleDecoder) Feed(p []byte, at time.Duration, _ func([]byte, time.Duration)) {
	d.stats.Bytes += uint64(len(p))
	d.raw += uint64(len(p))
	d.add(p...)
	d.last = at
}

func (d *idleDecoder) Gap(emit func([]byte, time.Duration)) {
	switch {
	case d.raw == 0:
	case d.overflow:
		d.dropped()
	default:
		frame := d.buf
		d.emitted()
		emit(frame, d.last)
	}
}
