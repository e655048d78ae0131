package emulator

import (
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
)

// Corruption flips bits of frames that cross a hop. With BER, every bit of
// the frame flips independently with that probability, so a frame of n
// bytes is hit with probability 1−(1−BER)^(8n); with FrameP, a frame is hit
// with probability FrameP and then exactly one of its bits, chosen
// uniformly, flips. Corrupted frames are still delivered.
type Corruption struct {
	BER    float64
	FrameP float64
}

func (c Corruption) check() error { return checkProbabilities(c.BER, c.FrameP) }

// apply corrupts f and reports whether any bit flipped. Gaps between flipped
// bits are geometric: the next flip is ⌊ln U / ln(1−BER)⌋ bits further on.
func (c Corruption) apply(f *Frame, r *Stream) bool {
	bits := int64(f.Size) * 8
	switch {
	case c.BER > 0:
		flipped := false
		lnq := detmath.Log1p(-c.BER)
		for pos := int64(-1); ; {
			gap := math.Floor(detmath.Log(1-r.Float64()) / lnq)
			if gap >= float64(bits-pos-1) {
				return flipped
			}
			pos += 1 + int64(gap)
			flipBit(f, pos)
			flipped = true
		}
	case c.FrameP > 0 && r.Bernoulli(c.FrameP):
		flipBit(f, int64(r.Intn(int(bits))))
		return true
	}
	return false
}

func flipBit(f *Frame, bit int64) {
	if i := bit / 8; i < int64(len(f.Payload)) {
		f.Payload[i] ^= 1 << (bit % 8)
	}
}

// corruptStage flips bits of the frames entering a hop.
type corruptStage HopParams

func init() {
	registerStage(stageDef{key: "corrupt", at: atEnter, order: 30, of: func(p *HopParams) Stage { return (*corruptStage)(p) }})
}

func (s *corruptStage) Active() bool         { return s.Corrupt != Corruption{} }
func (s *corruptStage) Check() error         { return s.Corrupt.check() }
func (s *corruptStage) NewState(old any) any { return nil }
func (s *corruptStage) Enter(f *Frame, fs *FlowState) Verdict {
	if s.Corrupt.apply(f, fs.Rand) {
		return Corrupt
	}
	return Pass
}

func (s *corruptStage) Propagate(_ *Frame, _ *FlowState, delay time.Duration) (time.Duration, Verdict) {
	return delay, Pass
}
