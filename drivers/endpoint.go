package drivers

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/firmware/wire"
)

// A Clock gives the time since the start of a run on the monotonic clock.
// Every timestamp an endpoint produces comes from the rig's Clock.
type Clock interface{ Now() time.Duration }

// A Sink receives what endpoints read. Its methods are called from the
// endpoints' reader goroutines and must not block for long.
type Sink interface {
	// Frame is called for each complete frame: at is when its last byte
	// (or its edge) arrived. The payload is valid only during the call.
	Frame(endpoint int, payload []byte, at time.Duration)
	// Gone reports that an endpoint's device stopped working. With
	// reconnect the endpoint keeps trying and calls Back when it succeeds;
	// without, the run should stop.
	Gone(endpoint int, at time.Duration, err error)
	// Back reports that an endpoint reconnected.
	Back(endpoint int, at time.Duration)
	// Read is called on an endpoint's reader thread after each read from
	// its device, whatever it brought (frames, bytes no frame takes, an
	// error): the sink may make the thread wait, so that a device flooding
	// the rig, with frames or garbage, holds a real-time thread to its
	// share of the CPU. meter is the calling thread's own: an endpoint
	// with several reader threads (a GPIO endpoint's pins) gives each its
	// own, since a thread's CPU is measured apart from the others'.
	Read(endpoint int, meter *ReaderMeter, at time.Duration)
	// Notice reports news of an endpoint's device that neither takes it
	// away nor brings it back: kind is one of the Notice words, err says
	// what, a *DeviceError naming the device. It is called from the
	// executor's own thread too, within Write, and must never block.
	Notice(endpoint int, at time.Duration, kind string, err error)
}

// ReaderMeter is one reader thread's account of its CPU by windows, for
// Sink.Read: the thread owns it and passes it on every call, and the sink
// keeps it. The zero value is ready.
type ReaderMeter struct {
	Start, CPU  time.Duration // when the window began, and the thread's CPU then
	Checked     time.Duration // when the thread's CPU was last read
	RestedUntil time.Duration // when its last rest ended
}

// The notices a Sink hears, as the run's events name them.
const (
	// NoticeNotReading: the device stopped taking the frames written to
	// it (Counts.NotTaken); said once a stretch, at its first frame.
	NoticeNotReading = "device_not_reading"
	// NoticeReading: the device took frames again, and every one for a
	// second since the last it did not: the stretch is over, said at the
	// first frame it took, with the frames it did not.
	NoticeReading = "device_reading"
	// NoticeReopenFailed: a device that went away could not be opened
	// again, and why; said once a gap, as the endpoint goes on trying.
	NoticeReopenFailed = "device_reopen_failed"
)

// A Reader reads its device on goroutines of its own and reports what
// arrives (frames, the device going away and coming back) to a Sink.
type Reader interface {
	// Start opens the device and starts reading it, reporting to sink
	// with index as the endpoint's number.
	Start(clock Clock, sink Sink, index int) error
	// Stop closes the device; the reading goroutines end before it
	// returns.
	Stop() error
}

// A Writer sends frames to its device.
type Writer interface {
	// Write sends one frame's payload now, in one attempt that never
	// waits: a frame the device does not take (its side is full) is
	// refused with ErrNotReading, and counted. It is called from one
	// goroutine (the executor) and allocates nothing but the notices of
	// a stretch of not reading, once a stretch.
	Write(payload []byte) error
}

// An Endpoint is one side of the rig's I/O: a device, named in the bench,
// that produces frames and accepts them.
type Endpoint interface {
	Name() string
	Reader
	Writer
}

// Optional capabilities, found by type assertion.
type (
	// A Leader takes time to put a frame on its line: the executor starts
	// writing that much before the frame's last byte is due. LineMode says
	// how, in words, for the summary.
	Leader interface {
		LineTime(payloadBytes int) time.Duration
		LineMode() string
	}
	// A Safer has outputs with declared safe levels, applied at start, on
	// stop and on error.
	Safer interface {
		Safe() error
	}
	// A Counter reports what it saw.
	Counter interface {
		Counts() Counts
	}
	// An Announcer has something to tell the user once started, such as
	// the path of a pseudo-terminal to attach to.
	Announcer interface {
		Announce() string
	}
)

// Counts are an endpoint's statistics.
// Every byte read is in exactly one of FrameBytes (of the frames read,
// their framing included), BadBytes (of the frames dropped), IdleBytes
// (delimiters that ended no frame) and PendingBytes (a frame begun and
// not yet ended): BytesIn is their sum.
type Counts struct {
	FramesIn, FramesOut uint64
	BytesIn, BytesOut   uint64
	FrameBytes          uint64
	BadFrames           uint64 // malformed or too long, dropped on input
	BadBytes            uint64
	IdleBytes           uint64
	PendingBytes        uint64
	// WriteErrors are the frames Write refused, whatever the reason: the
	// device away, not reading, or failing.
	WriteErrors uint64
	// NotTaken are the frames of WriteErrors the device did not take
	// because it was not reading (ErrNotReading).
	NotTaken uint64
	// CutFrames are the frames whose head the device took and whose rest
	// never followed: it went away, or the run stopped, first. A frame
	// whose rest is still to be written is in neither FramesOut nor
	// CutFrames.
	CutFrames uint64
}

// ErrDisconnected is returned by Write while an endpoint is reconnecting.
var ErrDisconnected = errors.New("disconnected")

// DeviceError says which endpoint's device failed, and how.
type DeviceError struct {
	Endpoint string
	Device   string
	Err      error
}

func (e *DeviceError) Error() string {
	return fmt.Sprintf("%s: %s: %v", e.Endpoint, e.Device, e.Err)
}

func (e *DeviceError) Unwrap() error { return e.Err }

// lockReaderThread locks the calling goroutine to its OS thread for good and
// runs setup on it (a real-time priority, typically). The thread is never
// unlocked: it ends with the goroutine rather than go back to Go's pool
// with the priority it was given. A reader waits in system calls and so
// never passes through Go's scheduler: it calls the returned check-in's
// Pass before each wait for its device (realtime.CheckIn says why).
func lockReaderThread(setup func()) *realtime.CheckIn {
	runtime.LockOSThread()
	if setup != nil {
		setup()
	}
	return &realtime.CheckIn{}
}

// atomicCounts are Counts updated from several goroutines.
type atomicCounts struct {
	framesIn, framesOut, bytesIn, bytesOut, writeErrors atomic.Uint64
	frameBytes, badFrames, badBytes, idleBytes, pending atomic.Uint64
	notTaken, cutFrames                                 atomic.Uint64
	// restOwed is a frame whose head was written and whose rest is still
	// to write: whoever clears it counts the frame, whole or cut.
	restOwed atomic.Bool
}

// cutRest counts the frame whose rest is owed, if one is, as cut: its
// device is gone, or the run stopped.
func (c *atomicCounts) cutRest() {
	if c.restOwed.Swap(false) {
		c.cutFrames.Add(1)
	}
}

func (c *atomicCounts) snapshot() Counts {
	return Counts{
		FramesIn: c.framesIn.Load(), FramesOut: c.framesOut.Load(),
		BytesIn: c.bytesIn.Load(), BytesOut: c.bytesOut.Load(),
		FrameBytes: c.frameBytes.Load(), BadFrames: c.badFrames.Load(), BadBytes: c.badBytes.Load(),
		IdleBytes: c.idleBytes.Load(), PendingBytes: c.pending.Load(), WriteErrors: c.writeErrors.Load(),
		NotTaken: c.notTaken.Load(), CutFrames: c.cutFrames.Load(),
	}
}

// decoded publishes what a reader's decoders made of the bytes read: s is
// the sum over the decoders a reconnecting device went through.
func (c *atomicCounts) decoded(s wire.DecoderStats) {
	c.bytesIn.Store(s.Bytes)
	c.frameBytes.Store(s.FrameBytes)
	c.badFrames.Store(s.BadFrames)
	c.badBytes.Store(s.BadBytes)
	c.idleBytes.Store(s.IdleBytes)
	c.pending.Store(s.Pending)
}

// decoderSum is the stats of a reader's decoders: those it replaced (a
// frame cut by a lost line counted bad) and the current one.
type decoderSum struct {
	before wire.DecoderStats
	wire.Decoder
}

// replace drops the current decoder's partial frame and starts a new one.
func (d *decoderSum) replace(f wire.Framing, max int) {
	if d.Decoder != nil {
		d.Discard()
		d.before.Add(d.Stats())
	}
	d.Decoder = f.NewDecoder(max)
}

func (d *decoderSum) stats() wire.DecoderStats {
	s := d.before
	s.Add(d.Stats())
	return s
}
