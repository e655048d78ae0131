package emulator

import "time"

// A hop is an ordered list of the parts a frame goes through:
//
//  1. its entering stages (stage.go: loss, duplicate, corrupt), which may
//     lose, copy or corrupt it;
//  2. its Serialiser, which sends frames one at a time and keeps those
//     that wait: a point-to-point link (link.go: rate, flap, overhead,
//     per_frame, queue) or a shared bus (bus.go);
//  3. its propagating stages (reorder, a recorded delay, jitter), which
//     decide its delay;
//  4. its exit (exit.go): a flow's frames leave in order unless the hop
//     allows reordering, and an outage drops or holds them.
//
// The network moves a frame from one part to the next (network.go), so a
// part holds no routing code.

// A Serialiser sends a hop's frames, one at a time, between its entering
// and its propagating stages, and keeps the frames that wait for it. It
// tells the network, through the host it was made with, when a frame has
// been sent (it then propagates), when one is dropped, and when it wants
// to be woken. A hop's serialiser is a link (link.go) or a bus (bus.go).
type Serialiser interface {
	// Enter takes frame f, which passed the entering stages, at t.
	Enter(f *Frame, t time.Duration)
	// Wake moves on at t, an instant the serialiser asked to be woken at.
	Wake(t time.Duration)
	// Changed follows a change, at now, of the hop's parameters in fields.
	Changed(fields HopField, now time.Duration)
	// Holding is what waits now (not counting a frame being sent), and
	// whether a frame is being sent.
	Holding() (bytes int64, frames int, sending bool)
	// Peak is the most that waited at once.
	Peak() (bytes int64, frames int)
	// Drain hands every frame it holds, being sent or waiting, to put.
	Drain(put func(*Frame))
}

// serialiserHost is what a serialiser tells the network: a frame sent (its
// last bit on the far side) at t, a frame dropped, an instant to be woken
// at.
type serialiserHost interface {
	frameSent(f *Frame, t time.Duration)
	frameDropped(f *Frame, why Status, t time.Duration)
	wakeAt(t time.Duration)
}

// hopPort is how a hop's serialiser reaches the network. The ports of a
// network are in one array, so that a host is a pointer and making one
// allocates nothing per hop.
type hopPort struct {
	n   *Network
	hop int32
}

// sent: the propagating stages and the exit apply.
func (p *hopPort) frameSent(f *Frame, t time.Duration) { p.n.propagate(f, &p.n.hops[p.hop], t) }

func (p *hopPort) frameDropped(f *Frame, why Status, t time.Duration) { p.n.drop(f, why, t) }

func (p *hopPort) wakeAt(t time.Duration) {
	p.n.events.push(t, evSerialiser, int(p.hop), 0)
}

// buildSerialisers gives every hop its serialiser: the bus it is
// configured as, or a link that serialises at its rate.
func (n *Network) buildSerialisers(cfg Config) (errs []error) {
	ports, links := make([]hopPort, len(n.hops)), make([]link, len(n.hops))
	for i := range n.hops {
		h := &n.hops[i]
		ports[i] = hopPort{n, int32(i)}
		if cfg.Hops[i].Bus == nil {
			links[i] = link{params: &h.HopParams, host: &ports[i]}
			h.serialiser = &links[i]
			continue
		}
		b, err := n.newHopBus(cfg, i, &ports[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		h.serialiser = b
	}
	return errs
}
