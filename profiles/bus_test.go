package profiles

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// busProfile is a profile with a bus hop of the given settings, crossed by
// flows a, b and c (c through a second hop first).
func busProfile(bus string) string {
	return "duration: 1s\nhops:\n  pre: {delay: 1ms}\n  bus: {bus: " + bus + "}\nflows:\n" +
		"  a: {route: [bus]}\n  b: {route: [bus]}\n  c: {route: [pre, bus]}\n  d: {route: [pre]}\n"
}

// TestBusBuilt: a bus's keys reach the engine as written, its defaults are
// the standard's, and stations are the listed ones first, then each other
// flow that crosses the bus (never a flow that does not).
func TestBusBuilt(t *testing.T) {
	ieee := emulator.StandardBus(emulator.CSMACD, 0)
	paper := ieee
	paper.Jam, paper.Gap, paper.BackOff, paper.FrameTime = 0, 0, emulator.LinearBackOff, emulator.SlotTime
	paper.Stations, paper.StationNames = []int{0, 0, -1, -1}, []string{"loop"}
	can := emulator.StandardBus(emulator.CANBus, 250_000)
	can.Stations, can.IDs = []int{-1, -1, -1, -1}, []uint32{0x10, 1, 0x7ff}
	for _, tc := range []struct {
		bus  string
		want emulator.Bus
	}{
		{"{kind: csma-cd}", func() emulator.Bus { b := ieee; b.Stations = []int{-1, -1, -1, -1}; return b }()},
		{"{kind: csma-cd, rate: 10Mbit, backoff: linear, frame_time: slots, jam: 0s, gap: 0s, stations: {loop: {flows: [a, b]}}}", paper},
		{"{kind: can, rate: 250kbit, ids: {a: 0x10, c: 0x7ff}}", can},
	} {
		l, err := Parse("x.yaml", []byte(busProfile(tc.bus)))
		if err != nil {
			t.Fatalf("%s: %v", tc.bus, err)
		}
		got := l.Config.Hops[1].Bus
		if got == nil {
			t.Fatalf("%s: no bus built", tc.bus)
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.bus, *got, tc.want)
		}
	}
	if ieee.Slot != 51200*time.Nanosecond || ieee.Jam != 3200*time.Nanosecond || ieee.Gap != 9600*time.Nanosecond {
		t.Errorf("IEEE 802.3 at 10 Mbit/s: slot %v, jam %v, gap %v", ieee.Slot, ieee.Jam, ieee.Gap)
	}
}

// TestBusMistakes: each mistake in a bus is reported at its key.
func TestBusMistakes(t *testing.T) {
	for _, tc := range []struct{ bus, want string }{
		{"{kind: token-ring}", `x.yaml:4:21: hops.bus.bus.kind: "token-ring" is not a bus kind (want csma-cd, can)`},
		{"{kind: can, backoff: linear}", `x.yaml:4:35: hops.bus.bus.backoff: only a csma-cd bus has a backoff`},
		{"{kind: csma-cd, ids: {a: 1}}", `hops.bus.bus.ids: only a can bus has identifiers`},
		{"{kind: can, ids: {a: 0x20000000}}", `hops.bus.bus.ids.a: "0x20000000" is not an 11-bit CAN identifier`},
		{"{kind: can, ids: {a: 0x800}}", `x.yaml:4:35: hops.bus.bus.ids.a: "0x800" is not an 11-bit CAN identifier (want 0 to 0x7ff: frames are timed as CAN 2.0A's; 29-bit extended identifiers are not supported)`},
		{"{kind: can, ids: {a: -1}}", `hops.bus.bus.ids.a: "-1" is not a CAN identifier (want a whole number from 0 to 0x7ff`},
		{"{kind: can, ids: {a: 1, b: 1}}", `hops.bus.bus.ids.b: identifier 0x1 is "a"'s too`},
		{"{kind: can, ids: {e: 1}}", `hops.bus.bus.ids.e: no station named "e" on this bus`},
		{"{kind: csma-cd, stations: {s: {flows: [d]}}}", `hops.bus.bus.stations.s.flows[0]: flow "d" does not cross this bus`},
		{"{kind: csma-cd, stations: {s: {flows: [a]}, t: {flows: [a]}}}", `hops.bus.bus.stations.t.flows[0]: flow "a" is already sent from station "s"`},
		{"{kind: csma-cd, stations: {s: {flows: [x]}}}", `hops.bus.bus.stations.s.flows[0]: no flow named "x"`},
		{"{kind: csma-cd, stations: {b: {flows: [a]}}}", `hops.bus.bus.stations.b: is the name of a flow that is not in it`},
		{"{kind: csma-cd, slot: 0s}", `hops.bus.bus.slot: must be positive`},
		{"{kind: csma-cd, attempts: 0}", `hops.bus.bus.attempts: must be at least 1`},
		{"{kind: csma-cd, backoff_cap: 31}", `hops.bus.bus.backoff_cap: must be 1 to 30`},
		{"{kind: csma-cd}, rate: 1Mbit", `hops.bus.rate: a bus has its own rate: give it under bus`},
	} {
		_, err := Parse("x.yaml", []byte(busProfile(tc.bus)))
		var list lang.ErrorList
		if !errors.As(err, &list) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.bus, err, tc.want)
		}
	}
}
