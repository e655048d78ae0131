package benchfile

import (
	"fmt"

	"github.com/hilrig/hilrig/profiles/lang"
)

// GPIOPins is a set of GPIO pins.
type GPIOPins struct {
	Inputs  []GPIOInputPin  `yaml:"inputs" doc:"pins whose edges become frames; the frame carries the pin's index in this list"`
	Outputs []GPIOOutputPin `yaml:"outputs" doc:"pins that replay edge frames: output i replays input i of the sending endpoint"`
}

// GPIOInputPin is an input pin.
type GPIOInputPin struct {
	Pin  PinName   `yaml:"pin,required" doc:"the pin's name, as hilrig ports lists it"`
	Pull *PullName `yaml:"pull" doc:"none, up or down" default:"none"`
	Edge *EdgeName `yaml:"edge" doc:"rising, falling or both" default:"both"`
}

// GPIOOutputPin is an output pin.
type GPIOOutputPin struct {
	Pin  PinName   `yaml:"pin,required" doc:"the pin's name"`
	Safe LevelName `yaml:"safe,required" doc:"low or high: the level at start, on stop and on error"`
}

func init() {
	registerDevice(DeviceKind{Key: "gpio", Doc: "GPIO pins: input edges become frames, outputs replay them", Place: 30}, &GPIOPins{})
}

// PinName names a GPIO pin.
type PinName string

func (PinName) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "a pin name", Example: "GPIO17"} }

// Enumerations of a GPIO endpoint.
type (
	PullName  string
	EdgeName  string
	LevelName string
)

func (v *PullName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a pull", "none", "up", "down")
}
func (v *EdgeName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "an edge", "rising", "falling", "both")
}
func (v *LevelName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a level", "low", "high")
}

func (PullName) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "none, up or down", Example: ""} }
func (EdgeName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "rising, falling or both", Example: ""}
}
func (LevelName) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "low or high", Example: ""} }

func (g *GPIOPins) check(c *deviceCheck, path string) {
	d := c.d
	if len(g.Inputs) == 0 && len(g.Outputs) == 0 {
		d.ErrorAt(path, "has no inputs and no outputs")
	}
	seen := map[PinName]string{}
	note := func(pin PinName, at string) {
		if other, dup := seen[pin]; dup && pin != "" {
			d.ErrorAt(at, "pin %s is already used at %s", pin, other)
		}
		seen[pin] = at
	}
	for i, in := range g.Inputs {
		note(in.Pin, fmt.Sprintf("%s.inputs[%d].pin", path, i))
	}
	for i, out := range g.Outputs {
		note(out.Pin, fmt.Sprintf("%s.outputs[%d].pin", path, i))
	}
}

// Frames is nil: a GPIO endpoint's frames are edges.
func (g *GPIOPins) Frames() *FrameSettings { return nil }

// Wire is false: edges are not messages.
func (g *GPIOPins) Wire() bool { return false }

// checkBinding checks that edge frames go between GPIO endpoints that have
// the pins for them.
func (*GPIOPins) checkBinding(d *lang.Decoder, b *Bench, path, from, to string) {
	src, _ := b.Endpoints.Values[b.Endpoints.Index(from)].Device.(*GPIOPins)
	dst, _ := b.Endpoints.Values[b.Endpoints.Index(to)].Device.(*GPIOPins)
	switch {
	case src == nil || dst == nil:
		d.ErrorAt(path, "GPIO edge frames go between gpio endpoints; %s and %s are not both gpio", from, to)
	case len(src.Inputs) == 0:
		d.ErrorAt(path+".from", "%s has no inputs to read edges from", from)
	case len(dst.Outputs) < len(src.Inputs):
		d.ErrorAt(path+".to", "%s has %d outputs for the %d inputs of %s", to, len(dst.Outputs), len(src.Inputs), from)
	}
}
