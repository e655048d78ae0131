package emulator

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"
)

// Config describes a network to build. Hops and flows are referred to by
// their index; names are used for random streams and reports.
type Config struct {
	Seed     uint64
	Hops     []HopConfig
	Flows    []FlowConfig
	Schedule []Scheduled
}

// FlowConfig is a flow as built: a route of hop indices and, for virtual
// time, an optional synthetic source. A flow without Traffic carries only
// frames given to Network.Inject.
type FlowConfig struct {
	Name    string
	Route   []int
	Traffic Traffic
	// Lead, when set, is how long the flow's egress line takes to carry a
	// frame of the given size (a UART at its baud rate). The frame then
	// leaves the network that much before it is due, so that its last byte
	// is on the far side of the line when the profile says it arrives.
	Lead func(size int) time.Duration
}

// An Observer learns the fate of every frame: delivered, dropped, or still
// in flight when the run finishes. The frame is valid only during the call.
type Observer interface {
	Finished(f *Frame)
}

// Network is the impairment engine. It is not safe for concurrent use.
type Network struct {
	now      time.Duration
	seed     uint64
	hops     []hop
	flows    []flow
	schedule []scheduleEntry
	events   eventQueue
	pool     framePool
	observer Observer
	finished bool
	// liveRank is the rank of the next change made while the network runs
	// (ApplyNow): after every rank the configuration gave.
	liveRank uint64
	// plannedSaved is what each of the configuration's schedule entries
	// (the first len(plannedSaved) of schedule) undoes in its hop's
	// planned parameters (see Planned).
	plannedSaved []HopParams
}

// flow is a flow's state. A run may have tens of thousands, each touched at
// random as its frames come and go, past the caches, so what a frame's
// work reads of its flow is in few cache lines: the first holds what
// making, forwarding and delivering it read, its state at the first two
// hops of its route among them; the second its source's state, which only
// making a frame reads; the third the counters a delivered frame adds to
// (FlowStats keeps those at its start), and the rest what a frame never
// reads. The padding makes a flow a whole number of lines, so that in the
// large allocation of a run's many flows each starts on one (issues 10 and
// 21: with 10 000 flows, a frame read eleven lines of its flow's state
// scattered over its flow, its route state, its source and its delay
// histogram, which took 2.4 times the time of 10 flows for the same
// frames).
// (The padding is before the last fields: a zero-sized last field would
// take 8 bytes.)
type flow struct {
	flowFields
	_ [(cacheLine - (unsafe.Sizeof(flowFields{})+unsafe.Sizeof(flowCold{}))%cacheLine) % cacheLine]byte
	flowCold
}

// cacheLine is the size of a cache line on the machines hilrig runs on
// (amd64 and arm64), in bytes.
const cacheLine = 64

type flowFields struct {
	// What every frame reads: its first cache line.
	pending uint64 // the order of the event of the source's next frame; 0: none
	// nextSeq is the next frame's sequence number, and so the number of
	// frames sent: FlowStats.Sent, which sentStats brings up to date.
	nextSeq  uint64
	size     int32 // the source's frame size: the same for every frame
	routeLen int32
	on       bool
	hasLead  bool
	near     [nearHops]flowHop // the flow's own state at its route's first positions
	// The source's state, which making a frame reads: the second.
	rng         Stream
	poissonMean float64 // a Poisson source's mean gap, in ns: drawn here rather than through src
	stop        time.Duration
	src         source
	// Counted as a frame finishes: the third (the fourth too for frames
	// not delivered).
	stats FlowStats
}

// flowCold is what a frame never reads of its flow, or only past its
// route's first positions.
type flowCold struct {
	far     []flowHop      // the flow's own state at positions nearHops on
	extra   []flowHopExtra // by position; nil until a lead or a stage needs it
	lead    func(size int) time.Duration
	name    string
	route   []int
	traffic Traffic
}

// nearHops is how many route positions a flow keeps its state for in its
// first cache line: most routes in profiles have one or two hops.
const nearHops = 2

// flowHop is a flow's own state at one position of its route, what a
// frame reads there.
type flowHop struct {
	lastExit   time.Duration // frames of a flow leave a hop in order
	hop        int32
	occurrence int32 // how many times the route crossed this hop before
}

// flowHopExtra is the rest of a flow's state at a position of its route,
// which only flows with a lead or hops that impair need.
type flowHopExtra struct {
	lastRelease time.Duration // frames are released in order, with a lead
	stages      []FlowState   // by stage, made when the hop first impairs the flow
}

// hopAt returns the flow's state at route position pos.
func (fl *flow) hopAt(pos int) *flowHop {
	if pos < nearHops {
		return &fl.near[pos]
	}
	return &fl.far[pos-nearHops]
}

// extraAt returns the rest of the flow's state at route position pos,
// making it for the whole route when first needed.
func (fl *flow) extraAt(pos int) *flowHopExtra {
	if fl.extra == nil {
		fl.extra = make([]flowHopExtra, fl.routeLen)
	}
	return &fl.extra[pos]
}

// sentStats returns the flow's counters, Sent brought up to date.
func (fl *flow) sentStats() *FlowStats {
	fl.stats.Sent = fl.nextSeq
	return &fl.stats
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// checkIndexable refuses a configuration whose hops, flows or schedule
// entries an event could not name (see event.ref).
func checkIndexable(hops, flows, entries int) error {
	for _, c := range []struct {
		what string
		n    int
	}{{"hops", hops}, {"flows", flows}, {"schedule entries", entries}} {
		if c.n > maxIndexed {
			return errorf("%d %s: at most %d", c.n, c.what, maxIndexed)
		}
	}
	return nil
}

// New builds a network. obs may be nil.
func New(cfg Config, obs Observer) (*Network, error) {
	// Sized at once: a run may have tens of thousands of flows, and
	// growing the slice by appending would allocate twice what it keeps.
	if err := checkIndexable(len(cfg.Hops), len(cfg.Flows), len(cfg.Schedule)); err != nil {
		return nil, err
	}
	n := &Network{seed: cfg.Seed, observer: obs, hops: make([]hop, 0, len(cfg.Hops)), flows: make([]flow, 0, len(cfg.Flows))}
	var errs []error
	for i := range cfg.Hops {
		hc := &cfg.Hops[i] // a copy would escape to the heap: the stages check it through an interface
		if err := hc.check(); err != nil {
			errs = append(errs, fmt.Errorf("hop %q: %w", hc.Name, err))
		}
		n.hops = append(n.hops, hop{name: hc.Name, HopParams: hc.HopParams, planned: hc.HopParams})
	}
	initStages(n.hops)
	crossed := make([]int32, len(n.hops)) // by hop, how often the route so far crossed it
	for _, fc := range cfg.Flows {
		n.flows = append(n.flows, flow{})
		f := &n.flows[len(n.flows)-1]
		f.name, f.route, f.traffic, f.lead, f.hasLead = fc.Name, slices.Clone(fc.Route), fc.Traffic, fc.Lead, fc.Lead != nil
		if len(f.route) == 0 {
			errs = append(errs, errorf("flow %q: empty route", fc.Name))
		}
		if len(f.route) > nearHops {
			f.far = make([]flowHop, len(f.route)-nearHops)
		}
		for _, h := range f.route {
			if h < 0 || h >= len(n.hops) {
				errs = append(errs, errorf("flow %q: route names hop %d of %d", fc.Name, h, len(n.hops)))
				continue
			}
			*f.hopAt(int(f.routeLen)) = flowHop{hop: int32(h), occurrence: crossed[h]}
			f.routeLen++
			crossed[h]++
		}
		for pos := range f.routeLen {
			crossed[f.hopAt(int(pos)).hop] = 0
		}
		if f.hasLead {
			f.extraAt(0)
		}
		if fc.Traffic != nil {
			f.src = fc.Traffic.newSource()
			if p, ok := f.src.(*poissonSource); ok {
				f.poissonMean = p.mean
			}
			if size := f.src.frameSize(); size <= 0 || size > MaxFrameSize {
				errs = append(errs, errorf("flow %q: frame size %d out of range", fc.Name, size))
			} else {
				f.size = int32(size)
			}
			f.rng = *NewStream(cfg.Seed, "flow", fc.Name, "traffic")
		}
	}
	errs = append(errs, n.buildSerialisers(cfg)...)
	startRank, scheduleErrs := n.buildSchedule(cfg.Schedule)
	n.plannedSaved = make([]HopParams, len(cfg.Schedule))
	if err := errors.Join(append(errs, scheduleErrs...)...); err != nil {
		return nil, err
	}
	n.queueSchedule()
	sources := 0
	for _, fc := range cfg.Flows {
		if fc.Traffic != nil {
			sources++
		}
	}
	n.events.sourcesApart = sources >= manySources
	// A source is off until its start, which switches it on like the
	// schedule does (if the schedule switched it on earlier, nothing
	// changes).
	for i := range n.flows {
		if f := &n.flows[i]; f.traffic != nil {
			start, stop := f.traffic.Window()
			f.stop = stop
			n.events.pushControl(start, evStart, i, startRank+uint64(i))
		}
	}
	n.liveRank = startRank + uint64(len(n.flows))
	return n, nil
}

func (n *Network) checkHop(i int) error {
	if i < 0 || i >= len(n.hops) {
		return errorf("no hop %d", i)
	}
	return nil
}

func (n *Network) checkFlow(i int) error {
	if i < 0 || i >= len(n.flows) {
		return errorf("no flow %d", i)
	}
	return nil
}

// Seed returns the seed the network was built with. It never changes, so
// it may be read from any goroutine while the network runs.
func (n *Network) Seed() uint64 { return n.seed }

// Now returns the current virtual time.
func (n *Network) Now() time.Duration { return n.now }

// NextEvent returns the time of the next pending event.
func (n *Network) NextEvent() (time.Duration, bool) {
	return n.events.nextAt()
}

// Advance processes every event due at or before t and moves the clock to t.
func (n *Network) Advance(t time.Duration) {
	q := &n.events
	if !q.sourcesApart { // items alone, as in most runs: nothing to choose
		for len(q.items) > 0 && q.items[0].at <= t {
			ev := q.popItem()
			n.dispatch(&ev)
		}
	} else {
		for {
			ev, ok := q.popEither(t)
			if !ok {
				break
			}
			n.dispatch(&ev)
		}
	}
	n.now = max(n.now, t)
}

// Run processes the half-open interval [now, end) in virtual time and then
// finishes the run: frames not delivered by end are reported in flight.
func (n *Network) Run(end time.Duration) {
	n.Advance(end - 1)
	n.now = max(n.now, end)
	n.Finish()
}

// Inject puts a frame with the given payload into a flow at the current
// time and returns its sequence number. The payload is copied.
func (n *Network) Inject(flowIndex int, payload []byte) uint64 {
	f := n.newFrame(flowIndex, len(payload))
	f.Payload = append(f.Payload, payload...)
	seq := f.Seq
	n.arrive(f, n.now)
	return seq
}

func (n *Network) newFrame(flowIndex, size int) *Frame {
	fl := &n.flows[flowIndex]
	f := n.pool.get()
	f.Flow, f.Seq, f.Size, f.Sent = flowIndex, fl.nextSeq, size, n.now
	fl.nextSeq++
	return f
}

// dispatch handles ev, the earliest event, at its time.
func (n *Network) dispatch(ev *event) {
	n.now = ev.at
	switch ev.kind() {
	case evEmit:
		n.emit(ev.index(), ev.order)
	case evSerialiser:
		n.hops[ev.index()].serialiser.Wake(n.now)
	case evExit:
		n.exit(n.pool.all[ev.frame])
	case evApply:
		n.applyScheduled(ev.index())
	case evRevert:
		s := &n.schedule[ev.index()]
		s.Change.revert(n, &s.saved)
		n.plan(ev.index(), false)
	case evStart:
		n.switchSource(ev.index(), true)
	}
}

func (n *Network) queueEmit(flowIndex int, at time.Duration) {
	fl := &n.flows[flowIndex]
	if fl.stop > 0 && at >= fl.stop {
		fl.on = false
		return
	}
	fl.pending = n.events.push(at, evEmit, flowIndex, 0)
}

// emit makes a flow's next frame, planned by the event of the given order.
func (n *Network) emit(flowIndex int, order uint64) {
	fl := &n.flows[flowIndex]
	if order != fl.pending {
		return // switched since this frame was planned
	}
	f := n.newFrame(flowIndex, int(fl.size))
	var next time.Duration
	if fl.poissonMean > 0 { // most sources of a run of many flows: no call through src
		next = poissonNext(n.now, fl.poissonMean, &fl.rng)
	} else {
		next = fl.src.next(n.now, &fl.rng)
	}
	n.queueEmit(flowIndex, next)
	n.arrive(f, n.now)
}

func (n *Network) switchSource(flowIndex int, on bool) {
	fl := &n.flows[flowIndex]
	if fl.on == on {
		return
	}
	fl.on = on
	fl.pending = 0 // the planned frame, if any, is not made
	if on {
		n.queueEmit(flowIndex, fl.src.first(n.now, &fl.rng))
	}
}

// arrive hands frame f to the hop at its route position at time t.
func (n *Network) arrive(f *Frame, t time.Duration) {
	fl := &n.flows[f.Flow]
	hopIndex := int(fl.hopAt(f.pos).hop)
	h := &n.hops[hopIndex]
	f.Hop = hopIndex
	h.stats.Frames++
	n.enter(f, h, 0, t)
}

// enter runs the hop's entering stages on f from the first'th on (loss,
// duplication, corruption), and then hands it to the hop's serialiser. A
// copy a stage makes enters right behind f, through the stages after that
// one.
func (n *Network) enter(f *Frame, h *hop, first int, t time.Duration) {
	var dup *Frame
	var dupFirst int
	lost := false
stages:
	for i := first; i < len(h.stages.entering); i++ {
		st := h.stages.entering[i]
		switch st.Enter(f, n.stageState(f, h, st)) {
		case Lose:
			n.drop(f, LossDrop, t)
			lost = true
			break stages
		case Copy:
			dup, dupFirst = n.duplicate(f), i+1
			h.stats.Duplicated++
		case Corrupt:
			f.corrupted = true
			h.stats.Corrupted++
		}
	}
	if !lost {
		h.serialiser.Enter(f, t)
	}
	if dup != nil {
		n.enter(dup, h, dupFirst, t)
	}
}

// duplicate returns a copy of f that will travel the rest of f's route.
func (n *Network) duplicate(f *Frame) *Frame {
	c := n.pool.get()
	payload, id := append(c.Payload[:0], f.Payload...), c.id
	*c = *f
	c.Payload, c.Copy, c.id = payload, true, id
	return c
}

// propagate sends f, which left h's serialiser at t, through the hop's
// propagating stages, which decide its delay, to the hop's exit.
func (n *Network) propagate(f *Frame, h *hop, t time.Duration) {
	delay := h.Delay
	for _, st := range h.stages.propagating {
		var v Verdict
		if delay, v = st.Propagate(f, n.stageState(f, h, st), delay); v == LeaveNow {
			n.leaveNow(f, t)
			return
		}
	}
	n.leaveAt(f, h, t, later(t, delay))
}

// forward moves f, which has left its hop at t, to the next hop or delivers it.
func (n *Network) forward(f *Frame, t time.Duration) {
	f.pos++
	if f.pos < int(n.flows[f.Flow].routeLen) {
		n.arrive(f, t)
		return
	}
	switch {
	case f.Copy:
		f.Status = Duplicate
	case f.corrupted:
		f.Status = Corrupted
	default:
		f.Status = Delivered
	}
	f.Done = max(t, f.due) // due, unless held past it by an outage
	n.finish(f)
}

func (n *Network) drop(f *Frame, why Status, t time.Duration) {
	f.Status, f.Done = why, t
	n.hops[f.Hop].stats.Dropped[why]++
	n.finish(f)
}

func (n *Network) finish(f *Frame) {
	n.flows[f.Flow].stats.Record(f)
	if n.observer != nil {
		n.observer.Finished(f)
	}
	n.pool.put(f)
}

// Finish reports every frame still inside the network as in flight, in the
// order they were sent, and stops the run. Call it once, at the end.
func (n *Network) Finish() {
	if n.finished {
		return
	}
	n.finished = true
	var inside []*Frame
	put := func(f *Frame) { inside = append(inside, f) }
	n.events.frames(func(frame uint32) { put(n.pool.all[frame]) })
	for i := range n.hops {
		h := &n.hops[i]
		h.serialiser.Drain(put)
		for h.outage.held.len() > 0 {
			inside = append(inside, h.outage.held.pop())
		}
	}
	slices.SortFunc(inside, func(a, b *Frame) int {
		return cmp.Or(cmp.Compare(a.Sent, b.Sent), cmp.Compare(a.Flow, b.Flow), cmp.Compare(a.Seq, b.Seq))
	})
	for _, f := range inside {
		f.Status, f.Done = InFlight, n.now
		n.finish(f)
	}
	n.events.clear()
	n.finishStages()
}
