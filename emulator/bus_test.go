package emulator

import (
	"container/heap"
	"fmt"
	"math"
	"testing"
	"time"
)

// serialiserRig drives a Serialiser (a bus, or a link) on its own: frames
// given at instants, an event queue for its wake-ups, and what came out.
type serialiserRig struct {
	s       Serialiser
	b       *bus // s, when it is a bus
	now     time.Duration
	wakes   timeHeap
	sent    []*Frame
	sentAt  []time.Duration
	dropped []*Frame
}

type timeHeap []time.Duration

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *timeHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

func (r *serialiserRig) frameSent(f *Frame, t time.Duration) {
	r.sent, r.sentAt = append(r.sent, f), append(r.sentAt, t)
}
func (r *serialiserRig) frameDropped(f *Frame, _ Status, _ time.Duration) {
	r.dropped = append(r.dropped, f)
}
func (r *serialiserRig) wakeAt(t time.Duration) { heap.Push(&r.wakes, t) }

func newBusRig(t testing.TB, cfg Bus, flows int, seed uint64) *serialiserRig {
	r := &serialiserRig{}
	names := make([]string, flows)
	for i := range names {
		names[i] = string(rune('a' + i))
	}
	var err error
	if r.b, err = newBus(cfg, names, seed, "bus", r); err != nil {
		t.Fatal(err)
	}
	r.s = r.b
	return r
}

// until runs the serialiser's wake-ups up to t.
func (r *serialiserRig) until(t time.Duration) {
	r.run(func(w time.Duration) bool { return w <= t })
	r.now = max(r.now, t)
}

// run runs the serialiser's wake-ups while due says so.
func (r *serialiserRig) run(due func(time.Duration) bool) {
	for r.wakes.Len() > 0 && due(r.wakes[0]) {
		w := heap.Pop(&r.wakes).(time.Duration)
		for r.wakes.Len() > 0 && r.wakes[0] == w {
			heap.Pop(&r.wakes)
		}
		r.now = w
		r.s.Wake(w)
	}
}

// frame gives the serialiser a frame of flow at t. As in the network's event
// queue, frames that arrive at one instant all arrive before a wake-up
// that their arrival asked for at that instant.
func (r *serialiserRig) frame(flow, size int, t time.Duration) {
	r.run(func(w time.Duration) bool { return w < t })
	r.s.Enter(&Frame{Flow: flow, Size: size, Sent: t}, t)
}

// TestOneStationNeverCollides: frames of one station, however close,
// go one after the other, each its frame time plus the gap after the
// previous, and none collides.
func TestOneStationNeverCollides(t *testing.T) {
	r := newBusRig(t, StandardBus(CSMACD, 0), 1, 1)
	for i := range 1000 {
		r.frame(0, 100, time.Duration(i)*50*time.Microsecond) // faster than the bus carries them
	}
	r.until(time.Second)
	st := r.b.Stats().Stations[0]
	// 100 B at 10 Mbit/s: 80 µs, then 9.6 µs of gap before the next.
	if st.Collisions != 0 || st.Sent != 1000 || len(r.dropped) != 0 {
		t.Fatalf("%+v", st)
	}
	for i := 1; i < len(r.sentAt); i++ {
		if d := r.sentAt[i] - r.sentAt[i-1]; d != 89600*time.Nanosecond {
			t.Fatalf("frame %d sent %v after the one before; want 80 µs + 9.6 µs", i, d)
		}
	}
}

// TestTwoStationsInOneSlot: two stations whose frames arrive at the same
// instant collide on their first attempt; each then backs off r slots, r
// uniform on {0, 1}, and they collide again exactly when they draw the
// same r: with probability 1/2 for both back-offs (2^1 values for the
// exponential, min(1+1, 10) for the linear). After a second collision the
// windows are 4 (exponential) and 3 (linear) values: a third collision has
// probability 1/4 or 1/3. Over n trials the fraction with a second
// collision is p ± 4·√(p(1−p)/n).
func TestTwoStationsInOneSlot(t *testing.T) {
	for _, tc := range []struct {
		backOff   BackOff
		p2, p3of2 float64
	}{{ExponentialBackOff, 0.5, 0.25}, {LinearBackOff, 0.5, 1.0 / 3}} {
		const n = 4000
		second, third := 0, 0
		for trial := range n {
			cfg := StandardBus(CSMACD, 0)
			cfg.BackOff = tc.backOff
			r := newBusRig(t, cfg, 2, uint64(trial))
			r.frame(0, 100, 0)
			r.frame(1, 100, 0)
			r.until(time.Second)
			st := r.b.Stats().Stations
			if st[0].Collisions < 1 || st[0].Collisions != st[1].Collisions || len(r.sent) != 2 {
				t.Fatalf("trial %d: %+v, %d sent", trial, st, len(r.sent))
			}
			if st[0].Collisions >= 2 {
				second++
			}
			if st[0].Collisions >= 3 {
				third++
			}
		}
		p2 := float64(second) / n
		p3 := float64(third) / float64(second)
		tol2 := 4 * math.Sqrt(tc.p2*(1-tc.p2)/n)
		tol3 := 4 * math.Sqrt(tc.p3of2*(1-tc.p3of2)/float64(second))
		t.Logf("backoff %d: second collision %.4f (want %.4f ± %.4f), third after a second %.4f (want %.4f ± %.4f)", tc.backOff, p2, tc.p2, tol2, p3, tc.p3of2, tol3)
		if math.Abs(p2-tc.p2) > tol2 || math.Abs(p3-tc.p3of2) > tol3 {
			t.Errorf("backoff %d: P(second) %.4f, P(third | second) %.4f", tc.backOff, p2, p3)
		}
	}
}

// TestDroppedAfterSixteenAttempts: a station that collides on every
// attempt (three always start together: with a back-off capped at 1 slot
// value, r is always 0) drops its frame after 16.
func TestDroppedAfterSixteenAttempts(t *testing.T) {
	cfg := StandardBus(CSMACD, 0)
	cfg.BackOffCap, cfg.BackOff = 1, LinearBackOff
	r := newBusRig(t, cfg, 2, 1)
	r.frame(0, 100, 0)
	r.frame(1, 100, 0)
	r.until(time.Second)
	st := r.b.Stats().Stations
	if len(r.dropped) != 2 || st[0].Collisions != 16 || st[0].Dropped != 1 || st[0].Attempts[15] != 1 {
		t.Errorf("%d dropped, %+v", len(r.dropped), st[0])
	}
}

// TestCANLowestIdentifierWins: three stations with frames ready at once:
// they go in the order of their identifiers, one after the other, each a
// CAN frame's time plus the intermission, and none collides.
func TestCANLowestIdentifierWins(t *testing.T) {
	cfg := StandardBus(CANBus, 0)
	cfg.IDs, cfg.StationNames, cfg.Stations = []uint32{0x300, 0x100, 0x200}, []string{"a", "b", "c"}, []int{0, 1, 2}
	r := newBusRig(t, cfg, 3, 1)
	for f := range 3 {
		r.frame(f, 8, 0)
	}
	r.until(time.Second)
	// 8 data bytes: 47 + 64 bits and ⌊(34 + 64 − 1)/4⌋ = 24 stuff bits,
	// 135 bits at 500 kbit/s: 270 µs; the intermission 3 bits, 6 µs.
	order := []int{1, 2, 0}
	for i, f := range r.sent {
		if f.Flow != order[i] || r.sentAt[i] != time.Duration(i)*276*time.Microsecond+270*time.Microsecond {
			t.Errorf("frame %d: flow %d at %v", i, f.Flow, r.sentAt[i])
		}
	}
	st := r.b.Stats().Stations
	if st[0].LostArbitrate != 2 || st[2].LostArbitrate != 1 || st[1].LostArbitrate != 0 || st[0].Collisions != 0 {
		t.Errorf("%+v", st)
	}
}

// countStatus counts the frames of each fate.
type countStatus map[Status]int

func (c countStatus) Finished(f *Frame) { c[f.Status]++ }

// TestBusInNetwork: two synchronous CBR stations on an IEEE bus, a frame
// each every millisecond at the same instant. Each pair collides on its
// first attempt (the stations start together), so every frame is sent,
// each station counts at least one collision per frame, and the bus's
// totals are its stations' sums; the summary and the live view say so.
func TestBusInNetwork(t *testing.T) {
	bus := StandardBus(CSMACD, 0)
	obs := countStatus{}
	n, err := New(Config{
		Seed: 7,
		Hops: []HopConfig{{Name: "bus", HopParams: HopParams{Delay: time.Microsecond}, Bus: &bus}},
		Flows: []FlowConfig{
			{Name: "a", Route: []int{0}, Traffic: CBR{Interval: time.Millisecond, Size: 100}},
			{Name: "b", Route: []int{0}, Traffic: CBR{Interval: time.Millisecond, Size: 100}},
		},
	}, obs)
	if err != nil {
		t.Fatal(err)
	}
	n.Run(time.Second)
	sum := n.Summary()
	b := sum.Hops[0].Bus
	if b == nil || len(b.Stations) != 2 {
		t.Fatalf("bus summary %+v", b)
	}
	if obs[Delivered] != 2000 || b.Sent != 2000 || b.CollisionDrops != 0 {
		t.Errorf("delivered %d, sent %d, dropped %d; want 2000, 2000, 0", obs[Delivered], b.Sent, b.CollisionDrops)
	}
	var collisions uint64
	for _, st := range b.Stations {
		if st.Sent != 1000 || st.Collisions < 1000 {
			t.Errorf("station %s: %+v; want 1000 sent after at least 1000 collisions", st.Name, st)
		}
		collisions += st.Collisions
	}
	if collisions != b.Collisions {
		t.Errorf("the bus counts %d collisions, its stations %d", b.Collisions, collisions)
	}
	// Each frame: at least the frame time (80 µs) and the hop's 1 µs.
	if d := sum.Flows[0].Delay; d == nil || d.Min < 81e-6 {
		t.Errorf("delay %+v: shorter than the frame time and delay", d)
	}
	if b.Utilisation <= 0.16 || b.Utilisation >= 1 {
		t.Errorf("utilisation %.3f: two 80 µs frames a millisecond, and collisions, take more than 16 %%", b.Utilisation)
	}
}

// TestBusRefusesSerialiserSettings: a bus's rate, queue and overhead are
// its own; giving the hop one, or scheduling one, is an error.
func TestBusRefusesSerialiserSettings(t *testing.T) {
	bus := StandardBus(CSMACD, 0)
	flows := []FlowConfig{{Name: "a", Route: []int{0}}}
	if _, err := New(Config{Hops: []HopConfig{{Name: "bus", HopParams: HopParams{Rate: Mbitps}, Bus: &bus}}, Flows: flows}, nil); err == nil {
		t.Error("a bus hop with a rate was accepted")
	}
	_, err := New(Config{Hops: []HopConfig{{Name: "bus", Bus: &bus}}, Flows: flows,
		Schedule: []Scheduled{{At: time.Second, Change: SetHop{Hop: 0, Set: FieldRate, Params: HopParams{Rate: Mbitps}}}}}, nil)
	if err == nil {
		t.Error("a schedule changing a bus's rate was accepted")
	}
}

// TestSaturatedThroughput: two stations that always have a 1500 B frame,
// on paper 002's reference bus (no propagation, jam or gap; linear
// back-off; frames of 24 whole slots). Their throughput follows from a
// Markov chain embedded at the instants both stations start together, its
// state (a, b) the failed attempts of each one's frame so far. Both
// collide; a frame at its 16th attempt is dropped and its station starts
// its next frame at once. Otherwise each draws r uniform on
// [0, min(k+1, 10)) for its k-th collision: equal draws meet again r slots
// later; the smaller wins, sends its frame F = 24 slots after r slots, and
// both start together again when it ends (the loser deferred to it). So
// S = F·E[successes per step] / E[time per step] under the chain's
// stationary law. The run is cut into 20 one-second batches; the measured
// throughput is within 4 standard errors of the batch means of S.
func TestSaturatedThroughput(t *testing.T) {
	const F, attempts = 24, 16 // slots; attempts before a drop
	window := func(k int) int { return min(k+1, 10) }
	type state struct{ a, b int }
	type move struct {
		to        state
		p, time   float64 // probability; slots until the next step
		successes float64
	}
	moves := func(s state) (out []move) {
		a, b := s.a+1, s.b+1
		switch {
		case a >= attempts && b >= attempts:
			return []move{{state{0, 0}, 1, 0, 0}}
		case a >= attempts || b >= attempts:
			// One drops; the other's draw is 0 (starts with it again at
			// once) or not (the dropper's next frame goes alone first).
			k := b
			to := state{0, b}
			if b >= attempts {
				k, to = a, state{a, 0}
			}
			w := float64(window(k))
			return []move{{to, 1 / w, 0, 0}, {to, 1 - 1/w, F, 1}}
		}
		wa, wb := window(a), window(b)
		p := 1 / float64(wa*wb)
		for ra := range wa {
			for rb := range wb {
				switch {
				case ra == rb:
					out = append(out, move{state{a, b}, p, float64(ra), 0})
				case ra < rb:
					out = append(out, move{state{0, b}, p, float64(ra) + F, 1})
				default:
					out = append(out, move{state{a, 0}, p, float64(rb) + F, 1})
				}
			}
		}
		return out
	}
	// The stationary law by power iteration, until it stops changing.
	pi := map[state]float64{{0, 0}: 1}
	for change := 1.0; change > 1e-12; {
		next := map[state]float64{}
		for s, p := range pi {
			for _, m := range moves(s) {
				next[m.to] += p * m.p
			}
		}
		change = 0
		for s, p := range next {
			change = max(change, math.Abs(p-pi[s]))
		}
		pi = next
	}
	var successes, slots float64
	for s, p := range pi {
		for _, m := range moves(s) {
			successes += p * m.p * m.successes
			slots += p * m.p * m.time
		}
	}
	predicted := F * successes / slots

	bus := StandardBus(CSMACD, 0)
	bus.Jam, bus.Gap, bus.BackOff, bus.FrameTime = 0, 0, LinearBackOff, SlotTime
	n, err := New(Config{
		Seed: 3,
		Hops: []HopConfig{{Name: "bus", Bus: &bus}},
		Flows: []FlowConfig{ // more than either can send: the queues never empty
			{Name: "a", Route: []int{0}, Traffic: CBR{Interval: time.Millisecond, Size: 1500}},
			{Name: "b", Route: []int{0}, Traffic: CBR{Interval: time.Millisecond, Size: 1500}},
		},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	frame := 24 * bus.Slot
	var batches []float64
	var sentBefore uint64
	for k := 1; k <= 20; k++ {
		n.Advance(time.Duration(k) * time.Second)
		sent := n.Summary().Hops[0].Bus.Sent
		batches = append(batches, float64(sent-sentBefore)*float64(frame)/float64(time.Second))
		sentBefore = sent
	}
	var mean, sq float64
	for _, x := range batches {
		mean += x / 20
	}
	for _, x := range batches {
		sq += (x - mean) * (x - mean)
	}
	se := math.Sqrt(sq/19) / math.Sqrt(20)
	t.Logf("saturated throughput: measured %.4f ± %.4f (standard error), the chain %.4f", mean, se, predicted)
	if math.Abs(mean-predicted) > 4*se+1e-3 {
		t.Errorf("throughput %.4f, want %.4f ± %.4f", mean, predicted, 4*se)
	}
}

// TestCANResponseTimes: periodic messages on a CAN bus never wait longer
// than CAN's worst-case response time (Davis, Burns, Bril & Lukkien 2007):
// with C_k a frame's time plus the intermission, B_m the longest C of a
// lower-priority message, and w_m the least fixed point of
// w = B_m + Σ_{k of higher priority} ⌈(w + τ_bit)/T_k⌉·C_k, message m is
// sent at most w_m + C_m after it was queued (our delays end with the
// frame, before its intermission: R_m − 3 bit times). The lowest message
// starts 1 µs before the others, so the highest one meets the worst case
// at once: blocked by it, then sent, B − 1 µs + its frame time, and
// every other one that was released with it meets its bound within that
// microsecond.
func TestCANResponseTimes(t *testing.T) {
	type msg struct {
		period time.Duration
		size   int
	}
	msgs := []msg{{time.Millisecond, 8}, {2 * time.Millisecond, 4}, {5 * time.Millisecond, 8}, {10 * time.Millisecond, 2}, {20 * time.Millisecond, 8}}
	bus := StandardBus(CANBus, 500_000)
	bit := time.Second / 500_000
	var flows []FlowConfig
	var ids []uint32
	for i, m := range msgs {
		start := time.Microsecond
		if i == len(msgs)-1 {
			start = 0
		}
		flows = append(flows, FlowConfig{Name: fmt.Sprintf("m%d", i), Route: []int{0}, Traffic: CBR{Interval: m.period, Size: m.size, Start: start}})
		ids = append(ids, uint32(0x100+i))
	}
	bus.IDs = ids
	n, err := New(Config{Hops: []HopConfig{{Name: "can", Bus: &bus}}, Flows: flows}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n.Run(10 * time.Second)
	sum := n.Summary()
	c := func(i int) time.Duration { return canFrameTime(int64(msgs[i].size), bus.Rate) + bus.Gap }
	for m := range msgs {
		var block time.Duration
		for k := m + 1; k < len(msgs); k++ {
			block = max(block, c(k))
		}
		w := block
		for {
			next := block
			for k := range m {
				next += time.Duration((int64(w+bit)+int64(msgs[k].period)-1)/int64(msgs[k].period)) * c(k)
			}
			if next == w {
				break
			}
			w = next
		}
		bound := w + c(m) - bus.Gap
		got := time.Duration(math.Round(sum.Flows[m].Delay.Max * 1e9))
		t.Logf("message %d (id %#x, every %v, %d B): longest delay %v, bound %v", m, ids[m], msgs[m].period, msgs[m].size, got, bound)
		if got > bound {
			t.Errorf("message %d waited %v, over its worst-case response time %v", m, got, bound)
		}
		// Released together after the blocker, each but the blocker meets
		// its worst case within the blocker's 1 µs head start.
		if m < len(msgs)-1 && got < bound-time.Microsecond {
			t.Errorf("message %d waited at most %v: the synchronous release should take it to %v", m, got, bound-time.Microsecond)
		}
		if sum.Flows[m].Delivered != sum.Flows[m].Sent-sum.Flows[m].InFlight {
			t.Errorf("message %d: %+v", m, sum.Flows[m])
		}
	}
	if got, want := time.Duration(math.Round(sum.Flows[0].Delay.Max*1e9)), c(len(msgs)-1)-time.Microsecond+c(0)-bus.Gap; got != want {
		t.Errorf("the highest priority waited at most %v, want %v (blocked once by the lowest)", got, want)
	}
	if st := sum.Hops[0].Bus; st.Collisions != 0 || st.CollisionDrops != 0 {
		t.Errorf("collisions on a CAN bus: %+v", st)
	}
}
