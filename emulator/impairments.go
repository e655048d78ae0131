package emulator

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
)

// The random impairments a hop can apply. Each is a small value type with
// its semantics stated as an equation; their per-flow state (a Markov chain's
// state, the previous jitter) lives with the flow, so flows sharing a hop
// draw independently and adding one never changes another's decisions.

// A LossModel decides, frame by frame, which frames entering a hop are lost.
type LossModel interface {
	// lose moves the model on by one frame from s (its zero value is the
	// initial state) and reports whether that frame is lost.
	lose(s *lossState, r *Stream) bool
	// LossRate is the long-run fraction of frames lost.
	LossRate() float64
	check() error
}

// Bernoulli loses each frame independently with probability P.
type Bernoulli struct{ P float64 }

func (m Bernoulli) lose(_ *lossState, r *Stream) bool { return r.Bernoulli(m.P) }
func (m Bernoulli) LossRate() float64                 { return m.P }
func (m Bernoulli) check() error                      { return checkProbabilities(m.P) }

// GilbertElliott is the two-state Markov loss model with netem's parameters:
// in state Good a frame is lost with probability LossGood (1−k), in state Bad
// with LossBad (1−h). A frame's fate is decided by the state it finds; then
// the chain moves Good→Bad with probability P and Bad→Good with R. The run
// starts in Good. Long-run loss: [R·LossGood + P·LossBad]/(P + R); a stay
// in Bad lasts 1/R frames on average.
type GilbertElliott struct{ P, R, LossBad, LossGood float64 }

const (
	stateGood uint8 = iota
	stateBad
)

func (m GilbertElliott) lose(s *lossState, r *Stream) bool {
	state := &s.state
	var lost bool
	if *state == stateGood {
		lost = chance(m.LossGood, r)
		if chance(m.P, r) {
			*state = stateBad
		}
	} else {
		lost = chance(m.LossBad, r)
		if chance(m.R, r) {
			*state = stateGood
		}
	}
	return lost
}

// chance is r.Bernoulli(p) without a draw when p is 0 or 1.
func chance(p float64, r *Stream) bool {
	switch p {
	case 0:
		return false
	case 1:
		return true
	}
	return r.Bernoulli(p)
}

func (m GilbertElliott) LossRate() float64 {
	if m.P+m.R == 0 {
		return m.LossGood // never leaves Good
	}
	return (float64(m.R*m.LossGood) + float64(m.P*m.LossBad)) / (m.P + m.R)
}

func (m GilbertElliott) check() error {
	return checkProbabilities(m.P, m.R, m.LossBad, m.LossGood)
}

// Markov4 is the 4-state loss model of Salsano et al. (the GI model netem
// calls "loss state"). States: 1 transmitted in a gap, 2 transmitted in a
// burst, 3 lost in a burst, 4 an isolated loss in a gap. Each frame moves the
// chain once and takes the fate of the state it enters. Transitions: 1→3 P13,
// 1→4 P14, 3→1 P31, 3→2 P32, 2→3 P23, 4→1 always; otherwise it stays. The
// run starts in state 1.
type Markov4 struct{ P13, P31, P32, P23, P14 float64 }

// The 4-state model's states; the zero value is state 1.
const (
	txInGap     uint8 = iota // 1: transmitted, in a gap
	txInBurst                // 2: transmitted, in a burst
	lostInBurst              // 3: lost, in a burst
	lostInGap                // 4: an isolated loss in a gap
)

func (m Markov4) lose(s *lossState, r *Stream) bool {
	state := &s.state
	u := r.Float64()
	switch *state {
	case txInGap:
		switch {
		case u < m.P14:
			*state = lostInGap
		case u < m.P14+m.P13:
			*state = lostInBurst
		}
	case txInBurst:
		if u < m.P23 {
			*state = lostInBurst
		}
	case lostInBurst:
		switch {
		case u < m.P32:
			*state = txInBurst
		case u < m.P32+m.P31:
			*state = txInGap
		}
	case lostInGap:
		*state = txInGap
	}
	return *state == lostInBurst || *state == lostInGap
}

// LossRate is π3 + π4 of the stationary distribution,
//
//	(P13/P31 + P14) / (1 + P14 + P13/P31 + P13·P32/(P23·P31)).
//
// When the chain can be trapped in a burst (P31 = 0, or P23 = 0 with
// P32 > 0) it is the long-run average starting from state 1 instead.
func (m Markov4) LossRate() float64 {
	if m.P31 > 0 && (m.P32 == 0 || m.P23 > 0) {
		burst := m.P13 / m.P31
		inBurst := 0.0
		if m.P32 > 0 {
			inBurst = burst * m.P32 / m.P23
		}
		return (burst + m.P14) / (1 + m.P14 + burst + inBurst)
	}
	// Average the distribution over many steps from state 1 (a Cesàro
	// mean, which also converges for periodic chains).
	dist := [4]float64{1, 0, 0, 0}
	const steps = 100_000
	var lost float64
	for range steps {
		next := [4]float64{
			txInGap:     float64(dist[txInGap]*(1-m.P13-m.P14)) + float64(dist[lostInBurst]*m.P31) + dist[lostInGap],
			txInBurst:   float64(dist[txInBurst]*(1-m.P23)) + float64(dist[lostInBurst]*m.P32),
			lostInBurst: float64(dist[txInGap]*m.P13) + float64(dist[txInBurst]*m.P23) + float64(dist[lostInBurst]*(1-m.P31-m.P32)),
			lostInGap:   float64(dist[txInGap] * m.P14),
		}
		dist = next
		lost += dist[lostInBurst] + dist[lostInGap]
	}
	return lost / steps
}

func (m Markov4) check() error {
	if err := checkProbabilities(m.P13, m.P31, m.P32, m.P23, m.P14); err != nil {
		return err
	}
	if m.P13+m.P14 > 1 || m.P31+m.P32 > 1 {
		return errors.New("p13 + p14 and p31 + p32 must each be at most 1")
	}
	return nil
}

func checkProbabilities(ps ...float64) error {
	for _, p := range ps {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("probability %v outside [0, 1]", p)
		}
	}
	return nil
}

// A DelayDist is the distribution of the extra delay jitter adds to a hop's
// delay. Values are in nanoseconds and may be negative; the total delay is
// clamped at zero.
type DelayDist interface {
	draw(r *Stream) float64
	// mean and stdDev of the distribution, in nanoseconds.
	mean() float64
	stdDev() float64
	check() error
}

// Uniform is uniform on [−Spread, +Spread].
type Uniform struct{ Spread time.Duration }

func (d Uniform) draw(r *Stream) float64 { return float64(d.Spread) * (2*r.Float64() - 1) }
func (d Uniform) mean() float64          { return 0 }
func (d Uniform) stdDev() float64        { return float64(d.Spread) / math.Sqrt(3) }
func (d Uniform) check() error           { return nonNegative(d.Spread) }

// Normal is normal with mean 0 and standard deviation Sigma.
type Normal struct{ Sigma time.Duration }

func (d Normal) draw(r *Stream) float64 { return float64(d.Sigma) * r.Normal() }
func (d Normal) mean() float64          { return 0 }
func (d Normal) stdDev() float64        { return float64(d.Sigma) }
func (d Normal) check() error           { return nonNegative(d.Sigma) }

// Pareto is the Pareto distribution with the given mean and standard
// deviation: shape α = 1 + √(1 + Mean²/Sigma²) (always > 2, so the variance
// is finite) and scale xm = Mean·(α−1)/α, its smallest value.
type Pareto struct{ Mean, Sigma time.Duration }

func (d Pareto) params() (xm, alpha float64) {
	m, s := float64(d.Mean), float64(d.Sigma)
	alpha = 1 + math.Sqrt(1+m*m/(s*s))
	return m * (alpha - 1) / alpha, alpha
}

func (d Pareto) draw(r *Stream) float64 {
	xm, alpha := d.params()
	return r.Pareto(xm, alpha)
}

func (d Pareto) mean() float64   { return float64(d.Mean) }
func (d Pareto) stdDev() float64 { return float64(d.Sigma) }
func (d Pareto) check() error {
	if d.Mean <= 0 || d.Sigma <= 0 {
		return errors.New("pareto jitter needs a positive mean and sigma")
	}
	return nil
}

// ParetoNormal is Mean + Sigma·(Z + 3·P)/√10, with Z standard normal and P an
// independent standardised Pareto of shape 3 ((X − 1.5)/√0.75 for X Pareto
// with scale 1): a normal body with the Pareto's heavy right tail, in
// netem's 1:3 proportion, whose mean and standard deviation are exactly Mean
// and Sigma. (netem's table mixes the two at equal quantiles, and its
// jitter parameter is not the result's standard deviation.)
type ParetoNormal struct{ Mean, Sigma time.Duration }

func (d ParetoNormal) draw(r *Stream) float64 {
	p := (r.Pareto(1, 3) - 1.5) / math.Sqrt(0.75)
	return float64(d.Mean) + float64(d.Sigma)*(r.Normal()+float64(3*p))/math.Sqrt(10)
}

func (d ParetoNormal) mean() float64   { return float64(d.Mean) }
func (d ParetoNormal) stdDev() float64 { return float64(d.Sigma) }
func (d ParetoNormal) check() error    { return nonNegative(d.Sigma) }

// Empirical draws uniformly, with replacement, from measured delays: a
// lab's own one-way delays (or RTT/2) replayed as the extra delay.
type Empirical struct {
	samples []time.Duration
	avg, sd float64
}

// NewEmpirical returns the empirical distribution of samples.
func NewEmpirical(samples []time.Duration) *Empirical {
	e := &Empirical{samples: samples}
	for _, s := range samples {
		e.avg += float64(s)
	}
	e.avg /= float64(len(samples))
	for _, s := range samples {
		e.sd += float64((float64(s) - e.avg) * (float64(s) - e.avg))
	}
	e.sd = math.Sqrt(e.sd / float64(len(samples)))
	return e
}

// Samples returns the measured delays.
func (d *Empirical) Samples() []time.Duration { return d.samples }

func (d *Empirical) draw(r *Stream) float64 { return float64(d.samples[r.Intn(len(d.samples))]) }
func (d *Empirical) mean() float64          { return d.avg }
func (d *Empirical) stdDev() float64        { return d.sd }
func (d *Empirical) check() error {
	if len(d.samples) == 0 {
		return errors.New("empirical jitter has no samples")
	}
	return nil
}

func nonNegative(d time.Duration) error {
	if d < 0 {
		return errors.New("negative jitter parameter")
	}
	return nil
}

// Jitter adds a random extra delay X to each frame at a hop. With
// Correlation ρ ≠ 0 the extra delays of a flow form the AR(1) process
//
//	X₀ = Y₀,  Xₙ = μ + ρ·(Xₙ₋₁ − μ) + √(1−ρ²)·(Yₙ − μ)
//
// with Yₙ independent draws from Dist and μ its mean: X keeps Dist's mean and
// variance and its lag-1 autocorrelation is ρ (for a normal Dist, X is
// normal too; for others the shape moves towards normal as |ρ| grows). The
// total delay delay + X is clamped at zero.
type Jitter struct {
	Dist        DelayDist // nil: no jitter
	Correlation float64
}

func (j Jitter) check() error {
	if j.Dist == nil {
		return nil
	}
	if !(j.Correlation > -1 && j.Correlation < 1) {
		return fmt.Errorf("jitter correlation %v outside (−1, 1)", j.Correlation)
	}
	return j.Dist.check()
}

// next returns the flow's next extra delay, in nanoseconds, drawn from r.
func (j Jitter) next(s *randomState, r *Stream) float64 {
	y := j.Dist.draw(r)
	if j.Correlation == 0 || !s.jitterPrimed {
		s.jitterPrev, s.jitterPrimed = y, true
		return y
	}
	mu, rho := j.Dist.mean(), j.Correlation
	x := mu + float64(rho*(s.jitterPrev-mu)) + float64(math.Sqrt(1-float64(rho*rho))*(y-mu))
	s.jitterPrev = x
	return x
}

// ReorderMode says whether a hop may reorder a flow.
type ReorderMode uint8

// Reorder modes.
const (
	// InOrder: a frame never leaves before the frame of its flow ahead of it.
	InOrder ReorderMode = iota
	// ReorderAllowed: each frame leaves when its own delay says, so jitter
	// may reorder.
	ReorderAllowed
	// ReorderGap: netem's reorder: after Gap−1 frames of the flow were
	// delayed normally, each further frame is sent immediately (without the
	// hop's delay and jitter, overtaking the frames ahead) with probability
	// P; when one is, the count starts again.
	ReorderGap
)

// Reorder is a hop's ordering rule.
type Reorder struct {
	Mode ReorderMode
	P    float64
	Gap  int
}

func (o Reorder) check() error {
	if o.Mode == ReorderGap && o.Gap < 1 {
		return errors.New("reorder gap must be at least 1")
	}
	return checkProbabilities(o.P)
}

// sendNow decides, for netem-style reordering, whether this frame skips the
// delay, drawing from r.
func (o Reorder) sendNow(s *randomState, r *Stream) bool {
	if s.reorderCount >= o.Gap-1 && r.Bernoulli(o.P) {
		s.reorderCount = 0
		return true
	}
	s.reorderCount++
	return false
}

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
