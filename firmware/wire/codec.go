package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// Codec turns the values a part sends across its cut into a frame's
// payload, and a received payload back into values. Both sides of a cut
// use the same codec, so what the hardware sends and expects is written
// down once.
type Codec interface {
	// Append encodes values after dst.
	Append(dst []byte, values []float64) []byte
	// Decode fills values from a payload, or says what is wrong with it.
	Decode(payload []byte, values []float64) error
	String() string
}

var (
	_ Codec = CSV{}
	_ Codec = (*Struct)(nil)
)

// CSV is one ASCII line per sample: the values in order, separated by
// commas, without the line's end (the framing adds it). Precision is the
// number of significant digits; 0 writes the shortest text that reads
// back exactly.
type CSV struct{ Precision int }

func (c CSV) String() string { return "csv" }

func (c CSV) Append(dst []byte, values []float64) []byte {
	prec := c.Precision
	if prec == 0 {
		prec = -1
	}
	for i, v := range values {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendFloat(dst, v, 'g', prec, 64)
	}
	return dst
}

func (c CSV) Decode(payload []byte, values []float64) error {
	n, start := 0, 0
	for i := 0; i <= len(payload); i++ {
		if i < len(payload) && payload[i] != ',' {
			continue
		}
		if n == len(values) {
			return fmt.Errorf("more than %d values", len(values))
		}
		field := trimSpace(payload[start:i])
		v, err := parseFloat(field)
		if err != nil {
			return fmt.Errorf("value %d: %q is not a number", n+1, field)
		}
		values[n] = v
		n++
		start = i + 1
	}
	if n != len(values) {
		return fmt.Errorf("%d values, want %d", n, len(values))
	}
	return nil
}

// parseFloat parses a decimal number without allocating (a line of a few
// values arrives at every exchange step): sign, digits, point, exponent,
// and the words inf and nan as strconv writes them.
func parseFloat(b []byte) (float64, error) {
	var buf [64]byte
	if len(b) == 0 || len(b) > len(buf) {
		return 0, strconv.ErrSyntax
	}
	// strconv.ParseFloat keeps its argument only in its error, which is
	// dropped here; copying into a stack array keeps the string off the
	// heap when the compiler can prove it, and costs nothing when not.
	n := copy(buf[:], b)
	v, err := strconv.ParseFloat(string(buf[:n]), 64)
	if err != nil {
		if e, ok := err.(*strconv.NumError); ok && e.Err == strconv.ErrRange {
			return v, nil // ±Inf or 0 beyond float64's range, as the number says
		}
		return 0, strconv.ErrSyntax
	}
	return v, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// FieldType is a binary number format.
type FieldType string

// The field types: IEEE floats and integers. Every field stores raw, with
// value = raw·scale + offset; an integer field rounds raw to nearest and
// clamps it to its range.
const (
	F32LE FieldType = "f32le"
	F32BE FieldType = "f32be"
	F64LE FieldType = "f64le"
	F64BE FieldType = "f64be"
	I8    FieldType = "i8"
	U8    FieldType = "u8"
	I16LE FieldType = "i16le"
	I16BE FieldType = "i16be"
	U16LE FieldType = "u16le"
	U16BE FieldType = "u16be"
	I32LE FieldType = "i32le"
	I32BE FieldType = "i32be"
	U32LE FieldType = "u32le"
	U32BE FieldType = "u32be"
)

// FieldTypes lists every field type.
var FieldTypes = []FieldType{F32LE, F32BE, F64LE, F64BE, I8, U8, I16LE, I16BE, U16LE, U16BE, I32LE, I32BE, U32LE, U32BE}

// fieldTypeCodes numbers the field types in the wire protocol's typed
// payloads: a type's code is its index here plus one. The numbers are part
// of the protocol (firmware/README.md lists them), so this is a fixed
// array, not derived from FieldTypes, which callers could change.
var fieldTypeCodes = [...]FieldType{F32LE, F32BE, F64LE, F64BE, I8, U8, I16LE, I16BE, U16LE, U16BE, I32LE, I32BE, U32LE, U32BE}

// Code is the field type's number in the wire protocol, 0 for no type.
func (t FieldType) Code() byte {
	for i, c := range fieldTypeCodes {
		if c == t {
			return byte(i + 1)
		}
	}
	return 0
}

// FieldTypeOfCode is the field type numbered code in the wire protocol.
func FieldTypeOfCode(code byte) (FieldType, bool) {
	if code == 0 || int(code) > len(fieldTypeCodes) {
		return "", false
	}
	return fieldTypeCodes[code-1], true
}

// Size is the field's size in bytes.
func (t FieldType) Size() int {
	switch t {
	case I8, U8:
		return 1
	case I16LE, I16BE, U16LE, U16BE:
		return 2
	case F64LE, F64BE:
		return 8
	default:
		return 4
	}
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (t FieldType) order() byteOrder {
	if len(t) > 2 && t[len(t)-2:] == "be" {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// Field is how one value is laid out: its type, scale and offset (value =
// raw·Scale + Offset; a zero Scale means 1).
type Field struct {
	Type          FieldType
	Scale, Offset float64
}

// Struct is a fixed binary layout: one field per value, in order, packed
// without padding. It is also the signal layout of the wire protocol's
// samples and commands, which carry its fields' type codes.
type Struct struct {
	Fields []Field
	size   int
	codes  []byte // the fields' type codes, for the wire protocol
}

// NewStruct checks a layout.
func NewStruct(fields []Field) (*Struct, error) {
	s := &Struct{Fields: fields, codes: make([]byte, len(fields))}
	for i, f := range fields {
		if f.Type.Code() == 0 {
			return nil, fmt.Errorf("field %d: no type %q", i+1, f.Type)
		}
		s.size += f.Type.Size()
		s.codes[i] = f.Type.Code()
	}
	return s, nil
}

func (s *Struct) String() string { return fmt.Sprintf("struct of %d bytes", s.size) }

// Size is the payload's size in bytes.
func (s *Struct) Size() int { return s.size }

func (s *Struct) Append(dst []byte, values []float64) []byte {
	for i, f := range s.Fields {
		v := values[i]
		o := f.Type.order()
		scale := f.Scale
		if scale == 0 {
			scale = 1
		}
		exact := (v - f.Offset) / scale
		raw := math.Round(exact)
		switch f.Type {
		case F32LE, F32BE:
			dst = o.AppendUint32(dst, math.Float32bits(float32(exact)))
		case F64LE, F64BE:
			dst = o.AppendUint64(dst, math.Float64bits(exact))
		case I8:
			dst = append(dst, byte(int8(clamp(raw, math.MinInt8, math.MaxInt8))))
		case U8:
			dst = append(dst, byte(clamp(raw, 0, math.MaxUint8)))
		case I16LE, I16BE:
			dst = o.AppendUint16(dst, uint16(int16(clamp(raw, math.MinInt16, math.MaxInt16))))
		case U16LE, U16BE:
			dst = o.AppendUint16(dst, uint16(clamp(raw, 0, math.MaxUint16)))
		case I32LE, I32BE:
			dst = o.AppendUint32(dst, uint32(int32(clamp(raw, math.MinInt32, math.MaxInt32))))
		case U32LE, U32BE:
			dst = o.AppendUint32(dst, uint32(clamp(raw, 0, math.MaxUint32)))
		}
	}
	return dst
}

// clamp limits v to [lo, hi]; NaN becomes 0.
func clamp(v, lo, hi float64) float64 {
	if v != v {
		return 0
	}
	return max(lo, min(hi, v))
}

func (s *Struct) Decode(payload []byte, values []float64) error {
	if len(payload) != s.size {
		return fmt.Errorf("%d bytes, want %d", len(payload), s.size)
	}
	for i, f := range s.Fields {
		o := f.Type.order()
		scale := f.Scale
		if scale == 0 {
			scale = 1
		}
		var raw float64
		switch f.Type {
		case F32LE, F32BE:
			raw = float64(math.Float32frombits(o.Uint32(payload)))
		case F64LE, F64BE:
			raw = math.Float64frombits(o.Uint64(payload))
		case I8:
			raw = float64(int8(payload[0]))
		case U8:
			raw = float64(payload[0])
		case I16LE, I16BE:
			raw = float64(int16(o.Uint16(payload)))
		case U16LE, U16BE:
			raw = float64(o.Uint16(payload))
		case I32LE, I32BE:
			raw = float64(int32(o.Uint32(payload)))
		case U32LE, U32BE:
			raw = float64(o.Uint32(payload))
		}
		values[i] = float64(raw*scale) + f.Offset // not fused: the same value on every machine
		payload = payload[f.Type.Size():]
	}
	return nil
}
