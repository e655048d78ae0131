//go:build linux

package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/internal/ptytest"
	"github.com/hilrig/hilrig/firmware/plantnode"
	"github.com/hilrig/hilrig/firmware/wire"
)

func TestParseLayout(t *testing.T) {
	s, err := ParseLayout("f32le, i16le:0.01, u16le:0.1:-40")
	if err != nil {
		t.Fatal(err)
	}
	want := []wire.Field{{Type: wire.F32LE}, {Type: wire.I16LE, Scale: 0.01}, {Type: wire.U16LE, Scale: 0.1, Offset: -40}}
	if len(s.Fields) != 3 || s.Fields[0] != want[0] || s.Fields[1] != want[1] || s.Fields[2] != want[2] || s.Size() != 8 {
		t.Errorf("%+v", s.Fields)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "an empty layout"},
		{"f16", `field 1: no type "f16" (want one of f32le,`},
		{"u8,i8:0", `field 2: "0" is not a non-zero scale`},
		{"u8:1:x", `field 1: "x" is not a finite offset`},
		{"u8:1:2:3", `field 1: "u8:1:2:3" is type[:scale[:offset]]`},
		{strings.Repeat("u8,", 255) + "u8", "256 fields; a message carries at most 255"},
	} {
		if _, err := ParseLayout(tc.in); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%.20q: %v, want %s", tc.in, err, tc.want)
		}
	}
	if v, err := ParseFloats("0, -1.5"); err != nil || len(v) != 2 || v[1] != -1.5 {
		t.Errorf("%v %v", v, err)
	}
	if _, err := ParseFloats("1,NaN"); err == nil || err.Error() != `value 2: "NaN" is not a finite number` {
		t.Errorf("NaN: %v", err)
	}
	if p, err := Hertz(200); err != nil || p != 5*time.Millisecond {
		t.Errorf("200 Hz: %v %v", p, err)
	}
	if _, err := Hertz(0); err == nil {
		t.Error("0 Hz")
	}
	if p, s, c, err := ParseSignals(200, "f32le,u8", "f64le"); err != nil || p != 5*time.Millisecond || len(s.Fields) != 2 || len(c.Fields) != 1 {
		t.Errorf("signals: %v %v %v %v", p, s, c, err)
	}
	for _, tc := range []struct {
		rate        float64
		sample, cmd string
		want        string
	}{
		{0, "f16", "", "--rate: a rate of 0 Hz"},
		{1, "f16", "", `--sample-layout: field 1: no type "f16"`},
		{1, "u8", "", "--command-layout: an empty layout"},
	} {
		if _, _, _, err := ParseSignals(tc.rate, tc.sample, tc.cmd); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v %q %q: %v, want %s", tc.rate, tc.sample, tc.cmd, err, tc.want)
		}
	}
}

// TestRunReconnects runs a plant node on a link to one pseudo-terminal,
// takes the terminal away, and points the link at another: the node goes
// on ticking meanwhile (its watchdog trips, as its heartbeats on the new
// terminal say) and carries on there.
func TestRunReconnects(t *testing.T) {
	first, second := ptytest.Open(t), ptytest.Open(t)
	link := filepath.Join(t.TempDir(), "plant")
	if err := os.Symlink(first.Path, link); err != nil {
		t.Fatal(err)
	}
	f64, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	line := &Line{Path: link, Baud: 115200}
	level := &levelPin{}
	node, err := plantnode.New(plantnode.Config{Period: 5 * time.Millisecond, Samples: f64, Commands: f64, Safe: []float64{-1},
		Watchdog: 50 * time.Millisecond, Heartbeat: 10 * time.Millisecond}, line, []device.AnalogIn{level}, []device.AnalogOut{level})
	if err != nil {
		t.Fatal(err)
	}
	if err := line.Open(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var lost, back atomic.Int32
	done := make(chan error)
	go func() {
		done <- Run(ctx, line, node, NewClock(), 10*time.Millisecond, func(error) { lost.Add(1) }, func() { back.Add(1) })
	}()

	// Command the node on the first terminal until it says so.
	var s wire.Sender
	statuses := func(fd *ptytest.FD, until func(wire.Status) bool) {
		t.Helper()
		dec := wire.COBS{}.NewDecoder(wire.DefaultMaxMessage)
		found := false
		emit := func(frame []byte, _ time.Duration) {
			if m, err := wire.Parse(frame); err == nil && m.Type == wire.Heartbeat && until(m.Status()) {
				found = true
			}
		}
		buf := make([]byte, 1024)
		for deadline := time.Now().Add(10 * time.Second); !found; {
			if time.Now().After(deadline) {
				t.Fatal("the heartbeat never came")
			}
			fd.Write(wire.COBS{}.Append(nil, s.Values(nil, wire.Command, 0, f64, []float64{3})))
			if fd.Wait(10 * time.Millisecond) {
				n, _ := fd.Read(buf)
				dec.Feed(buf[:n], 0, emit)
			}
		}
	}
	statuses(first.Master, func(st wire.Status) bool { return st&wire.StatusSafe == 0 })
	first.Close()
	os.Remove(link)
	os.Symlink(second.Path, link)
	// On the second terminal, send nothing: the first heartbeat says the
	// outputs went safe while the line was down or since.
	dec := wire.COBS{}.NewDecoder(wire.DefaultMaxMessage)
	var safeSeen bool
	buf := make([]byte, 1024)
	for deadline := time.Now().Add(10 * time.Second); !safeSeen; {
		if time.Now().After(deadline) {
			t.Fatal("no safe heartbeat on the second terminal")
		}
		if second.Master.Wait(10 * time.Millisecond) {
			n, _ := second.Master.Read(buf)
			dec.Feed(buf[:n], 0, func(frame []byte, _ time.Duration) {
				if m, err := wire.Parse(frame); err == nil && m.Type == wire.Heartbeat && m.Status()&wire.StatusSafe != 0 {
					safeSeen = true
				}
			})
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if lost.Load() != 1 || back.Load() != 1 {
		t.Errorf("lost %d times, back %d", lost.Load(), back.Load())
	}
	if node.Stats().Trips != 1 || level.v != -1 {
		t.Errorf("trips %d, output %v", node.Stats().Trips, level.v)
	}
}

// levelPin is an output read back as an input.
type levelPin struct{ v float64 }

func (p *levelPin) Read() (float64, error) { return p.v, nil }
func (p *levelPin) Out(v float64) error    { p.v = v; return nil }
