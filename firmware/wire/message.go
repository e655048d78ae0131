package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The rig wire protocol: messages a device and the rig exchange over a
// byte stream, each a COBS frame (see COBS) whose body is
//
//	version  u8     Version
//	type     u8     a Type
//	seq      u32le  the sender's message number
//	time     i64le  the sender's clock when it sent the message, in ns
//	payload  ...    as the type says
//	crc      u32le  CRC32C of everything before it
//
// firmware/README.md lays it out byte by byte with a worked example.

// Version is the protocol version this package speaks.
const Version = 1

// HeaderSize and TrailerSize are the bytes around a message's payload;
// Overhead is both.
const (
	HeaderSize  = 14
	TrailerSize = 4
	Overhead    = HeaderSize + TrailerSize
)

// MaxFields is the most fields a sample or command carries.
const MaxFields = 255

// DefaultMaxMessage is a message size limit that fits 32 f64 signals with
// room to spare; a decoder for wire messages keeps frames up to it.
const DefaultMaxMessage = 512

// Type says what a message carries.
type Type uint8

// The message types.
const (
	// Sample carries signal values a device measured (or a model
	// computed), typed by the signal layout: a field count, one type
	// code per field (FieldType.Code), the values packed by the layout.
	Sample Type = 1
	// Command carries values for the receiver to apply, laid out as a
	// Sample is.
	Command Type = 2
	// Ack answers a message: the number and type it answers and an
	// AckResult.
	Ack Type = 3
	// TimeRequest asks for a TimeResponse; its time is the requester's
	// clock when sent (T1 of an NTP exchange). No payload.
	TimeRequest Type = 4
	// TimeResponse answers a TimeRequest with its time echoed (T1) and
	// the responder's clock when the request arrived (T2); its own time
	// is the responder's clock when sent (T3).
	TimeResponse Type = 5
	// Heartbeat says the sender is alive, with its Status.
	Heartbeat Type = 6
)

var typeNames = [...]string{"", "sample", "command", "ack", "time-request", "time-response", "heartbeat"}

func (t Type) String() string {
	if t == 0 || int(t) >= len(typeNames) {
		return "unknown"
	}
	return typeNames[t]
}

// Status is a heartbeat's flags.
type Status uint16

// The status flags.
const (
	// StatusFault: a controller's measurements stopped; it holds its
	// last command and sends no more.
	StatusFault Status = 1 << 0
	// StatusSafe: a plant node's commands stopped; its watchdog holds
	// the outputs at their safe levels.
	StatusSafe Status = 1 << 1
)

// AckResult says what became of an acknowledged message.
type AckResult uint8

// The acknowledgement results.
const (
	Applied     AckResult = 0 // taken and acted on
	Rejected    AckResult = 1 // well-formed, but its layout or values are not the receiver's
	Unsupported AckResult = 2 // a type the receiver does not take
)

// Header is what every message starts with.
type Header struct {
	Type Type
	Seq  uint32        // numbers a sender's messages from 0, skipping 0 when it wraps
	Time time.Duration // the sender's clock when it sent the message
}

// Message is a parsed message: its header, and its payload, which aliases
// the parsed bytes.
type Message struct {
	Header
	Payload []byte
}

// Acknowledgement is an Ack's payload.
type Acknowledgement struct {
	Seq    uint32 // the number of the message answered
	Type   Type   // its type
	Result AckResult
}

// TimeReply is a TimeResponse's payload.
type TimeReply struct {
	Requested time.Duration // T1: the request's time, echoed
	Received  time.Duration // T2: the responder's clock when the request arrived
}

// The ways a message can be malformed, and a signal layout that does not
// match. Parse returns these very values (no wrapping, so no allocation).
var (
	ErrShort   = errors.New("wire: shorter than a message's header and CRC")
	ErrCRC     = errors.New("wire: CRC mismatch")
	ErrVersion = errors.New("wire: unknown protocol version")
	ErrType    = errors.New("wire: unknown message type")
	ErrPayload = errors.New("wire: payload does not fit its type")
	ErrLayout  = errors.New("wire: signal layout differs from the receiver's")
)

// A Sender numbers and stamps the messages one side of a link sends and
// appends their bodies (unframed: a COBS framing frames them). Its zero
// value starts at number 0, which tells a Tracker the sender (re)started.
//
// Time requests and responses carry the next number without taking it,
// and a Tracker does not follow them: they are outside the numbered
// stream, so that a third party (the rig) can exchange them with a device
// whose stream it relays, and keep the answers, without making a gap or a
// duplicate in what the device's peer receives.
type Sender struct{ next uint32 }

func (s *Sender) header(t Type, now time.Duration) Header {
	h := Header{Type: t, Seq: s.next, Time: now}
	if !numbered(t) {
		return h
	}
	if s.next++; s.next == 0 {
		s.next = 1 // 0 only ever means a fresh start
	}
	return h
}

// numbered reports whether messages of type t are in the sender's
// numbered stream (time messages are not).
func numbered(t Type) bool { return t != TimeRequest && t != TimeResponse }

// ValuesSize is the size of a Sample or Command of layout: the header,
// the field count and type codes, the values, the CRC.
func ValuesSize(layout *Struct) int { return Overhead + 1 + len(layout.codes) + layout.Size() }

// CheckValues says whether a Sample or Command of layout can be sent to a
// receiver that takes messages of at most maxMessage bytes
// (DefaultMaxMessage if 0): one with more than MaxFields fields cannot be
// sent, and a larger one would be dropped by every receiver. A sender
// checks its layouts with it when it is configured (Values does not).
func CheckValues(layout *Struct, maxMessage int) error {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	if len(layout.Fields) > MaxFields {
		return fmt.Errorf("wire: %d fields, at most %d in a message", len(layout.Fields), MaxFields)
	}
	if n := ValuesSize(layout); n > maxMessage {
		return fmt.Errorf("wire: a message of %d fields takes %d bytes, more than the %d a receiver takes", len(layout.Fields), n, maxMessage)
	}
	return nil
}

// Values appends a Sample or Command of values laid out by layout. It
// panics if layout has more than MaxFields fields or t carries no values;
// it does not check the message's size (see CheckValues).
func (s *Sender) Values(dst []byte, t Type, now time.Duration, layout *Struct, values []float64) []byte {
	if t != Sample && t != Command {
		panic("wire: values in a " + t.String())
	}
	if len(layout.Fields) > MaxFields {
		panic("wire: more fields than a message carries")
	}
	start := len(dst)
	dst = appendHeader(dst, s.header(t, now))
	dst = append(dst, byte(len(layout.codes)))
	dst = append(dst, layout.codes...)
	dst = layout.Append(dst, values)
	return appendCRC(dst, start)
}

// Heartbeat appends a Heartbeat with status.
func (s *Sender) Heartbeat(dst []byte, now time.Duration, status Status) []byte {
	start := len(dst)
	dst = appendHeader(dst, s.header(Heartbeat, now))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(status))
	return appendCRC(dst, start)
}

// Ack appends an Ack.
func (s *Sender) Ack(dst []byte, now time.Duration, a Acknowledgement) []byte {
	start := len(dst)
	dst = appendHeader(dst, s.header(Ack, now))
	dst = binary.LittleEndian.AppendUint32(dst, a.Seq)
	dst = append(dst, byte(a.Type), byte(a.Result))
	return appendCRC(dst, start)
}

// TimeRequest appends a TimeRequest sent at now (T1).
func (s *Sender) TimeRequest(dst []byte, now time.Duration) []byte {
	start := len(dst)
	dst = appendHeader(dst, s.header(TimeRequest, now))
	return appendCRC(dst, start)
}

// TimeResponse appends the answer, sent at now (T3), to a TimeRequest
// sent at requested (its Time, T1) and received at received (T2).
func (s *Sender) TimeResponse(dst []byte, now time.Duration, r TimeReply) []byte {
	start := len(dst)
	dst = appendHeader(dst, s.header(TimeResponse, now))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Requested))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Received))
	return appendCRC(dst, start)
}

// AppendMessage appends a message with any header and payload, its bytes
// as given: for tests, and for relaying a message with a new number.
func AppendMessage(dst []byte, h Header, payload []byte) []byte {
	start := len(dst)
	dst = appendHeader(dst, h)
	dst = append(dst, payload...)
	return appendCRC(dst, start)
}

func appendHeader(dst []byte, h Header) []byte {
	dst = append(dst, Version, byte(h.Type))
	dst = binary.LittleEndian.AppendUint32(dst, h.Seq)
	return binary.LittleEndian.AppendUint64(dst, uint64(h.Time))
}

func appendCRC(dst []byte, start int) []byte {
	return binary.LittleEndian.AppendUint32(dst, CRC32C(dst[start:]))
}

// Parse checks a message body (a frame's payload) and returns its header
// and payload. The payload aliases body. A message that parses has a
// payload that fits its type, so its accessors do not fail (except
// Values on a layout that differs).
func Parse(body []byte) (Message, error) {
	if len(body) < Overhead {
		return Message{}, ErrShort
	}
	n := len(body) - TrailerSize
	if binary.LittleEndian.Uint32(body[n:]) != CRC32C(body[:n]) {
		return Message{}, ErrCRC
	}
	if body[0] != Version {
		return Message{}, ErrVersion
	}
	m := Message{
		Header: Header{
			Type: Type(body[1]),
			Seq:  binary.LittleEndian.Uint32(body[2:]),
			Time: time.Duration(binary.LittleEndian.Uint64(body[6:])),
		},
		Payload: body[HeaderSize:n],
	}
	var fits bool
	switch m.Type {
	case Sample, Command:
		fits = valuesFit(m.Payload)
	case Ack:
		fits = len(m.Payload) == 6
	case TimeRequest:
		fits = len(m.Payload) == 0
	case TimeResponse:
		fits = len(m.Payload) == 16
	case Heartbeat:
		fits = len(m.Payload) == 2
	default:
		return Message{}, ErrType
	}
	if !fits {
		return Message{}, ErrPayload
	}
	return m, nil
}

// valuesFit reports whether p is a field count, that many known type
// codes, and exactly the bytes those fields take.
func valuesFit(p []byte) bool {
	if len(p) < 1 || len(p) < 1+int(p[0]) {
		return false
	}
	n := int(p[0])
	size := 0
	for _, c := range p[1 : 1+n] {
		t, ok := FieldTypeOfCode(c)
		if !ok {
			return false
		}
		size += t.Size()
	}
	return len(p) == 1+n+size
}

// Values decodes a Sample's or Command's values into values, which must
// have a place for each of layout's fields; the message's field types must
// be layout's, in order (ErrLayout if not).
func (m Message) Values(layout *Struct, values []float64) error {
	if m.Type != Sample && m.Type != Command || len(m.Payload) < 1 {
		return ErrPayload
	}
	n := int(m.Payload[0])
	if n != len(layout.codes) || len(m.Payload) < 1+n || string(m.Payload[1:1+n]) != string(layout.codes) {
		return ErrLayout
	}
	if len(values) < n {
		return ErrLayout
	}
	return layout.Decode(m.Payload[1+n:], values[:n])
}

// FieldTypes appends a Sample's or Command's field types to dst, to say
// what a device sends when its layout is not the one expected.
func (m Message) FieldTypes(dst []FieldType) []FieldType {
	if (m.Type != Sample && m.Type != Command) || !valuesFit(m.Payload) {
		return dst
	}
	for _, c := range m.Payload[1 : 1+int(m.Payload[0])] {
		t, _ := FieldTypeOfCode(c)
		dst = append(dst, t)
	}
	return dst
}

// Status is a Heartbeat's status.
func (m Message) Status() Status {
	if m.Type != Heartbeat || len(m.Payload) != 2 {
		return 0
	}
	return Status(binary.LittleEndian.Uint16(m.Payload))
}

// Acknowledgement is an Ack's payload.
func (m Message) Acknowledgement() Acknowledgement {
	if m.Type != Ack || len(m.Payload) != 6 {
		return Acknowledgement{}
	}
	return Acknowledgement{Seq: binary.LittleEndian.Uint32(m.Payload), Type: Type(m.Payload[4]), Result: AckResult(m.Payload[5])}
}

// TimeReply is a TimeResponse's payload.
func (m Message) TimeReply() TimeReply {
	if m.Type != TimeResponse || len(m.Payload) != 16 {
		return TimeReply{}
	}
	return TimeReply{
		Requested: time.Duration(binary.LittleEndian.Uint64(m.Payload)),
		Received:  time.Duration(binary.LittleEndian.Uint64(m.Payload[8:])),
	}
}

// TimeSample is the exchange a TimeResponse completes, it having arrived
// at arrived (T4, the requester's clock), for a ClockEstimator.
func (m Message) TimeSample(arrived time.Duration) TimeSample {
	r := m.TimeReply()
	return TimeSample{T1: r.Requested, T2: r.Received, T3: m.Time, T4: arrived}
}
