package emulator

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// A shared bus: every flow that crosses the hop is a station (or flows are
// grouped into named stations), and the stations contend for one channel.
// Two ways of sharing it are modelled:
//
//   - CSMA/CD (IEEE 802.3 half duplex, and the reference implementation
//     paper 002 cites): a station with a frame listens; while it hears
//     the channel busy it defers, and once the channel falls idle it waits
//     the inter-frame gap and sends (1-persistent). A station hears another
//     one's transmission the propagation delay after it began; two that
//     begin within that delay of each other (at the same instant, without
//     one) collide: each stops when it hears the other, sends the jam, and
//     backs off a whole number of slots, r, drawn uniformly from [0, 2^k)
//     with k = min(attempts, 10) (truncated binary exponential back-off) or
//     from [0, min(attempts+1, 10)) (the reference implementation's linear
//     back-off). After MaxAttempts failed attempts the frame is dropped
//     (CollisionDrop) and the station goes on with its next frame.
//   - CAN arbitration: when the bus falls idle (after the intermission),
//     every station with a frame starts its identifier and the lowest one
//     wins, bit by bit, without destroying anything: the others wait for
//     the next idle bus. There are no collisions.
//
// The bus is its hop's Serialiser: it decides when each frame has been
// sent; the hop's propagation delay and impairments then apply as on any
// hop.

// BusKind is the way a bus is shared.
type BusKind uint8

const (
	CSMACD BusKind = iota + 1
	CANBus
)

func (k BusKind) String() string {
	switch k {
	case CSMACD:
		return "csma-cd"
	case CANBus:
		return "can"
	}
	return "none"
}

// BackOff is how a CSMA/CD station draws its back-off after a collision.
type BackOff uint8

const (
	// ExponentialBackOff: r in [0, 2^min(k,10)) slots after the k-th collision of
	// a frame (IEEE 802.3's truncated binary exponential back-off).
	ExponentialBackOff BackOff = iota
	// LinearBackOff: r in [0, min(k+1, 10)) slots (paper 002's reference
	// implementation, Nutaro's adevs Ethernet model).
	LinearBackOff
)

// FrameTime is how long a frame occupies a CSMA/CD bus.
type FrameTime uint8

const (
	// ExactTime: (size + overhead)·8/rate.
	ExactTime FrameTime = iota
	// SlotTime: whole slots, (1 + ⌊8·(size + overhead)/bits per slot⌋)
	// slots (the reference implementation's rounding: 100 B take two
	// slots, 1500 B 24).
	SlotTime
)

// Bus configures a shared bus. Its durations are taken as given (a zero
// jam, gap or propagation is none); StandardBus gives a kind's standard
// values. A zero rate, slot, back-off cap or attempt limit takes the
// standard value.
type Bus struct {
	Kind BusKind
	// Rate is the bit rate (10 Mbit/s for CSMA/CD, 500 kbit/s for CAN).
	Rate Rate
	// CSMA/CD: the slot (512 bit times), the jam (32 bit times), the
	// inter-frame gap (96 bit times), the propagation delay between any
	// two stations, the back-off and its cap, and the attempts after
	// which a frame is dropped (16).
	Slot, Jam, Gap, Propagation time.Duration
	BackOff                     BackOff
	BackOffCap                  int
	MaxAttempts                 int
	FrameTime                   FrameTime
	// Overhead is added to each frame's size on the bus (headers,
	// preamble, checksum).
	Overhead int
	// Queue bounds what waits at each station (not the frame it is
	// sending); a frame that would exceed it is dropped (QueueDrop).
	Queue Limit
	// Stations maps flows to stations: Stations[flow] is the station a
	// flow sends from (flows not listed, -1, each a station of their own).
	// StationNames name them.
	Stations     []int
	StationNames []string
	// IDs are the CAN identifiers, per station: the lower wins.
	IDs []uint32
}

// StandardBus is a bus of kind at rate (0: 10 Mbit/s for CSMA/CD, 500
// kbit/s for CAN) with the standard's values: for CSMA/CD IEEE 802.3's
// slot of 512 bit times, jam of 32, inter-frame gap of 96, truncated
// binary exponential back-off capped at 10 and 16 attempts; for CAN the
// intermission of 3 bit times. Propagation is left at zero.
func StandardBus(kind BusKind, rate Rate) Bus {
	b := Bus{Kind: kind, Rate: rate}.withDefaults()
	bits := func(n int64) time.Duration { return time.Duration(n * int64(time.Second) / int64(b.Rate)) }
	switch kind {
	case CSMACD:
		b.Jam, b.Gap = bits(32), bits(96)
	case CANBus:
		b.Gap = bits(3)
	}
	return b
}

// withDefaults fills in the rate, slot, cap and attempts that b leaves zero.
func (b Bus) withDefaults() Bus {
	if b.Rate == 0 {
		b.Rate = 10_000_000
		if b.Kind == CANBus {
			b.Rate = 500_000
		}
	}
	if b.Slot == 0 {
		b.Slot = time.Duration(512 * int64(time.Second) / int64(b.Rate))
	}
	if b.BackOffCap == 0 {
		b.BackOffCap = 10
	}
	if b.MaxAttempts == 0 {
		b.MaxAttempts = 16
	}
	return b
}

func (b Bus) check() error {
	switch {
	case b.Kind != CSMACD && b.Kind != CANBus:
		return errors.New("unknown bus kind")
	case b.Rate < 0 || b.Slot < 0 || b.Jam < 0 || b.Gap < 0 || b.Propagation < 0 || b.Overhead < 0 || b.Queue.N < 0:
		return errors.New("negative bus parameter")
	case b.BackOffCap < 0 || b.BackOffCap > 30 || b.MaxAttempts < 0:
		return errors.New("back-off cap must be in [1, 30] and attempts positive")
	}
	return nil
}

// frameTime is how long a frame of size bytes occupies the bus.
func (b *Bus) frameTime(size int) time.Duration {
	n := int64(size + b.Overhead)
	switch {
	case b.Kind == CANBus:
		return canFrameTime(n, b.Rate)
	case b.FrameTime == SlotTime:
		bitsPerSlot := int64(b.Slot) * int64(b.Rate) / int64(time.Second)
		return time.Duration(1+8*n/max(bitsPerSlot, 1)) * b.Slot
	}
	d, _ := transmitTime(n, b.Rate, 0)
	return d
}

// canFrameTime is a CAN 2.0A data frame of n data bytes at its worst-case
// bit stuffing: 47 bits of framing and 8·n of data, and a stuff bit for
// every 4 of the 34 + 8·n bits that are stuffed (Davis et al., 2007:
// ⌊(34 + 8n − 1)/4⌋). A payload over 8 bytes is counted as one frame of
// that length (CAN FD's longer frames, without its faster data phase).
func canFrameTime(n int64, rate Rate) time.Duration {
	bits := 47 + 8*n + (34+8*n-1)/4
	return time.Duration(bits * int64(time.Second) / int64(rate))
}

// BusStats are what a bus and its stations did. Collisions count, per
// station, each attempt that failed because another station sent at the
// same time (so a collision of three stations counts three), as paper 002's
// reference implementation's NICs count them.
type BusStats struct {
	Stations []StationStats
	// Busy is how long the channel carried frames, collisions and jams.
	Busy time.Duration
}

// StationStats are one station's counts.
type StationStats struct {
	Name          string
	Frames        uint64 // that entered it
	Sent          uint64
	Collisions    uint64
	Dropped       uint64 // after MaxAttempts (CollisionDrop)
	QueueDrops    uint64
	BackOffs      uint64
	BackOffTime   time.Duration // waited in back-off, in all
	LostArbitrate uint64        // CAN: arbitrations lost
	// Attempts counts the frames sent or dropped by how many attempts they
	// took: Attempts[k-1] frames took k.
	Attempts []uint64
}

// station states.
const (
	stIdle     uint8 = iota // nothing to send
	stWaiting               // back-off or gap until `until`, then tries
	stDeferred              // hears the channel busy: goes once it falls idle and the gap has passed
	stSending               // on the channel from start to until
)

type busStation struct {
	queue    fifo
	state    uint8
	until    time.Duration // end of a wait or of a transmission
	start    time.Duration // of the transmission
	collided bool
	attempts int
	id       uint32 // CAN
	rng      *Stream
	stats    StationStats
}

// bus is a shared bus at run time.
type bus struct {
	cfg      Bus
	host     serialiserHost // a frame is sent when it reached every other station
	station  []int          // per flow
	stations []busStation
	busy     time.Duration
	// heardIdle is when the channel last fell idle, as the stations hear
	// it: the end of the last transmission or jam plus the propagation.
	heardIdle time.Duration
	sending   int // stations on the channel
	// The most bytes and frames that waited at the stations at once, not
	// counting those on the channel.
	peakBytes  int64
	peakFrames int
}

// newBus makes the bus of hop; flows names the network's flows that cross
// it (the others ""; a flow that is no named station's is a station of its
// own, of its name). Each station's back-off draws from (seed, hop,
// station, "backoff").
func newBus(cfg Bus, flows []string, seed uint64, hop string, host serialiserHost) (*bus, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	// The channel has been idle since long before the run began.
	b := &bus{cfg: cfg, host: host, station: make([]int, len(flows)), heardIdle: -cfg.Gap - cfg.Propagation}
	names := append([]string(nil), cfg.StationNames...)
	for f, name := range flows {
		s := -1
		if f < len(cfg.Stations) {
			s = cfg.Stations[f]
		}
		if s >= len(cfg.StationNames) {
			return nil, errorf("flow %q: no station %d", name, s)
		}
		if s < 0 && name != "" {
			s, names = len(names), append(names, name)
		}
		b.station[f] = s
	}
	b.stations = make([]busStation, len(names))
	for i, name := range names {
		st := &b.stations[i]
		st.stats.Name = name
		st.stats.Attempts = make([]uint64, cfg.MaxAttempts)
		st.rng = NewStream(seed, "hop", hop, "station", name, "backoff")
		st.id = uint32(i)
		if i < len(cfg.IDs) {
			st.id = cfg.IDs[i]
		}
	}
	return b, nil
}

// Enter takes frame f, from its flow's station, at t.
func (b *bus) Enter(f *Frame, t time.Duration) {
	s := &b.stations[b.station[f.Flow]]
	s.stats.Frames++
	if s.state != stIdle && !b.cfg.Queue.Admits(s.queue.bytes-int64(b.head(s).Size), int64(s.queue.len()-1), f.Size) {
		s.stats.QueueDrops++
		b.host.frameDropped(f, QueueDrop, t)
		return
	}
	s.queue.push(f)
	if s.state == stIdle {
		b.ready(s, t)
	}
	if bytes, frames, _ := b.Holding(); bytes > b.peakBytes || frames > b.peakFrames {
		b.peakBytes, b.peakFrames = max(b.peakBytes, bytes), max(b.peakFrames, frames)
	}
}

// head is the frame station s sends or will send next.
func (b *bus) head(s *busStation) *Frame { return s.queue.buf[s.queue.head] }

// ready has station s, with a frame at its head and nothing to wait for,
// go for the channel at t.
func (b *bus) ready(s *busStation, t time.Duration) {
	if b.cfg.Kind == CANBus {
		b.canReady(s, t)
		return
	}
	if b.heard(s, t) || t < b.heardIdle+b.cfg.Gap {
		s.state = stDeferred
		b.deferUntilIdle(s)
		return
	}
	b.send(s, t)
	// Every station on the channel that this one could not hear yet, nor
	// it this one, collides with it: those that started at this very
	// instant, or within the propagation delay.
	tau := b.cfg.Propagation
	for i := range b.stations {
		o := &b.stations[i]
		if o == s || o.state != stSending {
			continue
		}
		if o.start == t || t-o.start < tau {
			b.collide(s, o.start+tau)
			b.collide(o, t+tau)
		}
	}
}

// heard reports whether station s hears another station on the channel at
// t: one that began at least the propagation delay before (and not at t
// itself: stations that start at one instant do not hear each other) and
// has not ended that long ago.
func (b *bus) heard(s *busStation, t time.Duration) bool {
	tau := b.cfg.Propagation
	for i := range b.stations {
		o := &b.stations[i]
		if o != s && o.state == stSending && o.start < t && o.start+tau <= t && t < o.until+tau {
			return true
		}
	}
	return false
}

// deferUntilIdle has a deferred station woken when the channel it hears
// falls idle and the gap has passed: at the latest end of what is on the
// channel (which a collision may bring forward: it is asked again then).
func (b *bus) deferUntilIdle(s *busStation) {
	end := b.heardIdle
	for i := range b.stations {
		if o := &b.stations[i]; o.state == stSending {
			end = max(end, o.until+b.cfg.Propagation)
		}
	}
	s.until = end + b.cfg.Gap
	b.host.wakeAt(s.until)
}

// send puts station s's head frame on the channel at t.
func (b *bus) send(s *busStation, t time.Duration) {
	s.state, s.start, s.until, s.collided = stSending, t, t+b.cfg.frameTime(b.head(s).Size), false
	s.attempts++
	b.sending++
	b.host.wakeAt(s.until)
}

// collide makes station s stop when it hears the collision and send the
// jam.
func (b *bus) collide(s *busStation, heard time.Duration) {
	end := max(heard, s.start) + b.cfg.Jam
	if !s.collided || end < s.until {
		s.until = min(s.until, end)
	}
	s.collided = true
	b.host.wakeAt(s.until)
}

// Wake moves on every station whose transmission or wait ends by t. It
// goes in station order, so that an instant resolves the same way each run.
func (b *bus) Wake(t time.Duration) {
	ended := false
	for i := range b.stations {
		if s := &b.stations[i]; s.state == stSending && s.until <= t {
			b.finish(s)
			ended = true
		}
	}
	if b.cfg.Kind == CANBus {
		if ended {
			// The next arbitration is when the intermission has passed.
			b.host.wakeAt(b.heardIdle + b.cfg.Gap)
		}
		b.arbitrate(t)
		return
	}
	for i := range b.stations {
		s := &b.stations[i]
		switch {
		case s.state == stWaiting && s.until <= t:
			b.ready(s, t)
		case s.state == stDeferred && s.until <= t:
			b.ready(s, t)
		case s.state == stDeferred && ended:
			b.deferUntilIdle(s) // the channel may fall idle sooner than it seemed
		}
	}
}

// finish ends station s's transmission at s.until: sent, or collided (then
// it backs off, or drops the frame after its last attempt).
func (b *bus) finish(s *busStation) {
	t := s.until
	b.sending--
	b.busy += t - s.start
	b.heardIdle = max(b.heardIdle, t+b.cfg.Propagation)
	f := b.head(s)
	if !s.collided {
		s.queue.pop()
		s.stats.Sent++
		s.stats.Attempts[min(s.attempts, len(s.stats.Attempts))-1]++
		s.attempts = 0
		b.host.frameSent(f, t+b.cfg.Propagation)
		b.next(s, t)
		return
	}
	s.stats.Collisions++
	if s.attempts >= b.cfg.MaxAttempts {
		s.queue.pop()
		s.stats.Dropped++
		s.stats.Attempts[len(s.stats.Attempts)-1]++
		s.attempts = 0
		b.host.frameDropped(f, CollisionDrop, t)
		b.next(s, t)
		return
	}
	var r int
	switch b.cfg.BackOff {
	case LinearBackOff:
		r = s.rng.Intn(min(s.attempts+1, b.cfg.BackOffCap))
	default:
		r = s.rng.Intn(1 << min(s.attempts, b.cfg.BackOffCap))
	}
	wait := time.Duration(r) * b.cfg.Slot
	s.stats.BackOffs++
	s.stats.BackOffTime += wait
	s.state, s.until = stWaiting, t+wait
	b.host.wakeAt(s.until)
}

// next has station s go on with its next frame.
func (b *bus) next(s *busStation, t time.Duration) {
	if s.queue.len() == 0 {
		s.state = stIdle
		return
	}
	s.state, s.until = stWaiting, t+b.cfg.Gap
	b.host.wakeAt(s.until)
}

// canReady: a CAN station with a frame joins the next arbitration: now if
// the bus is free, else when it is.
func (b *bus) canReady(s *busStation, t time.Duration) {
	s.state, s.until = stDeferred, max(t, b.heardIdle+b.cfg.Gap)
	if b.sending == 0 {
		b.host.wakeAt(s.until)
	}
}

// arbitrate is CAN's: when the bus is free (nothing on it, the
// intermission passed), every station with a frame starts its identifier
// and the lowest wins; the others wait for the next free bus.
func (b *bus) arbitrate(t time.Duration) {
	if b.sending > 0 || t < b.heardIdle+b.cfg.Gap {
		return
	}
	win := -1
	for i := range b.stations {
		s := &b.stations[i]
		if s.queue.len() == 0 || s.state == stSending || s.state == stWaiting && s.until > t {
			continue
		}
		s.state = stDeferred
		if win < 0 || s.id < b.stations[win].id {
			win = i
		}
	}
	if win < 0 {
		return
	}
	for i := range b.stations {
		if s := &b.stations[i]; i != win && s.state == stDeferred {
			s.stats.LostArbitrate++
		}
	}
	b.send(&b.stations[win], t)
	// The losers go again when the winner is done.
}

// Stats are the bus's counts so far.
func (b *bus) Stats() BusStats {
	out := BusStats{Busy: b.busy}
	for i := range b.stations {
		st := b.stations[i].stats
		st.Attempts = append([]uint64(nil), st.Attempts...)
		out.Stations = append(out.Stations, st)
	}
	return out
}

// Changed: a bus's rate, queue, overhead, time per frame and flap are its
// own (busOwnFields), which the hop's cannot change; the others do not
// reach it.
func (b *bus) Changed(HopField, time.Duration) {}

// busOwnFields are the hop keys a bus has its own of.
const busOwnFields = FieldRate | FieldQueue | FieldOverhead | FieldPerFrame | FieldFlap

// Holding says what waits at the stations (not the frames being sent).
func (b *bus) Holding() (bytes int64, frames int, busy bool) {
	for i := range b.stations {
		s := &b.stations[i]
		bytes, frames = bytes+s.queue.bytes, frames+s.queue.len()
		if s.state == stSending {
			bytes, frames = bytes-int64(b.head(s).Size), frames-1
			busy = true
		}
	}
	return bytes, frames, busy
}

// Drain hands every frame the stations still hold to put.
func (b *bus) Drain(put func(*Frame)) {
	for i := range b.stations {
		for q := &b.stations[i].queue; q.len() > 0; {
			put(q.pop())
		}
	}
}

// Peak is the most that waited at the stations at once.
func (b *bus) Peak() (bytes int64, frames int) { return b.peakBytes, b.peakFrames }

// newHopBus makes hop i's bus, whose host is port.
func (n *Network) newHopBus(cfg Config, i int, port *hopPort) (*bus, error) {
	hc := &cfg.Hops[i]
	if hc.Rate != 0 || hc.Queue != (Limit{}) || hc.Overhead != 0 || hc.PerFrame != 0 || hc.Flap != (Flap{}) {
		return nil, errorf("hop %q: a bus's rate, queue, overhead, time per frame and flap are the bus's own", hc.Name)
	}
	crossing := make([]string, len(n.flows))
	for f := range n.flows {
		if slices.Contains(n.flows[f].route, i) {
			crossing[f] = n.flows[f].name
		}
	}
	b, err := newBus(*hc.Bus, crossing, cfg.Seed, hc.Name, port)
	if err != nil {
		return nil, fmt.Errorf("hop %q: %w", hc.Name, err)
	}
	return b, nil
}

// BusSummary is a shared bus's outcome: the channel's and each station's.
// Collisions count failed attempts, one per station in the collision.
type BusSummary struct {
	Kind           string           `json:"kind"`
	BusyS          float64          `json:"busy_s"`      // the channel carrying frames, collisions and jams
	Utilisation    float64          `json:"utilisation"` // busy over the run's duration
	Sent           uint64           `json:"sent"`
	Collisions     uint64           `json:"collisions"`
	BackOffs       uint64           `json:"backoffs"`
	CollisionDrops uint64           `json:"collision_drops"`
	Stations       []StationSummary `json:"stations"`
}

// StationSummary is one station's outcome.
type StationSummary struct {
	Name             string  `json:"name"`
	Frames           uint64  `json:"frames"`
	Sent             uint64  `json:"sent"`
	Collisions       uint64  `json:"collisions"`
	BackOffs         uint64  `json:"backoffs"`
	BackOffS         float64 `json:"backoff_s"`
	CollisionDrops   uint64  `json:"collision_drops"`
	QueueDrops       uint64  `json:"queue_drops"`
	LostArbitrations uint64  `json:"lost_arbitrations,omitempty"`
	// Attempts: how many frames (sent or dropped) took each number of
	// attempts.
	Attempts []AttemptCount `json:"attempts"`
}

// AttemptCount is how many frames took a number of attempts.
type AttemptCount struct {
	Attempts int    `json:"attempts"`
	Frames   uint64 `json:"frames"`
}

func (b *bus) summary(now time.Duration) *BusSummary {
	out := &BusSummary{Kind: b.cfg.Kind.String(), BusyS: seconds(b.busy)}
	if now > 0 {
		out.Utilisation = float64(b.busy) / float64(now)
	}
	for i := range b.stations {
		st := &b.stations[i].stats
		ss := StationSummary{Name: st.Name, Frames: st.Frames, Sent: st.Sent, Collisions: st.Collisions, BackOffs: st.BackOffs,
			BackOffS: seconds(st.BackOffTime), CollisionDrops: st.Dropped, QueueDrops: st.QueueDrops, LostArbitrations: st.LostArbitrate}
		for k, c := range st.Attempts {
			if c > 0 {
				ss.Attempts = append(ss.Attempts, AttemptCount{Attempts: k + 1, Frames: c})
			}
		}
		out.Sent += st.Sent
		out.Collisions += st.Collisions
		out.BackOffs += st.BackOffs
		out.CollisionDrops += st.Dropped
		out.Stations = append(out.Stations, ss)
	}
	return out
}
