package emulator

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"testing"
	"time"
)

// TestEarlier checks the branch-free comparison against its definition,
// by time and then by order, at the edges of both: equal times, equal
// orders (an event is not earlier than itself), the class bit, times at 0
// and near math.MaxInt64, which no event reaches but the comparison
// still handles.
func TestEarlier(t *testing.T) {
	const most = time.Duration(math.MaxInt64 - 1)
	times := []time.Duration{0, 1, 2, MaxDuration, 1 << 62, most - 1, most}
	orders := []uint64{0, 1, 2, classTraffic - 1, classTraffic, classTraffic | 1, math.MaxUint64 - 1, math.MaxUint64}
	for _, at := range times {
		for _, thanAt := range times {
			for _, order := range orders {
				for _, thanOrder := range orders {
					want := at < thanAt || at == thanAt && order < thanOrder
					if got := earlier(at, order, thanAt, thanOrder); got != want {
						t.Errorf("earlier(%d, %#x, %d, %#x) = %v, want %v", at, order, thanAt, thanOrder, got, want)
					}
				}
			}
		}
	}
}

func FuzzEarlier(f *testing.F) {
	f.Add(int64(0), uint64(0), int64(0), uint64(1))
	f.Add(int64(5), classTraffic|3, int64(5), uint64(7))
	f.Add(int64(math.MaxInt64-1), uint64(2), int64(math.MaxInt64-1), uint64(1))
	f.Fuzz(func(t *testing.T, at int64, order uint64, thanAt int64, thanOrder uint64) {
		// A time is never negative, and never math.MaxInt64 (see earlier).
		at, thanAt = at&math.MaxInt64, thanAt&math.MaxInt64
		at, thanAt = min(at, math.MaxInt64-1), min(thanAt, math.MaxInt64-1)
		want := at < thanAt || at == thanAt && order < thanOrder
		if got := earlier(time.Duration(at), order, time.Duration(thanAt), thanOrder); got != want {
			t.Errorf("earlier(%d, %#x, %d, %#x) = %v, want %v", at, order, thanAt, thanOrder, got, want)
		}
	})
}

// TestEventQueuePopsInSortedOrder drives the queue with random pushes and
// pops, as runQueueScript reads them, and checks every pop against a
// sorted reference: frame events and control events, at equal times and
// apart, many sources (with and without their own queue), and waves that
// grow it past sortedMost, into a heap, and back to a sorted run.
func TestEventQueuePopsInSortedOrder(t *testing.T) {
	for _, length := range []int{16, 200, 3000, 20_000} {
		for seed := range uint64(4) {
			s := NewStream(seed, "script", fmt.Sprint(length))
			script := make([]byte, length)
			for i := range script {
				script[i] = byte(s.Uint64())
			}
			forms := runQueueScript(t, script)
			if length == 20_000 && forms.heaps == 0 {
				t.Errorf("seed %d: %d bytes of script never made a heap", seed, length)
			}
		}
	}
	// A wave past sortedMost at the back, one in the middle, and each
	// drained: sorted, heap, sorted again, twice.
	script := []byte{0}
	for range 2 {
		script = append(script, opWave, 255, opWave|0x80, 200, opDrain, opDrain)
	}
	if forms := runQueueScript(t, script); forms.heaps < 2 || forms.sortedAgain < 2 {
		t.Errorf("waves: %d heaps, %d sorted again, want 2 of each", forms.heaps, forms.sortedAgain)
	}
}

// FuzzEventQueue runs runQueueScript on the fuzzer's scripts.
func FuzzEventQueue(f *testing.F) {
	f.Add([]byte{0, opTraffic, 3, opTraffic, 3, opPop, opControl, 0, opPop, opPop})
	f.Add([]byte{1, opSource, 9, opSource, 200, opTraffic, 1, opPop, opPop, opPop})
	f.Add([]byte{0, opWave, 255, opDrain, opWave | 0x80, 200, opDrain})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 1<<12 {
			script = script[:1<<12] // a wave is up to 2040 events: enough to grow past sortedMost
		}
		runQueueScript(t, script)
	})
}

// The operations of runQueueScript, in an operation byte's low 3 bits;
// each but a pop and a drain takes the next byte as its argument.
const (
	opTraffic = iota // a frame event, the argument's low 4 bits after now: often at a time queued already
	opSource         // a source's next frame, the argument's low 6 bits after now, scaled up by its high 2
	opControl        // a control event, at now or the argument after it, of a rank no other has
	opPop
	opPop2
	opWave  // 8·argument frame events: at the back of the queue, or with the high bit, at random places
	opDrain // pops until the queue holds under sortedAgain/2
	opFar   // a frame event far after now: the argument times 2^40 ns
)

type queueForms struct{ heaps, sortedAgain int }

// runQueueScript applies script to a queue and to a reference, a slice
// kept sorted by (time, order) by binary search, and checks each pop, the
// queue's length and its next time against it; it reports how often the
// queue turned into a heap and back. The script's first byte sets
// whether the sources' events are apart.
func runQueueScript(t *testing.T, script []byte) queueForms {
	t.Helper()
	if len(script) == 0 {
		return queueForms{}
	}
	q := eventQueue{sourcesApart: script[0]&1 == 1}
	var want []event // the reference, sorted
	var now time.Duration
	var ranks uint64
	var forms queueForms
	flows := 0
	sorted := func(a, b event) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order))
	}
	queued := func(e event) {
		i, found := slices.BinarySearchFunc(want, e, sorted)
		if found {
			t.Fatalf("order %#x queued twice", e.order)
		}
		want = slices.Insert(want, i, e)
	}
	push := func(kind eventKind, index int, at time.Duration) {
		order := q.push(at, kind, index, uint32(len(want)))
		queued(event{at: at, order: order, ref: uint32(index)<<kindBits | uint32(kind), frame: uint32(len(want))})
	}
	pop := func() {
		if len(want) == 0 {
			return
		}
		if at, ok := q.nextAt(); !ok || at != want[0].at {
			t.Fatalf("next at %v (%v), want %v", at, ok, want[0].at)
		}
		wasHeap := q.heap
		got := q.pop()
		if got != want[0] {
			t.Fatalf("popped %+v, want %+v (a heap: %v, %d queued)", got, want[0], wasHeap, len(want))
		}
		want = want[1:]
		now = got.at
		if wasHeap && !q.heap {
			forms.sortedAgain++
		}
	}
	for i := 1; i < len(script); i++ {
		op := script[i]
		var arg byte
		if o := op & 7; o != opPop && o != opPop2 && o != opDrain && i+1 < len(script) {
			i++
			arg = script[i]
		}
		wasHeap := q.heap
		switch op & 7 {
		case opTraffic:
			push(evExit, 0, now+time.Duration(arg&15))
		case opSource:
			flows++
			push(evEmit, flows, now+time.Duration(arg&63)<<(10*(arg>>6)))
		case opControl:
			ranks++
			at := now
			if op&0x80 != 0 {
				at += time.Duration(arg)
			}
			rank := bits.Reverse64(ranks) >> 1 // unique, in no order
			q.pushControl(at, evApply, int(arg), rank)
			queued(event{at: at, order: classControl | rank, ref: uint32(arg)<<kindBits | uint32(evApply)})
		case opPop, opPop2:
			pop()
		case opWave:
			last := now
			if len(want) > 0 {
				last = want[len(want)-1].at
			}
			for k := range 8 * int(arg) {
				if op&0x80 != 0 {
					push(evExit, 0, now+time.Duration(k*7919%1000))
				} else {
					push(evExit, 0, last+time.Duration(k/3))
				}
			}
		case opDrain:
			for len(want) >= sortedAgain/2 {
				pop()
			}
		case opFar:
			push(evSerialiser, int(arg), now+time.Duration(arg)<<40)
		}
		if !wasHeap && q.heap {
			forms.heaps++
		}
		if q.len() != len(want) {
			t.Fatalf("op %d: %d queued, want %d", i, q.len(), len(want))
		}
	}
	for len(want) > 0 {
		pop()
	}
	if _, ok := q.nextAt(); ok || q.len() != 0 {
		t.Fatalf("drained: %d still queued", q.len())
	}
	return forms
}
