package device

import (
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

// A Link speaks the rig wire protocol over a UART: it cuts the bytes
// that arrive into COBS frames, parses and tracks them, answers time
// requests itself, takes time responses into its estimate of the peer's
// clock, and hands every other fresh message to its handler
// (a duplicate or late one is counted and dropped: it is stale). It
// numbers, stamps and frames what the firmware sends. It allocates
// nothing after NewLink.
type Link struct {
	uart    UART
	decoder wire.Decoder
	tracker wire.Tracker
	sender  wire.Sender
	clock   wire.ClockEstimator // the peer's clock, from time responses
	handle  func(m wire.Message, at time.Duration)
	emit    func(frame []byte, at time.Duration)

	rx, body, frame []byte
	stats           LinkStats
}

// LinkStats count a link's traffic.
type LinkStats struct {
	Bytes       wire.DecoderStats // every byte received
	Received    wire.LinkStats    // the messages in the frames
	Sent        uint64            // messages written
	WriteErrors uint64            // messages the UART refused
	TimeAnswers uint64            // time requests answered
}

// NewLink returns a link on uart whose messages are at most maxMessage
// bytes (wire.DefaultMaxMessage if 0), passing fresh messages to handle.
func NewLink(uart UART, maxMessage int, handle func(m wire.Message, at time.Duration)) *Link {
	if maxMessage <= 0 {
		maxMessage = wire.DefaultMaxMessage
	}
	l := &Link{
		uart:    uart,
		decoder: wire.COBS{}.NewDecoder(maxMessage),
		handle:  handle,
		rx:      make([]byte, 256),
		body:    make([]byte, 0, maxMessage),
		frame:   make([]byte, 0, 2+maxMessage+maxMessage/254+1),
	}
	l.emit = l.frameIn // a method value allocates: once, here
	return l
}

// maxReadsPerPoll bounds one Poll, so that a flood of bytes cannot starve
// the firmware's periodic work.
const maxReadsPerPoll = 8

// Poll reads what the UART has and takes it in, stamped now. It returns
// the UART's error, if any.
func (l *Link) Poll(now time.Duration) error {
	for range maxReadsPerPoll {
		n, err := l.uart.Read(l.rx)
		if n > 0 {
			l.decoder.Feed(l.rx[:n], now, l.emit)
		}
		if err != nil {
			return err
		}
		if n < len(l.rx) {
			return nil
		}
	}
	return nil
}

// Receive takes in bytes that arrived at at, for a host that reads the
// UART itself.
func (l *Link) Receive(p []byte, at time.Duration) { l.decoder.Feed(p, at, l.emit) }

func (l *Link) frameIn(frame []byte, at time.Duration) {
	m, arrival, err := l.tracker.Receive(frame, at)
	if err != nil || arrival == wire.Duplicate || arrival == wire.Late {
		return
	}
	if arrival == wire.Restarted {
		l.clock.Reset() // the peer's clock started again with its numbers
	}
	switch m.Type {
	case wire.TimeRequest:
		l.stats.TimeAnswers++
		l.body = l.sender.TimeResponse(l.body[:0], at, wire.TimeReply{Requested: m.Time, Received: at})
		l.write()
		return
	case wire.TimeResponse:
		l.clock.Add(m.TimeSample(at))
		return
	}
	if l.handle != nil {
		l.handle(m, at)
	}
}

// SendValues sends a Sample or Command.
func (l *Link) SendValues(t wire.Type, now time.Duration, layout *wire.Struct, values []float64) error {
	l.body = l.sender.Values(l.body[:0], t, now, layout, values)
	return l.write()
}

// SendHeartbeat sends a Heartbeat.
func (l *Link) SendHeartbeat(now time.Duration, status wire.Status) error {
	l.body = l.sender.Heartbeat(l.body[:0], now, status)
	return l.write()
}

// SendAck sends an Ack.
func (l *Link) SendAck(now time.Duration, a wire.Acknowledgement) error {
	l.body = l.sender.Ack(l.body[:0], now, a)
	return l.write()
}

// SendTimeRequest asks the peer for its time; its answer goes to
// PeerClock.
func (l *Link) SendTimeRequest(now time.Duration) error {
	l.body = l.sender.TimeRequest(l.body[:0], now)
	return l.write()
}

func (l *Link) write() error {
	l.frame = wire.COBS{}.Append(l.frame[:0], l.body)
	if _, err := l.uart.Write(l.frame); err != nil {
		l.stats.WriteErrors++
		return err
	}
	l.stats.Sent++
	return nil
}

// PeerClock is the estimate of the peer's clock from the time requests
// this side sent.
func (l *Link) PeerClock() *wire.ClockEstimator { return &l.clock }

// Stats are the link's counts so far.
func (l *Link) Stats() LinkStats {
	s := l.stats
	s.Bytes = l.decoder.Stats()
	s.Received = l.tracker.Stats()
	return s
}
