package wire

import (
	"errors"
	"time"
)

// Protocol is the wire protocol as a Codec, for the slots a bench's codec
// fills (a model endpoint's send and receive): Append sends the values as
// a numbered, time-stamped Sample or Command; Decode parses and tracks
// what arrives and decodes a Sample's or Command's values. Use one
// Protocol per direction of an endpoint: it holds the sender's numbering
// or the receiver's tracking. Its Tracker's stats are the endpoint's CRC
// failures, gaps, duplicates and late frames.
type Protocol struct {
	Layout *Struct
	// Sends is the type Append sends: Sample (a device's measurements,
	// a model's outputs) or Command.
	Sends Type
	// Clock stamps what Append sends (nil: 0), on the sender's clock.
	Clock func() time.Duration

	Sender  Sender
	Tracker Tracker
	last    Message
}

var _ Codec = (*Protocol)(nil)

// ErrNoValues says a message that parsed carries no values (a heartbeat,
// an ack, a time message): not a bad frame, but nothing for a model.
// ErrStale says a message was a duplicate or arrived late.
var (
	ErrNoValues = errors.New("wire: a message without values")
	ErrStale    = errors.New("wire: a duplicate or late message")
)

func (p *Protocol) String() string { return "wire" }

// Append appends a message of values.
func (p *Protocol) Append(dst []byte, values []float64) []byte {
	var now time.Duration
	if p.Clock != nil {
		now = p.Clock()
	}
	return p.Sender.Values(dst, p.Sends, now, p.Layout, values)
}

// Decode takes a message in and fills values from it if it has them. A
// malformed one is one of Parse's errors; one without values ErrNoValues;
// a stale one ErrStale; one of another layout ErrLayout.
func (p *Protocol) Decode(payload []byte, values []float64) error {
	return p.Receive(payload, 0, values)
}

// Receive is Decode with the time the message arrived, kept with the
// tracker's newest message for the one-way delay.
func (p *Protocol) Receive(payload []byte, at time.Duration, values []float64) error {
	m, arrival, err := p.Tracker.Receive(payload, at)
	if err != nil {
		return err
	}
	if arrival == Duplicate || arrival == Late {
		return ErrStale
	}
	p.last = m
	if m.Type != Sample && m.Type != Command {
		return ErrNoValues
	}
	return m.Values(p.Layout, values)
}

// Last is the header of the last message Decode or Receive took (not a
// stale one); its payload is no longer valid.
func (p *Protocol) Last() Header { return p.last.Header }
