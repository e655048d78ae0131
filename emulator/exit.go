package emulator

import "time"

// A hop's exit, its last part: a frame leaves when its delay has passed,
// never before the frame of its flow ahead of it unless the hop allows
// reordering, and an outage of the hop's output drops or holds it there.

// OutageMode is what a hop does with frames that would leave it during an
// outage.
type OutageMode uint8

// Outage modes.
const (
	NoOutage OutageMode = iota
	OutageDropMode
	OutageHoldMode
)

// outage is a hop's output as the schedule's outages leave it.
type outage struct {
	mode      OutageMode
	holdLimit Limit
	held      fifo // frames that left during a hold outage
}

// leaveAt has f, which left h's serialiser at t, leave the hop at exit:
// unless the hop allows reordering, not before the previous frame of its
// flow did (jitter, or a delay shortened by the schedule, cannot reorder a
// flow). A frame leaving its last hop onto an egress line with a lead is
// released that much earlier.
func (n *Network) leaveAt(f *Frame, h *hop, t, exit time.Duration) {
	fl := &n.flows[f.Flow]
	if h.Reorder.Mode != ReorderAllowed {
		at := fl.hopAt(f.pos)
		exit = max(exit, at.lastExit)
		at.lastExit = exit
	}
	f.due = exit
	release := exit
	if fl.hasLead && f.pos == int(fl.routeLen)-1 {
		// Start the egress line early by its transmission time, but never
		// before the frame got here, nor before the frame ahead of it.
		extra := fl.extraAt(f.pos)
		release = max(t, exit-fl.lead(f.Size), extra.lastRelease)
		extra.lastRelease = release
	}
	n.events.push(release, evExit, 0, f.id)
}

// leaveNow has f leave at t, ahead of anything: a stage's LeaveNow.
func (n *Network) leaveNow(f *Frame, t time.Duration) {
	f.due = t
	n.events.push(t, evExit, 0, f.id)
}

// exit is the moment f would leave its hop; an outage stops it here.
func (n *Network) exit(f *Frame) {
	o := &n.hops[f.Hop].outage
	switch o.mode {
	case OutageDropMode:
		n.drop(f, OutageDrop, n.now)
	case OutageHoldMode:
		if !o.holdLimit.Admits(o.held.bytes, int64(o.held.len()), f.Size) {
			n.drop(f, OutageDrop, n.now)
			return
		}
		o.held.push(f)
	default:
		n.forward(f, n.now)
	}
}

// Outage takes a hop's output down. Mode OutageDropMode drops every frame
// that would leave the hop while it lasts; OutageHoldMode holds them and,
// when the outage ends, releases them all at that instant in their original
// order. Held frames have left the serialiser, so the queue limit does not
// apply to them; HoldLimit, when set, bounds the hold buffer and frames over
// it are dropped as outage_drop. An outage without a duration lasts until
// the end of the run.
type Outage struct {
	Hop       int
	Mode      OutageMode
	HoldLimit Limit
}

func (c Outage) apply(n *Network, _ *savedState) {
	o := &n.hops[c.Hop].outage
	o.mode, o.holdLimit = c.Mode, c.HoldLimit
}

func (c Outage) revert(n *Network, _ *savedState) {
	o := &n.hops[c.Hop].outage
	o.mode = NoOutage
	for o.held.len() > 0 {
		n.forward(o.held.pop(), n.now)
	}
}

func (c Outage) check(n *Network) error { return n.checkHop(c.Hop) }
