package profiles_test

import (
	"fmt"

	"github.com/hilrig/hilrig/profiles"
)

// ExampleParse reads a profile and shows the engine configuration it
// describes: each hop's parameters and each flow's route.
func ExampleParse() {
	p, err := profiles.Parse("link.yaml", []byte(`
name: link
duration: 10s
hops:
  uplink: {rate: 2Mbit, delay: 20ms, queue: 32KiB, loss: {random: 1%}}
flows:
  m2s: {route: [uplink], role: to-plant}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	h := p.Config.Hops[0]
	fmt.Println(h.Name, h.Rate, h.Delay, h.Queue.N, "bytes,", h.Loss.LossRate()*100, "% lost")
	fmt.Println(p.Config.Flows[0].Name, "crosses hops", p.Config.Flows[0].Route, "for", p.RunDuration())
	// Output:
	// uplink 2Mbit 20ms 32768 bytes, 1 % lost
	// m2s crosses hops [0] for 10s
}

// ExampleParse_mistake shows what a mistake costs: every problem at once,
// each at its file, line and column, with what was expected.
func ExampleParse_mistake() {
	_, err := profiles.Parse("link.yaml", []byte(`
name: link
duration: 10s
hops:
  uplink: {rate: 2Mbyte, dealy: 20ms}
flows:
  m2s: {route: [uplnk]}
`))
	fmt.Println(err)
	// Output:
	// link.yaml:5:18: hops.uplink.rate: "2Mbyte" is not a rate (want e.g. 4Mbit, 512kbit)
	// link.yaml:5:26: hops.uplink.dealy: unknown key; did you mean delay? (want rate, delay, queue, overhead, per_frame, loss, jitter, reorder, duplicate, corrupt, flap, bus)
	// link.yaml:7:17: flows.m2s.route[0]: no hop named "uplnk"; did you mean uplink?
}

// ExampleLoad loads a shipped profile by name, with an override as
// `--set` gives it.
func ExampleLoad() {
	p, err := profiles.Load("bottleneck", "hops.core-up.delay=5ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Source, p.Hops.Names)
	fmt.Println("core-up delay:", p.Config.Hops[p.Hops.Index("core-up")].Delay)
	// Output:
	// shipped:bottleneck [edge-c core-up edge-p edge-p-r core-dn edge-c-r]
	// core-up delay: 5ms
}
