package emulator

import "time"

// Scheduled is a change that takes effect at At and, when For is set, is
// undone at At+For. Changes at t act before any frame event at t.
type Scheduled struct {
	At, For time.Duration
	Change  Change
}

// A Change is one kind of timed change: a hop parameter, an outage, a
// source switched on or off.
type Change interface {
	apply(n *Network, saved *savedState)
	revert(n *Network, saved *savedState)
	check(n *Network) error
}

// savedState is what a change must remember to undo itself.
type savedState struct {
	params HopParams
	on     bool
}

// SetHop sets the hop parameters named in Set to their values in Params.
// Reverting restores the values they had just before. A frame already being
// serialised or propagated keeps the times it was given; a smaller queue
// limit drops new arrivals until the backlog fits. When the rate becomes
// unlimited (0) with frames waiting, they leave as soon as the frame on the
// serialiser has been sent, in their order, and so do frames that arrive
// behind them until then.
type SetHop struct {
	Hop    int
	Set    HopField
	Params HopParams
}

func (c SetHop) apply(n *Network, saved *savedState) {
	h := &n.hops[c.Hop]
	saved.params = h.HopParams
	h.set(&c.Params, c.Set)
}

func (c SetHop) revert(n *Network, saved *savedState) { n.hops[c.Hop].set(&saved.params, c.Set) }

func (c SetHop) check(n *Network) error {
	if err := n.checkHop(c.Hop); err != nil {
		return err
	}
	if n.hops[c.Hop].bus != nil && c.Set&(FieldRate|FieldQueue|FieldOverhead) != 0 {
		return errorf("hop %q is a bus: its rate, queue and overhead are the bus's own", n.hops[c.Hop].name)
	}
	return c.Params.check()
}

// set changes the parameters named in fields and restarts what depended on
// the old values.
func (h *hop) set(src *HopParams, fields HopField) {
	h.HopParams.copyFields(src, fields)
	if fields&(FieldRate|FieldOverhead) != 0 {
		h.carry = 0 // the remainder was in units of the old rate
	}
	if fields&FieldLoss != 0 {
		h.lossEpoch++
	}
	if fields&FieldJitter != 0 {
		h.jitterEpoch++
	}
	if fields&FieldReorder != 0 {
		h.reorderEpoch++
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
	h := &n.hops[c.Hop]
	h.outage, h.holdLimit = c.Mode, c.HoldLimit
}

func (c Outage) revert(n *Network, _ *savedState) {
	h := &n.hops[c.Hop]
	h.outage = NoOutage
	for h.held.len() > 0 {
		n.forward(h.held.pop(), n.now)
	}
}

func (c Outage) check(n *Network) error { return n.checkHop(c.Hop) }

// SwitchTraffic switches a flow's source on or off. Switching off cancels
// its next frame; switching on starts it afresh (a CBR source sends at once,
// an ON/OFF source starts an ON period). Reverting restores the previous
// state. A source is off before its start time.
type SwitchTraffic struct {
	Flow int
	On   bool
}

func (c SwitchTraffic) apply(n *Network, saved *savedState) {
	saved.on = n.flows[c.Flow].on
	n.switchSource(c.Flow, c.On)
}

func (c SwitchTraffic) revert(n *Network, saved *savedState) { n.switchSource(c.Flow, saved.on) }

func (c SwitchTraffic) check(n *Network) error {
	if err := n.checkFlow(c.Flow); err != nil {
		return err
	}
	if n.flows[c.Flow].traffic == nil {
		return errorf("flow %q has no traffic to switch", n.flows[c.Flow].name)
	}
	return nil
}
