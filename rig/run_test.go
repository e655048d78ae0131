package rig

import (
	"io"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// memoryEndpoint takes frames into a fixed buffer.
type memoryEndpoint struct {
	got [][]byte
	n   int
}

func (m *memoryEndpoint) Name() string                                 { return "memory" }
func (m *memoryEndpoint) Start(drivers.Clock, drivers.Sink, int) error { return nil }
func (m *memoryEndpoint) Stop() error                                  { return nil }
func (m *memoryEndpoint) Write(p []byte) error {
	m.got[m.n%len(m.got)] = append(m.got[m.n%len(m.got)][:0], p...)
	m.n++
	return nil
}

// memoryRun is the executor's per-frame path with a clock the test moves
// and an endpoint in memory: forward() hands one frame to the ingress ring,
// as a reader does, 1 ms after the last, and steps the executor, which
// releases what is due to the endpoint and the trace.
type memoryRun struct {
	r     *runner
	clock *stepClock
	out   *memoryEndpoint
	spare []byte
}

func newMemoryRun(tb testing.TB) *memoryRun {
	p, err := profiles.Parse("p.yaml", []byte(`duration: 1h
hops:
  link: {rate: 10Mbit, delay: 1ms, jitter: {dist: normal, sigma: 100us}, loss: {gilbert: {p: 1%, r: 30%}}}
flows:
  m2s: {route: [link]}
`))
	if err != nil {
		tb.Fatal(err)
	}
	m := &memoryRun{clock: &stepClock{}, out: &memoryEndpoint{got: make([][]byte, 16)}, spare: make([]byte, 0, slotBytes)}
	for i := range m.out.got {
		m.out.got[i] = make([]byte, 0, 64)
	}
	m.r = &runner{endpoints: []endpoint{{Endpoint: &memoryEndpoint{}}, {Endpoint: m.out}}, flowOf: []int{0, -1}, egress: []int{1}}
	if m.r.net, err = emulator.New(p.Config, m.r); err != nil {
		tb.Fatal(err)
	}
	m.r.clock = m.clock
	m.r.in = newIngress(64, func() {})
	m.r.trace = newRunTrace(io.Discard, []string{"m2s"}, []bool{true})
	tb.Cleanup(func() { m.r.trace.close() })
	for range 2000 { // warm: queues, histograms and heaps at their size
		m.forward()
	}
	return m
}

var controlFrame = []byte("0123456789 a control frame")

func (m *memoryRun) forward() {
	m.clock.now += time.Millisecond
	m.r.in.Frame(0, controlFrame, m.r.clock.Now())
	m.spare, _ = m.r.step(m.spare, time.Hour)
}

// TestForwardingAllocatesNothing counts the allocations of the per-frame
// path once it is warm.
func TestForwardingAllocatesNothing(t *testing.T) {
	m := newMemoryRun(t)
	if allocs := testing.AllocsPerRun(1000, m.forward); allocs != 0 {
		t.Errorf("%v allocations per forwarded frame", allocs)
	}
	if m.out.n == 0 {
		t.Error("nothing was forwarded")
	}
}

// BenchmarkForwarding is the executor's CPU time and allocations per
// forwarded frame, without the devices' system calls.
func BenchmarkForwarding(b *testing.B) {
	m := newMemoryRun(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m.forward()
	}
}

// stepClock is a clock the test moves.
type stepClock struct{ now time.Duration }

func (c *stepClock) Now() time.Duration { return c.now }

// TestModelExchangeAllocatesNothing drives a model endpoint's exchanges on
// the executor's path, frames going out through the engine to a device in
// memory and coming back, with the signals file and a monitor on, and
// counts allocations once warm.
func TestModelExchangeAllocatesNothing(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte(`duration: 1h
hops:
  down: {delay: 5ms}
  up:   {delay: 5ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := profiles.ParseBench("b.yaml", []byte(`endpoints:
  car:  {model: {name: quarter-car, cut: CP2, exchange: 2ms, step: 500us}}
  seat: {pty: {}}
bind:
  m2s: {from: car, to: seat}
  s2m: {from: seat, to: car}
`), p)
	if err != nil {
		t.Fatal(err)
	}
	car, err := newModelEndpoint("car", b.Models["car"])
	if err != nil {
		t.Fatal(err)
	}
	car.flow = 0
	seat := &memoryEndpoint{got: make([][]byte, 16)}
	for i := range seat.got {
		seat.got[i] = make([]byte, 0, 64)
	}
	clock := &stepClock{}
	r := &runner{endpoints: []endpoint{{Endpoint: car}, {Endpoint: seat}}, flowOf: []int{0, 1}, egress: []int{1, 0},
		models: []*modelEndpoint{car}, monitor: &Monitor{}, flowNames: p.Flows.Names}
	if r.net, err = emulator.New(p.Config, r); err != nil {
		t.Fatal(err)
	}
	r.clock = clock
	r.in = newIngress(64, func() {})
	r.signals = startSignals(io.Discard, r.models)
	defer r.signals.close()
	spare := make([]byte, 0, slotBytes)
	force := []byte("12.5")
	exchange := func() {
		clock.now += 2 * time.Millisecond
		r.in.Frame(1, force, clock.now) // the seat answers
		spare, _ = r.step(spare, time.Hour)
	}
	for range 2000 {
		exchange()
	}
	if allocs := testing.AllocsPerRun(1000, exchange); allocs != 0 {
		t.Errorf("%v allocations per exchange", allocs)
	}
	if car.exchanges < 3000 || car.end.framesIn < 2900 || seat.n < 2900 {
		t.Errorf("%d exchanges, %d frames taken up, %d written to the seat", car.exchanges, car.end.framesIn, seat.n)
	}
}
