package device_test

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/device/virtual"
	"github.com/hilrig/hilrig/firmware/wire"
)

func TestScheduleKeepsItsRateAndSkipsWhatItMissed(t *testing.T) {
	s := device.Schedule{Period: 10}
	var due []time.Duration
	for _, now := range []time.Duration{5, 6, 14, 15, 25, 26, 58, 60, 64, 68} {
		if s.Due(now) {
			due = append(due, now)
		}
	}
	// Ticks at 5, 15, 25; 58 is three periods after 25 (35 and 45 missed,
	// 55 taken late), so the next is 65 and 68 takes it.
	want := []time.Duration{5, 15, 25, 58, 68}
	if len(due) != len(want) {
		t.Fatalf("due at %v, want %v", due, want)
	}
	for i := range want {
		if due[i] != want[i] {
			t.Fatalf("due at %v, want %v", due, want)
		}
	}
	if s.Ticks() != 5 || s.Skipped() != 2 || s.Next() != 75 {
		t.Errorf("ticks %d, skipped %d, next %d", s.Ticks(), s.Skipped(), s.Next())
	}
}

func TestLagIsExact(t *testing.T) {
	clock := &virtual.Clock{}
	lag := &virtual.Lag{Tau: time.Second, Gain: 2, Clock: clock}
	lag.Out(1)
	for _, h := range []time.Duration{300 * time.Millisecond, 700 * time.Millisecond, 2 * time.Second} {
		clock.T += h
	}
	// Read after 3 s in one step, and the same in three: y = 2·(1 − e^−3).
	y, _ := lag.Read()
	want := 2 * (1 - math.Exp(-3))
	steps := &virtual.Lag{Tau: time.Second, Gain: 2, Clock: &virtual.Clock{}}
	steps.Out(1)
	for range 3 {
		steps.Clock.(*virtual.Clock).T += time.Second
		steps.Read()
	}
	y3, _ := steps.Read()
	if math.Abs(y-want) > 1e-12 || math.Abs(y3-want) > 1e-12 {
		t.Errorf("y %v and %v, want %v", y, y3, want)
	}
	instant := &virtual.Lag{Gain: 3, Clock: clock}
	instant.Out(2)
	if y, _ := instant.Read(); y != 6 {
		t.Errorf("no lag: %v", y)
	}
}

func TestDigitalAdapters(t *testing.T) {
	pin := &virtual.Pin{}
	out := device.DigitalOutput{Pin: pin, Threshold: 0.5}
	in := device.DigitalInput{Pin: pin}
	for _, tc := range []struct {
		v    float64
		want device.Level
	}{{0.49, device.Low}, {0.5, device.High}, {math.NaN(), device.Low}, {7, device.High}} {
		out.Out(tc.v)
		if v, _ := in.Read(); pin.L != tc.want || v != map[device.Level]float64{device.Low: 0, device.High: 1}[tc.want] {
			t.Errorf("%v drove %v, read %v", tc.v, pin.L, v)
		}
	}
}

// peer collects what arrives at a link.
type peer struct {
	link *device.Link
	got  []wire.Message
}

func newPeer(uart device.UART) *peer {
	p := &peer{}
	p.link = device.NewLink(uart, 0, func(m wire.Message, _ time.Duration) {
		m.Payload = append([]byte(nil), m.Payload...)
		p.got = append(p.got, m)
	})
	return p
}

func TestLinkAnswersTimeRequestsAndDropsStaleMessages(t *testing.T) {
	cable := virtual.NewCable()
	rig, dev := newPeer(&cable.A), newPeer(&cable.B)
	layout, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})

	// The device's clock is 1 s ahead of the rig's; each way takes 2 ms.
	for k := range 3 {
		t1 := time.Duration(k) * 100 * time.Millisecond
		rig.link.SendTimeRequest(t1)
		dev.link.Poll(t1 + 2*time.Millisecond + time.Second)
		rig.link.Poll(t1 + 4*time.Millisecond)
	}
	est := rig.link.PeerClock()
	if est.Exchanges() != 3 || est.Offset(0) != time.Second || est.OneWayDelay(time.Second+time.Millisecond, 3*time.Millisecond) != 2*time.Millisecond {
		t.Errorf("peer clock: %d exchanges, offset %v", est.Exchanges(), est.Offset(0))
	}
	if len(rig.got) != 0 || len(dev.got) != 0 {
		t.Errorf("time sync reached the handlers: %d, %d", len(rig.got), len(dev.got))
	}

	// A duplicate and a late frame are dropped; the rest is handed on.
	// The rig's link numbered its time requests 0 to 2; these go on.
	frames := make([][]byte, 4)
	sample := make([]byte, 0, 64)
	for i := range frames {
		var s wire.Sender
		m, _ := wire.Parse(s.Values(sample[:0], wire.Sample, 0, layout, []float64{float64(i)}))
		frames[i] = wire.COBS{}.Append(nil, wire.AppendMessage(nil, wire.Header{Type: wire.Sample, Seq: uint32(3 + i)}, m.Payload))
	}
	for _, i := range []int{0, 2, 2, 1, 3} {
		cable.A.Write(frames[i])
	}
	cable.A.Write(wire.COBS{}.Append(nil, []byte{1, 2, 3})) // a frame that is no message
	cable.A.Write([]byte{0x05, 1, 2, 0})                    // bytes that are no frame
	dev.link.Poll(time.Second)
	var seqs []uint32
	for _, m := range dev.got {
		seqs = append(seqs, m.Seq)
	}
	if len(seqs) != 3 || seqs[0] != 3 || seqs[1] != 5 || seqs[2] != 6 {
		t.Errorf("handed on %v, want [3 5 6]", seqs)
	}
	st := dev.link.Stats()
	if r := st.Received; r.Duplicates != 1 || r.Late != 1 || r.Malformed != 1 || r.Restarts != 0 || r.Missed != 0 || st.TimeAnswers != 3 || st.Sent != 3 {
		t.Errorf("stats %+v", st)
	}
	if b := st.Bytes; b.BadFrames != 1 || b.Bytes != b.FrameBytes+b.IdleBytes+b.BadBytes+b.Pending {
		t.Errorf("bytes unaccounted: %+v", b)
	}
}

type failingUART struct{ virtual.End }

func (failingUART) Write([]byte) (int, error) { return 0, errors.New("unplugged") }
func (failingUART) Read([]byte) (int, error)  { return 0, errors.New("unplugged") }

func TestLinkReportsTheUARTsErrors(t *testing.T) {
	l := device.NewLink(failingUART{}, 0, nil)
	if l.SendHeartbeat(0, 0) == nil || l.Poll(0) == nil {
		t.Error("errors swallowed")
	}
	if st := l.Stats(); st.WriteErrors != 1 || st.Sent != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestLinkAllocatesNothing(t *testing.T) {
	cable := virtual.NewCable()
	layout, _ := wire.NewStruct([]wire.Field{{Type: wire.F32LE}, {Type: wire.F32LE}})
	handled := 0
	a := device.NewLink(&cable.A, 0, nil)
	b := device.NewLink(&cable.B, 0, func(wire.Message, time.Duration) { handled++ })
	values := []float64{1, 2}
	now := time.Duration(0)
	// Warm the cable's queues to their size.
	a.SendValues(wire.Sample, now, layout, values)
	b.Poll(now)
	if n := testing.AllocsPerRun(100, func() {
		now += time.Millisecond
		a.SendValues(wire.Sample, now, layout, values)
		a.SendHeartbeat(now, 0)
		a.SendTimeRequest(now)
		b.Poll(now)
		a.Poll(now)
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
	if handled < 200 {
		t.Errorf("%d messages handled", handled)
	}
}

// TestPeriodicHeartbeatsBetweenTicks: Next is the work's or the
// heartbeat's tick, whichever is first; a heartbeat goes out only when
// due (its status unchanged), with the status it is given; a period of 0
// sends none.
func TestPeriodicHeartbeatsBetweenTicks(t *testing.T) {
	for _, hb := range []time.Duration{0, 15} {
		cable := virtual.NewCable()
		var statuses []wire.Status
		rig := device.NewLink(&cable.B, 0, func(m wire.Message, _ time.Duration) { statuses = append(statuses, m.Status()) })
		p := device.NewPeriodic(device.NewLink(&cable.A, 0, nil), 10, hb)
		var work, next []time.Duration
		for now := time.Duration(0); now <= 40; now = p.Next() {
			if p.Due(now) {
				work = append(work, now)
			}
			p.Heartbeat(now, wire.StatusFault)
			next = append(next, p.Next())
			rig.Poll(now)
		}
		wantNext := []time.Duration{10, 20, 30, 40, 50}
		wantStatuses := []wire.Status(nil)
		if hb > 0 { // heartbeats at 0, 15, 30, 45
			wantNext = []time.Duration{10, 15, 20, 30, 40, 45}
			wantStatuses = []wire.Status{1, 1, 1}
		}
		if fmt.Sprint(work) != "[0s 10ns 20ns 30ns 40ns]" || fmt.Sprint(next) != fmt.Sprint(wantNext) || fmt.Sprint(statuses) != fmt.Sprint(wantStatuses) {
			t.Errorf("heartbeat %v: work at %v, next %v, heartbeats %v", hb, work, next, statuses)
		}
		if p.Ticks() != 5 || p.Skipped() != 0 || p.Link().Stats().Sent != uint64(len(wantStatuses)) {
			t.Errorf("heartbeat %v: %d ticks, %d skipped, %d sent", hb, p.Ticks(), p.Skipped(), p.Link().Stats().Sent)
		}
	}
}

// TestPeriodicHeartbeatsAtOnceWhenTheStatusChanges: a status that is
// not the last heartbeat's goes out at the call that says it, between
// the periodic heartbeats, which keep their schedule; a change and back
// within a period is told both ways; nothing allocates.
func TestPeriodicHeartbeatsAtOnceWhenTheStatusChanges(t *testing.T) {
	cable := virtual.NewCable()
	var got []string
	rig := device.NewLink(&cable.B, 0, func(m wire.Message, _ time.Duration) {
		got = append(got, fmt.Sprintf("%d:%d", m.Time, m.Status()))
	})
	p := device.NewPeriodic(device.NewLink(&cable.A, 0, nil), 10, 100)
	status := func(now time.Duration) wire.Status {
		if now >= 30 && now < 50 { // a trip shorter than the heartbeat period
			return wire.StatusSafe
		}
		return 0
	}
	for now := time.Duration(0); now <= 200; now += 10 {
		p.Due(now)
		p.Heartbeat(now, status(now))
		rig.Poll(now)
	}
	if want := "[0:0 30:2 50:0 100:0 200:0]"; fmt.Sprint(got) != want {
		t.Errorf("heartbeats %v, want %v", got, want)
	}
	now := time.Duration(210)
	if allocs := testing.AllocsPerRun(100, func() {
		now += 10
		p.Due(now)
		p.Heartbeat(now, wire.Status(now/10%2)) // a change every call
	}); allocs != 0 {
		t.Errorf("%v allocations", allocs)
	}
}
