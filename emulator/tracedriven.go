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

// traceDelay is the delay of frame f's flow's next frame at h from h's
// delay trace.
func (n *Network) traceDelay(h *hop, f *Frame) time.Duration {
	s := n.random(f)
	if s.delayEpoch != h.delayEpoch {
		s.delayEpoch, s.delayNext = h.delayEpoch, 0
	}
	d := h.DelayTrace[s.delayNext]
	s.delayNext = (s.delayNext + 1) % len(h.DelayTrace)
	return d
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
