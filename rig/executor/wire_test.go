package executor_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/firmware/pid"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// pidDevice is a device on the bench running the reference PID firmware
// behind a line that takes exactly one turn of the test's clock (1 ms)
// each way, its clock 7 s ahead of the rig's and gaining 100 µs a second.
// It is the rig's endpoint "controller": what the rig writes to it
// reaches the firmware a turn later, and what the firmware writes reaches
// the rig a turn later. Nothing it does per turn allocates.
type pidDevice struct {
	clock    *stepClock
	sink     drivers.Sink
	index    int
	fw       *pid.Controller
	uart     bytesUART
	frames   wire.Decoder
	emit     func([]byte, time.Duration)
	framed   []byte
	toDevice frameQueue    // written by the rig, for the next turn
	toRig    frameQueue    // sent by the firmware, for the next turn
	shift    time.Duration // added to deviceTime: the clock restarted (restart)
}

const (
	deviceOffset = 7 * time.Second
	deviceDrift  = 100e-6
)

// deviceTime is the device's clock at the rig's time t.
func deviceTime(t time.Duration) time.Duration {
	return deviceOffset + t + time.Duration(math.Round(deviceDrift*float64(t)))
}

type bytesUART struct{ out []byte }

func (u *bytesUART) Read([]byte) (int, error) { return 0, nil }
func (u *bytesUART) Write(p []byte) (int, error) {
	u.out = append(u.out, p...)
	return len(p), nil
}

// frameQueue holds frames in buffers it allocates once.
type frameQueue struct {
	bufs [][]byte
	n    int
}

func newFrameQueue() frameQueue {
	q := frameQueue{bufs: make([][]byte, 32)}
	for i := range q.bufs {
		q.bufs[i] = make([]byte, 0, 600)
	}
	return q
}

func (q *frameQueue) add(p []byte) {
	q.bufs[q.n] = append(q.bufs[q.n][:0], p...)
	q.n++
}

func newPIDDevice(t testing.TB, clock *stepClock) *pidDevice {
	d := &pidDevice{clock: clock, frames: wire.COBS{}.NewDecoder(wire.DefaultMaxMessage), framed: make([]byte, 0, 1200),
		toDevice: newFrameQueue(), toRig: newFrameQueue()}
	d.uart.out = make([]byte, 0, 4096)
	d.start(t)
	d.emit = func(frame []byte, _ time.Duration) { d.toRig.add(frame) }
	return d
}

// start starts the firmware afresh.
func (d *pidDevice) start(t testing.TB) {
	one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	var err error
	d.fw, err = pid.New(pid.Config{
		Law:         pid.Law{Gains: pid.Gains{Kp: 1, Ki: 2}, Period: 10 * time.Millisecond, Min: -5, Max: 5},
		Measurement: one, Command: one, Setpoint: 1, SetpointField: -1,
		Timeout: 50 * time.Millisecond, Heartbeat: 20 * time.Millisecond,
	}, &d.uart, nil)
	if err != nil {
		t.Fatal(err)
	}
}

// restart restarts the device at the rig's time at: new firmware, its
// clock from 0.
func (d *pidDevice) restart(t testing.TB, at time.Duration) {
	d.start(t)
	d.shift = -deviceTime(at)
}

func (d *pidDevice) Name() string { return "controller" }
func (d *pidDevice) Start(_ drivers.Clock, sink drivers.Sink, index int) error {
	d.sink, d.index = sink, index
	return nil
}
func (d *pidDevice) Stop() error { return nil }
func (d *pidDevice) Write(p []byte) error {
	d.toDevice.add(p)
	return nil
}

// turn delivers what each side sent last turn, then runs the firmware.
func (d *pidDevice) turn() {
	now := d.clock.Now()
	for _, f := range d.toRig.bufs[:d.toRig.n] {
		d.sink.Frame(d.index, f, now)
	}
	d.toRig.n = 0
	for _, f := range d.toDevice.bufs[:d.toDevice.n] {
		d.framed = wire.COBS{}.Append(d.framed[:0], f)
		d.fw.Receive(d.framed, deviceTime(now)+d.shift)
	}
	d.toDevice.n = 0
	if d.fw.Next() <= deviceTime(now)+d.shift {
		d.fw.Tick(deviceTime(now) + d.shift)
	}
	d.frames.Feed(d.uart.out, 0, d.emit)
	d.uart.out = d.uart.out[:0]
}

// typeCounter is the plant's side: it counts what the rig writes to it by
// message type, and keeps nothing.
type typeCounter struct {
	byType [8]int
	bad    int
}

func (c *typeCounter) Name() string                                 { return "plant" }
func (c *typeCounter) Start(drivers.Clock, drivers.Sink, int) error { return nil }
func (c *typeCounter) Stop() error                                  { return nil }
func (c *typeCounter) Write(p []byte) error {
	m, err := wire.Parse(p)
	if err != nil {
		c.bad++
		return nil
	}
	c.byType[m.Type]++
	return nil
}

// wireBench is the PID on a device with codec wire, its commands and
// heartbeats going to a plant through a 3 ms hop and the plant's samples
// coming back through another, all on a clock the test turns a
// millisecond at a time.
type wireBench struct {
	x       *executor.Executor
	clock   *stepClock
	pid     *pidDevice
	plant   *driverstest.Endpoint
	counter *typeCounter
	link    *executor.WireLink
	trace   *strings.Builder
	traceW  *record.Trace
	sender  wire.Sender
	sample  []byte
	measure bool // the plant sends a sample every 5 ms

	plantLink *executor.WireLink // follows the plant's messages (newWireBenchFollowingPlant)
}

func newWireBench(t testing.TB) *wireBench { return newWireBenchOf(t, false) }

// newWireBenchFollowingPlant is the bench with codec wire on the plant
// too, whose messages the test sends (without answering time requests).
func newWireBenchFollowingPlant(t testing.TB) *wireBench { return newWireBenchOf(t, true) }

func newWireBenchOf(t testing.TB, followPlant bool) *wireBench {
	p := parse(t, `duration: 1h
hops:
  down: {delay: 3ms}
  up:   {delay: 3ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`)
	b := &wireBench{clock: &stepClock{}, plant: driverstest.NewEndpoint("plant", 1), counter: &typeCounter{}, trace: &strings.Builder{}, sample: make([]byte, 0, 64)}
	b.pid = newPIDDevice(t, b.clock)
	b.link = executor.NewWireLink("controller", b.pid)
	links, traced := []*executor.WireLink{b.link, nil}, []bool{false, false, true}
	if followPlant {
		b.plantLink = executor.NewWireLink("plant", nil)
		links[1], traced = b.plantLink, append(traced, true)
	}
	in := executor.NewIngress(64, func() {})
	names := append([]string{"m2s", "s2m"}, executor.EventRowNames(nil, links, nil)...)
	trace := record.NewTrace(b.trace, names, traced, true)
	b.traceW = trace
	t.Cleanup(func() { trace.Close() })
	var err error
	b.x, err = executor.New(executor.Config{
		Network: p.Config, Clock: b.clock, End: time.Hour,
		Egress:  []executor.Egress{executor.ToDevice(1, b.counter), executor.ToDevice(0, b.pid)},
		Ingress: in, FlowOf: []int{0, 1}, DeviceWire: links, Trace: trace,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.pid.Start(b.clock, in, 0)
	b.plant.Start(b.clock, in, 1)
	return b
}

var oneField, _ = wire.NewStruct([]wire.Field{{Type: wire.F64LE}})

// turn moves the clock a millisecond: the devices send, the executor
// steps.
func (b *wireBench) turn() {
	b.clock.Add(time.Millisecond)
	now := b.clock.Now()
	if b.measure && now%(5*time.Millisecond) == 0 {
		b.sample = b.sender.Values(b.sample[:0], wire.Sample, now, oneField, []float64{0.5})
		b.plant.Send(b.sample)
	}
	b.pid.turn()
	b.x.Step()
}

func (b *wireBench) runTo(t time.Duration) {
	for b.clock.Now() < t {
		b.turn()
	}
}

// TestWireLinkFollowsADevice runs the PID firmware as the rig's device:
// its time responses to the rig's requests are kept, not forwarded; its
// clock is known from them; each message's one-way delay is the line's
// millisecond; its fault flag going up when no measurement comes, and
// down when they do, is an event and a trace row each, at the instant the
// heartbeat saying so arrived.
func TestWireLinkFollowsADevice(t *testing.T) {
	b := newWireBench(t)
	// The firmware ticks first at 1 ms (the first turn), on its own clock:
	// without measurements for more than its 50 ms timeout (its clock
	// gains 5 µs in those 50 ms) its control tick at 51 ms raises the
	// flag, and the heartbeat it sends at once, not at its next periodic
	// one (every 20 ms from 1 ms: 61 ms), reaches the rig a turn later, at
	// 52 ms.
	b.runTo(200 * time.Millisecond)
	b.measure = true
	// The plant's samples from 205 ms reach the firmware at 209 ms (3 ms
	// hop, 1 ms line); its control tick at 211 ms clears the flag, and the
	// heartbeat it sends at once says so at 212 ms.
	b.runTo(3500 * time.Millisecond)
	events := b.x.Events()
	if len(events) != 2 || events[0].Kind != "fault_raised" || events[0].AtS != 0.052 || events[1].Kind != "fault_cleared" || events[1].AtS != 0.212 ||
		!strings.HasPrefix(events[0].Detail, "controller: ") {
		t.Errorf("events %+v", events)
	}
	want := record.RealTraceHeader + "\ncontroller,,,0.052000000,,fault_raised,\ncontroller,,,0.212000000,,fault_cleared,\n"
	b.x.Finish()
	if err := b.traceW.Close(); err != nil {
		t.Fatal(err)
	}
	if got := b.trace.String(); got != want {
		t.Errorf("trace\n%s\nwant\n%s", got, want)
	}

	s := b.x.WireSummary(b.link)
	t.Logf("%+v, one-way delay %+v, offset %v s, drift %v", *s, *s.OneWayDelay, *s.ClockOffsetS, *s.ClockDrift)
	// Requests at 0, 1, 2 and 3 s, each answered two turns later.
	if s.TimeExchanges != 4 || s.ClockOffsetS == nil || s.ClockDrift == nil {
		t.Fatalf("%d time exchanges, offset %v, drift %v", s.TimeExchanges, s.ClockOffsetS, s.ClockDrift)
	}
	// The line is symmetric, so each exchange's offset is the clocks'
	// difference at its midpoint, to the nanosecond: the fit is exact
	// but for float64's rounding.
	now := b.clock.Now()
	if off := *s.ClockOffsetS; math.Abs(off-(deviceTime(now)-now).Seconds()) > 1e-8 {
		t.Errorf("offset %.9f s, want %.9f s", off, (deviceTime(now) - now).Seconds())
	}
	if math.Abs(*s.ClockDrift-deviceDrift) > 1e-9 {
		t.Errorf("drift %g, want %g", *s.ClockDrift, deviceDrift)
	}
	// Every message took the line's 1 ms, as measured once the device's
	// clock is known: exactly (to the fit's nanosecond and the histogram's
	// resolution, emulator.QuantileRelError) from the second exchange, when
	// the drift is known; in the second before it, on the first
	// exchange's offset alone, less by the drift over the time since, up
	// to 100 µs.
	d := s.OneWayDelay
	if d == nil || d.Max > 0.001+2e-9 || d.Min < 0.001-deviceDrift*1.0 || math.Abs(d.P50-0.001) > 0.001/128 {
		t.Errorf("one-way delay %+v", d)
	}
	if s.CRCErrors != 0 || s.Gaps != 0 || s.Missed != 0 || s.Restarts != 0 || s.Status != "ok" || s.Heartbeats < 170 {
		t.Errorf("summary %+v", *s)
	}
	// The plant got the firmware's commands and heartbeats, not its time
	// responses; the firmware answered every request, through the rig's
	// own requests never disturbing its numbering.
	if c := b.counter; c.bad != 0 || c.byType[wire.TimeResponse] != 0 || c.byType[wire.Command] < 320 || c.byType[wire.Heartbeat] < 170 {
		t.Errorf("the plant got %v by type, %d bad", c.byType, c.bad)
	}
	if st := b.pid.fw.Link().Stats(); st.TimeAnswers != 4 || st.Received.Gaps != 0 || st.Received.Restarts != 0 || st.Received.Duplicates != 0 {
		t.Errorf("the firmware's link: %+v", st)
	}
}

// TestWireLinkFollowsADeviceThatRestarts restarts the PID's device at
// 2.5 s, its clock from 0 (9.5 s behind its old reading): the rig hears
// its message 0, says so as an event and a trace row, forgets the old
// clock and asks for the new one at once, so that its offset is the new
// clock's and no one-way delay is measured against the old one (which
// would have been −9.5 s, counted as 0, or +9.5 s the other way). The
// restarted controller's first command is no recovery: no event.
func TestWireLinkFollowsADeviceThatRestarts(t *testing.T) {
	b := newWireBench(t)
	b.measure = true
	b.runTo(2500 * time.Millisecond)
	b.pid.restart(t, b.clock.Now())
	b.runTo(2700 * time.Millisecond)
	s := b.x.WireSummary(b.link)
	// Requests at 0, 1 and 2 s, and at 2.502 s, when the rig heard the
	// restarted device's first message.
	if s.Restarts != 1 || s.TimeExchanges != 4 || s.ClockOffsetS == nil {
		t.Fatalf("%d restarts, %d time exchanges, offset %v", s.Restarts, s.TimeExchanges, s.ClockOffsetS)
	}
	now := b.clock.Now()
	// One exchange since: its offset without the drift, 100 µs a second
	// for the 0.2 s since.
	if want := (deviceTime(now) + b.pid.shift - now).Seconds(); math.Abs(*s.ClockOffsetS-want) > deviceDrift*0.2+1e-6 {
		t.Errorf("offset %.9f s, want %.9f s (the new clock's)", *s.ClockOffsetS, want)
	}
	if d := s.OneWayDelay; d == nil || d.Max > 0.001+2e-9 || d.Min < 0.001-deviceDrift*1.0 {
		t.Errorf("one-way delay %+v, want 1 ms throughout", d)
	}
	events := b.x.Events()
	if len(events) != 1 || events[0].Kind != "device_restarted" || events[0].AtS != 2.502 {
		t.Errorf("events %+v", events)
	}
	b.x.Finish()
	if err := b.traceW.Close(); err != nil {
		t.Fatal(err)
	}
	if want := record.RealTraceHeader + "\ncontroller,,,2.502000000,,device_restarted,\n"; b.trace.String() != want {
		t.Errorf("trace\n%s\nwant\n%s", b.trace.String(), want)
	}
}

// TestWirePlantNodeRestartIsNoWatchdogTrip sends a plant node's
// heartbeats: safe at its start, commanded, then, restarted, safe again
// and commanded again. The restart is an event; a restarted node's first
// heartbeat (safe: it starts so) is no watchdog trip, nor is its first
// command a recovery. A trip after the restart still is one.
func TestWirePlantNodeRestartIsNoWatchdogTrip(t *testing.T) {
	b := newWireBenchFollowingPlant(t)
	var node wire.Sender
	beat := func(st wire.Status) {
		b.sample = node.Heartbeat(b.sample[:0], b.clock.Now(), st)
		b.plant.Send(b.sample)
		b.turn()
	}
	beat(wire.StatusSafe)
	beat(0)
	beat(0)
	node = wire.Sender{} // restarted: numbers from 0 again
	beat(wire.StatusSafe)
	beat(0)
	beat(wire.StatusSafe) // a trip
	var kinds []string
	for _, e := range b.x.Events() {
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, " "); got != "device_restarted watchdog_tripped" {
		t.Errorf("events %q", got)
	}
	if s := b.x.WireSummary(b.plantLink); s.Restarts != 1 || s.Status != "safe" {
		t.Errorf("summary %+v", *s)
	}
}

// TestWireTrackingAllocatesNothing counts the allocations of a turn of
// the bench once warm: frames parsed and tracked as they enter the rig,
// their delays measured, a time exchange a second.
func TestWireTrackingAllocatesNothing(t *testing.T) {
	b := newWireBench(t)
	b.measure = true
	b.runTo(2500 * time.Millisecond)
	if allocs := testing.AllocsPerRun(2000, b.turn); allocs != 0 {
		t.Errorf("%v allocations per turn", allocs)
	}
	if s := b.x.WireSummary(b.link); s.TimeExchanges < 4 || s.Messages < 650 {
		t.Errorf("%d time exchanges, %d messages", s.TimeExchanges, s.Messages)
	}
}

// wireSeat is the quarter car's seat as a device speaking the wire
// protocol, its clock 3 s ahead of the rig's: each turn it sends the seat
// force as a sample, and it answers the rig's time requests at once (its
// line takes no time either way, so the rig knows its clock exactly).
type wireSeat struct {
	clock  *stepClock
	sink   drivers.Sink
	index  int
	sender wire.Sender
	body   []byte
	got    int // frames written to it
}

func (s *wireSeat) Name() string { return "seat" }
func (s *wireSeat) Start(_ drivers.Clock, sink drivers.Sink, index int) error {
	s.sink, s.index = sink, index
	return nil
}
func (s *wireSeat) Stop() error { return nil }
func (s *wireSeat) Write(p []byte) error {
	s.got++
	if m, err := wire.Parse(p); err == nil && m.Type == wire.TimeRequest {
		local := s.clock.Now() + 3*time.Second
		s.body = s.sender.TimeResponse(s.body[:0], local, wire.TimeReply{Requested: m.Time, Received: local})
		s.sink.Frame(s.index, s.body, s.clock.Now())
	}
	return nil
}

func (s *wireSeat) send() {
	local := s.clock.Now() + 3*time.Second
	s.body = s.sender.Values(s.body[:0], wire.Sample, local, oneField, []float64{12.5})
	s.sink.Frame(s.index, s.body, s.clock.Now())
}

// TestWireModelExchangeAllocatesNothing is TestModelExchangeAllocatesNothing
// with codec wire, the part holding and stepping on data: the model's
// messages numbered and stamped, the seat's parsed, tracked and stamped
// with the seat's clock through its endpoint's time sync.
func TestWireModelExchangeAllocatesNothing(t *testing.T) {
	for _, wait := range []bool{false, true} {
		p := parse(t, carLink)
		b, err := benchfile.ParseBench("b.yaml", []byte(`endpoints:
  car:  {model: {name: quarter-car, cut: CP2, exchange: 2ms, step: 500us, codec: {wire: {sends: command}}}}
  seat: {pty: {codec: wire}}
bind:
  m2s: {from: car, to: seat}
  s2m: {from: seat, to: car}
`), p)
		if err != nil {
			t.Fatal(err)
		}
		car, err := executor.NewModel("car", rig.ModelSpecOf(b.Models["car"]), 0, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		if wait {
			if err := car.SetStepping(executor.Stepping{Wait: true, MaxAge: 20 * time.Millisecond, Timeout: time.Minute}); err != nil {
				t.Fatal(err)
			}
		}
		clock := &stepClock{}
		seat := &wireSeat{clock: clock, body: make([]byte, 0, 64)}
		x, _ := seatedCar(t, p, car, seat, clock, &record.Monitor{})
		exchange := func() {
			for range 2 {
				clock.Add(time.Millisecond)
				seat.send()
				x.Step()
			}
		}
		for range 2000 {
			exchange()
		}
		if allocs := testing.AllocsPerRun(1000, exchange); allocs != 0 {
			t.Errorf("wait %v: %v allocations per exchange", wait, allocs)
		}
		s := car.Summary(true)
		w := s.Wire
		if s.FramesIn < 2900 || s.BadFrames != 0 || seat.got < 2900 || w == nil || w.Messages < 5900 || w.Gaps != 0 || w.OneWayDelay == nil {
			t.Fatalf("wait %v: %d frames taken up, %d bad, %d written to the seat; wire %+v", wait, s.FramesIn, s.BadFrames, seat.got, w)
		}
		// The seat's samples take the 5 ms hop: their one-way delay from
		// the seat's stamps, through its clock's estimate, is 5 ms.
		if math.Abs(w.OneWayDelay.P50-0.005) > 0.005/128 || math.Abs(w.OneWayDelay.Max-0.005) > 1e-9 {
			t.Errorf("wait %v: one-way delay %+v", wait, w.OneWayDelay)
		}
		if wait && s.Timestamps != "sender" {
			t.Errorf("stamped with %q", s.Timestamps)
		}
	}
}

// FuzzWireIngest feeds frames from a device with codec wire into the rig,
// which follows them and forwards them to a model speaking the wire
// protocol: whatever the bytes, each frame is one message, CRC failure or
// malformed frame to the device's link, nothing panics, and the model
// takes up only frames that are samples of its layout.
func FuzzWireIngest(f *testing.F) {
	var s wire.Sender
	one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	seed := func(bodies ...[]byte) []byte {
		var out []byte
		for _, b := range bodies {
			out = append(out, byte(len(b)))
			out = append(out, b...)
		}
		return out
	}
	f.Add(seed(s.Values(nil, wire.Sample, 1, one, []float64{2}), s.Heartbeat(nil, 2, wire.StatusFault), s.Heartbeat(nil, 3, 0)))
	f.Add(seed(s.Heartbeat(nil, 1, wire.StatusSafe), s.Heartbeat(nil, 2, 0), s.Heartbeat(nil, 3, wire.StatusSafe|wire.StatusFault)))
	f.Add(seed(s.TimeResponse(nil, 5, wire.TimeReply{Requested: 0, Received: 4}), s.Ack(nil, 6, wire.Acknowledgement{Seq: 1})))
	f.Add(seed([]byte{1, 2, 3}, s.Values(nil, wire.Command, 9, one, []float64{1})))
	p := parse(f, carLink)
	b, err := benchfile.ParseBench("b.yaml", []byte(`endpoints:
  car:  {model: {name: quarter-car, cut: CP2, exchange: 2ms, codec: {wire: {sends: command}}}}
  seat: {pty: {codec: wire}}
bind:
  m2s: {from: car, to: seat}
  s2m: {from: seat, to: car}
`), p)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		car, err := executor.NewModel("car", rig.ModelSpecOf(b.Models["car"]), 0, 1, false)
		if err != nil {
			t.Fatal(err)
		}
		clock := &stepClock{}
		seat := driverstest.NewEndpoint("seat", 1)
		x, link := seatedCar(t, p, car, seat, clock, nil)
		frames := 0
		for len(data) > 0 {
			n := min(int(data[0]), len(data)-1)
			seat.Send(data[1 : 1+n])
			data = data[1+n:]
			frames++
			clock.Add(time.Millisecond)
			x.Step()
		}
		clock.Add(10 * time.Millisecond)
		x.Step()
		w := x.WireSummary(link)
		if got := w.Messages + w.CRCErrors + w.Malformed; got != uint64(frames) {
			t.Errorf("%d frames, %d messages, %d CRC failures, %d malformed", frames, w.Messages, w.CRCErrors, w.Malformed)
		}
		if s := car.Summary(true); s.FramesIn+s.BadFrames > uint64(frames) {
			t.Errorf("the model took %d and refused %d of %d frames", s.FramesIn, s.BadFrames, frames)
		}
	})
}

// BenchmarkForwardingWire is BenchmarkForwarding with the controller on
// codec wire: each frame a wire sample, parsed and tracked as it enters
// the rig (with a time request a second of the clock).
func BenchmarkForwardingWire(b *testing.B) {
	for _, withWire := range []bool{false, true} {
		b.Run(map[bool]string{false: "opaque", true: "wire"}[withWire], func(b *testing.B) {
			p := parse(b, `duration: 1h
hops:
  link: {rate: 10Mbit, delay: 1ms, jitter: {dist: normal, sigma: 100us}, loss: {gilbert: {p: 1%, r: 30%}}}
flows:
  m2s: {route: [link]}
`)
			clock := &stepClock{}
			controller, plant := driverstest.NewEndpoint("controller", 1), driverstest.NewEndpoint("plant", 16)
			in := executor.NewIngress(64, func() {})
			var links []*executor.WireLink
			if withWire {
				links = []*executor.WireLink{executor.NewWireLink("controller", controller), nil}
			}
			x, err := executor.New(executor.Config{
				Network: p.Config, Clock: clock, End: time.Hour,
				Egress: []executor.Egress{executor.ToDevice(1, plant)}, Ingress: in, FlowOf: []int{0, -1}, DeviceWire: links,
			})
			if err != nil {
				b.Fatal(err)
			}
			controller.Start(clock, in, 0)
			var s wire.Sender
			body := make([]byte, 0, 64)
			two, _ := wire.NewStruct([]wire.Field{{Type: wire.F32LE}, {Type: wire.F32LE}})
			forward := func() {
				clock.Add(time.Millisecond)
				body = s.Values(body[:0], wire.Sample, clock.Now(), two, []float64{1, 2})
				controller.Send(body)
				x.Step()
			}
			for range 2000 {
				forward()
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				forward()
			}
		})
	}
}

// seatedCar is the wiring the wire tests share: car's peer is seat, a
// wire device on endpoint 0 whose frames feed flow 1, on clock; the
// executor has started.
func seatedCar(t testing.TB, p *profiles.Loaded, car *executor.Model, seat interface {
	drivers.Reader
	drivers.Writer
}, clock *stepClock, monitor *record.Monitor) (*executor.Executor, *executor.WireLink) {
	t.Helper()
	link := executor.NewWireLink("seat", seat)
	car.SetPeer(link)
	in := executor.NewIngress(64, func() {})
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(0, seat), car.Simulated()}, Ingress: in, FlowOf: []int{1},
		DeviceWire: []*executor.WireLink{link}, Models: []*executor.Model{car}, Monitor: monitor,
	})
	if err != nil {
		t.Fatal(err)
	}
	seat.Start(clock, in, 0)
	x.Start()
	return x, link
}
