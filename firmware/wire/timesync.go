package wire

import (
	"math"
	"time"
)

// TimeSample is one time-sync exchange, NTP's four timestamps: the local
// side sends a TimeRequest at T1 (its clock), the remote side receives it
// at T2 and answers at T3 (its clock), and the answer arrives at T4 (local
// clock again).
type TimeSample struct{ T1, T2, T3, T4 time.Duration }

// Offset is the remote clock less the local one, assuming the request and
// the answer took equally long: ((T2−T1) + (T3−T4))/2. Its error is at
// most half the difference between the two one-way delays, so at most
// half the Delay.
func (s TimeSample) Offset() time.Duration { return ((s.T2 - s.T1) + (s.T3 - s.T4)) / 2 }

// Delay is the round trip less the remote side's turnaround:
// (T4−T1) − (T3−T2).
func (s TimeSample) Delay() time.Duration { return (s.T4 - s.T1) - (s.T3 - s.T2) }

// ClockWindow is how many exchanges a ClockEstimator fits.
const ClockWindow = 32

// A ClockEstimator estimates a remote clock against the local one from
// time-sync exchanges: the offset from each exchange (NTP's), and a
// least-squares line through the last ClockWindow offsets against local
// time, whose slope is the drift (the remote clock's rate less the local
// one's, as a fraction). It allocates nothing.
type ClockEstimator struct {
	// MaxExcessDelay, if set, leaves out of the fit the exchanges whose
	// Delay exceeds the least in the window by more: a long delay is
	// usually one direction queued, which biases that exchange's offset
	// by up to half the excess.
	MaxExcessDelay time.Duration

	points [ClockWindow]clockPoint
	n      int // points held
	next   int // where the next point goes

	fitted bool
	at     time.Duration // the fit's reference: the mean local time of the points fitted
	offset float64       // ns, remote less local at at
	drift  float64       // d(offset)/d(local time)
}

type clockPoint struct {
	at            time.Duration // the exchange's local midpoint, (T1+T4)/2
	offset, delay time.Duration
}

// Add takes in an exchange and refits. It refuses (false) an exchange
// whose timestamps run backwards on either clock.
func (c *ClockEstimator) Add(s TimeSample) bool {
	if s.T4 < s.T1 || s.T3 < s.T2 || s.Delay() < 0 {
		return false
	}
	c.points[c.next] = clockPoint{at: s.T1 + (s.T4-s.T1)/2, offset: s.Offset(), delay: s.Delay()}
	c.next = (c.next + 1) % ClockWindow
	c.n = min(c.n+1, ClockWindow)
	c.fit()
	return true
}

// fit fits offset = a + b·(t − t̄) by least squares over the points whose
// delay is within MaxExcessDelay of the least: b = Σ(t−t̄)(o−ō) / Σ(t−t̄)²,
// a = ō. Times are taken relative to the newest point so that float64
// keeps nanoseconds.
func (c *ClockEstimator) fit() {
	least := time.Duration(math.MaxInt64)
	for _, p := range c.points[:c.n] {
		least = min(least, p.delay)
	}
	ref := c.points[(c.next+ClockWindow-1)%ClockWindow].at
	var n, st, so float64
	for _, p := range c.points[:c.n] {
		if c.MaxExcessDelay > 0 && p.delay-least > c.MaxExcessDelay {
			continue
		}
		n++
		st += float64(p.at - ref)
		so += float64(p.offset)
	}
	tm, om := st/n, so/n
	var stt, sto float64
	for _, p := range c.points[:c.n] {
		if c.MaxExcessDelay > 0 && p.delay-least > c.MaxExcessDelay {
			continue
		}
		dt := float64(p.at-ref) - tm
		stt += float64(dt * dt)
		sto += float64(dt * (float64(p.offset) - om))
	}
	c.at, c.offset, c.drift = ref+time.Duration(math.Round(tm)), om, 0
	if stt > 0 {
		c.drift = sto / stt
	}
	c.fitted = true
}

// Reset forgets every exchange (keeping MaxExcessDelay): the remote
// clock started again (its sender restarted), and an offset measured
// before says nothing of it now.
func (c *ClockEstimator) Reset() { *c = ClockEstimator{MaxExcessDelay: c.MaxExcessDelay} }

// Ready reports whether there is an estimate: after the first exchange
// (the drift after the second).
func (c *ClockEstimator) Ready() bool { return c.fitted }

// Exchanges is the number of exchanges in the window.
func (c *ClockEstimator) Exchanges() int { return c.n }

// Offset is the remote clock less the local one at local time at.
func (c *ClockEstimator) Offset(at time.Duration) time.Duration {
	return time.Duration(math.Round(c.offset + float64(c.drift*float64(at-c.at))))
}

// Drift is the remote clock's rate less the local one's: 50e-6 means the
// remote clock gains 50 µs a second.
func (c *ClockEstimator) Drift() float64 { return c.drift }

// ToRemote is the remote clock's reading at local time local.
func (c *ClockEstimator) ToRemote(local time.Duration) time.Duration {
	return local + c.Offset(local)
}

// ToLocal is the local time at which the remote clock reads remote:
// the l with l + offset(l) = remote.
func (c *ClockEstimator) ToLocal(remote time.Duration) time.Duration {
	rel := (float64(remote-c.at) - c.offset) / (1 + c.drift)
	return c.at + time.Duration(math.Round(rel))
}

// OneWayDelay is how long a message the remote side sent at sent (its
// clock, a Header's Time) took to arrive at arrived (local clock).
func (c *ClockEstimator) OneWayDelay(sent, arrived time.Duration) time.Duration {
	return arrived - c.ToLocal(sent)
}
