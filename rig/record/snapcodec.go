package record

import (
	"encoding/binary"
	"errors"
	"math"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// A snapshot crosses from the rig's process to the process that serves it
// live (rig/web) in a binary form of its own: written into a buffer the
// rig keeps, so that publishing allocates nothing there, and read back
// whole. Both ends are the same binary, so the form has no version; a
// round-trip test of a snapshot with every field set keeps it complete.

// AppendBinary appends the snapshot's binary form to b.
func (s *Snapshot) AppendBinary(b []byte) ([]byte, error) {
	var e snapEncoder
	e.b = b
	e.uint(s.Seq)
	e.dur(s.Time)
	e.int(s.Wall.UnixNano())
	e.bool(!s.Wall.IsZero())
	e.uint(uint64(len(s.Flows)))
	for i := range s.Flows {
		f := &s.Flows[i]
		e.str(f.Name)
		e.uint(f.Sent)
		e.uint(f.Delivered)
		e.uint(f.Corrupted)
		e.uint(f.QueueDrops)
		e.uint(f.LossDrops)
		e.uint(f.OutageDrops)
		e.uint(f.EgressDrops)
		e.uint(f.Duplicates)
		e.delay(&f.Delay)
		e.delay(&f.Recent)
		for _, n := range f.DelayAtMost {
			e.uint(n)
		}
		e.dur(f.DelaySum)
	}
	e.uint(uint64(len(s.Hops)))
	for i := range s.Hops {
		h := &s.Hops[i]
		e.str(h.Name)
		e.int(h.QueueBytes)
		e.int(int64(h.QueueFrames))
		e.int(int64(h.HeldFrames))
		e.uint(uint64(h.Outage))
		e.int(int64(h.Rate))
		e.dur(h.Delay)
		e.float(h.Loss)
		e.uint(h.Changes)
	}
	e.uint(uint64(len(s.Models)))
	for i := range s.Models {
		m := &s.Models[i]
		e.str(m.Endpoint)
		e.str(m.Output)
		e.float(m.Value)
		e.float(m.Ideal)
		e.float(m.Peak)
		e.float(m.MaxError)
		e.uint(m.Exchanges)
		e.uint(m.Overruns)
		e.uint(m.FramesOut)
		e.uint(m.FramesIn)
		e.bool(m.Sync.Supervised)
		e.bool(m.Sync.OutOfSync)
		e.dur(m.Sync.TDiff)
		e.dur(m.Sync.SimTime)
		e.uint(m.Sync.Episodes)
		e.uint(m.Sync.Skipped)
		e.int(int64(m.NCut))
		for j := range m.Cut {
			c := &m.Cut[j]
			e.str(c.Name)
			e.float(c.Value)
			e.bool(c.ToHardware)
		}
	}
	e.uint(uint64(len(s.Endpoints)))
	for i := range s.Endpoints {
		p := &s.Endpoints[i]
		e.str(p.Name)
		e.bool(p.Away)
		e.dur(p.AwaySince)
		e.uint(p.Gaps)
		e.uint(p.FramesIn)
		e.uint(p.FramesOut)
		e.uint(p.BytesIn)
		e.uint(p.BytesOut)
		e.uint(p.BadFrames)
		e.uint(p.WriteErrors)
	}
	e.uint(uint64(len(s.Wire)))
	for i := range s.Wire {
		w := &s.Wire[i]
		e.str(w.Name)
		e.uint(w.Messages)
		e.uint(w.CRCErrors)
		e.uint(w.Malformed)
		e.uint(w.Missed)
		e.uint(w.Duplicates)
		e.uint(w.Late)
		e.uint(w.Restarts)
		e.bool(w.Heard)
		e.bool(w.Fault)
		e.bool(w.Safe)
		e.bool(w.ClockKnown)
		e.dur(w.OneWay)
	}
	t := &s.Timing
	e.bool(t.Real)
	e.uint(t.Wakeups)
	e.delay(&t.Release)
	e.delay(&t.RecentRelease)
	e.delay(&t.Wake)
	e.uint(t.IngressDropped)
	e.bool(t.Overloaded)
	e.int(int64(s.Events))
	return e.b, nil
}

// UnmarshalBinary sets the snapshot from its binary form, reusing its
// slices.
func (s *Snapshot) UnmarshalBinary(b []byte) error {
	d := snapDecoder{b: b}
	s.Seq = d.uint()
	s.Time = d.dur()
	wall := d.int()
	if d.bool() {
		s.Wall = time.Unix(0, wall)
	} else {
		s.Wall = time.Time{}
	}
	s.Flows = resize(s.Flows, d.count())
	for i := range s.Flows {
		f := &s.Flows[i]
		f.Name = d.str()
		f.Sent = d.uint()
		f.Delivered = d.uint()
		f.Corrupted = d.uint()
		f.QueueDrops = d.uint()
		f.LossDrops = d.uint()
		f.OutageDrops = d.uint()
		f.EgressDrops = d.uint()
		f.Duplicates = d.uint()
		d.delay(&f.Delay)
		d.delay(&f.Recent)
		for j := range f.DelayAtMost {
			f.DelayAtMost[j] = d.uint()
		}
		f.DelaySum = d.dur()
	}
	s.Hops = resize(s.Hops, d.count())
	for i := range s.Hops {
		h := &s.Hops[i]
		h.Name = d.str()
		h.QueueBytes = d.int()
		h.QueueFrames = int(d.int())
		h.HeldFrames = int(d.int())
		h.Outage = emulator.OutageMode(d.uint())
		h.Rate = emulator.Rate(d.int())
		h.Delay = d.dur()
		h.Loss = d.float()
		h.Changes = d.uint()
	}
	s.Models = resize(s.Models, d.count())
	for i := range s.Models {
		m := &s.Models[i]
		m.Endpoint = d.str()
		m.Output = d.str()
		m.Value = d.float()
		m.Ideal = d.float()
		m.Peak = d.float()
		m.MaxError = d.float()
		m.Exchanges = d.uint()
		m.Overruns = d.uint()
		m.FramesOut = d.uint()
		m.FramesIn = d.uint()
		m.Sync.Supervised = d.bool()
		m.Sync.OutOfSync = d.bool()
		m.Sync.TDiff = d.dur()
		m.Sync.SimTime = d.dur()
		m.Sync.Episodes = d.uint()
		m.Sync.Skipped = d.uint()
		m.NCut = int(d.int())
		if m.NCut < 0 || m.NCut > MaxCut {
			d.fail()
		}
		for j := range m.Cut {
			c := &m.Cut[j]
			c.Name = d.str()
			c.Value = d.float()
			c.ToHardware = d.bool()
		}
	}
	s.Endpoints = resize(s.Endpoints, d.count())
	for i := range s.Endpoints {
		p := &s.Endpoints[i]
		p.Name = d.str()
		p.Away = d.bool()
		p.AwaySince = d.dur()
		p.Gaps = d.uint()
		p.FramesIn = d.uint()
		p.FramesOut = d.uint()
		p.BytesIn = d.uint()
		p.BytesOut = d.uint()
		p.BadFrames = d.uint()
		p.WriteErrors = d.uint()
	}
	s.Wire = resize(s.Wire, d.count())
	for i := range s.Wire {
		w := &s.Wire[i]
		w.Name = d.str()
		w.Messages = d.uint()
		w.CRCErrors = d.uint()
		w.Malformed = d.uint()
		w.Missed = d.uint()
		w.Duplicates = d.uint()
		w.Late = d.uint()
		w.Restarts = d.uint()
		w.Heard = d.bool()
		w.Fault = d.bool()
		w.Safe = d.bool()
		w.ClockKnown = d.bool()
		w.OneWay = d.dur()
	}
	t := &s.Timing
	t.Real = d.bool()
	t.Wakeups = d.uint()
	d.delay(&t.Release)
	d.delay(&t.RecentRelease)
	d.delay(&t.Wake)
	t.IngressDropped = d.uint()
	t.Overloaded = d.bool()
	s.Events = int(d.int())
	s.windows = nil
	switch {
	case d.err != nil:
		return d.err
	case len(d.b) > 0:
		return errSnapshotForm
	}
	return nil
}

var errSnapshotForm = errors.New("not a snapshot's binary form")

type snapEncoder struct{ b []byte }

func (e *snapEncoder) uint(v uint64)       { e.b = binary.AppendUvarint(e.b, v) }
func (e *snapEncoder) int(v int64)         { e.b = binary.AppendVarint(e.b, v) }
func (e *snapEncoder) dur(d time.Duration) { e.int(int64(d)) }
func (e *snapEncoder) float(v float64) {
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}
func (e *snapEncoder) str(s string) { e.uint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *snapEncoder) delay(p *DelayProgress) {
	e.uint(p.Count)
	e.dur(p.P50)
	e.dur(p.P99)
	e.dur(p.Max)
	e.dur(p.Mean)
}
func (e *snapEncoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// snapDecoder reads a binary form; after its first error it reads zeros.
type snapDecoder struct {
	b   []byte
	err error
}

func (d *snapDecoder) fail() {
	if d.err == nil {
		d.err = errSnapshotForm
	}
	d.b = nil
}

func (d *snapDecoder) uint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *snapDecoder) int() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *snapDecoder) dur() time.Duration { return time.Duration(d.int()) }

func (d *snapDecoder) float() float64 {
	if len(d.b) < 8 {
		d.fail()
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

func (d *snapDecoder) bool() bool {
	if len(d.b) < 1 || d.b[0] > 1 {
		d.fail()
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func (d *snapDecoder) str() string {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// count is a number of elements to follow: no more than the bytes left,
// each taking at least one.
func (d *snapDecoder) count() int {
	n := d.uint()
	if n > uint64(len(d.b)) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *snapDecoder) delay(p *DelayProgress) {
	p.Count, p.P50, p.P99, p.Max, p.Mean = d.uint(), d.dur(), d.dur(), d.dur(), d.dur()
}

// resize returns s with n elements, reusing its array.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
