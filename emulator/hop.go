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
	Rate Rate `hop:"rate" unit:"bit/s" default:"none" doc:"serialisation rate, a bit rate or a UART line ({baud, format}, see Serial lines): a frame takes (size+overhead)·8/rate to send; without a rate the hop has no queue and only delays"`
	// Delay is the propagation delay, added after serialisation.
	Delay time.Duration `hop:"delay" unit:"s" default:"0s" doc:"propagation delay, added after serialisation: a duration, or {trace: FILE} to replay a recorded series frame by frame (see Trace-driven hops)"`
	// DelayTrace, when set, replaces Delay: the k-th frame of each flow
	// gets its k-th value (a recorded series, replayed in order).
	DelayTrace []time.Duration `hop:"delay"`
	// Queue bounds what waits for the serialiser (not the frame being
	// serialised). A frame that would exceed it is tail-dropped.
	Queue Limit `hop:"queue" unit:"B or frames" default:"unlimited" matters:"serialising" doc:"limit on what waits for the serialiser, in bytes or frames (not counting the frame being sent); a frame that would exceed it is dropped (tail drop)"`
	// Overhead is added to every frame's size for serialisation only.
	Overhead int `hop:"overhead" unit:"B" default:"0B" doc:"bytes added to every frame for serialisation only (headers, preamble)"`
	// PerFrame is a time every frame takes on the serialiser whatever its
	// size, added to its size's at Rate: a relay that forwards one message
	// every γ (paper 004's degradation), or a gateway's processing. With
	// it a hop without a rate serialises and queues.
	PerFrame time.Duration `hop:"per_frame" unit:"s" default:"0s" doc:"time every frame takes to send whatever its size, added to its time at the rate: a relay that forwards one message every γ, a gateway's processing; with it a hop without a rate queues"`
	// Loss decides which frames are lost as they enter the hop (nil: none).
	Loss LossModel `hop:"loss" unit:"" default:"none" doc:"which frames are lost as they enter the hop"`
	// Jitter adds a random extra delay to the propagation delay.
	Jitter Jitter `hop:"jitter" unit:"s" default:"none" doc:"random extra delay added to delay; the total is never negative"`
	// Reorder is the ordering rule for frames leaving the hop.
	Reorder Reorder `hop:"reorder" unit:"" default:"in_order" matters:"always" doc:"in_order: a frame never leaves before the frame of its flow ahead of it; allowed: jitter may reorder; {p, gap}: netem-style, see Semantics"`
	// Duplicate is the probability that a frame entering the hop is
	// duplicated; the copy follows the original through the rest of the
	// route.
	Duplicate float64 `hop:"duplicate" unit:"probability" default:"0%" doc:"probability that a frame entering the hop is duplicated; the copy follows the original through the rest of the route"`
	// Corrupt flips bits of frames entering the hop.
	Corrupt Corruption `hop:"corrupt" unit:"" default:"none" doc:"bit errors; corrupted frames are still delivered, with status corrupted"`
	// Flap makes the rate flap (see Flap).
	Flap Flap `hop:"flap" unit:"" default:"none" doc:"{rate, every, for}: in every every, the hop serialises at rate for for, then at its own rate again; the windows count from when the flap takes effect, and a frame that crosses a window's edge sends its bits at each rate in turn (see Rate flapping)"`
}

// check reports parameters that are out of range.
func (p *HopParams) check() error {
	if p.Rate < 0 || p.Delay < 0 || p.Overhead < 0 || p.Queue.N < 0 || p.PerFrame < 0 {
		return errorf("negative parameter")
	}
	if p.Delay > MaxDuration || p.PerFrame > MaxDuration {
		return errorf("a delay or time per frame past the longest duration, %v", MaxDuration)
	}
	return errors.Join(p.checkStages(), p.Flap.check())
}

// HopField names one of a hop's keys (see HopKeys), for partial changes:
// key i of HopKeys is the bit 1<<i.
type HopField uint32

// Hop fields, as a bit set, in the order of HopParams' keys.
const (
	FieldRate HopField = 1 << iota
	FieldDelay
	FieldQueue
	FieldOverhead
	FieldPerFrame
	FieldLoss
	FieldJitter
	FieldReorder
	FieldDuplicate
	FieldCorrupt
	FieldFlap
)

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

type hop struct {
	name string
	HopParams

	// What a frame goes through, in order (see Serialiser): the entering
	// stages, the serialiser, the propagating stages, the exit.
	stages     hopStages // the impairments, which read HopParams
	serialiser Serialiser
	outage     outage

	// planned is the parameters as the configuration and its schedule
	// set them, without ApplyNow's changes (Network.Planned).
	planned HopParams
	// changes counts the changes to the parameters, so that a reader of
	// snapshots knows when to read them again.
	changes uint64

	stats HopStats
}

// serialises reports whether frames take time to leave a hop's serialiser
// with these parameters, and so may queue.
func (p *HopParams) serialises() bool { return p.Rate > 0 || p.PerFrame > 0 || p.Flap.active() }
