package drivers_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/wiredpins"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Duration
}

func (c *fakeClock) Now() time.Duration  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) set(d time.Duration) { c.mu.Lock(); c.now = d; c.mu.Unlock() }

type edgeSink struct {
	mu     sync.Mutex
	frames [][]byte
	times  []time.Duration
}

func (s *edgeSink) Frame(_ int, p []byte, at time.Duration) {
	s.mu.Lock()
	s.frames = append(s.frames, append([]byte(nil), p...))
	s.times = append(s.times, at)
	s.mu.Unlock()
}
func (s *edgeSink) Gone(int, time.Duration, error) {}
func (s *edgeSink) Back(int, time.Duration)        {}

func (s *edgeSink) count() int { s.mu.Lock(); defer s.mu.Unlock(); return len(s.frames) }

// register puts fake pins in periph's registry under unique names.
func register(t *testing.T, clock *fakeClock, names ...string) []*wiredpins.Pin {
	var pins []*wiredpins.Pin
	for i, n := range names {
		p := wiredpins.New(n, 1000+i, clock.Now)
		if err := gpioreg.Register(p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { gpioreg.Unregister(n) })
		pins = append(pins, p)
	}
	return pins
}

func TestGPIOEndpoint(t *testing.T) {
	clock := &fakeClock{}
	// The controller's output drives the rig's input; the rig's output
	// drives the plant's input.
	pins := register(t, clock, "T_CTRL_OUT", "T_RIG_IN", "T_RIG_OUT", "T_PLANT_IN")
	ctrlOut, rigIn, rigOut, plantIn := pins[0], pins[1], pins[2], pins[3]
	ctrlOut.Out(gpio.Low)
	wiredpins.Wire(ctrlOut, rigIn)
	wiredpins.Wire(rigOut, plantIn)
	plantIn.In(gpio.PullNoChange, gpio.BothEdges)

	g := drivers.NewGPIO(drivers.GPIOConfig{
		Name:    "bench",
		Inputs:  []drivers.GPIOInput{{Pin: "T_RIG_IN", Edge: gpio.BothEdges}},
		Outputs: []drivers.GPIOOutput{{Pin: "T_RIG_OUT", Safe: gpio.High}},
	})
	sink := &edgeSink{}
	if err := g.Start(clock, sink, 0); err != nil {
		t.Fatal(err)
	}
	if plantIn.Read() != gpio.High {
		t.Error("the output is not at its safe level after start")
	}
	clock.set(5 * time.Millisecond)
	ctrlOut.Out(gpio.High)
	clock.set(7 * time.Millisecond)
	ctrlOut.Out(gpio.Low)
	deadline := time.Now().Add(2 * time.Second)
	for sink.count() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if sink.count() != 2 || string(sink.frames[0]) != "\x00\x01" || string(sink.frames[1]) != "\x00\x00" ||
		sink.times[0] != 5*time.Millisecond || sink.times[1] != 7*time.Millisecond {
		t.Fatalf("edge frames %q at %v", sink.frames, sink.times)
	}
	// Replaying an edge frame drives the output, and the plant sees it.
	if err := g.Write([]byte{0, 0}); err != nil || plantIn.Read() != gpio.Low {
		t.Errorf("write: %v, plant reads %v", err, plantIn.Read())
	}
	if err := g.Write([]byte{3, 1}); err == nil {
		t.Error("an edge for a missing output was accepted")
	}
	if err := g.Stop(); err != nil || plantIn.Read() != gpio.High {
		t.Errorf("stop: %v; the plant reads %v, want the safe level", err, plantIn.Read())
	}
}

func TestMissingPinListsWhatExists(t *testing.T) {
	g := drivers.NewGPIO(drivers.GPIOConfig{Name: "plant", Outputs: []drivers.GPIOOutput{{Pin: "GPIO17"}}})
	err := g.Start(&fakeClock{}, &edgeSink{}, 0)
	if err == nil || !strings.Contains(err.Error(), "plant: gpio GPIO17: no pin GPIO17") {
		t.Errorf("got %v", err)
	}
	t.Log(err)
}
