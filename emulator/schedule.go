package emulator

import (
	"fmt"
	"math/bits"
	"time"
)

// Scheduled is a change that takes effect at At and, when For is set, is
// undone at At+For. Changes at t act before any frame event at t.
//
// Changes due at the same instant act in the order they would if every
// occurrence were written out in the list in place of its entry: an
// entry's occurrences one after the other, a block's (see WithPrevious)
// occurrence by occurrence, each with its parts in list order, and an
// undo right after its change. Sources' starts come after all of them.
type Scheduled struct {
	At, For time.Duration
	Change  Change
	// Every, when positive, makes the change recur: it takes effect Count
	// times in all, at At + k·Every for k = 0, 1, …, and For must not
	// exceed Every. Only the next occurrence is queued, so neither memory
	// nor the time to build a network grows with how often it recurs.
	Every time.Duration
	Count int64
	// WithPrevious makes the entry a part of the previous entry's
	// occurrences (with the same Every and Count): a profile's entry that
	// changes several things, or ramps, recurs as one block.
	WithPrevious bool
}

// occurrences is how many times s takes effect.
func (s *Scheduled) occurrences() int64 {
	if s.Every > 0 {
		return s.Count
	}
	return 1
}

// scheduleEntry is a Scheduled as the network runs it: its changes' ranks
// among the control events, and how far it has got.
type scheduleEntry struct {
	Scheduled
	saved   savedState
	first   uint64 // the rank of its first occurrence's change (its undo's is one more)
	stride  uint64 // how far the ranks move from one occurrence to the next
	applied int64  // occurrences that took effect so far
}

// MaxScheduledChanges is the most changes a schedule may make in all,
// counting each occurrence and each undo: their ranks among the control
// events stay inside the event queue's control class.
const MaxScheduledChanges = 1 << 62

// buildSchedule checks the schedule and ranks its changes as they would be
// ranked written out in full (see Scheduled); it returns the rank that
// comes after every change's.
func (n *Network) buildSchedule(schedule []Scheduled) (next uint64, errs []error) {
	fail := func(s *Scheduled, format string, args ...any) {
		errs = append(errs, fmt.Errorf("schedule at %v: %w", s.At, fmt.Errorf(format, args...)))
	}
	for i, s := range schedule {
		if err := n.checkScheduled(&s); err != nil {
			fail(&s, "%w", err)
		} else if s.WithPrevious && (i == 0 || schedule[i-1].Every != s.Every || schedule[i-1].occurrences() != s.occurrences()) {
			fail(&s, "a part of the previous entry's occurrences needs its period and count")
		}
		n.schedule = append(n.schedule, scheduleEntry{Scheduled: s})
	}
	if len(errs) > 0 {
		return 0, errs
	}
	for b := 0; b < len(n.schedule); {
		e := b + 1
		for e < len(n.schedule) && n.schedule[e].WithPrevious {
			e++
		}
		var perOccurrence uint64
		for i := b; i < e; i++ {
			s := &n.schedule[i]
			s.first = next + perOccurrence
			perOccurrence++
			if s.For > 0 {
				perOccurrence++ // its undo
			}
		}
		hi, all := bits.Mul64(perOccurrence, uint64(n.schedule[b].occurrences()))
		if hi != 0 || all > MaxScheduledChanges-next {
			return 0, []error{fmt.Errorf("schedule at %v: with the entries before it, the schedule makes more than %d changes, every occurrence counted", n.schedule[b].At, uint64(MaxScheduledChanges))}
		}
		for i := b; i < e; i++ {
			n.schedule[i].stride = perOccurrence
		}
		next += all
		b = e
	}
	return next, nil
}

// checkScheduled reports what is wrong with one schedule entry.
func (n *Network) checkScheduled(s *Scheduled) error {
	if err := s.Change.check(n); err != nil {
		return err
	}
	switch {
	case s.At < 0 || s.For < 0 || s.Every < 0:
		return errorf("negative time")
	case s.At > MaxDuration || s.For > MaxDuration || s.Every > MaxDuration:
		return errorf("a time past the longest duration, %v", MaxDuration)
	case s.Every == 0 && s.Count > 1:
		return errorf("%d occurrences need a period", s.Count)
	case s.Every > 0 && s.Count < 1:
		return errorf("a period needs at least one occurrence")
	case s.Every > 0 && s.For > s.Every:
		return errorf("lasts %v, longer than its period %v", s.For, s.Every)
	case s.Every > 0 && !withinTime(s.At, s.Every, s.Count-1):
		return errorf("occurrence %d starts past the longest duration, %v", s.Count, MaxDuration)
	}
	return nil
}

// withinTime reports whether t + k·every is at most MaxDuration, for t,
// every, k ≥ 0. (An occurrence's start within it, its undo, at most
// MaxDuration later, still fits an int64.)
func withinTime(t, every time.Duration, k int64) bool {
	hi, lo := bits.Mul64(uint64(every), uint64(k))
	return hi == 0 && t <= MaxDuration && lo <= uint64(MaxDuration-t)
}

// queueSchedule queues each entry's first occurrence.
func (n *Network) queueSchedule() {
	for i := range n.schedule {
		s := &n.schedule[i]
		n.events.pushControl(s.At, evApply, i, s.first)
	}
}

// applyScheduled makes entry i's next occurrence take effect and queues
// its undo and the occurrence after it.
func (n *Network) applyScheduled(i int) {
	s := &n.schedule[i]
	k := s.applied
	s.applied++
	start, rank := s.At+time.Duration(k)*s.Every, s.first+uint64(k)*s.stride
	s.Change.apply(n, &s.saved)
	n.plan(i, true)
	if s.For > 0 {
		n.events.pushControl(start+s.For, evRevert, i, rank+1)
	}
	if s.applied < s.occurrences() {
		n.events.pushControl(start+s.Every, evApply, i, rank+s.stride)
	}
}

// plan follows schedule entry i, applied or undone, in its hop's planned
// parameters, when the configuration gave it (ApplyNow's changes are not
// the profile's).
func (n *Network) plan(i int, apply bool) {
	if i >= len(n.plannedSaved) {
		return
	}
	c, ok := n.schedule[i].Change.(SetHop)
	if !ok {
		return
	}
	h := &n.hops[c.Hop]
	if apply {
		n.plannedSaved[i] = h.planned
		h.planned.copyFields(&c.Params, c.Set)
	} else {
		h.planned.copyFields(&n.plannedSaved[i], c.Set)
	}
}

// Planned returns hop i's parameters as the configuration and its
// schedule set them now: what they would be had ApplyNow changed none.
// Resetting a hop to them (ApplyNow of a SetHop with them) undoes the
// changes made by hand.
func (n *Network) Planned(i int) HopParams { return n.hops[i].planned }

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
	h.set(&c.Params, c.Set, n.now)
}

func (c SetHop) revert(n *Network, saved *savedState) { n.hops[c.Hop].set(&saved.params, c.Set, n.now) }

func (c SetHop) check(n *Network) error {
	if err := n.checkHop(c.Hop); err != nil {
		return err
	}
	if _, isBus := n.hops[c.Hop].serialiser.(*bus); isBus && c.Set&busOwnFields != 0 {
		return errorf("hop %q is a bus: its rate, queue, overhead, time per frame and flap are the bus's own", n.hops[c.Hop].name)
	}
	return c.Params.check()
}

// set changes the parameters named in fields at now and restarts what
// depended on the old values.
func (h *hop) set(src *HopParams, fields HopField, now time.Duration) {
	h.HopParams.copyFields(src, fields)
	h.changes++
	h.stages.update(&h.HopParams, fields)
	h.serialiser.Changed(fields, now)
}

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
