package emulator

import (
	"errors"
	"time"
)

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

// lossFlow is a flow's place in a hop's loss model, and the frames it lost
// in a row so far, for the summary's burst lengths (which a change of the
// model does not end).
type lossFlow struct {
	model lossState
	run   int
}

func (l *lossFlow) finish(fs *FlowState) {
	if l.run > 0 {
		fs.Stats.recordLossBurst(l.run)
		l.run = 0
	}
}

// lossStage loses frames as they enter a hop, as its loss model says.
type lossStage HopParams

func init() {
	registerStage(stageDef{key: "loss", at: atEnter, order: 10, of: func(p *HopParams) Stage { return (*lossStage)(p) }})
}

func (s *lossStage) Active() bool { return s.Loss != nil }

func (s *lossStage) Check() error {
	if s.Loss == nil {
		return nil
	}
	return s.Loss.check()
}

func (s *lossStage) NewState(old any) any {
	if l, ok := old.(*lossFlow); ok {
		l.model = lossState{}
		return l
	}
	return new(lossFlow)
}

// Enter counts the bursts of original frames only: a copy's fate says
// nothing of the flow's.
func (s *lossStage) Enter(f *Frame, fs *FlowState) Verdict {
	l := fs.State.(*lossFlow)
	lost := s.Loss.lose(&l.model, fs.Rand)
	switch {
	case f.Copy:
	case lost:
		l.run++
	case l.run > 0:
		l.finish(fs)
	}
	if lost {
		return Lose
	}
	return Pass
}

func (s *lossStage) Propagate(_ *Frame, _ *FlowState, delay time.Duration) (time.Duration, Verdict) {
	return delay, Pass
}
