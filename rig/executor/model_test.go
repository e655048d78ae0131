package executor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/supervisor"
)

// commandSeat is wireSeat keeping the commands written to it: each one's
// number and values.
type commandSeat struct {
	*wireSeat
	layout *wire.Struct
	seqs   []uint32
	values [][]float64
}

func (s *commandSeat) Write(p []byte) error {
	if m, err := wire.Parse(p); err == nil && m.Type == wire.Command {
		v := make([]float64, len(s.layout.Fields))
		if err := m.Values(s.layout, v); err != nil {
			return err
		}
		s.seqs, s.values = append(s.seqs, m.Seq), append(s.values, v)
	}
	return s.wireSeat.Write(p)
}

// TestSafeValuesAreMessagesOfTheirOwn: a model in shadow with safe values
// sends each as a wire message of its own, numbered and stamped when it is
// sent. They were encoded once, when the stepping was set: every safe
// message repeated one number, which the device takes for a duplicate and
// ignores. The safe messages are counted as sent (and safe_sent), not
// skipped: generated = sent + skipped, and frames out = sent.
func TestSafeValuesAreMessagesOfTheirOwn(t *testing.T) {
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
	bm := b.Models["car"]
	car, err := executor.NewModel("car", rig.ModelSpecOf(bm), 0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	n := len(bm.Simulated.Out())
	safe := make([]float64, n)
	fields := make([]wire.Field, n)
	for i := range safe {
		safe[i], fields[i] = 777+float64(i), wire.Field{Type: wire.F64LE}
	}
	layout, err := wire.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := car.SetStepping(executor.Stepping{Wait: true, MaxAge: 20 * time.Millisecond, Timeout: time.Minute, Safe: safe,
		Supervisor: &supervisor.Config{ThetaSafe: 30 * time.Millisecond, Check: time.Millisecond, Jump: 1}}); err != nil {
		t.Fatal(err)
	}
	clock := &stepClock{}
	seat := &commandSeat{wireSeat: &wireSeat{clock: clock, body: make([]byte, 0, 64)}, layout: layout}
	x, _ := seatedCar(t, p, car, seat, clock, nil)
	// The seat sends every millisecond and falls silent from 2 s to 2.1 s:
	// the model stalls, falls out of sync, and catches up in shadow. As a
	// run does, the executor turns again at once when its next deadline
	// has come (a step that ended).
	for ms := 1; ms <= 3000; ms++ {
		clock.Add(time.Millisecond)
		if ms < 2000 || ms >= 2100 {
			seat.send()
		}
		for range 1000 {
			if next, _ := x.Step(); next > clock.Now() {
				break
			}
		}
	}
	_, models := x.Summary()
	s := models[0]
	c, sync := s.Messages, s.Sync
	if sync == nil || len(sync.Episodes) != 1 || sync.Episodes[0].EndS == nil {
		t.Fatalf("sync %+v; want one episode, ended", sync)
	}
	var safeSeen uint64
	for i, v := range seat.values {
		if v[0] == safe[0] {
			safeSeen++
		}
		if i > 0 && seat.seqs[i] != seat.seqs[i-1]+1 {
			t.Fatalf("command %d numbered %d after %d: each message has its own number", i, seat.seqs[i], seat.seqs[i-1])
		}
	}
	if c.SafeSent == 0 || safeSeen != c.SafeSent || c.Skipped+c.SkippedDisruption != 0 {
		t.Errorf("messages %+v; the seat read %d safe commands", c, safeSeen)
	}
	if c.Generated != c.Sent+c.Skipped+c.SkippedDisruption || s.FramesOut != c.Sent || uint64(len(seat.seqs)) != c.Received {
		t.Errorf("messages %+v, %d frames out; the seat read %d commands", c, s.FramesOut, len(seat.seqs))
	}
}

// TestAlarmRowAtItsEvent: in real time the watchdog raises the alarm on
// its own goroutine, at the instant it computed t_diff, and the executor
// takes it up at its next turn, later; the out_of_sync event and its
// trace row are both at the alarm's instant (the row was at the turn's:
// 2.593738 s for an event at 2.593307 s).
func TestAlarmRowAtItsEvent(t *testing.T) {
	p := parse(t, carLink)
	car, err := executor.NewModel("car", rig.ModelSpecOf(carBench(t, p).Models["car"]), 0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := car.SetStepping(executor.Stepping{Wait: true, MaxAge: 20 * time.Millisecond, Timeout: time.Minute,
		Supervisor: &supervisor.Config{ThetaSafe: 30 * time.Millisecond, Check: time.Millisecond, Jump: 1}}); err != nil {
		t.Fatal(err)
	}
	var tb strings.Builder
	names := append(slices.Clone(p.Flows.Names), executor.EventRowNames([]*executor.Model{car}, nil, nil)...)
	tr := record.NewTrace(&tb, names, []bool{true, true, true}, true)
	seat := driverstest.NewEndpoint("seat", 16)
	clock := &stepClock{}
	in := executor.NewIngress(64, func() {})
	alarms := make(chan record.Event, 4)
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(0, seat), car.Simulated()}, Ingress: in, FlowOf: []int{1},
		Models: []*executor.Model{car}, Trace: tr, Notify: func(e record.Event) { alarms <- e },
	})
	if err != nil {
		t.Fatal(err)
	}
	seat.Start(clock, in, 0)
	x.Start()
	for range 100 { // 100 ms in step
		clock.Add(time.Millisecond)
		seat.Send([]byte("12.5"))
		x.Step()
	}
	// The seat falls silent and the executor does not turn: only the
	// watchdog sees the model stall.
	clock.Add(100 * time.Millisecond)
	done := make(chan struct{})
	x.Watch(done)
	var alarm record.Event
	select {
	case alarm = <-alarms:
	case <-time.After(10 * time.Second):
		t.Fatal("the watchdog raised no alarm")
	}
	close(done)
	clock.Add(7 * time.Millisecond)
	x.Step()
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	events := x.Events()
	if alarm.Kind != "out_of_sync" || len(events) != 1 || events[0].AtS != alarm.AtS {
		t.Fatalf("alarm %+v, events %+v", alarm, events)
	}
	want := fmt.Sprintf("\ncar,,,%.9f,,out_of_sync,", alarm.AtS) // a real-time trace's row, t_due last
	if !strings.Contains(tb.String(), want) {
		t.Errorf("no row %q in the trace:\n%s", want[1:], tb.String()[strings.Index(tb.String(), "\ncar,")+1:])
	}
}

// TestDivergedModelStopsTheRun: a device sends the car a value that is
// not a number. At the next exchange the car's part holds it: the model
// has diverged, which is an event at that instant, the part sends nothing
// from then on, and the run stops as a failure that says why. Before, the
// car sent NaN to the seat at every exchange and the run went on.
func TestDivergedModelStopsTheRun(t *testing.T) {
	p := parse(t, carLink)
	car, err := executor.NewModel("car", rig.ModelSpecOf(carBench(t, p).Models["car"]), 0, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	seat := driverstest.NewEndpoint("seat", 16)
	clock := &stepClock{}
	in := executor.NewIngress(64, func() {})
	var told []record.Event
	x, err := executor.New(executor.Config{
		Network: p.Config, Clock: clock, End: time.Hour,
		Egress: []executor.Egress{executor.ToDevice(0, seat), car.Simulated()}, Ingress: in, FlowOf: []int{1},
		Models: []*executor.Model{car}, Notify: func(e record.Event) { told = append(told, e) },
	})
	if err != nil {
		t.Fatal(err)
	}
	seat.Start(clock, in, 0)
	x.Start()
	for range 100 {
		clock.Add(time.Millisecond)
		seat.Send([]byte("12.5"))
		x.Step()
	}
	// At 100 ms the seat sends NaN; it reaches the car 5 ms later, which
	// takes it up at its exchange of 106 ms.
	seat.Send([]byte("NaN"))
	clock.jump = true
	stopped, err := x.Run(context.Background())
	const at = 106 * time.Millisecond
	want := "model car diverged at 106ms: in the rig's part, signal Fseat = NaN"
	if err == nil || err.Error() != want || stopped != "failed: "+want {
		t.Fatalf("stopped %q, %v; want %s", stopped, err, want)
	}
	events := x.Events()
	if len(events) != 1 || events[0].Kind != "model_diverged" || events[0].AtS != at.Seconds() || len(told) != 1 ||
		!strings.HasPrefix(events[0].Detail, "car: in the rig's part, signal Fseat = NaN") {
		t.Fatalf("events %+v, told %+v", events, told)
	}
	// One frame at each exchange before 106 ms, none at it or after.
	if _, models := x.Summary(); models[0].FramesOut != uint64(at/(2*time.Millisecond)) {
		t.Errorf("%d frames out; want %d, one at each exchange before the model diverged", models[0].FramesOut, at/(2*time.Millisecond))
	}
}
