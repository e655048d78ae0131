package executor_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// watched is the forwarding path of a bottleneck with a monitor, as the
// live API runs it: frames of 1000 B every millisecond into 4 Mbit/s, so
// that the queue grows by one frame every 2 ms.
type watched struct {
	x      *executor.Executor
	clock  *stepClock
	in     *driverstest.Endpoint
	out    *driverstest.Endpoint
	mon    *record.Monitor
	frame  []byte
	frames int
}

func newWatched(tb testing.TB) *watched {
	p := parse(tb, `duration: 1h
hops:
  link: {rate: 4Mbit, delay: 10ms, queue: 100 frames}
flows:
  m2s: {route: [link]}
`)
	w := &watched{clock: &stepClock{}, in: driverstest.NewEndpoint("controller", 1), out: driverstest.NewEndpoint("plant", 4),
		mon: &record.Monitor{}, frame: make([]byte, 1000)}
	ingress := executor.NewIngress(64, func() {})
	var err error
	w.x, err = executor.New(executor.Config{
		Network: p.Config, Clock: w.clock, End: math.MaxInt64,
		Egress: []executor.Egress{executor.ToDevice(1, w.out)}, Ingress: ingress, FlowOf: []int{0, -1},
		Monitor: w.mon,
	})
	if err != nil {
		tb.Fatal(err)
	}
	w.in.Start(w.clock, ingress, 0)
	return w
}

func (w *watched) forward() {
	w.clock.Add(time.Millisecond)
	w.in.Send(w.frame)
	w.x.Step()
	w.frames++
}

// TestSnapshotShowsTheRun checks what the executor publishes against what
// the profile makes happen: 1000 B every 1 ms into 4 Mbit/s (2 ms each)
// fills the queue by one frame every 2 ms until its 100 frames are full,
// and every frame that gets through takes its queueing time plus 2 ms of
// serialisation plus the 10 ms delay.
func TestSnapshotShowsTheRun(t *testing.T) {
	w := newWatched(t)
	for range 150 {
		w.forward()
	}
	s := w.mon.Snapshot()
	// The last publication was at 101 ms (the first at 1 ms): 101 frames
	// sent, 49 serialised, one being serialised and 50 waiting.
	if s.Time != 101*time.Millisecond || len(s.Flows) != 1 || len(s.Hops) != 1 || !s.Timing.Real {
		t.Fatalf("%+v", s)
	}
	f, h := s.Flows[0], s.Hops[0]
	// The k-th frame (from 0) is sent at k+1 ms and leaves at 2k+3 ms +
	// 10 ms: its delay is k+12 ms, and those out by 101 ms are k ≤ 44.
	if f.Sent != 101 || f.Delivered != 45 || f.Lost() != 0 {
		t.Errorf("flow %+v", f)
	}
	if h.Name != "link" || h.QueueFrames != 50 || h.QueueBytes != int64(1000*h.QueueFrames) || h.Rate != 4*emulator.Mbitps || h.Delay != 10*time.Millisecond {
		t.Errorf("hop %+v", h)
	}
	if f.Delay.Max != 56*time.Millisecond || f.Delay.Mean != 34*time.Millisecond || f.Recent.Count != f.Delivered || !near(f.Recent.P50, 34*time.Millisecond) {
		t.Errorf("delay %+v, recent %+v", f.Delay, f.Recent)
	}
	for range 2000 {
		w.forward()
	}
	s = w.mon.Snapshot()
	if f, h = s.Flows[0], s.Hops[0]; f.QueueDrops == 0 || h.QueueFrames != 100 {
		t.Errorf("a full queue: flow %+v, hop %+v", f, h)
	}
	// Full, the queue holds 100 frames of 2 ms: each frame waits 200 ms,
	// then 2 ms of serialisation and 10 ms of delay.
	// The queue is full: 100 frames of 2 ms each ahead, so every frame
	// waits 200 ms (less the part of the current frame already sent),
	// then 2 ms of serialisation and 10 ms of delay: 211 to 212 ms.
	if f.Recent.Count != 50 || f.Recent.P50 < 211*time.Millisecond || !near(f.Recent.P50, 212*time.Millisecond) {
		t.Errorf("recent delay %+v", f.Recent)
	}
}

// near is within the histograms' quantile resolution.
func near(got, want time.Duration) bool {
	return math.Abs(float64(got-want)) <= emulator.QuantileRelError*float64(want)+1
}

// TestWatchedForwardingAllocatesNothing is the executor's per-frame path
// with a monitor published every 100 ms and readers copying it all the
// time, as live clients do: the executor still allocates nothing.
func TestWatchedForwardingAllocatesNothing(t *testing.T) {
	w := newWatched(t)
	for range 3000 { // warm: queues, histograms, snapshots at their size
		w.forward()
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			var s record.Snapshot
			for !stop.Load() {
				w.mon.Read(&s)
			}
		})
	}
	for range 1000 { // the readers' snapshots at their size
		w.forward()
	}
	allocs := testing.AllocsPerRun(1000, w.forward)
	stop.Store(true)
	wg.Wait()
	if allocs != 0 {
		t.Errorf("%v allocations per forwarded frame with readers", allocs)
	}
	// Every 100 ms of the 5 s a publication, or one skipped because the
	// readers held every other slot, as the monitor does rather than wait
	// (under the race detector, whose slow copies kept them pinned, 1 of 50
	// was in a CI run).
	if s := w.mon.Snapshot(); s.Seq+w.mon.Skipped() < 50 {
		t.Errorf("%d publications and %d skipped in %d ms", s.Seq, w.mon.Skipped(), w.frames)
	}
}

// BenchmarkPublish is what one publication costs the executor: a flow
// whose delays span a bottleneck's queue, and its hop.
func BenchmarkPublish(b *testing.B) {
	w := newWatched(b)
	for range 3000 {
		w.forward()
	}
	b.ResetTimer()
	for range b.N {
		w.clock.Add(record.PublishEvery)
		w.x.Step()
	}
}

// scriptClock jumps from deadline to deadline, doing what is due on the
// way (a device going away, coming back), and keeps every snapshot the
// monitor holds at each of them.
type scriptClock struct {
	stepClock
	mon   *record.Monitor
	due   []scriptStep
	snaps map[time.Duration]record.Snapshot
}

type scriptStep struct {
	at time.Duration
	do func()
}

func (c *scriptClock) Until(deadline time.Duration, pending func() bool) bool {
	s := c.mon.Snapshot()
	c.snaps[s.Time] = s
	for len(c.due) > 0 && c.due[0].at <= deadline {
		c.Set(c.due[0].at)
		c.due[0].do()
		c.due = c.due[1:]
		return true
	}
	return c.stepClock.Until(deadline, pending)
}

// TestSnapshotShowsEndpointsAndLoss: the snapshot says whether each
// device is there (away since when, and how many times it went) and the
// loss each hop's model is set to now, which the live dashboard and the
// metrics show.
func TestSnapshotShowsEndpointsAndLoss(t *testing.T) {
	p := parse(t, `duration: 1h
hops:
  link: {delay: 10ms, loss: {random: 2.5%}}
  clean: {delay: 1ms}
flows:
  m2s: {route: [link]}
  s2m: {route: [clean]}
`)
	in := executor.NewIngress(4, func() {})
	mon := &record.Monitor{}
	gone := errors.New("device vanished")
	clock := &scriptClock{stepClock: stepClock{jump: true}, mon: mon, snaps: map[time.Duration]record.Snapshot{}, due: []scriptStep{
		{150 * time.Millisecond, func() { in.Gone(0, 150*time.Millisecond, gone) }},
		{350 * time.Millisecond, func() { in.Back(0, 350*time.Millisecond) }},
		{550 * time.Millisecond, func() { in.Gone(0, 550*time.Millisecond, gone) }},
	}}
	x, err := executor.New(executor.Config{Network: p.Config, Clock: clock, End: 700 * time.Millisecond,
		Ingress: in, FlowOf: []int{0, 1}, Reconnects: []bool{true, true}, Endpoints: []string{"controller", "plant"}, Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		at        time.Duration
		away      bool
		awaySince time.Duration
		gaps      uint64
	}{
		{at: 100 * time.Millisecond},
		{at: 200 * time.Millisecond, away: true, awaySince: 150 * time.Millisecond, gaps: 1},
		{at: 400 * time.Millisecond, gaps: 1},
		{at: 600 * time.Millisecond, away: true, awaySince: 550 * time.Millisecond, gaps: 2},
	} {
		s, ok := clock.snaps[want.at]
		if !ok || len(s.Endpoints) != 2 {
			t.Fatalf("at %v: no snapshot with both endpoints: %+v", want.at, s.Endpoints)
		}
		c, pl := s.Endpoints[0], s.Endpoints[1]
		if c.Name != "controller" || c.Away != want.away || c.AwaySince != want.awaySince || c.Gaps != want.gaps {
			t.Errorf("at %v: controller %+v; want away %v since %v, %d gaps", want.at, c, want.away, want.awaySince, want.gaps)
		}
		if pl.Name != "plant" || pl.Away || pl.Gaps != 0 {
			t.Errorf("at %v: plant %+v", want.at, pl)
		}
		if len(s.Hops) != 2 || s.Hops[0].Loss != 0.025 || s.Hops[1].Loss != 0 {
			t.Errorf("at %v: hops %+v; want loss 0.025 and 0", want.at, s.Hops)
		}
	}
}
