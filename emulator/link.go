package emulator

import "time"

// link is a point-to-point hop's Serialiser: it sends one frame at a time,
// (size+overhead)·8 bits at the hop's rate (or at the flap's, in its
// windows) plus the time per frame, and queues the frames that arrive
// while it sends, up to the hop's queue limit (tail drop). A hop with
// neither rate, time per frame nor flap does not serialise: its frames
// pass at once.
type link struct {
	params     *HopParams // the hop's, which the schedule changes
	host       serialiserHost
	waiting    fifo   // frames waiting (not the one being sent)
	sending    *Frame // frame being sent, nil when idle
	carry      uint64 // serialisation remainder, kept while back to back
	transmit   transmitCache
	lastFinish time.Duration
	// flapSince is when the flap took effect: its windows count from it.
	flapSince time.Duration
}

// Enter sends f at once when the link is idle, or queues it. A link that
// does not serialise passes f on at once, unless the schedule removed the
// rate while a frame was being sent: then f queues behind it, as the
// frames already waiting do.
func (l *link) Enter(f *Frame, t time.Duration) {
	switch {
	case !l.params.serialises() && l.sending == nil:
		l.host.frameSent(f, t)
	case l.sending == nil:
		l.host.wakeAt(l.serialise(f, t))
	case l.params.Queue.Admits(l.waiting.bytes, int64(l.waiting.len()), f.Size):
		l.waiting.push(f)
	default:
		l.host.frameDropped(f, QueueDrop, t)
	}
}

// Wake is the end of the frame being sent: the next one starts, then the
// sent one propagates.
func (l *link) Wake(t time.Duration) {
	f := l.sending
	l.sending = nil
	if l.waiting.len() > 0 && l.params.serialises() {
		l.host.wakeAt(l.serialise(l.waiting.pop(), t))
	}
	l.host.frameSent(f, t)
	// The schedule made the rate unlimited: what waited goes now, in order.
	for !l.params.serialises() && l.waiting.len() > 0 {
		l.host.frameSent(l.waiting.pop(), t)
	}
}

// serialise starts sending f at t and returns when it finishes.
func (l *link) serialise(f *Frame, t time.Duration) time.Duration {
	p := l.params
	if t != l.lastFinish {
		l.carry = 0 // the link went idle: nothing to carry
	}
	var d time.Duration
	switch {
	case p.Flap.active():
		// Windows' edges fall on whole nanoseconds; nothing to carry.
		d, l.carry = p.Flap.sendTime(int64(f.Size+p.Overhead), p.Rate, t-l.flapSince), 0
	case p.Rate > 0:
		d, l.carry = l.transmit.time(int64(f.Size+p.Overhead), p.Rate, l.carry)
	}
	d += p.PerFrame
	l.sending = f
	// A long queue at a slow rate can be sent past the last instant of
	// any run: it is in flight at the end.
	l.lastFinish = later(t, d)
	return l.lastFinish
}

// Changed restarts what depended on the old values: the remainder was in
// units of the old rate and size, and a flap's windows count from when it
// took effect.
func (l *link) Changed(fields HopField, now time.Duration) {
	if fields&(FieldRate|FieldOverhead) != 0 {
		l.carry = 0
	}
	if fields&FieldFlap != 0 {
		l.flapSince = now
	}
}

func (l *link) Holding() (bytes int64, frames int, sending bool) {
	return l.waiting.bytes, l.waiting.len(), l.sending != nil
}

func (l *link) Peak() (bytes int64, frames int) { return l.waiting.peakBytes, l.waiting.peakFrames }

func (l *link) Drain(put func(*Frame)) {
	if l.sending != nil {
		put(l.sending)
		l.sending = nil
	}
	for l.waiting.len() > 0 {
		put(l.waiting.pop())
	}
}
