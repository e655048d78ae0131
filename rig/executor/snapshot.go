package executor

import (
	"time"

	"github.com/hilrig/hilrig/rig/record"
)

// fillSnapshot writes the run's state now into a snapshot of the monitor.
// It runs on the executor's goroutine every record.PublishEvery and
// allocates nothing once the snapshot's slices have grown.
func (x *Executor) fillSnapshot(s *record.Snapshot) { x.snapshotAt(s, x.clock.Now()) }

// snapshotAt writes the run's state into s as of now.
func (x *Executor) snapshotAt(s *record.Snapshot, now time.Duration) {
	var wall time.Time
	if x.real {
		wall = time.Now()
	}
	s.Reset(now, wall)
	for i, name := range x.flowNames {
		var h *record.Handed
		if x.egress[i] != nil {
			h = &x.handed[i]
		}
		s.AddHandedFlow(name, x.net.FlowStats(i), h)
	}
	for i := range x.net.NumHops() {
		s.AddHop(x.net.HopNow(i))
	}
	for _, m := range x.models {
		mp := m.progress()
		mp.Sync = m.syncProgress(s.Time)
		s.Models = append(s.Models, mp)
	}
	for i := range x.endpoints {
		e := &x.endpoints[i]
		ep := record.EndpointProgress{Name: e.name, Gaps: uint64(len(e.gaps))}
		if n := len(e.gaps); n > 0 && e.gaps[n-1][1] < 0 {
			ep.Away, ep.AwaySince = true, e.gaps[n-1][0]
		}
		s.Endpoints = append(s.Endpoints, ep)
	}
	for _, l := range x.wires {
		s.Wire = append(s.Wire, l.progress())
	}
	if x.real {
		var dropped uint64
		if x.in != nil {
			dropped = x.in.Dropped()
		}
		s.SetTiming(&x.releaseLate, &x.wakeLate, x.wakeups, dropped)
		s.Timing.Overloaded = x.load.overloading()
	}
	s.Events = len(x.events)
}

// Ingress is where the endpoints report what they read.
func (x *Executor) Ingress() *Ingress { return x.in }

// Phases is the phase recorder, if the run has one.
func (x *Executor) Phases() *record.Phases { return x.phases }

// End is when the run stops.
func (x *Executor) End() time.Duration { return x.end }

// syncProgress is the model's supervisor now, if it has one: t_diff as
// the supervisor computes it between steps.
func (m *Model) syncProgress(now time.Duration) record.SyncProgress {
	d := m.wait
	if d == nil || d.sup == nil {
		return record.SyncProgress{}
	}
	h := m.h()
	return record.SyncProgress{
		Supervised: true, OutOfSync: d.sup.Flagged(), TDiff: now - d.start - h, SimTime: h,
		Episodes: uint64(len(d.sup.Episodes())), Skipped: d.skipped + d.skippedDisrupted,
	}
}
