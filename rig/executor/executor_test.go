package executor_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/supervisor"
)

// stepClock is a real-time clock the test moves: waiting returns at once,
// where it is (jump makes it land on each deadline, as a perfectly punctual
// wall clock would).
type stepClock struct {
	driverstest.Clock
	jump bool
}

func (c *stepClock) Until(deadline time.Duration, _ func() bool) bool {
	if c.jump && deadline > c.Now() {
		c.Set(deadline)
	}
	return false
}

func (c *stepClock) Real() bool { return true }

func parse(t testing.TB, text string) *profiles.Loaded {
	t.Helper()
	p, err := profiles.Parse("p.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// forwarding is the executor's per-frame path in real time, with a clock
// the test moves and devices in memory: forward() has the controller read
// one frame, 1 ms after the last, and steps the executor, which releases
// what is due to the plant and the trace.
type forwarding struct {
	x                 *executor.Executor
	clock             *stepClock
	controller, plant *driverstest.Endpoint
}

func newForwarding(tb testing.TB) *forwarding {
	p := parse(tb, `duration: 1h
hops:
  link: {rate: 10Mbit, delay: 1ms, jitter: {dist: normal, sigma: 100us}, loss: {gilbert: {p: 1%, r: 30%}}}
flows:
  m2s: {route: [link]}
`)
	f := &forwarding{clock: &stepClock{}, controller: driverstest.NewEndpoint("controller", 1), plant: driverstest.NewEndpoint("plant", 16)}
	in := executor.NewIngress(64, func() {})
	trace := record.NewTrace(io.Discard, []string{"m2s"}, []bool{true}, true)
	recording := record.NewRecording(io.Discard, "test", []record.RecordingInterface{{Name: "controller"}, {Name: "plant"}}, []string{"m2s"})
	recording.Begin(time.Now())
	tb.Cleanup(func() { trace.Close(); recording.Close() })
	var err error
	f.x, err = executor.New(executor.Config{
		Network: p.Config, Clock: f.clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(1, f.plant)}, Ingress: in, FlowOf: []int{0, -1},
		Trace: trace, Recording: recording,
	})
	if err != nil {
		tb.Fatal(err)
	}
	f.controller.Start(f.clock, in, 0)
	for range 2000 { // warm: queues, histograms and heaps at their size
		f.forward()
	}
	return f
}

var controlFrame = []byte("0123456789 a control frame")

func (f *forwarding) forward() {
	f.clock.Add(time.Millisecond)
	f.controller.Send(controlFrame)
	f.x.Step()
}

// TestForwardingAllocatesNothing counts the allocations of the per-frame
// path once it is warm, with the trace and the recording on.
func TestForwardingAllocatesNothing(t *testing.T) {
	f := newForwarding(t)
	if allocs := testing.AllocsPerRun(1000, f.forward); allocs != 0 {
		t.Errorf("%v allocations per forwarded frame", allocs)
	}
	if f.plant.Written() == 0 || !bytes.Equal(f.plant.Last(), controlFrame) {
		t.Errorf("%d frames forwarded, the last %q", f.plant.Written(), f.plant.Last())
	}
}

// BenchmarkForwarding is the executor's CPU time and allocations per
// forwarded frame, without the devices' system calls.
func BenchmarkForwarding(b *testing.B) {
	f := newForwarding(b)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f.forward()
	}
}

const carLink = `duration: 1h
hops:
  down: {delay: 5ms}
  up:   {delay: 5ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`

func carBench(t testing.TB, p *profiles.Loaded) *benchfile.LoadedBench {
	b, err := benchfile.ParseBench("b.yaml", []byte(`endpoints:
  car:  {model: {name: quarter-car, cut: CP2, exchange: 2ms, step: 500us}}
  seat: {pty: {}}
bind:
  m2s: {from: car, to: seat}
  s2m: {from: seat, to: car}
`), p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// carLoop is the car at CP2 on the real-time path: frames go out
// through the engine to a seat in memory, which answers each exchange,
// with the signals file and a monitor on. step moves the clock on by dt
// and runs a turn.
type carLoop struct {
	car  *executor.Model
	seat *driverstest.Endpoint
	step func(dt time.Duration)
}

func newCarLoop(t *testing.T, st *executor.Stepping) *carLoop {
	p := parse(t, carLink)
	b := carBench(t, p)
	car, err := executor.NewModel("car", rig.ModelSpecOf(b.Models["car"]), 0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if st != nil {
		if err := car.SetStepping(*st); err != nil {
			t.Fatal(err)
		}
	}
	seat := driverstest.NewEndpoint("seat", 16)
	clock := &stepClock{}
	in := executor.NewIngress(64, func() {})
	signals := record.NewSignals(io.Discard, executor.SignalColumns([]*executor.Model{car}), true)
	t.Cleanup(func() { signals.Close() })
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(0, seat), car.Simulated()}, Ingress: in, FlowOf: []int{1},
		Models: []*executor.Model{car}, Signals: signals, Monitor: &record.Monitor{},
	})
	if err != nil {
		t.Fatal(err)
	}
	seat.Start(clock, in, 0)
	x.Start()
	force := []byte("12.5")
	return &carLoop{car: car, seat: seat, step: func(dt time.Duration) {
		clock.Add(dt)
		seat.Send(force) // the seat answers
		x.Step()
	}}
}

// TestModelExchangeAllocatesNothing drives a model endpoint's exchanges on
// the executor's path and counts allocations once warm.
func TestModelExchangeAllocatesNothing(t *testing.T) {
	l := newCarLoop(t, nil)
	exchange := func() { l.step(2 * time.Millisecond) }
	for range 2000 {
		exchange()
	}
	if allocs := testing.AllocsPerRun(1000, exchange); allocs != 0 {
		t.Errorf("%v allocations per exchange", allocs)
	}
	s := l.car.Summary(true)
	if s.Exchanges < 3000 || s.FramesIn < 2900 || l.seat.Written() < 2900 {
		t.Errorf("%d exchanges, %d frames taken up, %d written to the seat", s.Exchanges, s.FramesIn, l.seat.Written())
	}
}

// TestSupervisedExchangeAllocatesNothing is the same with the part
// stepping on data and a supervisor watching it.
func TestSupervisedExchangeAllocatesNothing(t *testing.T) {
	l := newCarLoop(t, &executor.Stepping{Wait: true, MaxAge: 20 * time.Millisecond, Timeout: time.Minute,
		Supervisor: &supervisor.Config{ThetaSafe: 30 * time.Millisecond, Check: time.Millisecond, Jump: 3}})
	exchange := func() { l.step(time.Millisecond); l.step(time.Millisecond) }
	for range 2000 {
		exchange()
	}
	if allocs := testing.AllocsPerRun(1000, exchange); allocs != 0 {
		t.Errorf("%v allocations per exchange", allocs)
	}
	s := l.car.Summary(true)
	if s.Messages == nil || s.Messages.Generated < 2900 || s.Sync == nil || s.Sync.OutOfSync {
		t.Errorf("stepping on data: %+v, sync %+v", s.Messages, s.Sync)
	}
}

// run runs the car at CP2 with its seat standing in for the hardware, on
// clock, for 2 s, and returns the trace and the signals.
func run(t *testing.T, clock executor.Clock) (trace, signals string, summaries []record.ModelSummary) {
	p := parse(t, `duration: 2s
seed: 3
hops:
  down: {delay: 5ms, jitter: {dist: normal, sigma: 2ms}, loss: {random: 5%}}
  up:   {rate: 1Mbit, delay: 5ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
  cross: {route: [up], traffic: {poisson: {rate: 200kbit, size: 300B}}}
`)
	b := carBench(t, p)
	car, err := executor.NewModel("car", rig.ModelSpecOf(b.Models["car"]), 0, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	var tb, sb strings.Builder
	models := []*executor.Model{car}
	tr := record.NewTrace(&tb, p.Flows.Names, []bool{true, true, true}, clock.Real())
	sig := record.NewSignals(&sb, executor.SignalColumns(models), clock.Real())
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: 2 * time.Second,
		Egress: []executor.Egress{car.StandIn(), car.Simulated(), nil}, Models: models, Trace: tr, Signals: sig,
	})
	if err != nil {
		t.Fatal(err)
	}
	x.Start()
	if stopped, err := x.Run(context.Background()); stopped != "duration" || err != nil {
		t.Fatalf("stopped by %s, %v", stopped, err)
	}
	x.Finish()
	if err := errors.Join(tr.Close(), sig.Close()); err != nil {
		t.Fatal(err)
	}
	_, summaries = x.Summary()
	return tb.String(), sb.String(), summaries
}

// TestVirtualIsTheReferenceOfReal runs the same co-simulation on the
// virtual clock and on a real clock that is perfectly punctual (it lands
// on every deadline): the loop is the same, so the traces and signals
// must be the same, byte for byte.
func TestVirtualIsTheReferenceOfReal(t *testing.T) {
	vTrace, vSignals, vModels := run(t, &executor.Virtual{})
	rTrace, rSignals, rModels := run(t, &stepClock{jump: true})
	if !strings.HasPrefix(rTrace, record.RealTraceHeader+"\n") {
		t.Fatalf("real-time trace header: %q", strings.SplitN(rTrace, "\n", 2)[0])
	}
	// Drop the real trace's t_due, which is t_recv when the clock is
	// punctual.
	var stripped strings.Builder
	stripped.WriteString(record.TraceHeader + "\n")
	for _, line := range strings.Split(strings.TrimSuffix(rTrace, "\n"), "\n")[1:] {
		i := strings.LastIndexByte(line, ',')
		fields := strings.Split(line, ",")
		if fields[4] != "" && fields[4] != fields[6] {
			t.Fatalf("t_recv %s is not t_due %s on a punctual clock: %q", fields[4], fields[6], line)
		}
		stripped.WriteString(line[:i] + "\n")
	}
	if stripped.String() != vTrace {
		t.Error("the real-time trace differs from the virtual-time one")
	}
	if rSignals != vSignals {
		t.Error("the real-time signals differ from the virtual-time ones")
	}
	if vModels[0].Exchanges != 1000 || rModels[0].Exchanges != 1000 || rModels[0].Overruns != 0 {
		t.Errorf("exchanges: virtual %d, real %d with %d overruns; want 1000 each", vModels[0].Exchanges, rModels[0].Exchanges, rModels[0].Overruns)
	}
	if strings.Count(vTrace, "\n") < 2100 { // 1000 frames each way and about 166 of cross traffic
		t.Errorf("only %d rows", strings.Count(vTrace, "\n"))
	}
}

// TestOverrunsIntegrateThrough steps a real clock 7 ms at a time past a
// 2 ms exchange: the model integrates through the exchanges it missed,
// sending only at the newest, so that its time keeps up with the clock.
func TestOverrunsIntegrateThrough(t *testing.T) {
	p := parse(t, carLink)
	b := carBench(t, p)
	car, err := executor.NewModel("car", rig.ModelSpecOf(b.Models["car"]), 0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	seat := driverstest.NewEndpoint("seat", 4)
	clock := &stepClock{}
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour, Ingress: executor.NewIngress(4, func() {}), FlowOf: []int{1},
		Egress: []executor.Egress{executor.ToDevice(0, seat), car.Simulated()}, Models: []*executor.Model{car},
	})
	if err != nil {
		t.Fatal(err)
	}
	x.Start()
	for range 100 {
		clock.Add(7 * time.Millisecond)
		x.Step()
	}
	// At 7k ms the exchanges due are those at 0, 2, …, 7k−1 ms: ⌊7k/2⌋+1
	// in all, of which one per step is sent and the rest are overruns.
	s := car.Summary(true)
	if s.Exchanges != 351 || s.FramesOut != 100 || s.Overruns != 251 {
		t.Errorf("%d exchanges, %d frames sent, %d overruns; want 351, 100, 251", s.Exchanges, s.FramesOut, s.Overruns)
	}
	if s.StepLateness == nil || s.StepLateness.Max < 0.005 {
		t.Errorf("step lateness %+v; the oldest due exchange is 5–6 ms late", s.StepLateness)
	}
}

// TestDeviceGoneStopsTheRun: a device that goes away fails the run unless
// it reconnects, when its gap is recorded instead, and its going and
// coming back are events of the run (told as they happen); its error is
// what it still has at the end: none once it is back.
func TestDeviceGoneStopsTheRun(t *testing.T) {
	p := parse(t, carLink)
	for _, tc := range []struct {
		name             string
		reconnects, back bool
	}{{"not reconnecting", false, false}, {"back", true, true}, {"still away", true, false}} {
		clock := &stepClock{jump: true}
		in := executor.NewIngress(4, func() {})
		var told []string
		x, err := executor.New(executor.Config{Network: p.Config, Clock: clock, End: time.Second,
			Ingress: in, FlowOf: []int{0, 1}, Reconnects: []bool{tc.reconnects, false},
			Notify: func(e record.Event) { told = append(told, e.Kind+": "+e.Detail) }})
		if err != nil {
			t.Fatal(err)
		}
		gone := &drivers.DeviceError{Endpoint: "controller", Device: "/dev/ttyUSB0", Err: errors.New("device vanished")}
		in.Gone(0, 0, gone)
		if tc.back {
			in.Back(0, 0)
		}
		stopped, err := x.Run(context.Background())
		gaps, failure := x.EndpointState(0)
		want := []string{"device_gone: controller: /dev/ttyUSB0: device vanished; the rig waits for it"}
		switch tc.name {
		case "not reconnecting":
			if !errors.Is(err, gone) || stopped != "failed: controller: /dev/ttyUSB0: device vanished" {
				t.Errorf("%s: stopped %q, %v", tc.name, stopped, err)
			}
			continue
		case "back":
			want = append(want, "device_back: controller (/dev/ttyUSB0): back after 0s away")
			if failure != "" {
				t.Errorf("%s: error %q", tc.name, failure)
			}
		case "still away":
			if failure != gone.Error() {
				t.Errorf("%s: error %q", tc.name, failure)
			}
		}
		if err != nil || stopped != "duration" || len(gaps) != 1 || !slices.Equal(told, want) {
			t.Errorf("%s: stopped %q, %v, gaps %v, told %q", tc.name, stopped, err, gaps, told)
		}
	}
}

// TestPostRunsOnTheExecutor: work posted from another goroutine runs on
// the executor's turn, once, between two events, and may record events.
func TestPostRunsOnTheExecutor(t *testing.T) {
	p := parse(t, carLink)
	clock := &stepClock{}
	x, err := executor.New(executor.Config{Network: p.Config, Clock: clock, End: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var ran []time.Duration
	done := make(chan struct{})
	go func() {
		x.Post(func(x *executor.Executor, now time.Duration) {
			ran = append(ran, now)
			x.Event(now, "change", "by hand")
		})
		close(done)
	}()
	<-done
	clock.Set(3 * time.Millisecond)
	x.Step()
	x.Step()
	if len(ran) != 1 || ran[0] != 3*time.Millisecond {
		t.Errorf("posted work ran at %v", ran)
	}
	if ev := x.Events(); len(ev) != 1 || ev[0].AtS != 0.003 || ev[0].Kind != "change" {
		t.Errorf("events %+v", ev)
	}
}

// script is a Source that sends a frame at given instants.
type script struct {
	flow int
	at   []time.Duration
}

func (s *script) Next() time.Duration {
	if len(s.at) == 0 {
		return math.MaxInt64
	}
	return s.at[0]
}

func (s *script) Emit(now time.Duration, inject func(int, []byte)) {
	for len(s.at) > 0 && s.at[0] <= now {
		inject(s.flow, []byte(fmt.Sprint("sent at ", s.at[0])))
		s.at = s.at[1:]
	}
}

// TestSourcesSendOnTime: a source's frames enter the network at its
// instants, in virtual time, and reach their egress after the hop's
// delay.
func TestSourcesSendOnTime(t *testing.T) {
	p := parse(t, carLink)
	out := driverstest.NewEndpoint("seat", 8)
	var tr strings.Builder
	trace := record.NewTrace(&tr, p.Flows.Names, []bool{true, true}, false)
	x, err := executor.New(executor.Config{Network: p.Config, Clock: &executor.Virtual{}, End: time.Second,
		Egress:  []executor.Egress{executor.ToEndpoint(-1, out), nil},
		Sources: []executor.Source{&script{flow: 0, at: []time.Duration{0, 300 * time.Millisecond, 700 * time.Millisecond}}},
		Trace:   trace})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	x.Finish()
	trace.Close()
	want := record.TraceHeader + "\nm2s,0,10,0.000000000,0.005000000,delivered\nm2s,1,13,0.300000000,0.305000000,delivered\nm2s,2,13,0.700000000,0.705000000,delivered\n"
	if tr.String() != want || out.Written() != 3 || string(out.Last()) != "sent at 700ms" {
		t.Errorf("trace\n%s\nwant\n%s\nthe seat got %d frames, the last %q", tr.String(), want, out.Written(), out.Last())
	}
}

// refusing is a device whose writes fail while refuse says so: a
// disconnected peer, a listening endpoint nobody connected to.
type refusing struct {
	*driverstest.Endpoint
	refuse func() bool
}

func (r refusing) Write(payload []byte) error {
	if r.refuse() {
		return errors.New("no peer")
	}
	return r.Endpoint.Write(payload)
}

// TestEgressDropIsNotDelivered: in real time, a frame the engine delivered
// but its device would not take is dropped as egress_drop in the flow's
// summary, the live snapshot and the trace, not delivered, and the delays
// are the delivered frames' only.
func TestEgressDropIsNotDelivered(t *testing.T) {
	p := parse(t, `duration: 1h
hops:
  link: {delay: 1ms}
flows:
  m2s: {route: [link]}
`)
	clock := &stepClock{}
	controller, plant := driverstest.NewEndpoint("controller", 1), driverstest.NewEndpoint("plant", 4)
	n := 0
	device := refusing{plant, func() bool { n++; return n <= 5 }} // the first 5 are refused
	in := executor.NewIngress(64, func() {})
	var tb bytes.Buffer
	trace := record.NewTrace(&tb, []string{"m2s"}, []bool{true}, true)
	mon := new(record.Monitor)
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(1, device)}, Ingress: in, FlowOf: []int{0, -1},
		Trace: trace, Monitor: mon,
	})
	if err != nil {
		t.Fatal(err)
	}
	controller.Start(clock, in, 0)
	for range 12 {
		clock.Add(time.Millisecond)
		controller.Send(controlFrame)
		x.Step()
	}
	clock.Add(time.Second) // everything due, and a snapshot published
	x.Step()
	x.Step()
	trace.Close()

	sum, _ := x.Summary()
	f := sum.Flows[0]
	if f.Sent != 12 || f.Delivered != 7 || f.Dropped["egress_drop"] != 5 || f.InFlight != 0 || math.Abs(f.LossRate-5.0/12) > 1e-12 {
		t.Errorf("summary: sent %d delivered %d dropped %v in flight %d loss rate %g; want 12, 7, egress_drop 5, 0, 5/12", f.Sent, f.Delivered, f.Dropped, f.InFlight, f.LossRate)
	}
	if f.Delay == nil || f.Delay.Min != 0.001 || f.Delay.Max != 0.001 {
		t.Errorf("delay %+v, want the delivered frames' 1 ms", f.Delay)
	}
	if plant.Written() != 7 || strings.Count(tb.String(), ",egress_drop,") != 5 {
		t.Errorf("plant got %d frames, trace has %d egress_drop rows; want 7 and 5", plant.Written(), strings.Count(tb.String(), ",egress_drop,"))
	}
	s := mon.Snapshot()
	if len(s.Flows) != 1 {
		t.Fatalf("snapshot has %d flows", len(s.Flows))
	}
	if sf := s.Flows[0]; sf.Sent != 12 || sf.Delivered != 7 || sf.EgressDrops != 5 || sf.Lost() != 5 || sf.Delay.Count != 7 {
		t.Errorf("snapshot: sent %d delivered %d egress_drop %d lost %d delays %d; want 12, 7, 5, 5, 7", sf.Sent, sf.Delivered, sf.EgressDrops, sf.Lost(), sf.Delay.Count)
	}
}
