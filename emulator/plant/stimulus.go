package plant

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
)

// Stimulus drives a model input when the rig simulates it: its value at t
// seconds from the start of the run. Before is its value just before t:
// the same, except where it jumps. A solver step from t to t+h sees At(t)
// at its start and Before(t+h) at its end, so a jump on a step boundary
// falls between two steps instead of being smeared over one.
type Stimulus interface {
	At(t float64) float64
	Before(t float64) float64
	String() string
}

// Constant is a fixed value.
type Constant float64

// Step goes from From to To at Time.
type Step struct {
	Time     time.Duration
	From, To float64
}

// Sine is Offset + Amplitude·sin(2π·t/Period + Phase), Phase in radians
// (π/2 makes it a cosine).
type Sine struct {
	Amplitude, Offset float64
	Period            time.Duration
	Phase             float64
}

// Square is Offset + Amplitude in the first half of each Period and
// Offset − Amplitude in the second.
type Square struct {
	Amplitude, Offset float64
	Period            time.Duration
}

// Steps holds each value from its time until the next; before the first
// time the value is 0. The times must increase.
type Steps []Level

// Level is a value from a time on.
type Level struct {
	Time  time.Duration
	Value float64
}

var (
	_ Stimulus = Constant(0)
	_ Stimulus = Step{}
	_ Stimulus = Sine{}
	_ Stimulus = Square{}
	_ Stimulus = Steps{}
)

func (c Constant) At(float64) float64     { return float64(c) }
func (c Constant) Before(float64) float64 { return float64(c) }
func (c Constant) String() string         { return fmt.Sprintf("constant %g", float64(c)) }

func (s Step) At(t float64) float64 {
	if t < s.Time.Seconds() {
		return s.From
	}
	return s.To
}

func (s Step) Before(t float64) float64 {
	if t <= s.Time.Seconds() {
		return s.From
	}
	return s.To
}

func (s Step) String() string { return fmt.Sprintf("step from %g to %g at %v", s.From, s.To, s.Time) }

func (s Sine) At(t float64) float64 {
	return s.Offset + float64(s.Amplitude*detmath.Sin(2*math.Pi*t/s.Period.Seconds()+s.Phase))
}

func (s Sine) Before(t float64) float64 { return s.At(t) }

func (s Sine) String() string {
	if s.Phase != 0 {
		return fmt.Sprintf("sine of amplitude %g about %g, period %v, phase %.4g rad", s.Amplitude, s.Offset, s.Period, s.Phase)
	}
	return fmt.Sprintf("sine of amplitude %g about %g, period %v", s.Amplitude, s.Offset, s.Period)
}

func (s Square) At(t float64) float64 {
	if math.Mod(t, s.Period.Seconds()) < s.Period.Seconds()/2 {
		return s.Offset + s.Amplitude
	}
	return s.Offset - s.Amplitude
}

func (s Square) Before(t float64) float64 {
	period := s.Period.Seconds()
	phase := math.Mod(t, period)
	if phase == 0 && t > 0 {
		return s.Offset - s.Amplitude // the end of a period's low half
	}
	if phase == period/2 {
		return s.Offset + s.Amplitude
	}
	return s.At(t)
}

func (s Square) String() string {
	return fmt.Sprintf("square wave of amplitude %g about %g, period %v", s.Amplitude, s.Offset, s.Period)
}

func (s Steps) At(t float64) float64 {
	i := sort.Search(len(s), func(i int) bool { return s[i].Time.Seconds() > t })
	if i == 0 {
		return 0
	}
	return s[i-1].Value
}

func (s Steps) Before(t float64) float64 {
	i := sort.Search(len(s), func(i int) bool { return s[i].Time.Seconds() >= t })
	if i == 0 {
		return 0
	}
	return s[i-1].Value
}

func (s Steps) String() string {
	parts := make([]string, len(s))
	for i, l := range s {
		parts[i] = fmt.Sprintf("%g from %v", l.Value, l.Time)
	}
	return "steps: " + strings.Join(parts, ", ")
}

// stimulusFinite reports whether every value a stimulus takes is a finite
// number, and if not, one that is not. A stimulus of a type it does not
// know is taken as it is.
func stimulusFinite(s Stimulus) (float64, bool) {
	var values []float64
	switch s := s.(type) {
	case Constant:
		values = []float64{float64(s)}
	case Step:
		values = []float64{s.From, s.To}
	case Sine:
		// Its extremes, Offset ± Amplitude, are finite only if both are.
		values = []float64{s.Offset, s.Amplitude, s.Offset + math.Abs(s.Amplitude), s.Offset - math.Abs(s.Amplitude), s.Phase}
	case Square:
		values = []float64{s.Offset, s.Amplitude, s.Offset + s.Amplitude, s.Offset - s.Amplitude}
	case Steps:
		for _, l := range s {
			values = append(values, l.Value)
		}
	}
	for _, v := range values {
		if !finite(v) {
			return v, false
		}
	}
	return 0, true
}
