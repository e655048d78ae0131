package emulator

import "time"

// Traffic describes a flow's synthetic source: the stand-in for real
// hardware in virtual-time runs. Sources are switched on at Start (and by
// the schedule), and make no frame at or after Stop when Stop is set.
type Traffic interface {
	// Window returns when the source first switches on and when it stops
	// for good (0: never).
	Window() (start, stop time.Duration)
	newSource() source
}

// A source is a Traffic's running state.
type source interface {
	// first returns the time of the first frame when switched on at t.
	first(t time.Duration, r *Stream) time.Duration
	// next returns the time of the frame after the one made at t.
	next(t time.Duration, r *Stream) time.Duration
	frameSize() int
}

// CBR sends Size-byte frames at a constant spacing: Interval, or the time
// Size bytes take at Rate when Interval is zero.
type CBR struct {
	Interval    time.Duration
	Rate        Rate
	Size        int
	Start, Stop time.Duration
}

// Poisson sends Size-byte frames with exponential gaps whose mean is the
// time Size bytes take at Rate.
type Poisson struct {
	Rate        Rate
	Size        int
	Start, Stop time.Duration
}

// OnOff alternates ON and OFF periods, starting ON at Start. It sends its
// first frame at the start of each ON period and then one every Size·8/Rate
// while the period lasts; it is silent while OFF.
type OnOff struct {
	Rate        Rate
	Size        int
	On, Off     Period
	Start, Stop time.Duration
}

// PeriodKind is how an ON or OFF period's length is drawn.
type PeriodKind uint8

// Period distributions.
const (
	Constant PeriodKind = iota
	Exponential
	ParetoPeriod
)

// Period is the length of an ON or OFF period: constant, or drawn from an
// exponential or a Pareto distribution with the given Mean (Pareto also
// needs Shape > 1; its scale is Mean·(Shape−1)/Shape).
type Period struct {
	Kind  PeriodKind
	Mean  time.Duration
	Shape float64
}

func (p Period) draw(r *Stream) time.Duration {
	var d float64
	switch p.Kind {
	case Constant:
		return p.Mean
	case Exponential:
		d = r.Exp(float64(p.Mean))
	case ParetoPeriod:
		d = r.Pareto(float64(p.Mean)*(p.Shape-1)/p.Shape, p.Shape)
	}
	return durationOf(d)
}

func (c CBR) Window() (time.Duration, time.Duration)     { return c.Start, c.Stop }
func (p Poisson) Window() (time.Duration, time.Duration) { return p.Start, p.Stop }
func (o OnOff) Window() (time.Duration, time.Duration)   { return o.Start, o.Stop }

// spacing is the gap between frames of a constant-rate source. A gap given
// as a rate is not a whole number of nanoseconds in general; the remainder
// is carried so that frame k leaves at exactly start + k·size·8/rate.
type spacing struct {
	interval time.Duration
	size     int
	rate     Rate
	carry    uint64
	transmit transmitCache
}

func (s *spacing) restart() { s.carry = 0 }

func (s *spacing) step() time.Duration {
	if s.interval > 0 {
		return s.interval
	}
	d, carry := s.transmit.time(int64(s.size), s.rate, s.carry)
	s.carry = carry
	return d
}

type cbrSource struct {
	spacing
}

func (c CBR) newSource() source {
	return &cbrSource{spacing{interval: c.Interval, size: c.Size, rate: c.Rate}}
}

func (s *cbrSource) first(t time.Duration, _ *Stream) time.Duration {
	s.restart()
	return t
}

func (s *cbrSource) next(t time.Duration, _ *Stream) time.Duration { return later(t, s.step()) }
func (s *cbrSource) frameSize() int                                { return s.size }

type poissonSource struct {
	mean float64 // ns
	size int
}

func (p Poisson) newSource() source {
	d, _ := transmitTime(int64(p.Size), p.Rate, 0)
	return &poissonSource{mean: float64(d), size: p.Size}
}

func (s *poissonSource) first(t time.Duration, r *Stream) time.Duration { return s.next(t, r) }

func (s *poissonSource) next(t time.Duration, r *Stream) time.Duration {
	return poissonNext(t, s.mean, r)
}

// poissonNext returns the time of a Poisson source's frame after the one
// made at t, its gaps' mean given in ns. A flow calls it directly (see
// flow.poissonMean).
func poissonNext(t time.Duration, mean float64, r *Stream) time.Duration {
	return later(t, durationOf(r.Exp(mean)))
}

func (s *poissonSource) frameSize() int { return s.size }

type onOffSource struct {
	spacing
	on, off Period
	onEnd   time.Duration // end of the current ON period
}

func (o OnOff) newSource() source {
	return &onOffSource{spacing: spacing{size: o.Size, rate: o.Rate}, on: o.On, off: o.Off}
}

func (s *onOffSource) first(t time.Duration, r *Stream) time.Duration {
	s.restart()
	s.onEnd = later(t, s.on.draw(r))
	return t
}

func (s *onOffSource) next(t time.Duration, r *Stream) time.Duration {
	if c := later(t, s.step()); c < s.onEnd {
		return c
	}
	return s.first(later(s.onEnd, s.off.draw(r)), r)
}

func (s *onOffSource) frameSize() int { return s.size }
