package emulator

import (
	"errors"
	"math/bits"
	"time"
)

// Flap makes a hop's rate flap: in every Every, counted from the instant
// the flap took effect, the hop serialises at Rate for the first For and at
// its own rate for the rest. A frame whose serialisation crosses a window's
// edge sends its bits at each window's rate in turn, so a link that drops
// to Rate for For carries exactly Rate·For bits in that time. On a hop
// without a rate of its own, frames outside the windows take no time
// (a per-frame time still applies). The zero value flaps nothing.
type Flap struct {
	Rate  Rate
	Every time.Duration
	For   time.Duration
}

// active reports whether f flaps at all.
func (f Flap) active() bool { return f.Rate > 0 }

func (f Flap) check() error {
	switch {
	case f == Flap{}:
		return nil
	case f.Rate <= 0:
		return errors.New("a flap needs a positive rate")
	case f.Every <= 0 || f.Every > MaxDuration:
		return errors.New("a flap needs a period (every) from 1ns to the longest duration")
	case f.For <= 0 || f.For > f.Every:
		return errors.New("a flap's for must be positive and at most its every")
	}
	return nil
}

// sendTime is how long nbytes take to serialise from t on a hop whose own
// rate is own (0: unlimited), where t is since after the flap took effect.
// It floors to the nanosecond, as transmitTime does for a steady rate.
func (f Flap) sendTime(nbytes int64, own Rate, since time.Duration) time.Duration {
	// work is what is left to send, in bit·ns: a window of length L at
	// rate r carries r·L of it. 8·MaxFrameSize·2·10⁹ fits in 64 bits.
	work := uint64(nbytes) * 8 * uint64(time.Second)
	phase := since % f.Every
	var elapsed time.Duration
	for {
		rate, left := f.Rate, f.For-phase
		if phase >= f.For {
			rate, left = own, f.Every-phase
		}
		if rate == 0 {
			return elapsed // unlimited outside the windows
		}
		hi, carried := bits.Mul64(uint64(rate), uint64(left))
		if hi != 0 || work <= carried {
			return later(elapsed, time.Duration(work/uint64(rate)))
		}
		work -= carried
		elapsed, phase = later(elapsed, left), (phase+left)%f.Every
		if phase == 0 {
			// At a period's start: skip the whole periods the rest needs,
			// so that a slow link costs no more steps than a fast one.
			elapsed = f.skipPeriods(&work, own, elapsed)
		}
		if elapsed >= MaxDuration {
			return MaxDuration
		}
	}
}

// skipPeriods takes the whole periods that *work outlasts off it, and
// returns elapsed moved past them.
func (f Flap) skipPeriods(work *uint64, own Rate, elapsed time.Duration) time.Duration {
	hiA, a := bits.Mul64(uint64(f.Rate), uint64(f.For))
	hiB, b := bits.Mul64(uint64(own), uint64(f.Every-f.For))
	perPeriod, c := bits.Add64(a, b, 0)
	if hiA != 0 || hiB != 0 || c != 0 || *work <= perPeriod {
		return elapsed
	}
	periods := (*work - 1) / perPeriod // leave the last, partly used one
	*work -= periods * perPeriod
	hi, span := bits.Mul64(periods, uint64(f.Every))
	if hi != 0 || span > uint64(MaxDuration) {
		return MaxDuration
	}
	return later(elapsed, time.Duration(span))
}
