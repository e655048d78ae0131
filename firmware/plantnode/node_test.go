package plantnode_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/device/virtual"
	"github.com/hilrig/hilrig/firmware/plantnode"
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

// bench is a node with two lags on its pins and the rig at the cable's
// other end.
type bench struct {
	clock    *virtual.Clock
	cable    *virtual.Cable
	lags     [2]*virtual.Lag
	node     *plantnode.Node
	rig      *device.Link
	samples  [][]float64
	acks     []wire.Acknowledgement
	statuses []wire.Status
	cfg      plantnode.Config
}

func newBench(t testing.TB, edit func(*plantnode.Config)) *bench {
	b := &bench{clock: &virtual.Clock{}, cable: virtual.NewCable()}
	b.cfg = plantnode.Config{
		Period:    10 * ms,
		Samples:   layout(t, wire.F32LE, wire.F32LE),
		Commands:  layout(t, wire.F64LE, wire.F64LE),
		Safe:      []float64{0, -1},
		Watchdog:  100 * ms,
		Heartbeat: 50 * ms,
		Ack:       true,
	}
	if edit != nil {
		edit(&b.cfg)
	}
	var ins []device.AnalogIn
	var outs []device.AnalogOut
	for i := range b.lags {
		b.lags[i] = &virtual.Lag{Tau: 20 * ms, Gain: 1, Clock: b.clock}
		ins, outs = append(ins, b.lags[i]), append(outs, b.lags[i])
	}
	var err error
	if b.node, err = plantnode.New(b.cfg, &b.cable.A, ins, outs); err != nil {
		t.Fatal(err)
	}
	values := make([]float64, 2)
	b.rig = device.NewLink(&b.cable.B, 0, func(m wire.Message, _ time.Duration) {
		switch m.Type {
		case wire.Sample:
			if err := m.Values(b.cfg.Samples, values); err != nil {
				t.Fatal(err)
			}
			b.samples = append(b.samples, []float64{values[0], values[1]})
		case wire.Ack:
			b.acks = append(b.acks, m.Acknowledgement())
		case wire.Heartbeat:
			b.statuses = append(b.statuses, m.Status())
		}
	})
	return b
}

// until runs the node up to now, a millisecond at a time.
func (b *bench) until(now time.Duration) {
	for b.clock.T < now {
		b.clock.T += ms
		b.node.Poll(b.clock.T)
		b.node.Tick(b.clock.T)
		b.rig.Poll(b.clock.T)
	}
}

func (b *bench) command(values ...float64) {
	b.rig.SendValues(wire.Command, b.clock.T, b.cfg.Commands, values)
}

func TestSafeAtTheStartAndCommandsAppliedOnArrival(t *testing.T) {
	b := newBench(t, nil)
	if !b.node.Safe() || b.lags[0].Drive() != 0 || b.lags[1].Drive() != -1 {
		t.Fatalf("at the start: safe %v, outputs %v %v", b.node.Safe(), b.lags[0].Drive(), b.lags[1].Drive())
	}
	b.until(5 * ms)
	b.command(2, 3)
	b.node.Poll(b.clock.T) // applied as it arrives, not at the next period
	if b.node.Safe() || b.lags[0].Drive() != 2 || b.lags[1].Drive() != 3 {
		t.Errorf("after a command: safe %v, outputs %v", b.node.Safe(), b.node.Outputs())
	}
	b.until(200 * ms)
	if len(b.acks) != 1 || b.acks[0] != (wire.Acknowledgement{Seq: 0, Type: wire.Command, Result: wire.Applied}) {
		t.Errorf("acks %+v", b.acks)
	}
	// A sample every 10 ms from 1 ms: 20 of them, each the lags' outputs
	// then (f32: to 2⁻²⁴ relative).
	if len(b.samples) != 20 {
		t.Fatalf("%d samples", len(b.samples))
	}
	if got, want := b.samples[10][0], 2*(1-math.Exp(-float64(101-5)/20)); math.Abs(got-want) > 1e-6 {
		t.Errorf("sample at 101 ms: %v, want %v", got, want)
	}
}

// TestWatchdog: commands every 10 ms until 300 ms, then none. Each is
// taken in a millisecond after it is sent, the last at 291 ms, so the
// first period tick more than the 100 ms watchdog later, at 401 ms
// (ticks at 1, 11, ... ms; at 391 ms it is exactly 100 ms), drives the
// outputs safe; the next command leaves safe.
func TestWatchdog(t *testing.T) {
	b := newBench(t, nil)
	tripped := time.Duration(-1)
	for b.clock.T < 600*ms {
		if b.clock.T%(10*ms) == 0 && b.clock.T < 300*ms {
			b.command(float64(b.clock.T/ms), 1)
		}
		b.until(b.clock.T + ms)
		if b.node.Safe() && tripped < 0 && b.clock.T > 0 {
			tripped = b.clock.T
		}
	}
	if tripped != 401*ms {
		t.Errorf("tripped at %v, want 401ms", tripped)
	}
	if b.lags[0].Drive() != 0 || b.lags[1].Drive() != -1 {
		t.Errorf("outputs %v after the trip, want the safe levels", b.node.Outputs())
	}
	// Heartbeats at 1, 51, ... ms, safe from the trip: 401, 451, 501 and
	// 551 ms (at 1 ms the first command has just arrived).
	safe := 0
	for _, s := range b.statuses {
		if s&wire.StatusSafe != 0 {
			safe++
		}
	}
	if len(b.statuses) != 12 || safe != 4 {
		t.Errorf("%d heartbeats, %d safe", len(b.statuses), safe)
	}
	b.command(7, 8)
	b.until(601 * ms)
	if b.node.Safe() || b.lags[0].Drive() != 7 {
		t.Error("a command after the trip was not applied")
	}
	if st := b.node.Stats(); st.Trips != 1 || st.Commands != 31 {
		t.Errorf("stats %+v", st)
	}
}

func TestCommandsTheNodeRefuses(t *testing.T) {
	b := newBench(t, nil)
	b.command(1, 2)
	b.rig.SendValues(wire.Command, 0, layout(t, wire.F32LE, wire.F32LE), []float64{5, 5}) // another layout
	b.command(math.NaN(), 5)
	b.command(5, math.Inf(-1))
	b.rig.SendValues(wire.Sample, 0, b.cfg.Commands, []float64{5, 5}) // not a command
	b.until(ms)
	if b.lags[0].Drive() != 1 || b.lags[1].Drive() != 2 {
		t.Errorf("outputs %v, want the first command's", b.node.Outputs())
	}
	want := []wire.AckResult{wire.Applied, wire.Rejected, wire.Rejected, wire.Rejected, wire.Unsupported}
	for i, a := range b.acks {
		if i >= len(want) || a.Result != want[i] || a.Seq != uint32(i) {
			t.Errorf("ack %d: %+v", i, a)
		}
	}
	if st := b.node.Stats(); st.Refused != 3 || st.Ignored != 1 || st.Commands != 1 {
		t.Errorf("stats %+v", st)
	}
}

type brokenPin struct{}

func (brokenPin) Read() (float64, error) { return 0, errors.New("ADC gone") }
func (brokenPin) Out(float64) error      { return errors.New("DAC gone") }

func TestPinErrorsAreCounted(t *testing.T) {
	cable := virtual.NewCable()
	cfg := plantnode.Config{Period: ms, Samples: layout(t, wire.F32LE), Commands: layout(t, wire.F32LE), Safe: []float64{0}, Watchdog: ms}
	n, err := plantnode.New(cfg, &cable.A, []device.AnalogIn{brokenPin{}}, []device.AnalogOut{brokenPin{}})
	if err != nil {
		t.Fatal(err)
	}
	n.Tick(0)
	if st := n.Stats(); st.ReadErrors != 1 || st.Samples != 0 || st.OutputErrors != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestConfigCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*plantnode.Config)
		want string
	}{
		{"safe levels", func(c *plantnode.Config) { c.Safe = []float64{0} }, "plantnode: 1 safe levels for 2 outputs"},
		{"a NaN safe level", func(c *plantnode.Config) { c.Safe[1] = math.NaN() }, "plantnode: output 2's safe level is NaN"},
		{"inputs", func(c *plantnode.Config) { c.Samples = layout(t, wire.U8) }, "plantnode: 2 inputs for a sample of 1 fields"},
		{"outputs", func(c *plantnode.Config) { c.Commands = layout(t, wire.U8) }, "plantnode: 2 outputs for a command of 1 fields"},
		{"no watchdog", func(c *plantnode.Config) { c.Watchdog = 0 }, "plantnode: the watchdog time must be positive"},
		{"no period", func(c *plantnode.Config) { c.Period = 0 }, "plantnode: the sampling period must be positive"},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", tc.name, r)
				}
			}()
			cfg := plantnode.Config{Period: ms, Samples: layout(t, wire.F32LE, wire.F32LE), Commands: layout(t, wire.F32LE, wire.F32LE), Safe: []float64{0, 0}, Watchdog: ms}
			tc.edit(&cfg)
			pins := []*virtual.Lag{{Clock: &virtual.Clock{}}, {Clock: &virtual.Clock{}}}
			_, err := plantnode.New(cfg, &virtual.NewCable().A, []device.AnalogIn{pins[0], pins[1]}, []device.AnalogOut{pins[0], pins[1]})
			if err == nil || err.Error() != tc.want {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
			}
		}()
	}
}

// TestNodeLoopAllocatesNothing: a period of the firmware (a command in
// and applied, the watchdog, a sample and a heartbeat out) allocates
// nothing.
func TestNodeLoopAllocatesNothing(t *testing.T) {
	b := newBench(t, func(c *plantnode.Config) { c.Heartbeat = c.Period; c.Ack = true })
	var s wire.Sender
	body := make([]byte, 0, 64)
	frame := make([]byte, 0, 64)
	rx := make([]byte, 256)
	values := []float64{1, 2}
	step := func() {
		b.clock.T += b.cfg.Period
		body = s.Values(body[:0], wire.Command, b.clock.T, b.cfg.Commands, values)
		frame = wire.COBS{}.Append(frame[:0], body)
		b.cable.B.Write(frame)
		b.node.Poll(b.clock.T)
		b.node.Tick(b.clock.T)
		for n, _ := b.cable.B.Read(rx); n > 0; n, _ = b.cable.B.Read(rx) {
		}
	}
	step()
	if a := testing.AllocsPerRun(200, step); a != 0 {
		t.Errorf("%v allocations per period", a)
	}
	if st := b.node.Stats(); st.Samples < 200 || st.Commands < 200 || b.node.Safe() {
		t.Errorf("the loop did not run: %+v", st)
	}
}

// FuzzNode: any bytes from the line, in any chunks, between ticks: no
// panic, outputs only ever driven to finite values, every byte accounted
// for.
func FuzzNode(f *testing.F) {
	var s wire.Sender
	cmd := layout(f, wire.F64LE, wire.I16LE)
	var seed []byte
	for i := range 3 {
		seed = wire.COBS{}.Append(seed, s.Values(nil, wire.Command, time.Duration(i), cmd, []float64{float64(i), 1}))
	}
	f.Add(seed, uint8(5))
	f.Add(append([]byte{0, 1, 2}, seed[7:]...), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		b := newBench(t, func(c *plantnode.Config) { c.Commands = cmd })
		step := int(chunk%32) + 1
		for i := 0; i < len(data); i += step {
			b.node.Receive(data[i:min(i+step, len(data))], b.clock.T)
			b.until(b.clock.T + 3*ms)
			for _, v := range b.node.Outputs() {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("an output driven to %v", v)
				}
			}
		}
		st := b.node.Link().Stats().Bytes
		if st.Bytes != uint64(len(data)) || st.FrameBytes+st.BadBytes+st.IdleBytes+st.Pending != st.Bytes {
			t.Fatalf("bytes unaccounted: %+v", st)
		}
	})
}
