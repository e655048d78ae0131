package emulator

import (
	"errors"
	"time"
)

// HopParams are a hop's settable parameters; the schedule may change any of
// them at run time.
type HopParams struct {
	// Rate is the serialisation rate. A frame takes (Size+Overhead)·8/Rate
	// to serialise. Zero: the hop does not serialise, has no queue, and only
	// delays.
	Rate Rate
	// Delay is the propagation delay, added after serialisation.
	Delay time.Duration
	// DelayTrace, when set, replaces Delay: the k-th frame of each flow
	// gets its k-th value (a recorded series, replayed in order).
	DelayTrace []time.Duration
	// Queue bounds what waits for the serialiser (not the frame being
	// serialised). A frame that would exceed it is tail-dropped.
	Queue Limit
	// Overhead is added to every frame's size for serialisation only.
	Overhead int
	// PerFrame is a time every frame takes on the serialiser whatever its
	// size, added to its size's at Rate: a relay that forwards one message
	// every γ (paper 004's degradation), or a gateway's processing. With
	// it a hop without a rate serialises and queues.
	PerFrame time.Duration
	// Loss decides which frames are lost as they enter the hop (nil: none).
	Loss LossModel
	// Jitter adds a random extra delay to the propagation delay.
	Jitter Jitter
	// Reorder is the ordering rule for frames leaving the hop.
	Reorder Reorder
	// Duplicate is the probability that a frame entering the hop is
	// duplicated; the copy follows the original through the rest of the
	// route.
	Duplicate float64
	// Corrupt flips bits of frames entering the hop.
	Corrupt Corruption
}

// check reports parameters that are out of range.
func (p *HopParams) check() error {
	if p.Rate < 0 || p.Delay < 0 || p.Overhead < 0 || p.Queue.N < 0 || p.PerFrame < 0 {
		return errorf("negative parameter")
	}
	if p.Delay > MaxDuration || p.PerFrame > MaxDuration {
		return errorf("a delay or time per frame past the longest duration, %v", MaxDuration)
	}
	if p.Loss != nil {
		if err := p.Loss.check(); err != nil {
			return err
		}
	}
	return errors.Join(p.Jitter.check(), p.Reorder.check(), checkProbabilities(p.Duplicate), p.Corrupt.check(), checkDelayTrace(p.DelayTrace))
}

// HopField names one of HopParams' fields, for partial changes.
type HopField uint32

// Hop fields, as a bit set.
const (
	FieldRate HopField = 1 << iota
	FieldDelay
	FieldQueue
	FieldOverhead
	FieldLoss
	FieldJitter
	FieldReorder
	FieldDuplicate
	FieldCorrupt
	FieldPerFrame
)

// copyFields sets the fields of p named in set to their values in src.
func (p *HopParams) copyFields(src *HopParams, set HopField) {
	if set&FieldRate != 0 {
		p.Rate = src.Rate
	}
	if set&FieldDelay != 0 {
		p.Delay, p.DelayTrace = src.Delay, src.DelayTrace
	}
	if set&FieldQueue != 0 {
		p.Queue = src.Queue
	}
	if set&FieldOverhead != 0 {
		p.Overhead = src.Overhead
	}
	if set&FieldLoss != 0 {
		p.Loss = src.Loss
	}
	if set&FieldJitter != 0 {
		p.Jitter = src.Jitter
	}
	if set&FieldReorder != 0 {
		p.Reorder = src.Reorder
	}
	if set&FieldDuplicate != 0 {
		p.Duplicate = src.Duplicate
	}
	if set&FieldCorrupt != 0 {
		p.Corrupt = src.Corrupt
	}
	if set&FieldPerFrame != 0 {
		p.PerFrame = src.PerFrame
	}
}

// HopConfig is a hop as built.
type HopConfig struct {
	Name string
	HopParams
	// Bus, when set, makes the hop a shared bus: the flows that cross it
	// contend for it as stations, and the bus, not Rate and Queue, decides
	// when each frame has been sent.
	Bus *Bus
}

// HopStats counts what happened at a hop.
type HopStats struct {
	Frames     uint64 // frames that arrived
	Dropped    [numStatus]uint64
	Duplicated uint64 // copies made here
	Corrupted  uint64 // frames corrupted here
}

// OutageMode is what a hop does with frames that would leave it during an
// outage.
type OutageMode uint8

// Outage modes.
const (
	NoOutage OutageMode = iota
	OutageDropMode
	OutageHoldMode
)

type hop struct {
	name string
	HopParams

	waiting    fifo   // frames waiting for the serialiser
	sending    *Frame // frame being serialised, nil when idle
	carry      uint64 // serialisation remainder, kept while back to back
	lastFinish time.Duration

	bus *bus // a shared bus's stations and channel, or nil

	outage    OutageMode
	holdLimit Limit
	held      fifo // frames that left during a hold outage

	// Bumped when the schedule changes the loss model, jitter, reorder
	// rule or delay, so that each flow restarts that model's state (or its
	// place in a delay trace).
	lossEpoch, jitterEpoch, reorderEpoch, delayEpoch uint32

	stats HopStats
}

// serialises reports whether frames take time to leave h's serialiser,
// and so may queue.
func (h *hop) serialises() bool { return h.Rate > 0 || h.PerFrame > 0 }

// serialise starts sending f at t and returns when it finishes.
func (h *hop) serialise(f *Frame, t time.Duration) time.Duration {
	if t != h.lastFinish {
		h.carry = 0 // the link went idle: nothing to carry
	}
	var d time.Duration
	if h.Rate > 0 {
		d, h.carry = transmitTime(int64(f.Size+h.Overhead), h.Rate, h.carry)
	}
	d += h.PerFrame
	h.sending = f
	// A long queue at a slow rate can be sent past the last instant of
	// any run: it is in flight at the end.
	h.lastFinish = later(t, d)
	return h.lastFinish
}
