package executor_test

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// batching is a byte-stream device in memory: it takes at most room
// frames of each write (0: all), and keeps the size of each.
type batching struct {
	*driverstest.Endpoint
	room    int
	batches []int
}

var _ drivers.BatchWriter = (*batching)(nil)

func (b *batching) WriteBatch(payloads [][]byte) (int, error) {
	b.batches = append(b.batches, len(payloads))
	taken := len(payloads)
	if b.room > 0 {
		taken = min(taken, b.room)
	}
	for _, p := range payloads[:taken] {
		b.Endpoint.Write(p)
	}
	if taken < len(payloads) {
		return taken, drivers.ErrNotReading
	}
	return taken, nil
}

// TestBurstIsOneWrite: frames released in one pass of the engine go to a
// byte-stream device in one write (they went in one each, 2 µs apart on a
// pty); each keeps its own row, counts and release lateness, and those the
// device did not take are egress drops.
func TestBurstIsOneWrite(t *testing.T) {
	for _, c := range []struct {
		name      string
		room      int
		burst     int
		delivered int
	}{
		{"one frame", 0, 1, 1},
		{"a burst of 10", 0, 10, 10},
		{"a burst of 10, room for 6", 6, 10, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := parse(t, "duration: 1h\nhops:\n  link: {delay: 1ms}\nflows:\n  m2s: {route: [link]}\n")
			clock := &stepClock{}
			controller := driverstest.NewEndpoint("controller", 1)
			plant := &batching{Endpoint: driverstest.NewEndpoint("plant", 64), room: c.room}
			in := executor.NewIngress(64, func() {})
			var tb bytes.Buffer
			trace := record.NewTrace(&tb, []string{"m2s"}, []bool{true}, true)
			x, err := executor.New(executor.Config{
				Network: p.Config, Clock: clock, End: time.Hour,
				Egress: []executor.Egress{executor.ToDevice(1, plant)}, Ingress: in, FlowOf: []int{0, -1},
				Trace: trace,
			})
			if err != nil {
				t.Fatal(err)
			}
			controller.Start(clock, in, 0)
			clock.Add(time.Millisecond)
			for i := range c.burst { // read together: one stamp
				controller.Send(fmt.Appendf(nil, "frame %d", i))
			}
			x.Step()
			clock.Add(time.Millisecond + 3*time.Microsecond) // all due, 3 µs ago
			x.Step()
			trace.Close()

			if !slices.Equal(plant.batches, []int{c.burst}) {
				t.Errorf("writes of %v frames; want one of %d", plant.batches, c.burst)
			}
			sum, _ := x.Summary()
			var timing record.TimingSummary
			x.Timing(&timing)
			f := sum.Flows[0]
			drops := c.burst - c.delivered
			if f.Sent != uint64(c.burst) || f.Delivered != uint64(c.delivered) || f.Dropped["egress_drop"] != uint64(drops) {
				t.Errorf("sent %d delivered %d dropped %v; want %d, %d, egress_drop %d", f.Sent, f.Delivered, f.Dropped, c.burst, c.delivered, drops)
			}
			if plant.Written() != c.delivered || strings.Count(tb.String(), ",egress_drop,") != drops || strings.Count(tb.String(), "\n") != c.burst+1 {
				t.Errorf("plant got %d, trace\n%s\nwant %d delivered, %d egress_drop rows", plant.Written(), tb.String(), c.delivered, drops)
			}
			if r := timing.ReleaseLateness; r == nil || r.Min != 3e-6 || r.Max != 3e-6 {
				t.Errorf("release lateness %+v; want every release 3 µs late", r)
			}
		})
	}
}

// TestBurstAllocatesNothing: the per-frame path with a byte-stream device
// allocates nothing once warm, bursts included.
func TestBurstAllocatesNothing(t *testing.T) {
	p := parse(t, "duration: 1h\nhops:\n  link: {delay: 1ms}\nflows:\n  m2s: {route: [link]}\n")
	clock := &stepClock{}
	controller := driverstest.NewEndpoint("controller", 1)
	plant := &batching{Endpoint: driverstest.NewEndpoint("plant", 64)}
	in := executor.NewIngress(64, func() {})
	trace := record.NewTrace(io.Discard, []string{"m2s"}, []bool{true}, true)
	recording := record.NewRecording(io.Discard, "test", []record.RecordingInterface{{Name: "controller"}, {Name: "plant"}}, []string{"m2s"})
	recording.Begin(time.Now())
	t.Cleanup(func() { trace.Close(); recording.Close() })
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(1, plant)}, Ingress: in, FlowOf: []int{0, -1},
		Trace: trace, Recording: recording,
	})
	if err != nil {
		t.Fatal(err)
	}
	controller.Start(clock, in, 0)
	turn := func() {
		clock.Add(time.Millisecond)
		for range 4 {
			controller.Send(controlFrame)
		}
		x.Step()
		plant.batches = plant.batches[:0]
	}
	for range 2000 {
		turn()
	}
	if allocs := testing.AllocsPerRun(1000, turn); allocs != 0 {
		t.Errorf("%v allocations per burst of 4", allocs)
	}
}

// logged is a device that notes its name in a log shared with others at
// each write.
type logged struct {
	*driverstest.Endpoint
	name string
	log  *[]string
}

func (l logged) Write(p []byte) error {
	*l.log = append(*l.log, l.name)
	return l.Endpoint.Write(p)
}

// loggedBatch is the same, a byte-stream device.
type loggedBatch struct{ logged }

func (l loggedBatch) WriteBatch(payloads [][]byte) (int, error) {
	for _, p := range payloads {
		l.Write(p)
	}
	return len(payloads), nil
}

// TestBurstGoesBeforeALaterWrite: a frame written at once (to a device
// that takes no batch, or a failed model's safe values, which go past the
// network) goes after the frames the engine released before it in the
// same pass, which are waiting for the end of the pass.
func TestBurstGoesBeforeALaterWrite(t *testing.T) {
	p := parse(t, "duration: 1h\nhops:\n  a: {delay: 1ms}\n  b: {delay: 1ms}\nflows:\n  m2s: {route: [a]}\n  s2m: {route: [b]}\n")
	clock := &stepClock{}
	controller, plant := driverstest.NewEndpoint("controller", 1), driverstest.NewEndpoint("plant", 1)
	var log []string
	toPlant := loggedBatch{logged{driverstest.NewEndpoint("plant out", 8), "plant", &log}}
	toController := logged{driverstest.NewEndpoint("controller out", 8), "controller", &log}
	in := executor.NewIngress(64, func() {})
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress:  []executor.Egress{executor.ToDevice(1, toPlant), executor.ToDevice(0, toController)},
		Ingress: in, FlowOf: []int{0, 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	controller.Start(clock, in, 0)
	plant.Start(clock, in, 1)
	clock.Add(time.Millisecond)
	controller.Send([]byte("first"))
	plant.Send([]byte("second"))
	x.Step()
	clock.Add(time.Millisecond)
	x.Step()
	if !slices.Equal(log, []string{"plant", "controller"}) {
		t.Errorf("written to %v; want the plant's frame (released first, in a burst) before the controller's", log)
	}
}
