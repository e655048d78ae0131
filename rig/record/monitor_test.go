package record

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// fillSeq writes a snapshot whose every field says which publication it
// is, so that a reader can tell a torn copy from a whole one.
func fillSeq(n *uint64) func(*Snapshot) {
	return func(s *Snapshot) {
		*n++
		v := *n
		s.Reset(time.Duration(v), time.Time{})
		for range v % 7 {
			s.Flows = append(s.Flows, FlowProgress{Sent: v, Delivered: v})
		}
		for range v % 3 {
			s.Hops = append(s.Hops, HopProgress{QueueFrames: int(v)})
		}
		s.Events = int(v)
	}
}

// whole reports whether a snapshot is one publication's.
func whole(s *Snapshot) bool {
	v := uint64(s.Time)
	if uint64(s.Events) != v || len(s.Flows) != int(v%7) || len(s.Hops) != int(v%3) || s.Seq != v {
		return false
	}
	for _, f := range s.Flows {
		if f.Sent != v || f.Delivered != v {
			return false
		}
	}
	for _, h := range s.Hops {
		if h.QueueFrames != int(v) {
			return false
		}
	}
	return true
}

func TestMonitorPublishRead(t *testing.T) {
	var m Monitor
	var s Snapshot
	if m.Read(&s) {
		t.Fatal("a snapshot before the first publication")
	}
	var n uint64
	fill := fillSeq(&n)
	for range 10 {
		m.Publish(fill)
		if !m.Read(&s) || !whole(&s) || s.Seq != n {
			t.Fatalf("after publication %d: %+v", n, s)
		}
	}
	// A copy is the reader's own: publishing again does not change it.
	kept := m.Snapshot()
	m.Publish(fill)
	m.Publish(fill)
	if !whole(&kept) || kept.Seq != 10 {
		t.Errorf("the copy changed: %+v", kept)
	}
}

// TestMonitorConcurrent has readers copy while the publisher publishes
// as fast as it can; every copy must be one publication's, whole (run it
// with -race too: the pins are what orders the slots' writes and reads).
func TestMonitorConcurrent(t *testing.T) {
	var m Monitor
	var n uint64
	fill := fillSeq(&n)
	m.Publish(fill)
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, torn atomic.Uint64
	for range 4 {
		wg.Go(func() {
			var s Snapshot
			last, lastSeq := uint64(0), uint64(0)
			for !stop.Load() {
				// As the live API does: Seq to tell whether there is a
				// new snapshot, then Read it.
				if seq := m.Seq(); seq < lastSeq {
					torn.Add(1)
				} else {
					lastSeq = seq
				}
				m.Read(&s)
				reads.Add(1)
				if !whole(&s) || s.Seq < last {
					torn.Add(1)
				}
				last = s.Seq
			}
		})
	}
	for range 20000 {
		m.Publish(fill)
	}
	stop.Store(true)
	wg.Wait()
	if torn.Load() != 0 {
		t.Errorf("%d of %d copies were torn or went back in time", torn.Load(), reads.Load())
	}
	t.Logf("%d publications, %d skipped, %d reads", n, m.Skipped(), reads.Load())
}

// TestMonitorNeverWaits pins every slot, as readers stuck in the middle
// of a copy would: publishing skips, and goes on once they let go.
func TestMonitorNeverWaits(t *testing.T) {
	var m Monitor
	var n uint64
	fill := fillSeq(&n)
	m.Publish(fill)
	for i := range m.slots {
		m.slots[i].readers.Add(1)
	}
	m.Publish(fill)
	m.Publish(fill)
	if m.Skipped() != 2 || n != 1 {
		t.Fatalf("%d skipped, %d published", m.Skipped(), n)
	}
	for i := range m.slots {
		m.slots[i].readers.Add(-1)
	}
	m.Publish(fill)
	var s Snapshot
	if !m.Read(&s) || s.Seq != 2 || !whole(&s) {
		t.Errorf("after the readers let go: %+v", s)
	}
}

// TestPublishAllocatesNothing publishes flows with delays, as the executor
// does every PublishEvery, while a reader copies: once the slices and the
// windows have grown, neither side allocates.
func TestPublishAllocatesNothing(t *testing.T) {
	var m Monitor
	var stats [3]emulator.FlowStats
	frame := emulator.Frame{Status: emulator.Delivered}
	fill := func(s *Snapshot) {
		s.Reset(0, time.Time{})
		for i := range stats {
			frame.Done = time.Duration(i+1) * time.Millisecond
			stats[i].Record(&frame)
			s.AddFlow("f", &stats[i])
		}
		s.AddHop(emulator.HopState{Name: "h"})
		s.SetTiming(&stats[0].Delay, &stats[1].Delay, 1, 0)
	}
	var s Snapshot
	step := func() {
		m.Publish(fill)
		m.Read(&s)
	}
	for range 2 * monitorSlots {
		step()
	}
	if allocs := testing.AllocsPerRun(100, step); allocs != 0 {
		t.Errorf("%v allocations per publication and read", allocs)
	}
}

// TestRecent describes each interval on its own: the frames delivered
// since the previous publication.
func TestRecent(t *testing.T) {
	var m Monitor
	var st emulator.FlowStats
	record := func(d time.Duration, n int) {
		for range n {
			st.Sent++
			st.Record(&emulator.Frame{Status: emulator.Delivered, Done: d})
		}
	}
	publish := func() Snapshot {
		m.Publish(func(s *Snapshot) { s.Reset(0, time.Time{}); s.AddFlow("f", &st) })
		return m.Snapshot()
	}
	record(20*time.Millisecond, 100)
	publish()
	record(80*time.Millisecond, 10)
	s := publish()
	f := s.Flows[0]
	near := func(got, want time.Duration) bool {
		return float64(max(got-want, want-got)) <= emulator.QuantileRelError*float64(want)+1
	}
	if f.Recent.Count != 10 || !near(f.Recent.P50, 80*time.Millisecond) || f.Delay.Count != 110 || f.Delay.Max != 80*time.Millisecond {
		t.Errorf("recent %+v, all %+v", f.Recent, f.Delay)
	}
	// 100 frames at 20 ms and 10 at 80 ms: 100 are at most 25 ms, all 110
	// at most 100 ms.
	if f.DelayAtMost[7] != 100 || f.DelayAtMost[9] != 110 || f.DelaySum != 2800*time.Millisecond {
		t.Errorf("buckets %v, sum %v", f.DelayAtMost, f.DelaySum)
	}
	if s = publish(); s.Flows[0].Recent.Count != 0 {
		t.Errorf("an interval without frames: %+v", s.Flows[0].Recent)
	}
}
