package rig_test

import (
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/plantnode"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig"
)

// echoPin is a plant node's output wired to its input.
type echoPin struct{ v float64 }

func (p *echoPin) Out(v float64) error    { p.v = v; return nil }
func (p *echoPin) Read() (float64, error) { return p.v, nil }
func newNode(t testing.TB) (*rig.Firmware, *plantnode.Node) {
	t.Helper()
	one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	var node *plantnode.Node
	pin := &echoPin{}
	f, err := rig.NewFirmware(0, func(uart device.UART) (device.Firmware, error) {
		var err error
		node, err = plantnode.New(plantnode.Config{Period: 10 * time.Millisecond, Samples: one, Commands: one, Safe: []float64{-1},
			Watchdog: 50 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Ack: true}, uart, []device.AnalogIn{pin}, []device.AnalogOut{pin})
		return node, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, node
}

// sent is what a player injected, by message type.
type sent struct {
	at    []time.Duration
	types []wire.Type
}

func (s *sent) inject(now *time.Duration) func(flow int, payload []byte) {
	return func(flow int, payload []byte) {
		m, err := wire.Parse(payload)
		if err != nil || flow != 3 {
			panic("a bad frame injected")
		}
		s.at = append(s.at, *now)
		s.types = append(s.types, m.Type)
	}
}

// TestFirmwarePlaysANode plays the reference plant node: at its ticks it
// sends its samples (and heartbeats) into the endpoint's flow; a command
// written to it at an instant is applied then, and answered at once with
// its ack, between the ticks; a time request is answered at once too.
func TestFirmwarePlaysANode(t *testing.T) {
	f, node := newNode(t)
	f.Feed(3)
	var now time.Duration
	var ticks, answers sent
	f.Answer(answers.inject(&now))
	for now = 0; now <= 30*time.Millisecond; now += time.Millisecond {
		if f.Next() <= now {
			f.Emit(now, ticks.inject(&now))
		}
		if now == 15*time.Millisecond {
			var s wire.Sender
			one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
			if err := f.WriteAt(s.Values(nil, wire.Command, 0, one, []float64{2.5}), now); err != nil {
				t.Fatal(err)
			}
			if err := f.WriteAt(s.TimeRequest(nil, 123), now); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Ticks at 0, 10, 20 and 30 ms: a sample each, a heartbeat at 0, and
	// one at 20 ms, the tick after the command at 15 ms took the node out
	// of its safe state (a change of status is said at once).
	want := []wire.Type{wire.Sample, wire.Heartbeat, wire.Sample, wire.Sample, wire.Heartbeat, wire.Sample}
	if len(ticks.types) != len(want) || ticks.at[2] != 10*time.Millisecond || ticks.at[4] != 20*time.Millisecond || ticks.at[5] != 30*time.Millisecond {
		t.Errorf("at its ticks it sent %v at %v, want %v", ticks.types, ticks.at, want)
	}
	for i := range want {
		if i < len(ticks.types) && ticks.types[i] != want[i] {
			t.Errorf("at its ticks it sent %v, want %v", ticks.types, want)
			break
		}
	}
	if len(answers.types) != 2 || answers.types[0] != wire.Ack || answers.types[1] != wire.TimeResponse || answers.at[0] != 15*time.Millisecond {
		t.Errorf("in answer it sent %v at %v", answers.types, answers.at)
	}
	if out := node.Outputs(); out[0] != 2.5 || node.Safe() {
		t.Errorf("outputs %v, safe %v", out, node.Safe())
	}
}

// TestFirmwareAllocatesNothing: a frame written to a played firmware, its
// answer and its ticks allocate nothing once warm.
func TestFirmwareAllocatesNothing(t *testing.T) {
	f, _ := newNode(t)
	f.Feed(0)
	n := 0
	count := func(int, []byte) { n++ }
	f.Answer(count)
	var s wire.Sender
	one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	body := make([]byte, 0, 64)
	now := time.Duration(0)
	turn := func() {
		now += 5 * time.Millisecond
		body = s.Values(body[:0], wire.Command, now, one, []float64{1})
		f.WriteAt(body, now)
		if f.Next() <= now {
			f.Emit(now, count)
		}
	}
	for range 100 {
		turn()
	}
	if allocs := testing.AllocsPerRun(1000, turn); allocs != 0 {
		t.Errorf("%v allocations per turn", allocs)
	}
	if n < 1500 {
		t.Errorf("%d frames sent", n)
	}
}

// FuzzFirmware writes arbitrary frames to a played plant node (as if the
// network delivered them, damaged or not), between its ticks: nothing
// panics, and everything it sends is a well-formed message.
func FuzzFirmware(f *testing.F) {
	var s wire.Sender
	one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	f.Add(s.Values(nil, wire.Command, 0, one, []float64{2.5}))
	f.Add(s.TimeRequest(nil, 7))
	f.Add([]byte{0, 0, 1, 2, 0, 3})
	f.Fuzz(func(t *testing.T, frame []byte) {
		fw, _ := newNode(t)
		fw.Feed(1)
		check := func(flow int, payload []byte) {
			if _, err := wire.Parse(payload); err != nil || flow != 1 {
				t.Fatalf("sent %x on flow %d: %v", payload, flow, err)
			}
		}
		fw.Answer(check)
		for now := time.Duration(0); now < 30*time.Millisecond; now += 5 * time.Millisecond {
			fw.WriteAt(frame, now)
			if fw.Next() <= now {
				fw.Emit(now, check)
			}
		}
	})
}
