package emulator

import (
	"errors"
	"time"
)

// Trace-driven impairments replay a recorded series frame by frame, in
// order, as Mahimahi replays a recorded link: the k-th frame of a flow
// through the hop gets the k-th value, so the series' time correlation is
// kept exactly. A series shorter than the run starts again from its first
// value. A flow's place in the series restarts when the schedule sets the
// parameter again.

// lossState is a flow's place in a hop's loss model: the model's state,
// and for a recorded series the next frame's index in it.
type lossState struct {
	state uint8
	next  int
}

// LossTrace loses the frames a recorded series says were lost.
type LossTrace struct {
	Lost []bool
}

func (m LossTrace) lose(s *lossState, _ *Stream) bool {
	lost := m.Lost[s.next]
	s.next = (s.next + 1) % len(m.Lost)
	return lost
}

// LossRate is the series' fraction of lost frames.
func (m LossTrace) LossRate() float64 {
	lost := 0
	for _, l := range m.Lost {
		if l {
			lost++
		}
	}
	return float64(lost) / float64(len(m.Lost))
}

func (m LossTrace) check() error {
	if len(m.Lost) == 0 {
		return errors.New("a loss trace needs at least one frame")
	}
	return nil
}

// checkDelayTrace checks a recorded series of delays.
func checkDelayTrace(series []time.Duration) error {
	for _, d := range series {
		if d < 0 {
			return errors.New("a delay trace holds a negative delay")
		}
	}
	return nil
}

// delayTraceStage replays a hop's recorded delays: each frame of a flow
// gets the series' next value in place of the hop's delay.
type delayTraceStage HopParams

func init() {
	registerStage(stageDef{key: "delay", at: atPropagate, order: 20, of: func(p *HopParams) Stage { return (*delayTraceStage)(p) }})
}

// delayTraceState is a flow's place in the series.
type delayTraceState struct{ next int }

func (s *delayTraceStage) Active() bool                     { return s.DelayTrace != nil }
func (s *delayTraceStage) Check() error                     { return checkDelayTrace(s.DelayTrace) }
func (s *delayTraceStage) NewState(old any) any             { return renew[delayTraceState](old) }
func (s *delayTraceStage) Enter(*Frame, *FlowState) Verdict { return Pass }
func (s *delayTraceStage) Propagate(_ *Frame, fs *FlowState, _ time.Duration) (time.Duration, Verdict) {
	at := fs.State.(*delayTraceState)
	d := s.DelayTrace[at.next]
	at.next = (at.next + 1) % len(s.DelayTrace)
	return d, Pass
}

// StatusNamed is the status a trace names name (as Status.String writes
// it), for reading recorded traces back.
func StatusNamed(name string) (Status, bool) {
	for s := range numStatus {
		if statusNames[s] == name {
			return s, true
		}
	}
	return 0, false
}

// StatusNames lists the names of the engine's statuses, in order.
func StatusNames() []string { return append([]string(nil), statusNames[:]...) }
