package emulator

import "time"

// duplicateStage copies frames entering a hop with probability
// HopParams.Duplicate; the copy follows the original through the rest of
// the route, right behind it.
type duplicateStage HopParams

func init() {
	registerStage(stageDef{key: "duplicate", at: atEnter, order: 20, of: func(p *HopParams) Stage { return (*duplicateStage)(p) }})
}

func (s *duplicateStage) Active() bool         { return s.Duplicate > 0 }
func (s *duplicateStage) Check() error         { return checkProbabilities(s.Duplicate) }
func (s *duplicateStage) NewState(old any) any { return nil }
func (s *duplicateStage) Enter(_ *Frame, fs *FlowState) Verdict {
	if fs.Rand.Bernoulli(s.Duplicate) {
		return Copy
	}
	return Pass
}

func (s *duplicateStage) Propagate(_ *Frame, _ *FlowState, delay time.Duration) (time.Duration, Verdict) {
	return delay, Pass
}
