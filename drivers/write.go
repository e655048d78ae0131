package drivers

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// The executor writes every frame to its device itself, on its one
// real-time thread, at the instant the engine releases it: nothing may make
// that thread wait. So a device write is one attempt that never waits (a
// tty's descriptor is non-blocking, a TCP socket is written through its
// syscall.RawConn once, a UDP socket with MSG_DONTWAIT), and what a device
// does not take is refused and counted, never queued: a queue would
// deliver it late, and grow for as long as the device does not read.

// ErrNotReading is Write's error for a frame its device did not take: the
// device's side was full, because nothing reads it (a program that does not
// read its pseudo-terminal, a TCP peer that stopped reading) or because its
// line is slower than the frames written to it.
var ErrNotReading = errors.New("not reading: frame not taken")

// wouldBlock reports whether a write attempt failed because the device's
// side was full.
func wouldBlock(err error) bool { return errors.Is(err, unix.EAGAIN) }

// readingAgainAfter is how long a device must take every frame written to
// it before a stretch of frames not taken is over: a device that takes
// one frame in two is one stretch, not a notice a frame.
const readingAgainAfter = time.Second

// notices tells an endpoint's sink what happens to its device. Set before
// the endpoint's goroutines start and only read after, it is shared by the
// executor's thread (Write) and the endpoint's readers.
type notices struct {
	clock         Clock
	sink          Sink
	index         int
	name, device  string
	notReadingErr error // made once: said at the start of every stretch
}

func newNotices(clock Clock, sink Sink, index int, name, device string) notices {
	n := notices{clock: clock, sink: sink, index: index, name: name, device: device}
	n.notReadingErr = n.deviceError(errors.New("not reading what the rig writes: the frames it does not take are dropped (egress_drop) until it reads again"))
	return n
}

func (n *notices) deviceError(err error) error {
	return &DeviceError{Endpoint: n.name, Device: n.device, Err: err}
}

// tell reports a notice of kind, which happened at.
func (n *notices) tell(at time.Duration, kind string, err error) {
	if n.sink != nil {
		n.sink.Notice(n.index, at, kind, err)
	}
}

// tellNow reports a notice of kind now.
func (n *notices) tellNow(kind string, err error) {
	if n.sink != nil {
		n.tell(n.clock.Now(), kind, err)
	}
}

// deviceOut accounts for the frames written to one device and tells its
// stretches of not reading, once each: when the first frame is not taken,
// and when the device has taken every frame for readingAgainAfter since
// the last it did not. It belongs to the executor's thread, as Write does.
type deviceOut struct {
	counts  *atomicCounts
	notices notices
	// The stretch: in it since from; lastRefused is the last frame not
	// taken, and takenAt the first frame taken after it (-1: none yet).
	stretch                    bool
	from, lastRefused, takenAt time.Duration
	refused                    uint64 // in the stretch
}

// taken counts a frame the device took whole.
func (o *deviceOut) taken() {
	o.counts.framesOut.Add(1)
	if !o.stretch {
		return
	}
	now := o.notices.clock.Now()
	if o.takenAt < 0 {
		o.takenAt = now
	}
	if now-o.lastRefused >= readingAgainAfter {
		o.stretch = false
		o.notices.tell(o.takenAt, NoticeReading, o.notices.deviceError(
			fmt.Errorf("reading again after %v: %d frames not taken", (o.takenAt-o.from).Round(time.Millisecond), o.refused)))
	}
}

// refuse counts a frame the device did not take and returns Write's error
// for it: ErrNotReading when the attempt would have waited (err nil is a
// device that took nothing, or only the rest of an earlier frame), err
// itself otherwise.
func (o *deviceOut) refuse(err error) error {
	o.counts.writeErrors.Add(1)
	if err != nil && !wouldBlock(err) {
		return err
	}
	o.counts.notTaken.Add(1)
	now := o.notices.clock.Now()
	if !o.stretch {
		o.stretch, o.from, o.refused = true, now, 0
		o.notices.tell(now, NoticeNotReading, o.notices.notReadingErr)
	}
	o.refused++
	o.lastRefused, o.takenAt = now, -1
	return ErrNotReading
}

// away counts a frame for a device that is away.
func (o *deviceOut) away() error {
	o.counts.writeErrors.Add(1)
	return ErrDisconnected
}

// streamOut writes framed payloads to a byte stream (a tty, a TCP
// connection). A device may take the head of a frame and not its rest (its
// side filled up): the rest is kept and written, before anything else,
// with the next frame, which is refused if the rest does not all go. So
// the line never carries half a frame followed by another, and the only
// frame a device can get cut is the last, when it goes away or the run
// stops with a rest still to write (Counts.CutFrames).
type streamOut struct {
	deviceOut
	framing wire.Framing
	frame   []byte // the encoding buffer: no allocation once grown
	rest    []byte // what is still to write of the last frame, in restBuf
	restBuf []byte
	opening uint64 // the device's opening the rest is owed to
}

func newStreamOut(framing wire.Framing, maxFrame int, counts *atomicCounts) streamOut {
	size := 2*maxFrame + 16 // any framing's worst case
	return streamOut{
		deviceOut: deviceOut{counts: counts},
		framing:   framing, frame: make([]byte, 0, size), restBuf: make([]byte, 0, size),
	}
}

// write writes payload to dev, the device's opening-th opening, in one
// attempt (two with a rest); a nil dev is a device that is away.
func (w *streamOut) write(dev io.Writer, opening uint64, payload []byte) error {
	if opening != w.opening {
		// Another device, or the same plugged in again: a rest owed to
		// the last one is cut, and its stretch is over.
		w.cut()
		w.opening, w.stretch = opening, false
	}
	if dev == nil {
		w.cut()
		return w.away()
	}
	if len(w.rest) > 0 {
		n, err := w.attempt(dev, w.rest)
		if w.rest = w.rest[n:]; len(w.rest) > 0 {
			return w.refuse(err)
		}
		if w.counts.restOwed.Swap(false) {
			w.counts.framesOut.Add(1)
		}
	}
	w.frame = w.framing.Append(w.frame[:0], payload)
	n, err := w.attempt(dev, w.frame)
	switch {
	case n == len(w.frame):
		w.taken()
		return nil
	case n > 0:
		w.rest = append(w.restBuf[:0], w.frame[n:]...)
		w.counts.restOwed.Store(true)
		return nil
	}
	return w.refuse(err)
}

// attempt writes b once and counts the bytes that went.
func (w *streamOut) attempt(dev io.Writer, b []byte) (int, error) {
	n, err := dev.Write(b)
	n = max(n, 0)
	w.counts.bytesOut.Add(uint64(n))
	return n, err
}

// cut drops a rest still to write: its frame was cut.
func (w *streamOut) cut() {
	w.rest = w.rest[:0]
	w.counts.cutRest()
}

// rawWriter writes to a socket in a single attempt through its
// syscall.RawConn, so that the netpoller never parks the executor's
// goroutine to wait for room (net.Conn's Write would).
type rawWriter struct {
	raw  syscall.RawConn
	once func(fd uintptr) bool // w.attempt, made once: no allocation a write
	b    []byte
	n    int
	err  error
}

func newRawWriter(c any) (*rawWriter, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("%T has no descriptor to write to", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil, err
	}
	w := &rawWriter{raw: raw}
	w.once = w.attempt
	return w, nil
}

// attempt is the func given to RawConn.Write: it returns true whatever
// happened, so that RawConn.Write never waits for the socket to be
// writable.
func (w *rawWriter) attempt(fd uintptr) bool {
	w.n, w.err = unix.Write(int(fd), w.b)
	return true
}

func (w *rawWriter) Write(b []byte) (int, error) {
	w.b = b
	err := w.raw.Write(w.once)
	w.b = nil
	if err != nil {
		return 0, err // the socket is closed
	}
	return max(w.n, 0), w.err
}
