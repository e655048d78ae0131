package emulator

import (
	"fmt"
	"testing"
	"time"
	"unsafe"
)

// TestEventQueueMatchesOneHeap runs the queue as a run does, with the
// sources' events among the others, and checks each pop against the
// earliest of everything queued, found by a search: with the sources'
// events in the radix queue or among the others, and those in a sorted run
// or a heap, the queue pops in the one order, ties included (several
// events at the instant being handled, a source's event queued at it,
// control events at it, which go before the frame events there).
func TestEventQueueMatchesOneHeap(t *testing.T) {
	tests := []struct {
		name    string
		spread  uint64 // events are queued up to this long after now
		sources int    // pending source events kept, like flows
		// waves, when set, grows the queue past waves events and drains it
		// under sortedAgain in turns, so that it changes form again and
		// again (insertions that move many events, or sortedMost events,
		// make it a heap), with events queued on both sides of every change.
		waves int
		// atTheBack queues every exit spread after now, behind the events
		// queued before it, as a hop's fixed delay does.
		atTheBack bool
	}{
		{"ties at every instant", 3, 50, 0, false},
		{"few sources, near", 1000, 5, 0, false},
		{"many sources, far", uint64(time.Second), 5000, 0, false},
		{"times past 2^62", 1 << 62, 200, 0, false},
		{"a sorted run near its most", 1000, sortedMost / 2, 0, true},
		{"waves", 1000, 4, 300, false},
		{"waves of ties", 2, 4, 300, false},
		{"waves, far", uint64(time.Second), 4, 300, false},
		{"waves at the back, past sortedMost", 1000, 4, sortedMost + 100, true},
	}
	for _, tt := range tests {
		for _, apart := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/apart=%v", tt.name, apart), func(t *testing.T) {
				testEventQueueOrder(t, tt.name, tt.spread, tt.sources, tt.waves, tt.atTheBack, apart)
			})
		}
	}
}

func testEventQueueOrder(t *testing.T, name string, spread uint64, sources, waves int, atTheBack, apart bool) {
	q := eventQueue{sourcesApart: apart}
	growing, changes := true, 0
	var pending []event // everything queued, unordered
	s := NewStream(3, "queue", name)
	var now time.Duration
	push := func(kind eventKind, index int, at time.Duration) {
		order := q.push(at, kind, index, 0)
		pending = append(pending, event{at: at, order: order, ref: uint32(index)<<kindBits | uint32(kind)})
	}
	for i := range sources {
		push(evEmit, i, time.Duration(s.Uint64()%spread))
	}
	for step := range 30_000 {
		if q.len() != len(pending) {
			t.Fatalf("step %d: %d queued, want %d", step, q.len(), len(pending))
		}
		least := 0
		for i := range pending {
			if pending[i].before(&pending[least]) {
				least = i
			}
		}
		want := pending[least]
		pending[least] = pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if at, ok := q.nextAt(); !ok || at != want.at {
			t.Fatalf("step %d: next at %v (%v), want %v", step, at, ok, want.at)
		}
		wasHeap := q.heap
		if got := q.pop(); got != want {
			t.Fatalf("step %d: popped %+v, want %+v (a heap: %v)", step, got, want, wasHeap)
		}
		now = want.at
		later := func() time.Duration { return min(now+time.Duration(s.Uint64()%spread), MaxDuration) }
		exitAt := later
		if atTheBack {
			exitAt = func() time.Duration { return now + time.Duration(spread) }
		}
		switch want.kind() {
		case evEmit: // the source's next frame, and the frame's first exit
			push(evEmit, want.index(), later())
			push(evExit, 0, exitAt())
		case evExit:
			if s.Uint64()%4 == 0 {
				push(evExit, 0, now) // on to a hop without delay
			}
			if waves > 0 && growing { // and a copy, to the next hop
				push(evExit, 0, exitAt())
			}
		}
		if waves > 0 {
			if n := len(q.items); growing && n > waves || !growing && n < sortedAgain/2 {
				growing = !growing
			}
			if q.heap != wasHeap {
				changes++
			}
		}
		if s.Uint64()%50 == 0 {
			at := now
			if s.Uint64()%2 == 0 {
				at = later()
			}
			q.pushControl(at, evApply, step, uint64(step))
			pending = append(pending, event{at: at, order: uint64(step), ref: uint32(step)<<kindBits | uint32(evApply)})
		}
	}
	// Growing past sortedMost at the back takes longest: a round trip.
	if want := map[bool]int{false: 6, true: 2}[atTheBack]; waves > 0 && changes < want {
		t.Errorf("the queue changed form %d times, want at least %d", changes, want)
	}
}

// TestSortedRunTurnsHeap: events queued at the back of the run, as after
// a hop's fixed delay, move none and keep the run sorted up to sortedMost
// events; events queued in its middle turn it into a heap long before.
func TestSortedRunTurnsHeap(t *testing.T) {
	var q eventQueue
	for i := range sortedMost {
		q.push(time.Duration(i), evExit, 0, 0)
	}
	if q.heap {
		t.Fatalf("%d events queued in order: a heap, want a sorted run", q.len())
	}
	q.push(sortedMost, evExit, 0, 0)
	if !q.heap {
		t.Fatalf("%d events: a sorted run, want a heap", q.len())
	}
	for q.len() > sortedAgain {
		q.pop()
	}
	if q.heap {
		t.Fatalf("%d events: a heap, want a sorted run again", q.len())
	}
	var middle eventQueue
	for i := range 200 {
		middle.push(time.Duration(2*i), evExit, 0, 0)
	}
	pushed := 0
	for !middle.heap && pushed < sortedMost {
		middle.pop()
		middle.push(200, evExit, 0, 0) // 100 events later than it, as many earlier
		pushed++
	}
	// Each moves 99 or 100 events; the run's credit was at its most.
	if most := creditMost/(99-movesPerInsert) + 2; !middle.heap || pushed > most {
		t.Errorf("after %d events queued in the middle of 200: a heap %v; want a heap within %d", pushed, middle.heap, most)
	}
}

// TestEventQueueChangesFormWithoutAllocating: once the queue has grown,
// turning its sorted run into a heap and back allocates nothing.
func TestEventQueueChangesFormWithoutAllocating(t *testing.T) {
	var q eventQueue
	wave := func() {
		for i := range 3 * sortedMost {
			q.push(time.Duration(i*7919%1000), evExit, 0, 0)
		}
		for q.len() > 0 {
			q.pop()
		}
	}
	wave()
	if allocs := testing.AllocsPerRun(10, wave); allocs != 0 {
		t.Errorf("%v allocations a wave, want 0", allocs)
	}
}

// TestSourcesStayOutOfTheHeap: with 10 000 flows, each with a source's
// next frame pending, the heap holds only the other events (frames in
// flight, serialisers): about 600 here, where it held 10 000 more, whose
// sifting was a third of the run's time (issue 21).
func TestSourcesStayOutOfTheHeap(t *testing.T) {
	n := mustNew(t, manyFlows(10_000), nil)
	n.Advance(100 * ms)
	// 100 000 frames a second spend 6 ms in the hops' delays: 600 exits
	// pending on average, and a serialiser's wake-up at most per hop.
	if got, most := len(n.events.items), 2000; got > most {
		t.Errorf("%d events in the heap, want at most %d (the frames in flight)", got, most)
	}
	if got := n.events.len(); got < 10_000 {
		t.Errorf("%d events queued, want at least one per flow", got)
	}
}

// TestFlowLinesAFrameReads: what a frame's work reads of its flow is on
// three cache lines, which start on a line in the large allocation of many
// flows (issue 21; the same fields were on five or six of a flow's 368
// bytes, which did not start on a line, and then on four lines of the flow
// and three more of its route state, its source and its delay histogram's
// buckets). Making a frame reads the first two lines, forwarding it the
// first, counting it as delivered the third (and its delay's buckets, in
// other memory, only when it falls in another bucket than the frame
// before).
func TestFlowLinesAFrameReads(t *testing.T) {
	var f flow
	line := func(offset uintptr) uintptr { return offset / cacheLine }
	stats := unsafe.Offsetof(f.stats)
	delay := stats + unsafe.Offsetof(f.stats.Delay)
	tests := []struct {
		name   string
		offset uintptr
		line   uintptr
	}{
		{"pending", unsafe.Offsetof(f.pending), 0},
		{"nextSeq", unsafe.Offsetof(f.nextSeq), 0},
		{"size", unsafe.Offsetof(f.size), 0},
		{"routeLen", unsafe.Offsetof(f.routeLen), 0},
		{"on", unsafe.Offsetof(f.on), 0},
		{"hasLead", unsafe.Offsetof(f.hasLead), 0},
		{"near", unsafe.Offsetof(f.near), 0},
		{"end of near", unsafe.Offsetof(f.near) + unsafe.Sizeof(f.near) - 1, 0},
		{"rng", unsafe.Offsetof(f.rng), 1},
		{"poissonMean", unsafe.Offsetof(f.poissonMean), 1},
		{"stop", unsafe.Offsetof(f.stop), 1},
		{"end of src", unsafe.Offsetof(f.src) + unsafe.Sizeof(f.src) - 1, 1},
		{"Delay.n", delay + unsafe.Offsetof(f.stats.Delay.n), 2},
		{"Delay.min and max", delay + unsafe.Offsetof(f.stats.Delay.max), 2},
		{"Delay.hot", delay + unsafe.Offsetof(f.stats.Delay.hot), 2},
		{"Status[Delivered]", stats + unsafe.Offsetof(f.stats.Status) + uintptr(Delivered)*8, 2},
		{"Delay.store", delay + unsafe.Offsetof(f.stats.Delay.store), 2},
	}
	for _, tt := range tests {
		if got := line(tt.offset); got != tt.line {
			t.Errorf("%s at byte %d, on line %d of the flow; want line %d", tt.name, tt.offset, got, tt.line)
		}
	}
	if size := unsafe.Sizeof(f); size%cacheLine != 0 {
		t.Errorf("a flow is %d bytes, not a whole number of %d-byte lines", size, cacheLine)
	}
	n := mustNew(t, manyFlows(10_000), nil)
	if at := uintptr(unsafe.Pointer(&n.flows[0])); at%cacheLine != 0 {
		t.Errorf("10 000 flows start at %#x, not on a line", at)
	}
}

// TestExitsNameTheirFrames: an exit names its frame by its number in the
// pool, so a frame keeps its number through the pool and a hop's copy of
// it gets its own, and every frame reaches the end of its route as the
// frame it was: with duplication and delays, every frame sent is
// accounted for once, each copy too, and the numbers still match.
func TestExitsNameTheirFrames(t *testing.T) {
	cfg := oneHop(HopParams{Rate: 10 * Mbitps, Delay: 5 * ms, Duplicate: 0.3, Jitter: Jitter{Dist: Normal{Sigma: ms}}})
	cfg.Hops = append(cfg.Hops, HopConfig{Name: "h2", HopParams: HopParams{Delay: 2 * ms, Duplicate: 0.3}})
	cfg.Flows[0].Route = []int{0, 1}
	cfg.Flows[0].Traffic = Poisson{Rate: 5 * Mbitps, Size: 500}
	seqs := map[uint64]int{}
	copies := 0
	n := mustNew(t, cfg, observerFunc(func(f *Frame) {
		if f.Copy {
			copies++
			return
		}
		seqs[f.Seq]++
	}))
	n.Run(2 * time.Second)
	sent := n.FlowStats(0).Sent
	if uint64(len(seqs)) != sent || copies == 0 {
		t.Fatalf("%d frames finished of %d sent, and %d copies", len(seqs), sent, copies)
	}
	for seq, times := range seqs {
		if times != 1 {
			t.Fatalf("frame %d finished %d times", seq, times)
		}
	}
	for i, f := range n.pool.all {
		if f.id != uint32(i) {
			t.Fatalf("frame %d of the pool numbered %d", i, f.id)
		}
	}
}
