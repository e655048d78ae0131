package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.bug.st/serial"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/hilrig/hilrig/drivers/wiredpins"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
)

// gpioBench wires a controller's two outputs to the rig's inputs, and the
// rig's two outputs to a plant's inputs, all fake pins registered with
// periph under names unique to the test. The rig's side is plain bench
// configuration; only the pins behind the names are fakes.
type gpioBench struct {
	ctrlOut  []*wiredpins.Pin // the controller drives these
	plantIn  []*wiredpins.Pin // the plant reads these
	names    map[string]string
	clock    func() time.Duration
	received [][]edge // per plant pin
}

type edge struct {
	at    time.Duration
	level gpio.Level
}

func newGPIOBench(t *testing.T, prefix string) *gpioBench {
	start := time.Now()
	g := &gpioBench{names: map[string]string{}, clock: func() time.Duration { return time.Since(start) }}
	pin := func(role string, i int) *wiredpins.Pin {
		name := fmt.Sprintf("%s_%s%d", prefix, role, i)
		p := wiredpins.New(name, 0, g.clock)
		if err := gpioreg.Register(p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gpioreg.Unregister(name) })
		g.names[fmt.Sprintf("%s%d", role, i)] = name
		return p
	}
	for i := range 2 {
		ctrl, rigIn, rigOut, plant := pin("CTRL", i), pin("IN", i), pin("OUT", i), pin("PLANT", i)
		ctrl.Out(gpio.Low)
		wiredpins.Wire(ctrl, rigIn)
		wiredpins.Wire(rigOut, plant)
		plant.In(gpio.PullNoChange, gpio.BothEdges)
		g.ctrlOut = append(g.ctrlOut, ctrl)
		g.plantIn = append(g.plantIn, plant)
	}
	g.received = make([][]edge, 2)
	return g
}

// watch records the plant's edges until ctx ends.
func (g *gpioBench) watch(ctx context.Context, i int) {
	p := g.plantIn[i]
	for ctx.Err() == nil {
		if p.WaitForEdge(20 * time.Millisecond) {
			at, level := p.LastEdge()
			g.received[i] = append(g.received[i], edge{at, level})
		}
	}
}

func (g *gpioBench) yaml(extra string) string {
	return fmt.Sprintf(`endpoints:
  controller:
    gpio:
      inputs: [{pin: %s}, {pin: %s}]
  plant:
    gpio:
      outputs: [{pin: %s, safe: high}, {pin: %s, safe: low}]
%s
bind:
  m2s: {from: controller, to: plant}
`, g.names["IN0"], g.names["IN1"], g.names["OUT0"], g.names["OUT1"], extra)
}

// TestRunGPIO toggles two controller pins at 1 kHz between them; the rig
// replays every edge on the plant's pins 5 ms later, in order, and leaves
// the outputs at their safe levels.
func TestRunGPIO(t *testing.T) {
	g := newGPIOBench(t, "E2E")
	p, err := profiles.Parse("p.yaml", []byte(plainLink))
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.ParseBench("b.yaml", []byte(g.yaml("")), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	watching, stopWatching := context.WithCancel(context.Background())
	var watchers sync.WaitGroup
	for i := range 2 {
		watchers.Go(func() { g.watch(watching, i) })
	}
	// The rig runs in this process, beside the goroutines that make and
	// watch the edges. Built with -race, an executor at SCHED_FIFO that
	// falls behind spins until the kernel throttles it, and those
	// goroutines waited 0.95 s (a run beside other packages' tests): then
	// it runs unraised.
	priority := 80
	if raceDetector {
		priority = 0
	}
	done := make(chan error)
	var summary record.Summary
	go func() {
		var err error
		summary, err = rig.Run(ctx, p, b, rig.Options{Priority: priority})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if g.plantIn[0].Read() != gpio.High || g.plantIn[1].Read() != gpio.Low {
		t.Error("the outputs are not at their safe levels after start")
	}
	// 1000 edges on each pin, alternating, 1 ms apart: pin 0 rises first,
	// then pin 1, then pin 0 falls, ...
	const n = 1000
	var sent [2][]edge
	levels := [2]gpio.Level{gpio.Low, gpio.Low}
	start := g.clock()
	for k := range 2 * n {
		time.Sleep(time.Until(time.Now().Add(start + time.Duration(k)*time.Millisecond/2 - g.clock())))
		i := k % 2
		levels[i] = !levels[i]
		sent[i] = append(sent[i], edge{g.clock(), levels[i]})
		g.ctrlOut[i].Out(levels[i])
	}
	time.Sleep(100 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	stopWatching()
	watchers.Wait() // before reading what they recorded
	if g.plantIn[0].Read() != gpio.High || g.plantIn[1].Read() != gpio.Low {
		t.Error("the outputs are not at their safe levels after stop")
	}
	for i := range 2 {
		got := g.received[i]
		// The first edge of pin 0 (a rise) finds the plant already high (its
		// safe level): no edge there. Drop the edges to the safe levels at
		// start and stop.
		first, last := sent[i][0].at, sent[i][len(sent[i])-1].at
		got = slices.DeleteFunc(got, func(e edge) bool { return e.at < first || e.at > last+time.Second })
		want := sent[i]
		if i == 0 {
			want = want[1:]
		}
		if len(got) < len(want) {
			t.Fatalf("pin %d: %d edges replayed of %d", i, len(got), len(want))
		}
		var delays []time.Duration
		for k, w := range want {
			if got[k].level != w.level {
				t.Fatalf("pin %d edge %d: level %v, want %v", i, k, got[k].level, w.level)
			}
			delays = append(delays, got[k].at-w.at)
		}
		t.Logf("pin %d: %d edges replayed; delay %s", i, len(want), quantiles(delays))
		// Unraised (under the race detector), the rig is one more process
		// for the scheduler: the delays' ceiling is the normal build's.
		ceiling := 55 * time.Millisecond
		if raceDetector {
			ceiling = time.Second
		}
		if slices.Min(delays) < 5*time.Millisecond || slices.Max(delays) > ceiling {
			t.Errorf("pin %d: delays from %v to %v", i, slices.Min(delays), slices.Max(delays))
		}
	}
	if summary.Endpoints[0].FramesIn != 2*n {
		t.Errorf("the rig read %d edges, want %d", summary.Endpoints[0].FramesIn, 2*n)
	}
}

// TestGPIOSafeOnError fails the run through another endpoint, a
// pseudo-terminal unplugged mid-run: the GPIO outputs still go to their
// safe levels.
func TestGPIOSafeOnError(t *testing.T) {
	g := newGPIOBench(t, "ERR")
	p, err := profiles.Parse("p.yaml", []byte(plainLink))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	extra := fmt.Sprintf("  other: {pty: {link: %s/other, reconnect: 0s}}\n  sink: {pty: {}}", dir)
	bench := strings.Replace(g.yaml(extra), "bind:\n", "bind:\n  s2m: {from: other, to: sink}\n", 1)
	b, err := benchfile.ParseBench("b.yaml", []byte(bench), p)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := rig.Run(context.Background(), p, b, rig.Options{})
		done <- err
	}()
	var other serial.Port
	for range 500 {
		if other, err = serial.Open(filepath.Join(dir, "other"), &serial.Mode{BaudRate: 115200}); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if other == nil {
		t.Fatal(err)
	}
	g.ctrlOut[1].Out(gpio.High) // the plant's pin 1 goes high 5 ms later
	time.Sleep(100 * time.Millisecond)
	if g.plantIn[1].Read() != gpio.High {
		t.Fatal("the edge was not replayed")
	}
	other.Close() // unplugged: the run fails
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "other: pseudo-terminal") {
			t.Errorf("run ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
	if g.plantIn[0].Read() != gpio.High || g.plantIn[1].Read() != gpio.Low {
		t.Error("the outputs are not at their safe levels after the failure")
	}
}
