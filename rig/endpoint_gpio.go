package rig

import (
	"fmt"
	"io"

	"periph.io/x/conn/v3/gpio"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles/benchfile"
)

func init() { registerDriver(gpioEndpoint, listGPIOChips) }

func gpioEndpoint(name string, g *benchfile.GPIOPins, readerThread func()) (endpoint, error) {
	cfg := drivers.GPIOConfig{Name: name, ReaderThread: readerThread}
	pulls := map[string]gpio.Pull{"none": gpio.Float, "up": gpio.PullUp, "down": gpio.PullDown}
	edges := map[string]gpio.Edge{"rising": gpio.RisingEdge, "falling": gpio.FallingEdge, "both": gpio.BothEdges}
	device := "gpio"
	for _, in := range g.Inputs {
		pull, edge := gpio.Float, gpio.BothEdges
		if in.Pull != nil {
			pull = pulls[string(*in.Pull)]
		}
		if in.Edge != nil {
			edge = edges[string(*in.Edge)]
		}
		cfg.Inputs = append(cfg.Inputs, drivers.GPIOInput{Pin: string(in.Pin), Pull: pull, Edge: edge})
		device += " " + string(in.Pin)
	}
	for _, out := range g.Outputs {
		cfg.Outputs = append(cfg.Outputs, drivers.GPIOOutput{Pin: string(out.Pin), Safe: out.Safe == "high"})
		device += " " + string(out.Pin)
	}
	return endpoint{Endpoint: drivers.NewGPIO(cfg), device: device}, nil
}

// listGPIOChips lists the GPIO chips and their lines; a failure to list
// them is said in place of the list.
func listGPIOChips(stdout, _ io.Writer) {
	chips, err := drivers.GPIOChips()
	fmt.Fprintln(stdout, "GPIO chips:")
	if err != nil {
		fmt.Fprintf(stdout, "  none (%v)\n", err)
	} else if len(chips) == 0 {
		fmt.Fprintln(stdout, "  none (no /dev/gpiochip*)")
	}
	for _, c := range chips {
		fmt.Fprintf(stdout, "  %s %s (%s): %d lines\n", c.Name, c.Path, c.Label, len(c.Lines))
		for _, l := range c.Lines {
			fmt.Fprintf(stdout, "    %s\n", l)
		}
	}
}
