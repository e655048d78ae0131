package record

import (
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// Monitor shows a run in progress to other goroutines: the live API, the
// metrics, a status line. The executor publishes a Snapshot into it every
// PublishEvery of its clock; readers copy the latest whenever they like.
//
// Publishing takes no lock and, once the snapshots have grown to the
// run's size, allocates nothing: the executor fills one of a few slots
// that nobody is reading and makes it the latest with an atomic pointer
// swap. A reader pins the latest slot (an atomic count), copies it and
// unpins it; the publisher never writes a pinned slot, and when every
// slot but the latest is pinned it skips that publication (Skipped counts
// them) rather than wait. However slow its readers, the executor never
// waits for them. The zero Monitor is ready to use.
type Monitor struct {
	latest atomic.Pointer[slot]
	// published is the latest snapshot's Seq, apart from its slot: once
	// the slot stops being the latest it may be refilled at any moment.
	published atomic.Uint64
	slots     [monitorSlots]slot
	skipped   atomic.Uint64

	// The publisher's own state, touched only by the goroutine that
	// publishes.
	seq     uint64
	windows publisherWindows
}

// monitorSlots is how many snapshots a monitor keeps: the latest, one
// being filled, and room for readers still copying older ones.
const monitorSlots = 4

type slot struct {
	readers atomic.Int32
	snap    Snapshot
}

// PublishEvery is how often, in the run's time, the executor publishes.
const PublishEvery = 100 * time.Millisecond

// Publish lets fill write a snapshot, then makes it the latest. fill is
// given a snapshot published a few times before (or an empty one): it
// starts with Reset and reuses the slices, so that publishing allocates
// only while they grow. Publish is for one goroutine at a time: the
// executor's.
func (m *Monitor) Publish(fill func(*Snapshot)) {
	latest := m.latest.Load()
	for i := range m.slots {
		s := &m.slots[i]
		if s == latest || s.readers.Load() != 0 {
			continue
		}
		m.seq++
		s.snap.windows = &m.windows
		fill(&s.snap)
		s.snap.windows = nil
		s.snap.Seq = m.seq
		m.latest.Store(s)
		m.published.Store(m.seq)
		return
	}
	m.skipped.Add(1)
}

// Skipped is how many publications were skipped because readers held
// every other slot.
func (m *Monitor) Skipped() uint64 { return m.skipped.Load() }

// Read copies the latest snapshot into dst, reusing dst's slices, and
// reports whether there was one. It is safe from any goroutine.
func (m *Monitor) Read(dst *Snapshot) bool {
	for {
		s := m.latest.Load()
		if s == nil {
			return false
		}
		s.readers.Add(1)
		if m.latest.Load() != s {
			// It stopped being the latest before it was pinned: the
			// publisher may be writing it. Take the new latest.
			s.readers.Add(-1)
			continue
		}
		dst.copyFrom(&s.snap)
		s.readers.Add(-1)
		return true
	}
}

// Seq is the latest snapshot's Seq (0 before the first), to tell cheaply
// whether there is a new one to read.
func (m *Monitor) Seq() uint64 { return m.published.Load() }

// Snapshot returns a copy of the latest snapshot (an empty one before the
// first).
func (m *Monitor) Snapshot() Snapshot {
	var s Snapshot
	m.Read(&s)
	return s
}

// Snapshot is a run as of Time since it started.
type Snapshot struct {
	Seq    uint64        // which publication, from 1
	Time   time.Duration // the run's clock
	Wall   time.Time     // the wall clock when it was taken
	Flows  []FlowProgress
	Hops   []HopProgress
	Models []ModelProgress
	// Endpoints are the devices the rig reads and writes (none in virtual
	// time, where endpoints are played in software), in the bench's order.
	Endpoints []EndpointProgress
	Wire      []WireProgress
	Timing    TimingProgress
	Events    int // how many events the run has recorded (Executor.Event)

	windows *publisherWindows // while it is being filled
}

// FlowProgress is a flow so far. Lost frames are those a hop dropped;
// frames neither delivered nor lost are still on their way.
type FlowProgress struct {
	Name                               string
	Sent, Delivered, Corrupted         uint64 // Delivered includes Corrupted
	QueueDrops, LossDrops, OutageDrops uint64
	// EgressDrops are frames the engine delivered but the rig could not
	// hand to their device (disconnected, or a write error): not in
	// Delivered, nor in the delays.
	EgressDrops uint64
	Duplicates  uint64        // extra copies delivered
	Delay       DelayProgress // of every frame delivered so far; no quantiles
	// Recent is the delay of the frames delivered since the previous
	// snapshot: what a live plot shows. Its quantiles are as exact as
	// Delay's; its Max is the upper bound of the largest one's bucket.
	Recent DelayProgress
	// DelayAtMost[i] counts the delivered frames whose delay was at most
	// DelayBounds[i] (within emulator.QuantileRelError of the bound): the
	// buckets of a Prometheus histogram.
	DelayAtMost [len(DelayBounds)]uint64
	DelaySum    time.Duration // of every delivered frame
}

// Lost is how many frames the hops dropped, and the rig could not hand
// to their device.
func (f *FlowProgress) Lost() uint64 {
	return f.QueueDrops + f.LossDrops + f.OutageDrops + f.EgressDrops
}

// DelayBounds are the bucket bounds of the delay histograms the metrics
// export: from the 100 µs of a bench cable to the seconds of a held
// outage.
var DelayBounds = [...]time.Duration{
	100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond,
	10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

// DelayProgress describes some durations: how many, their quantiles (of
// the recent ones only) and their largest and mean.
type DelayProgress struct {
	Count         uint64
	P50, P99, Max time.Duration
	Mean          time.Duration
}

// HopProgress is what a hop holds now and how it is set.
type HopProgress struct {
	Name        string
	QueueBytes  int64 // waiting for the serialiser
	QueueFrames int
	HeldFrames  int // held by an outage in hold mode
	Outage      emulator.OutageMode
	Rate        emulator.Rate
	Delay       time.Duration
	// Loss is the long-run fraction of frames its loss model loses as set
	// now (emulator.LossModel.LossRate; 0 without one).
	Loss    float64
	Changes uint64 // to its parameters so far (emulator.HopState.Changes)
}

// EndpointProgress is a device endpoint so far: whether its device is
// there, which the executor knows, and what the device's driver counted.
type EndpointProgress struct {
	Name string
	// Away is whether the device is gone now (an open gap, waiting for it
	// to come back); AwaySince when it went.
	Away      bool
	AwaySince time.Duration
	Gaps      uint64 // times it went away
	// The driver's counts (drivers.Counts). The executor leaves them
	// zero: the driver keeps them in atomics of its own, which the live
	// server's host reads off the executor's thread (rig.Session's
	// CountEndpoints) before the snapshot crosses to the server.
	FramesIn, FramesOut, BytesIn, BytesOut uint64
	BadFrames, WriteErrors                 uint64
}

// ModelProgress is a model endpoint so far.
type ModelProgress struct {
	Endpoint                                 string
	Output                                   string  // its output of interest
	Value                                    float64 // the output now
	Ideal                                    float64 // the uncut model's output now
	Peak                                     float64 // largest |Ideal| so far
	MaxError                                 float64 // largest |Value − Ideal| so far
	Exchanges, Overruns, FramesOut, FramesIn uint64
	Sync                                     SyncProgress
	// Cut are the variables crossing the cut now: what the rig's part
	// last sent, then what it last took up (the first MaxCut of them).
	Cut  [MaxCut]CutValue
	NCut int
}

// MaxCut is how many of a cut's variables a snapshot shows.
const MaxCut = 8

// CutValue is a variable crossing a cut.
type CutValue struct {
	Name       string
	Value      float64
	ToHardware bool // sent by the rig's part, rather than taken up
}

// WireProgress is an endpoint speaking the rig wire protocol so far.
type WireProgress struct {
	Name                               string
	Messages, CRCErrors, Malformed     uint64
	Missed, Duplicates, Late, Restarts uint64
	Heard                              bool          // a heartbeat has come
	Fault, Safe                        bool          // the last heartbeat's flags
	ClockKnown                         bool          // a time exchange was answered
	OneWay                             time.Duration // the last message's one-way delay, once ClockKnown
}

// SyncProgress is a model's time supervisor now (paper 004); the zero
// value is a model without one.
type SyncProgress struct {
	Supervised bool
	OutOfSync  bool
	TDiff      time.Duration // wall clock less the model's time mapped to it
	SimTime    time.Duration // the model's simulated time
	Episodes   uint64        // stretches out of sync so far
	Skipped    uint64        // messages not sent while out of sync
}

// TimingProgress is how well a real clock is kept (zero in virtual time).
type TimingProgress struct {
	Real    bool
	Wakeups uint64
	// Release is how late frames were released to their devices, over the
	// run and (Recent) since the previous snapshot; Wake how late the
	// executor woke for its deadlines.
	Release, RecentRelease, Wake DelayProgress
	IngressDropped               uint64
	// Overloaded is whether the executor has run out of its share of the
	// CPU and rests (executor.LoadBudget): releases are late.
	Overloaded bool
}

// publisherWindows keeps, between publications, what follows the
// histograms from one to the next, so that a snapshot can describe the
// last interval on its own.
type publisherWindows struct {
	flows   []flowWindow
	release emulator.DelayWindow
}

type flowWindow struct {
	delay  emulator.DelayWindow
	atMost [len(DelayBounds)]uint64
}

// recent describes a window after a look.
func recent(w *emulator.DelayWindow) DelayProgress {
	if w.Count() == 0 {
		return DelayProgress{}
	}
	return DelayProgress{Count: w.Count(), P50: w.Quantile(0.5), P99: w.Quantile(0.99), Max: w.Max(), Mean: w.Mean()}
}

// overall describes every duration h holds; its quantiles would cost a
// walk of the whole histogram on the executor's thread, so they are left
// to the summary.
func overall(h *emulator.DelayHistogram) DelayProgress {
	return DelayProgress{Count: h.Count(), Max: h.Max(), Mean: h.Mean()}
}

// Reset starts filling the snapshot for the run's time t.
func (s *Snapshot) Reset(t time.Duration, wall time.Time) {
	s.Time, s.Wall = t, wall
	s.Flows, s.Hops, s.Models, s.Endpoints, s.Wire = s.Flows[:0], s.Hops[:0], s.Models[:0], s.Endpoints[:0], s.Wire[:0]
	s.Timing, s.Events = TimingProgress{}, 0
}

// AddFlow adds a flow's line from its counters.
func (s *Snapshot) AddFlow(name string, st *emulator.FlowStats) { s.AddHandedFlow(name, st, nil) }

// AddHandedFlow adds a flow's line whose delivered frames go to an egress
// of the rig: h (nil: none) moves the frames it could not hand over from
// delivered to EgressDrops, and has the delays of the others.
func (s *Snapshot) AddHandedFlow(name string, st *emulator.FlowStats, h *Handed) {
	i := len(s.Flows)
	s.Flows = append(s.Flows, FlowProgress{})
	f := &s.Flows[i]
	f.Name, f.Sent = name, st.Sent
	f.Delivered = st.Status[emulator.Delivered] + st.Status[emulator.Corrupted]
	f.Corrupted = st.Status[emulator.Corrupted]
	f.QueueDrops, f.LossDrops, f.OutageDrops = st.Status[emulator.QueueDrop], st.Status[emulator.LossDrop], st.Status[emulator.OutageDrop]
	f.Duplicates = st.Duplicates
	delay := &st.Delay
	if h != nil {
		f.EgressDrops = h.Dropped
		f.Delivered -= h.Dropped
		f.Corrupted -= h.Corrupted
		f.Duplicates -= h.Copies
		delay = &h.Delay
	}
	f.Delay, f.DelaySum = overall(delay), delay.Sum()
	if ws := s.windows; ws != nil {
		for len(ws.flows) <= i {
			ws.flows = append(ws.flows, flowWindow{})
		}
		w := &ws.flows[i]
		w.delay.Look(delay)
		w.delay.AddCountsAtMost(DelayBounds[:], w.atMost[:])
		f.Recent, f.DelayAtMost = recent(&w.delay), w.atMost
	}
}

// AddHop adds a hop's line.
func (s *Snapshot) AddHop(h emulator.HopState) {
	var loss float64
	if h.Params.Loss != nil {
		loss = h.Params.Loss.LossRate()
	}
	s.Hops = append(s.Hops, HopProgress{
		Name: h.Name, QueueBytes: h.QueueBytes, QueueFrames: h.QueueFrames, HeldFrames: h.HeldFrames,
		Outage: h.Outage, Rate: h.Params.Rate, Delay: h.Params.Delay, Loss: loss, Changes: h.Changes,
	})
}

// SetTiming describes a real clock: release and wake are the histograms
// of how late frames were released and the executor woke.
func (s *Snapshot) SetTiming(release, wake *emulator.DelayHistogram, wakeups, ingressDropped uint64) {
	s.Timing = TimingProgress{Real: true, Wakeups: wakeups, Release: overall(release), Wake: overall(wake), IngressDropped: ingressDropped}
	if s.windows != nil {
		s.windows.release.Look(release)
		s.Timing.RecentRelease = recent(&s.windows.release)
	}
}

// copyFrom makes s a copy of src, reusing s's slices.
func (s *Snapshot) copyFrom(src *Snapshot) {
	flows, hops, models, endpoints, wire := s.Flows, s.Hops, s.Models, s.Endpoints, s.Wire
	*s = *src
	s.windows = nil
	s.Flows = append(flows[:0], src.Flows...)
	s.Hops = append(hops[:0], src.Hops...)
	s.Models = append(models[:0], src.Models...)
	s.Endpoints = append(endpoints[:0], src.Endpoints...)
	s.Wire = append(wire[:0], src.Wire...)
}
