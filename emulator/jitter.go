package emulator

import (
	"errors"
	"fmt"
	"math"
	"time"
)

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
func (j Jitter) next(s *jitterState, r *Stream) float64 {
	y := j.Dist.draw(r)
	if j.Correlation == 0 || !s.primed {
		s.prev, s.primed = y, true
		return y
	}
	mu, rho := j.Dist.mean(), j.Correlation
	x := mu + float64(rho*(s.prev-mu)) + float64(math.Sqrt(1-float64(rho*rho))*(y-mu))
	s.prev = x
	return x
}

// jitterState is a flow's last extra delay, which the next one is
// correlated with.
type jitterState struct {
	prev   float64
	primed bool
}

// jitterStage adds a hop's jitter to the delay.
type jitterStage HopParams

func init() {
	registerStage(stageDef{key: "jitter", at: atPropagate, order: 30, of: func(p *HopParams) Stage { return (*jitterStage)(p) }})
}

func (s *jitterStage) Active() bool                     { return s.Jitter.Dist != nil }
func (s *jitterStage) Check() error                     { return s.Jitter.check() }
func (s *jitterStage) NewState(old any) any             { return renew[jitterState](old) }
func (s *jitterStage) Enter(*Frame, *FlowState) Verdict { return Pass }
func (s *jitterStage) Propagate(_ *Frame, fs *FlowState, delay time.Duration) (time.Duration, Verdict) {
	return durationOf(float64(delay) + s.Jitter.next(fs.State.(*jitterState), fs.Rand)), Pass
}
