package pid_test

import (
	"math"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/device/virtual"
	"github.com/hilrig/hilrig/firmware/pid"
	"github.com/hilrig/hilrig/firmware/wire"
)

const ms = time.Millisecond

func layout(t testing.TB, types ...wire.FieldType) *wire.Struct {
	fields := make([]wire.Field, len(types))
	for i, ft := range types {
		fields[i].Type = ft
	}
	s, err := wire.NewStruct(fields)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rig is the other end of the controller's cable, as the rig would be:
// it sends samples and collects what the controller sends.
type rig struct {
	link       *device.Link
	layout     *wire.Struct
	commands   []float64
	statuses   []wire.Status
	commandsAt []time.Duration
}

func newRig(t testing.TB, end device.UART, sample *wire.Struct) *rig {
	r := &rig{layout: sample}
	u := make([]float64, 1)
	cmd := layout(t, wire.F64LE)
	r.link = device.NewLink(end, 0, func(m wire.Message, at time.Duration) {
		switch m.Type {
		case wire.Command:
			if err := m.Values(cmd, u); err != nil {
				t.Fatal(err)
			}
			r.commands = append(r.commands, u[0])
			r.commandsAt = append(r.commandsAt, at)
		case wire.Heartbeat:
			r.statuses = append(r.statuses, m.Status())
		}
	})
	return r
}

func config(t testing.TB) pid.Config {
	return pid.Config{
		Law:              pid.Law{Gains: pid.Gains{Kp: 2, Ki: 5, Kd: 0.01}, Period: 10 * ms, Min: -10, Max: 10},
		Measurement:      layout(t, wire.F64LE, wire.F64LE),
		MeasurementField: 0,
		SetpointField:    -1,
		Setpoint:         1,
		Command:          layout(t, wire.F64LE),
		Timeout:          50 * ms,
		Heartbeat:        20 * ms,
	}
}

// TestFaultFlag runs the controller on a fake clock: measurements every
// 10 ms until 200 ms, none until 400 ms, then again. The last measurement
// before the outage arrives at 190 ms, so the first tick more than the
// 50 ms timeout later, at 250 ms, raises the flag; the controller holds
// its command and sends none until a measurement arrives again.
func TestFaultFlag(t *testing.T) {
	cable := virtual.NewCable()
	cfg := config(t)
	led := &virtual.Pin{}
	c, err := pid.New(cfg, &cable.A, led)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, &cable.B, cfg.Measurement)
	y := 0.0
	var faultAt, clearAt time.Duration = -1, -1
	var held float64
	for now := time.Duration(0); now <= 600*ms; now += ms {
		if now%(10*ms) == 0 && (now < 200*ms || now >= 400*ms) {
			r.link.SendValues(wire.Sample, now, cfg.Measurement, []float64{y, 0})
		}
		c.Poll(now)
		wasFault := c.Fault()
		c.Tick(now)
		r.link.Poll(now)
		switch {
		case c.Fault() && !wasFault:
			faultAt = now
			held, _ = c.Command()
		case !c.Fault() && wasFault:
			clearAt = now
		}
		if u, ok := c.Command(); ok {
			y += 0.001 * (u - y) // something for the loop to act on
		}
		if c.Fault() != bool(led.L) {
			t.Fatalf("%v: fault %v, LED %v", now, c.Fault(), led.L)
		}
	}
	if faultAt != 250*ms || clearAt != 400*ms {
		t.Errorf("fault raised at %v and cleared at %v, want 250ms and 400ms", faultAt, clearAt)
	}
	// Commands every 10 ms from 0 to 240 ms and from 400 ms: none while
	// the flag was up, and the last before it is the one held.
	for i, at := range r.commandsAt {
		if at >= 250*ms && at < 400*ms {
			t.Fatalf("a command at %v, while the flag was up", at)
		}
		if at == 240*ms && r.commands[i] != held {
			t.Errorf("held %v, last sent %v", held, r.commands[i])
		}
	}
	if n := len(r.commands); n != 25+21 {
		t.Errorf("%d commands, want 46", n)
	}
	// Heartbeats every 20 ms say so too: those at 260 to 380 ms (at
	// 400 ms the tick's control has cleared the flag before it), and one
	// at once at 250 ms, when the flag went up.
	faulty := 0
	for _, s := range r.statuses {
		if s&wire.StatusFault != 0 {
			faulty++
		}
	}
	if len(r.statuses) != 32 || faulty != 8 {
		t.Errorf("%d heartbeats, %d with the fault flag; want 32 and 8", len(r.statuses), faulty)
	}
	st := c.Stats()
	if st.Faults != 1 || st.Measurements != 20+21 || st.Commands != 46 || st.Ticks != 61 || st.Skipped != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestNoMeasurementSinceTheStartIsAFault(t *testing.T) {
	cable := virtual.NewCable()
	c, err := pid.New(config(t), &cable.A, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := time.Duration(-1)
	for now := 1000 * ms; now <= 1100*ms; now += ms {
		c.Tick(now)
		if c.Fault() && first < 0 {
			first = now
		}
	}
	// The timeout runs from the first tick, at 1000 ms: the first tick
	// more than 50 ms later is at 1060 ms.
	if first != 1060*ms {
		t.Errorf("fault at %v, want 1060ms", first)
	}
	if _, ok := c.Command(); ok || c.Stats().Commands != 0 {
		t.Error("a command without a measurement")
	}
}

func TestSamplesTheControllerRefuses(t *testing.T) {
	cable := virtual.NewCable()
	cfg := config(t)
	cfg.SetpointField = 1
	c, _ := pid.New(cfg, &cable.A, nil)
	r := newRig(t, &cable.B, cfg.Measurement)
	r.link.SendValues(wire.Sample, 0, cfg.Measurement, []float64{math.NaN(), 1})          // NaN measurement
	r.link.SendValues(wire.Sample, 0, cfg.Measurement, []float64{0, math.Inf(1)})         // infinite setpoint
	r.link.SendValues(wire.Sample, 0, layout(t, wire.F32LE, wire.F64LE), []float64{1, 2}) // another layout
	r.link.SendValues(wire.Command, 0, cfg.Measurement, []float64{1, 2})                  // not a sample
	r.link.SendHeartbeat(0, 0)
	c.Poll(0)
	c.Tick(0)
	if st := c.Stats(); st.Refused != 3 || st.Ignored != 2 || st.Measurements != 0 || st.Commands != 0 {
		t.Errorf("stats %+v", st)
	}
	// The setpoint comes with the measurement: r = 3, y = 1 gives
	// u = Kp·2 = 4 on the first step (no integral yet, no derivative).
	r.link.SendValues(wire.Sample, 10*ms, cfg.Measurement, []float64{1, 3})
	c.Poll(10 * ms)
	c.Tick(10 * ms)
	if u, ok := c.Command(); !ok || u != 4 {
		t.Errorf("command %v, want 4", u)
	}
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*pid.Config)
		want string
	}{
		{"measurement field", func(c *pid.Config) { c.MeasurementField = 2 }, "pid: the measurement is field 2 of a sample of 2 fields"},
		{"setpoint field", func(c *pid.Config) { c.SetpointField = 5 }, "pid: the setpoint is field 5 of a sample of 2 fields"},
		{"two outputs", func(c *pid.Config) { c.Command = layout(t, wire.F32LE, wire.F32LE) }, "pid: a command has one field, u, not 2"},
		{"no layout", func(c *pid.Config) { c.Measurement = nil }, "pid: the measurement and command layouts are needed"},
		{"no timeout", func(c *pid.Config) { c.Timeout = 0 }, "pid: the measurement timeout must be positive"},
		{"the law", func(c *pid.Config) { c.Law.Period = 0 }, "pid: the period must be positive"},
	} {
		cfg := config(t)
		tc.edit(&cfg)
		if _, err := pid.New(cfg, &virtual.NewCable().A, nil); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

// TestControllerLoopAllocatesNothing: a period of the firmware (a sample
// in, the law, a command and a heartbeat out) allocates nothing.
func TestControllerLoopAllocatesNothing(t *testing.T) {
	cable := virtual.NewCable()
	cfg := config(t)
	cfg.Heartbeat = cfg.Law.Period
	c, _ := pid.New(cfg, &cable.A, nil)
	var s wire.Sender
	body := make([]byte, 0, 64)
	frame := make([]byte, 0, 64)
	rx := make([]byte, 256)
	values := []float64{0, 0}
	now := time.Duration(0)
	step := func() {
		body = s.Values(body[:0], wire.Sample, now, cfg.Measurement, values)
		frame = wire.COBS{}.Append(frame[:0], body)
		cable.B.Write(frame)
		c.Poll(now)
		c.Tick(now)
		for n, _ := cable.B.Read(rx); n > 0; n, _ = cable.B.Read(rx) {
		}
		values[0] += 0.01
		now += cfg.Law.Period
	}
	step()
	if a := testing.AllocsPerRun(200, step); a != 0 {
		t.Errorf("%v allocations per period", a)
	}
	if st := c.Stats(); st.Commands < 200 || c.Fault() {
		t.Errorf("the loop did not run: %+v", st)
	}
}

// FuzzController: any bytes from the line, in any chunks, between ticks:
// no panic, commands only within the limits, every byte accounted for.
func FuzzController(f *testing.F) {
	cfg := config(f)
	var s wire.Sender
	var seed []byte
	for i := range 3 {
		seed = wire.COBS{}.Append(seed, s.Values(nil, wire.Sample, time.Duration(i), cfg.Measurement, []float64{float64(i), 1}))
	}
	seed = wire.COBS{}.Append(seed, s.TimeRequest(nil, 5))
	f.Add(seed, uint8(5))
	f.Add(seed[3:], uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		cable := virtual.NewCable()
		c, err := pid.New(cfg, &cable.A, nil)
		if err != nil {
			t.Fatal(err)
		}
		step := int(chunk%32) + 1
		now := time.Duration(0)
		for i := 0; i < len(data); i += step {
			c.Receive(data[i:min(i+step, len(data))], now)
			c.Tick(now)
			if u, ok := c.Command(); ok && !(u >= cfg.Law.Min && u <= cfg.Law.Max) {
				t.Fatalf("command %v outside [%v, %v]", u, cfg.Law.Min, cfg.Law.Max)
			}
			now += 3 * ms
		}
		b := c.Link().Stats().Bytes
		if b.Bytes != uint64(len(data)) || b.FrameBytes+b.BadBytes+b.IdleBytes+b.Pending != b.Bytes {
			t.Fatalf("bytes unaccounted: %+v", b)
		}
	})
}
