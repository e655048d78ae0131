package rig

import (
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles/benchfile"
)

// endpoint is a bench's device ready to start, with what the rig needs to
// know about it.
type endpoint struct {
	drivers.Endpoint
	kind       string // its bench key: serial, pty, gpio, udp, tcp
	device     string // what the user called it: a path, an address, pins
	reconnects bool
	wire       bool // codec wire
}

// A device kind has two halves: its settings in the bench language
// (benchfile.DeviceKinds, registered in profiles/benchfile/bench_KIND.go) and, here,
// how a bench's endpoint of the kind becomes a driver and which devices of
// the kind `hilrig ports` lists. Each kind registers its half from its own
// file (endpoint_KIND.go), by its settings' type, so that the two halves
// cannot name different kinds; TestEveryDeviceKindHasADriver finds a kind
// with no half here.

// deviceDriver is the rig's half of a device kind.
type deviceDriver struct {
	// build makes the driver of endpoint name from its settings, of the
	// kind's type. readerThread runs on the reader's thread before it
	// reads. The endpoint's kind and wire are filled in by the caller.
	build func(name string, settings benchfile.DeviceConfig, readerThread func()) (endpoint, error)
	// ports lists the kind's devices for `hilrig ports`; nil when the kind
	// has none to list (a pseudo-terminal is made by the run).
	ports func(stdout, stderr io.Writer)
}

var deviceDrivers = map[string]*deviceDriver{}

// registerDriver registers how endpoints whose settings are of type C are
// built, and the kind's port listing (nil: none). Called at init.
func registerDriver[C benchfile.DeviceConfig](build func(name string, settings C, readerThread func()) (endpoint, error), ports func(stdout, stderr io.Writer)) {
	var none C
	kind, ok := benchfile.DeviceKindOf(none)
	if !ok {
		panic(fmt.Sprintf("rig: %v is not the settings of a device kind the bench language knows", reflect.TypeFor[C]()))
	}
	if deviceDrivers[kind.Key] != nil {
		panic("rig: device kind " + kind.Key + " has two drivers")
	}
	deviceDrivers[kind.Key] = &deviceDriver{
		build: func(name string, s benchfile.DeviceConfig, readerThread func()) (endpoint, error) {
			return build(name, s.(C), readerThread)
		},
		ports: ports,
	}
}

// buildEndpoints makes the drivers for a bench's devices: every endpoint
// but the models, which the executor steps itself, and those played in
// software. readerThread runs on each reader's thread before it reads.
func buildEndpoints(b *benchfile.LoadedBench, players map[string]Player, readerThread func()) ([]endpoint, error) {
	var out []endpoint
	for i, name := range b.Endpoints.Names {
		e := b.Endpoints.Values[i]
		if _, played := players[name]; e.Device == nil || played {
			continue
		}
		dd := deviceDrivers[e.Kind]
		if dd == nil {
			return nil, fmt.Errorf("%s: endpoints.%s: this hilrig has no driver for %s endpoints", b.Source, name, e.Kind)
		}
		ep, err := dd.build(name, e.Device, readerThread)
		if err != nil {
			return nil, fmt.Errorf("%s: endpoints.%s: %w", b.Source, name, err)
		}
		ep.kind, ep.wire = e.Kind, e.SpeaksWire()
		out = append(out, ep)
	}
	return out, nil
}

// ListPorts writes, for `hilrig ports`, the devices of each kind that has
// some to list, in the kinds' order.
func ListPorts(stdout, stderr io.Writer) {
	for _, k := range benchfile.DeviceKinds() {
		if dd := deviceDrivers[k.Key]; dd != nil && dd.ports != nil {
			dd.ports(stdout, stderr)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// makeFraming builds a framing; an idle framing without a gap waits 3.5
// character times.
func makeFraming(spec benchfile.FramingSpec, charTime time.Duration) (wire.Framing, error) {
	gap := spec.Gap
	if spec.Name == "idle" && gap == 0 {
		if charTime == 0 {
			return nil, fmt.Errorf("idle framing over TCP needs a gap")
		}
		gap = 7 * charTime / 2
	}
	return wire.NewFraming(spec.Name, wire.FramingOptions{Delimiter: []byte(spec.Delimiter), AnyLineEnd: spec.AnyLineEnd, Size: spec.Size, Gap: gap})
}
