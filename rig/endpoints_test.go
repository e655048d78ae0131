package rig

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles/benchfile"
)

// TestEveryDeviceKindHasADriver keeps the two halves of the device kinds
// in agreement: each kind the bench language accepts is built here, and
// nothing is built here that a bench cannot write.
func TestEveryDeviceKindHasADriver(t *testing.T) {
	var language, built []string
	for _, k := range benchfile.DeviceKinds() {
		language = append(language, k.Key)
	}
	for key, dd := range deviceDrivers {
		if dd.build == nil {
			t.Errorf("the driver of %s has no build", key)
		}
		built = append(built, key)
	}
	slices.Sort(language)
	slices.Sort(built)
	if !slices.Equal(language, built) {
		t.Errorf("the bench language has device kinds %v, the rig drivers for %v", language, built)
	}
}

// TestEndpointsOfEachKind builds a bench with every device kind and checks
// what the rig knows of each: kind, the device as the user named it,
// whether it reconnects and whether it speaks the wire protocol.
func TestEndpointsOfEachKind(t *testing.T) {
	const bench = `endpoints:
  line:     {serial: {device: /dev/ttyUSB0, reconnect: 1s, framing: slip}}
  virtual:  {pty: {link: /tmp/hilrig-test-link}}
  stopping: {pty: {reconnect: 0s, codec: wire}}
  edges:    {gpio: {inputs: [{pin: GPIO17, pull: up}]}}
  pins:     {gpio: {outputs: [{pin: GPIO27, safe: high}]}}
  datagram: {udp: {listen: '127.0.0.1:0'}}
  site:     {udp: {dial: '127.0.0.1:9', codec: wire}}
  stream:   {tcp: {dial: 'localhost:9', codec: wire}}
  server:   {tcp: {listen: '127.0.0.1:0', framing: idle, gap: 1ms}}
bind:
  a: {from: line, to: virtual}
  b: {from: edges, to: pins}
  c: {from: datagram, to: stream}
  d: {from: server, to: stopping}
  e: {from: site, to: datagram}
`
	b, err := benchfile.ParseBench("each.yaml", []byte(bench), nil)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := buildEndpoints(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"line serial /dev/ttyUSB0 reconnects=true wire=false",
		"virtual pty pseudo-terminal reconnects=true wire=false",
		"stopping pty pseudo-terminal reconnects=false wire=true",
		"edges gpio gpio GPIO17 reconnects=false wire=false",
		"pins gpio gpio GPIO27 reconnects=false wire=false",
		"datagram udp udp 127.0.0.1:0 reconnects=false wire=false",
		"site udp udp 127.0.0.1:9 reconnects=false wire=true",
		"stream tcp tcp localhost:9 reconnects=false wire=true",
		"server tcp tcp 127.0.0.1:0 reconnects=true wire=false",
	}
	var got []string
	for _, e := range eps {
		got = append(got, strings.Join([]string{e.Name(), e.kind, e.device, "reconnects=" + strconv.FormatBool(e.reconnects), "wire=" + strconv.FormatBool(e.wire)}, " "))
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
