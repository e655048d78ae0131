package emulator

import (
	"errors"
	"time"
)

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
func (o Reorder) sendNow(s *reorderState, r *Stream) bool {
	if s.count >= o.Gap-1 && r.Bernoulli(o.P) {
		s.count = 0
		return true
	}
	s.count++
	return false
}

// reorderState counts a flow's frames delayed normally since the last one
// sent at once.
type reorderState struct{ count int }

// reorderStage sends frames at once as netem's reorder does. The in-order
// rule (Reorder's mode) is the hop's own: it holds without a stage.
type reorderStage HopParams

func init() {
	registerStage(stageDef{key: "reorder", at: atPropagate, order: 10, of: func(p *HopParams) Stage { return (*reorderStage)(p) }})
}

func (s *reorderStage) Active() bool                     { return s.Reorder.Mode == ReorderGap }
func (s *reorderStage) Check() error                     { return s.Reorder.check() }
func (s *reorderStage) NewState(old any) any             { return renew[reorderState](old) }
func (s *reorderStage) Enter(*Frame, *FlowState) Verdict { return Pass }
func (s *reorderStage) Propagate(_ *Frame, fs *FlowState, delay time.Duration) (time.Duration, Verdict) {
	if s.Reorder.sendNow(fs.State.(*reorderState), fs.Rand) {
		return 0, LeaveNow
	}
	return delay, Pass
}
