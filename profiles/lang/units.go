package lang

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator"
)

// The profile language writes every quantity with its unit. These types
// parse them exactly: "1.3ms" is 1 300 000 ns, "1.5Mbit" is 1 500 000 bit/s,
// with no floating-point rounding on the way.

// quantity is a number as a profile writes it, exactly: ±digits·10^exp,
// with digits carrying no trailing zero. huge says it has more
// significant digits than any value of a profile can (see parseQuantity),
// and then digits and exp mean nothing.
type quantity struct {
	neg    bool
	digits uint64
	exp    int
	huge   bool
}

func (q quantity) isZero() bool { return !q.huge && q.digits == 0 }

// maxExponent bounds the exponent a number is read with: a value whose
// exponent is larger in size is 0, or no whole number of any unit that
// fits an int64 (see scaled), whatever it is exactly.
const maxExponent = 1000

// parseQuantity splits "1.5 Mbit" into the exact number 15·10^-1 and
// "Mbit": a decimal number (sign, digits with a point, an exponent), ASCII
// spaces, and a unit without spaces. It reads s once, whatever its length:
// a number of more significant digits than a uint64 holds (nineteen) is
// no value of a profile (scaled says why), so none is kept.
func parseQuantity(s string) (q quantity, unit string, ok bool) {
	s = strings.TrimSpace(s)
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		q.neg = s[i] == '-'
		i++
	}
	i, ok = q.readSignificand(s, i)
	if !ok {
		return quantity{}, "", false
	}
	i = q.readExponent(s, i)
	q.exp = max(min(q.exp, maxExponent+1), -maxExponent-1)
	if q.digits == 0 && !q.huge {
		q.exp = 0
	}
	for i < len(s) && asciiSpace(s[i]) {
		i++
	}
	unit = s[i:]
	for j := 0; j < len(unit); j++ {
		if asciiSpace(unit[j]) {
			return quantity{}, "", false
		}
	}
	return q, unit, true
}

// readSignificand reads the significand from s[i:] into q (digits, a
// point, digits; at least one digit) and returns where it ends, or false
// when there is no digit.
func (q *quantity) readSignificand(s string, i int) (int, bool) {
	var zeros int // trailing zeros read but not yet multiplied in
	seen, point := false, false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' && !point {
			point = true
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		seen = true
		if point {
			q.exp--
		}
		if c == '0' {
			zeros++
			continue
		}
		for ; zeros > 0 && !q.huge; zeros-- {
			q.huge = q.digits > (math.MaxUint64-9)/10
			q.digits *= 10
		}
		zeros = 0
		q.huge = q.huge || q.digits > (math.MaxUint64-9)/10
		q.digits = q.digits*10 + uint64(c-'0')
	}
	q.exp += zeros // digits carries no trailing zero
	return i, seen
}

// readExponent reads an exponent from s[i:] into q, if digits follow the e
// (else the unit begins: 1em), and returns where it ends.
func (q *quantity) readExponent(s string, i int) int {
	if i >= len(s) || s[i] != 'e' && s[i] != 'E' {
		return i
	}
	j := i + 1
	negExp := false
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		negExp = s[j] == '-'
		j++
	}
	start, e := j, 0
	for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
		e = min(e*10+int(s[j]-'0'), maxExponent+1)
	}
	if j == start {
		return i
	}
	if negExp {
		e = -e
	}
	q.exp = max(min(q.exp, maxExponent+1), -maxExponent-1) + e
	return j
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// scaled returns q·unit as an int64 if it is whole and fits. It is exact:
// q·unit = digits·unit·10^exp, worked out in 128 bits. (A number with
// more than nineteen significant digits is never such a value: digits
// carries no factor 10, so 10^exp cancels at most the 2s and 5s of unit,
// and what is left of digits·unit is more than 2^63.)
func scaled(q quantity, unit int64) (int64, bool) {
	if q.huge || unit <= 0 {
		return 0, false
	}
	if q.digits == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(q.digits, uint64(unit))
	for e := q.exp; e < 0; e++ {
		var r uint64
		hi, r = hi/10, hi%10
		if lo, r = bits.Div64(r, lo, 10); r != 0 {
			return 0, false // not whole
		}
	}
	for e := 0; e < q.exp && hi == 0; e++ {
		hi, lo = bits.Mul64(lo, 10)
	}
	switch {
	case hi != 0 || lo > 1<<63:
		return 0, false
	case lo == 1<<63:
		if !q.neg {
			return 0, false
		}
		return math.MinInt64, true
	case q.neg:
		return -int64(lo), true
	}
	return int64(lo), true
}

// Duration is a length of time written with a unit: 1.5ms, 2s, 250us.
type Duration time.Duration

var durationUnits = map[string]int64{
	"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9,
}

func (d *Duration) ParseScalar(s string) error {
	num, unit, ok := parseQuantity(s)
	if !ok {
		return errors.New("is not a duration (want e.g. 1.5ms, 2s, 250us)")
	}
	if unit == "m" {
		return errors.New("is ambiguous (write min for minutes or ms for milliseconds)")
	}
	mult, known := durationUnits[unit]
	if unit == "" && num.isZero() {
		mult, known = 1, true
	}
	if !known {
		return errors.New("is not a duration (want e.g. 1.5ms, 2s, 250us)")
	}
	ns, ok := scaled(num, mult)
	if !ok {
		return errors.New("is not a whole number of nanoseconds, or is too long")
	}
	if ns < 0 {
		return errors.New("must not be negative")
	}
	if ns > int64(emulator.MaxDuration) {
		return errTooLong
	}
	*d = Duration(ns)
	return nil
}

// errTooLong refuses a duration past emulator.MaxDuration, which every
// duration, delay and instant of hilrig is within.
var errTooLong = fmt.Errorf("is too long: hilrig takes durations up to %v (a century)", Duration(emulator.MaxDuration))

func (d Duration) String() string { return FormatDuration(time.Duration(d)) }

// FormatDuration writes a duration the way a profile would, exactly:
// 1.3ms, 20s, 2min.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d%time.Hour == 0 {
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	}
	if d%time.Minute == 0 {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "min"
	}
	for _, u := range []struct {
		name   string
		ns     int64
		digits int
	}{{"s", 1e9, 9}, {"ms", 1e6, 6}, {"us", 1e3, 3}} {
		if int64(d) >= u.ns {
			whole := strconv.FormatInt(int64(d)/u.ns, 10)
			frac := strings.TrimRight(fmt.Sprintf("%0*d", u.digits, int64(d)%u.ns), "0")
			if frac == "" {
				return whole + u.name
			}
			return whole + "." + frac + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// Rate is a bit rate: 4Mbit, 512kbit, 1.5Gbit (SI prefixes; "/s" optional).
type Rate emulator.Rate

var rateUnits = map[string]int64{"bit": 1, "kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9}

func (r *Rate) ParseScalar(s string) error {
	num, unit, ok := parseQuantity(s)
	mult, known := rateUnits[strings.TrimSuffix(unit, "/s")]
	if !ok || !known {
		return errors.New("is not a rate (want e.g. 4Mbit, 512kbit)")
	}
	v, ok := scaled(num, mult)
	if !ok {
		return errors.New("is not a whole number of bit/s, or is too large")
	}
	if v <= 0 {
		return errors.New("must be positive")
	}
	*r = Rate(v)
	return nil
}

func (r Rate) String() string { return emulator.Rate(r).String() }

// HopRate is a hop's serialisation rate: a bit rate (4Mbit), or a UART
// line, {baud: 115200, format: 8N1}, whose characters carry a byte (the
// data bits) in a start bit, the data, a parity bit and stop bits. The
// engine serialises 8 bits per byte, so a line is the bit rate that spends
// one character time on each byte: baud·8/(bits per character), 92 160
// bit/s at 115 200 baud 8N1 where 115200bit would send 25 % more.
type HopRate struct {
	Baud   *int64      `yaml:"baud,required" doc:"the line's symbol rate: every bit of a character, start, parity and stop bits included"`
	Format *UARTFormat `yaml:"format" doc:"data bits (5 to 8), parity (N none, E even, O odd, M mark, S space) and stop bits (1, 1.5 or 2): 8N1, 7E1, 8E2" default:"8N1"`

	Bits Rate // what the engine serialises at
	None bool // written none: no rate (a change may remove one)
}

func (r *HopRate) SetNone()     { *r = HopRate{None: true} }
func (r *HopRate) IsNone() bool { return r.None }

func (r *HopRate) DecodeNode(d *Decoder, n *yaml.Node, path Path) {
	type plain HopRate
	if d.ScalarOr(n, path, &r.Bits, (*plain)(r)) || r.Baud == nil {
		return
	}
	if *r.Baud <= 0 {
		d.ErrorAt(path.String()+".baud", "must be positive")
		return
	}
	format := UARTFormat{DataBits: 8, Parity: 'N', StopHalves: 2}
	if r.Format != nil {
		format = *r.Format
	}
	r.Bits = Rate(format.payloadRate(*r.Baud))
}

// Engine is the rate the engine serialises at.
func (r HopRate) Engine() emulator.Rate { return emulator.Rate(r.Bits) }

func (HopRate) TypeInfo() TypeInfo {
	return TypeInfo{"a rate", "4Mbit, 512kbit, or a UART line {baud: 115200, format: 8N1}"}
}

// UARTFormat is a serial character format, written as data bits, parity
// and stop bits: 8N1, 7E1, 8E2, 5N1.5.
type UARTFormat struct {
	DataBits   int
	Parity     byte // N, E, O, M or S
	StopHalves int  // stop bits, in half bits
}

var uartFormatRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([5-8])([NEOMS])(1|1\.5|2)$`) })

func (f *UARTFormat) ParseScalar(s string) error {
	m := uartFormatRE().FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil {
		return errors.New("is not a UART format (want data bits 5 to 8, parity N, E, O, M or S, stop bits 1, 1.5 or 2: 8N1, 7E1, 8E2)")
	}
	*f = UARTFormat{DataBits: int(m[1][0] - '0'), Parity: m[2][0], StopHalves: map[string]int{"1": 2, "1.5": 3, "2": 4}[m[3]]}
	return nil
}

func (f UARTFormat) String() string {
	stop := map[int]string{2: "1", 3: "1.5", 4: "2"}[f.StopHalves]
	return strconv.Itoa(f.DataBits) + string(f.Parity) + stop
}

func (UARTFormat) TypeInfo() TypeInfo { return TypeInfo{"a UART format", "8N1, 7E1, 8E2"} }

// characterHalves is the length of one character on the line in half
// bits: a start bit, the data bits, the parity bit if any, the stop bits.
func (f UARTFormat) characterHalves() int64 {
	bits := 1 + int64(f.DataBits)
	if f.Parity != 'N' {
		bits++
	}
	return 2*bits + int64(f.StopHalves)
}

// payloadRate is the bit rate at which a byte takes one character time at
// baud: baud·8/(bits per character), rounded to the nearest bit/s when it
// is not whole (the engine's rates are whole bit/s): 19 200 baud 8E1 is
// 13 963.6 bit/s, kept as 13 964, 26 ppm fast.
func (f UARTFormat) payloadRate(baud int64) int64 {
	halves := f.characterHalves()
	v := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(baud), big.NewInt(16)), big.NewInt(halves))
	whole := new(big.Int).Quo(v.Num(), v.Denom())
	if twice := new(big.Int).Mul(new(big.Int).Rem(v.Num(), v.Denom()), big.NewInt(2)); twice.Cmp(v.Denom()) >= 0 {
		whole.Add(whole, big.NewInt(1))
	}
	if !whole.IsInt64() {
		return math.MaxInt64
	}
	return max(whole.Int64(), 1)
}

// Size is a number of bytes: 1000B, 30kB (SI, 1000), 64KiB (binary, 1024).
type Size int64

var sizeUnits = map[string]int64{
	"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
}

var ambiguousSizes = map[string]string{
	"KB": "1000 or 1024 bytes? write kB or KiB", "K": "write kB or KiB", "k": "write kB or KiB",
	"Kb": "bits or bytes? write kB", "kb": "bits or bytes? write kB", "Mb": "bits or bytes? write MB",
	"M": "write MB or MiB", "b": "bits or bytes? write B",
}

var errNotSize = errors.New("is not a size (want e.g. 1000B, 30kB, 64KiB)")

func parseSize(s string) (int64, error) {
	num, unit, ok := parseQuantity(s)
	if ok && unit != "" {
		if hint, amb := ambiguousSizes[unit]; amb {
			return 0, errors.New("is ambiguous (" + hint + ")")
		}
	}
	mult, known := sizeUnits[unit]
	if ok && unit == "" && num.isZero() {
		mult, known = 1, true
	}
	if !ok || !known {
		return 0, errNotSize
	}
	v, ok := scaled(num, mult)
	if !ok {
		return 0, errors.New("is not a whole number of bytes, or is too large")
	}
	if v < 0 {
		return 0, errors.New("must not be negative")
	}
	return v, nil
}

func (z *Size) ParseScalar(s string) error {
	v, err := parseSize(s)
	*z = Size(v)
	return err
}

func (z Size) String() string { return strconv.FormatInt(int64(z), 10) + "B" }

// Limit bounds a buffer in bytes (30000B, 30kB) or in frames (50 frames).
type Limit emulator.Limit

var framesRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]+)\s*frames?$`) })

func (l *Limit) ParseScalar(s string) error {
	if m := framesRE().FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return errors.New("is too large")
		}
		*l = Limit{N: n, Unit: emulator.Frames}
		return nil
	}
	v, err := parseSize(s)
	if err != nil {
		if err == errNotSize {
			return errors.New("is not a limit (want bytes such as 30000B or 30kB, or frames such as 50 frames)")
		}
		return err
	}
	*l = Limit{N: v, Unit: emulator.Bytes}
	return nil
}

func (l Limit) String() string { return emulator.Limit(l).String() }

// Probability is written as a percentage (1%, 0.5%) or a fraction in [0, 1].
type Probability float64

func (p *Probability) ParseScalar(s string) error {
	t := strings.TrimSpace(s)
	percent := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return errors.New("is not a probability (want e.g. 1%, 0.5% or 0.01)")
	}
	if percent {
		v /= 100
	}
	if v < 0 || v > 1 {
		return errors.New("is outside [0, 1] (0% to 100%)")
	}
	*p = Probability(v)
	return nil
}

// String writes the shortest percentage that parses back to p exactly
// (0.0001% for 1e-6, whose float times 100 is 9.999999999999999e-05), in
// decimal notation (100%, not 1e+02%), or, when none of up to 15 digits
// does (a percentage is divided by 100 in floating point: no percentage
// is 1e-7 or 0.0007), the fraction, as Go writes it back exactly.
func (p Probability) String() string {
	for digits := 1; digits <= 15; digits++ {
		// Rounded to digits significant digits, then written in full.
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(float64(p)*100, 'e', digits-1, 64), 64)
		s := strconv.FormatFloat(rounded, 'f', -1, 64) + "%"
		var back Probability
		if back.ParseScalar(s) == nil && back == p {
			return s
		}
	}
	if s := strconv.FormatFloat(float64(p), 'f', -1, 64); len(s) <= 20 {
		return s
	}
	return FormatNumber(float64(p))
}

// ParseDuration parses a duration written as in a profile (1.5ms, 30s), for
// command-line flags.
func ParseDuration(s string) (time.Duration, error) {
	var d Duration
	if err := d.ParseScalar(s); err != nil {
		return 0, fmt.Errorf("%q %v", s, err)
	}
	return time.Duration(d), nil
}

func (c Correlation) String() string  { return FormatNumber(float64(c)) }
func (b BitErrorRate) String() string { return FormatNumber(float64(b)) }

// FormatNumber writes 1e-6 rather than Go's 1e-06.
func FormatNumber(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if mantissa, exp, ok := strings.Cut(s, "e"); ok {
		sign := exp[:1]
		digits := strings.TrimLeft(exp[1:], "0")
		if sign == "+" {
			sign = ""
		}
		return mantissa + "e" + sign + digits
	}
	return s
}
