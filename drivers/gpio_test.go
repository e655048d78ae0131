package drivers_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/wiredpins"
)

// register puts fake pins in periph's registry under unique names.
func register(t *testing.T, clock *driverstest.Clock, names ...string) []*wiredpins.Pin {
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
	clock := &driverstest.Clock{}
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
	sink := driverstest.NewSink()
	if err := g.Start(clock, sink, 0); err != nil {
		t.Fatal(err)
	}
	if plantIn.Read() != gpio.High {
		t.Error("the output is not at its safe level after start")
	}
	clock.Set(5 * time.Millisecond)
	ctrlOut.Out(gpio.High)
	clock.Set(7 * time.Millisecond)
	ctrlOut.Out(gpio.Low)
	sink.WaitFor(t, "two edges", func() bool { return len(sink.Frames()) >= 2 })
	if f := sink.Frames(); len(f) != 2 || string(f[0].Payload) != "\x00\x01" || string(f[1].Payload) != "\x00\x00" ||
		f[0].At != 5*time.Millisecond || f[1].At != 7*time.Millisecond {
		t.Fatalf("edge frames %+v", f)
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
	err := g.Start(&driverstest.Clock{}, driverstest.NewSink(), 0)
	if err == nil || !strings.Contains(err.Error(), "plant: gpio GPIO17: no pin GPIO17") {
		t.Errorf("got %v", err)
	}
	t.Log(err)
}
