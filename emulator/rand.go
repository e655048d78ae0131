package emulator

import (
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/hilrig/hilrig/emulator/detmath"
)

// Stream is a reproducible stream of random numbers owned by one decision
// maker (a flow's source, a flow's loss model on one hop, ...). The
// transformations from uniform numbers are written here, not borrowed from
// math/rand, with detmath's functions, so a seed means the same run
// whatever Go release built the binary and whatever machine runs it.
type Stream struct {
	pcg         rand.PCG
	spare       float64
	spareActive bool
}

// NewStream derives the stream for (seed, parts...). The parts name its
// owner and purpose, e.g. ("flow", "cross", "onoff"); streams with different
// parts are independent, so adding an owner never shifts another's draws.
func NewStream(seed uint64, parts ...string) *Stream {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	key := h.Sum64()
	s := &Stream{}
	s.pcg.Seed(splitmix64(seed^key), splitmix64(key+0x9e3779b97f4a7c15*seed))
	return s
}

// splitmix64 scrambles a 64-bit value (Steele, Lea, Flood 2014) so that
// nearby seeds give unrelated PCG states.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Uint64 returns 64 uniformly random bits.
func (s *Stream) Uint64() uint64 { return s.pcg.Uint64() }

// Float64 returns a uniform number in [0, 1) with 53 random bits.
func (s *Stream) Float64() float64 { return float64(s.pcg.Uint64()>>11) * 0x1p-53 }

// Intn returns a uniform integer in [0, n), n > 0 (Lemire's multiply-shift;
// its bias is below n/2⁶⁴).
func (s *Stream) Intn(n int) int {
	hi, _ := bits.Mul64(s.pcg.Uint64(), uint64(n))
	return int(hi)
}

// Bernoulli returns true with probability p.
func (s *Stream) Bernoulli(p float64) bool { return s.Float64() < p }

// Exp returns an exponential variate with the given mean, by inversion.
func (s *Stream) Exp(mean float64) float64 { return -mean * detmath.Log1p(-s.Float64()) }

// Normal returns a standard normal variate (Box–Muller; the second value of
// each pair is kept for the next call).
func (s *Stream) Normal() float64 {
	if s.spareActive {
		s.spareActive = false
		return s.spare
	}
	u1 := 1 - s.Float64() // (0, 1]: log is finite
	u2 := s.Float64()
	r := math.Sqrt(-2 * detmath.Log(u1))
	s.spare = r * detmath.Sin(2*math.Pi*u2)
	s.spareActive = true
	return r * detmath.Cos(2*math.Pi*u2)
}

// Pareto returns a Pareto variate with scale xm (its minimum) and shape
// alpha, by inversion: xm·U^(−1/alpha) with U uniform on (0, 1].
func (s *Stream) Pareto(xm, alpha float64) float64 {
	return xm * detmath.Pow(1-s.Float64(), -1/alpha)
}
