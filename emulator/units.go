package emulator

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// Rate is a bit rate in bits per second. Zero means "no rate": a hop without
// a rate does not serialise and has no queue.
type Rate int64

// Common rates.
const (
	Bitps  Rate = 1
	Kbitps Rate = 1000
	Mbitps Rate = 1000 * Kbitps
	Gbitps Rate = 1000 * Mbitps
)

func (r Rate) String() string {
	switch {
	case r >= Gbitps && r%Gbitps == 0:
		return strconv.FormatInt(int64(r/Gbitps), 10) + "Gbit"
	case r >= Mbitps && r%Mbitps == 0:
		return strconv.FormatInt(int64(r/Mbitps), 10) + "Mbit"
	case r >= Kbitps && r%Kbitps == 0:
		return strconv.FormatInt(int64(r/Kbitps), 10) + "kbit"
	}
	return strconv.FormatInt(int64(r), 10) + "bit"
}

// MaxFrameSize bounds a frame's size (payload plus overhead) so that the
// exact serialisation arithmetic below cannot overflow.
const MaxFrameSize = 64 << 20

// transmitTime returns how long nbytes take at rate r, in whole nanoseconds,
// and the remainder in units of 1/r ns. Carrying the remainder into the next
// back-to-back frame keeps a busy link exact over any number of frames
// instead of drifting by the rounding of each one.
func transmitTime(nbytes int64, r Rate, carry uint64) (d time.Duration, rem uint64) {
	hi, lo := bits.Mul64(uint64(nbytes)*8, uint64(time.Second))
	lo, c := bits.Add64(lo, carry, 0)
	hi += c
	q, rem := bits.Div64(hi, lo, uint64(r))
	return time.Duration(q), rem
}

// transmitCache is transmitTime for a link or a source that sends frames
// of one size at one rate, most of the time: it keeps the quotient and
// remainder of the last size's bits at the last rate, so that the next
// frame of that size costs an addition where transmitTime divides 128 bits
// by 64 (a third of a busy link's time to serialise a frame, in perf).
// The results are transmitTime's, bit for bit.
type transmitCache struct {
	nbytes int64
	rate   Rate
	q, r   uint64 // nbytes·8·10⁹ = q·rate + r
}

// time is transmitTime(nbytes, rate, carry).
func (c *transmitCache) time(nbytes int64, rate Rate, carry uint64) (time.Duration, uint64) {
	if carry >= uint64(rate) { // not a remainder at this rate: no shortcut
		return transmitTime(nbytes, rate, carry)
	}
	if nbytes != c.nbytes || rate != c.rate {
		hi, lo := bits.Mul64(uint64(nbytes)*8, uint64(time.Second))
		c.q, c.r = bits.Div64(hi, lo, uint64(rate))
		c.nbytes, c.rate = nbytes, rate
	}
	// r and carry are both below rate: their sum holds at most one more.
	q, r := c.q, c.r+carry
	if r >= uint64(rate) {
		q, r = q+1, r-uint64(rate)
	}
	return time.Duration(q), r
}

// LimitUnit says what a Limit counts.
type LimitUnit uint8

// Limit units. The zero value is Unlimited.
const (
	Unlimited LimitUnit = iota
	Bytes
	Frames
)

// Limit bounds a buffer in bytes or in frames.
type Limit struct {
	N    int64
	Unit LimitUnit
}

// Admits reports whether a frame of size bytes fits in a buffer that already
// holds usedBytes in usedFrames frames.
func (l Limit) Admits(usedBytes, usedFrames int64, size int) bool {
	switch l.Unit {
	case Bytes:
		return usedBytes+int64(size) <= l.N
	case Frames:
		return usedFrames+1 <= l.N
	}
	return true
}

func (l Limit) String() string {
	switch l.Unit {
	case Bytes:
		return strconv.FormatInt(l.N, 10) + "B"
	case Frames:
		return strconv.FormatInt(l.N, 10) + " frames"
	}
	return "unlimited"
}

// MaxDuration is the longest duration, and the latest instant of a run,
// that hilrig takes anywhere (a run's length, a delay, a schedule entry's
// start, period and length, a live change): a Julian century, 36 525 days.
// Twice it still fits in an int64 (9.2e18 ns), so an instant plus a
// duration, both within it, never wraps; arithmetic that can go further
// saturates at it.
const MaxDuration = 36525 * 24 * time.Hour

// DurationInRange reports whether d is a duration hilrig takes: from 0 to
// MaxDuration. What reads durations from outside (a profile, a flag, a
// live change) refuses the others.
func DurationInRange(d time.Duration) bool { return 0 <= d && d <= MaxDuration }

// later is the instant d after t, or MaxDuration when that is later: an
// instant no run reaches (a run ends by MaxDuration, and what happens at
// its end does not happen). t and d are at least 0.
func later(t, d time.Duration) time.Duration {
	if d > MaxDuration-t {
		return MaxDuration
	}
	return t + d
}

// durationOf is a duration worked out in floating point (a random draw),
// rounded to the nanosecond and held within [0, MaxDuration]: converting a
// float beyond an int64's range to one is undefined in Go, and wraps on
// amd64.
func durationOf(ns float64) time.Duration {
	if !(ns > 0) { // NaN too
		return 0
	}
	return time.Duration(min(math.Round(ns), float64(MaxDuration)))
}
