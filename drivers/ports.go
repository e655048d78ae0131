package drivers

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"go.bug.st/serial/enumerator"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3"
	"periph.io/x/host/v3/gpioioctl"
)

// SerialPorts lists the serial ports, with their USB identity where known.
func SerialPorts() ([]PortInfo, error) {
	details, err := enumeratePorts()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(details, func(a, b PortInfo) int { return strings.Compare(a.Name, b.Name) })
	return details, nil
}

// PortInfo describes a serial port.
type PortInfo struct {
	Name                      string
	USB                       bool
	VID, PID, Serial, Product string
}

// enumeratePorts asks go.bug.st/serial for the ports. It opens each ttyS
// placeholder to see whether it is a port, without O_CLOEXEC: holding
// syscall.ForkLock keeps a process the rig starts meanwhile from
// inheriting one.
func enumeratePorts() ([]PortInfo, error) {
	syscall.ForkLock.RLock()
	list, err := enumerator.GetDetailedPortsList()
	syscall.ForkLock.RUnlock()
	if err != nil {
		return nil, err
	}
	out := make([]PortInfo, len(list))
	for i, p := range list {
		out[i] = PortInfo{Name: p.Name, USB: p.IsUSB, VID: p.VID, PID: p.PID, Serial: p.SerialNumber, Product: p.Product}
	}
	return out, nil
}

// ChipInfo describes a GPIO chip and its lines.
type ChipInfo struct {
	Name, Path, Label string
	Lines             []string
}

// GPIOChips lists the GPIO character devices and their lines.
func GPIOChips() ([]ChipInfo, error) {
	if err := initHost(); err != nil {
		return nil, err
	}
	var out []ChipInfo
	for _, c := range gpioioctl.Chips {
		info := ChipInfo{Name: c.Name(), Path: c.Path(), Label: c.Label()}
		for _, l := range c.Lines() {
			info.Lines = append(info.Lines, fmt.Sprintf("%d %s", l.Number(), l.Name()))
		}
		out = append(out, info)
	}
	return out, nil
}

// GPIOPins lists the names of the pins periph knows, sorted.
func GPIOPins() []string {
	_ = initHost()
	var names []string
	for _, p := range gpioreg.All() {
		names = append(names, p.Name())
	}
	sort.Strings(names)
	return names
}

// initHost loads periph's host drivers once. A machine without GPIO is not
// an error here: it simply has no pins.
var initHost = sync.OnceValue(func() error {
	_, err := host.Init()
	return err
})

// gpioChipPaths lists /dev/gpiochip*, to tell a user what exists.
func gpioChipPaths() []string {
	paths, _ := filepath.Glob("/dev/gpiochip*")
	return paths
}
