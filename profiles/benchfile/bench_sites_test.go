package benchfile

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
)

// siteBench is site B of a two-site loop: the quarter car cut at CP2,
// this rig simulating the bench's side of the cut (the seat), site A at
// the other end of a UDP socket speaking the wire protocol.
const siteBench = `endpoints:
  seat: {model: {name: quarter-car, cut: CP2, part: hardware, codec: wire}}
  site-a: {udp: {listen: '10.77.0.2:7400', peer: '10.77.0.1:7400', codec: wire}}
bind:
  m2s: {from: seat, to: site-a}
  s2m: {from: site-a, to: seat}
`

// TestSiteBench: part: hardware swaps the cut's sides (the rig simulates
// the seat, which sends Fseat and takes v2, and the car stands in for the
// other site in virtual time); a UDP endpoint with codec wire speaks the
// wire protocol, its peer watched for 100 ms and its loss stopping the run
// unless the bench says otherwise.
func TestSiteBench(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, yaml    string
		sends, takes  []string
		timeout       time.Duration
		stop          bool
		hardwareSends []string
		speaksWireUDP bool
	}{
		{"part hardware", siteBench, []string{"Fseat"}, []string{"v2"}, 100 * time.Millisecond, true, []string{"v2"}, true},
		{"part model", strings.Replace(siteBench, "part: hardware", "part: model", 1), []string{"v2"}, []string{"Fseat"}, 100 * time.Millisecond, true, []string{"Fseat"}, true},
		{"peer settings", strings.Replace(siteBench, "codec: wire}}\nbind", "codec: wire, peer_timeout: 250ms, on_peer_lost: continue}}\nbind", 1), []string{"Fseat"}, []string{"v2"}, 250 * time.Millisecond, false, []string{"v2"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBench("b.yaml", []byte(tc.yaml), p)
			if err != nil {
				t.Fatal(err)
			}
			bm := b.Models["seat"]
			if got := bm.Simulated.Out(); !slices.Equal(got, tc.sends) {
				t.Errorf("the rig's part sends %v; want %v", got, tc.sends)
			}
			if got := bm.Simulated.In(); !slices.Equal(got, tc.takes) {
				t.Errorf("the rig's part takes %v; want %v", got, tc.takes)
			}
			if got := bm.Hardware.Out(); !slices.Equal(got, tc.hardwareSends) {
				t.Errorf("the other side sends %v; want %v", got, tc.hardwareSends)
			}
			udp := b.Endpoints.Values[1]
			if udp.SpeaksWire() != tc.speaksWireUDP {
				t.Errorf("the udp endpoint speaks wire: %v", udp.SpeaksWire())
			}
			if timeout, stop := udp.Device.(*UDPSocket).PeerWatch(); timeout != tc.timeout || stop != tc.stop {
				t.Errorf("peer watch %v, stop %v; want %v, %v", timeout, stop, tc.timeout, tc.stop)
			}
		})
	}
}

func TestMalformedSiteBenches(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	with := func(old, new string) string { return strings.Replace(siteBench, old, new, 1) }
	tests := []struct{ name, yaml, want string }{
		{"unknown part", with("part: hardware", "part: hardwre"),
			`x.yaml:2:53: endpoints.seat.model.part: "hardwre" is not a side of the cut (want model, hardware); did you mean hardware?`},
		{"peer timeout without wire", with("codec: wire}}\nbind", "peer_timeout: 50ms}}\nbind"),
			`x.yaml:3:82: endpoints.site-a.udp.peer_timeout: goes with codec: wire: only the wire protocol's messages tell the peer is there`},
		{"on_peer_lost without wire", with("codec: wire}}\nbind", "on_peer_lost: stop}}\nbind"),
			`x.yaml:3:82: endpoints.site-a.udp.on_peer_lost: goes with codec: wire: only the wire protocol's messages tell the peer is there`},
		{"unknown action", with("codec: wire}}\nbind", "codec: wire, on_peer_lost: halt}}\nbind"),
			`x.yaml:3:95: endpoints.site-a.udp.on_peer_lost: "halt" is not an action (want stop, continue)`},
		{"timeout not positive", with("codec: wire}}\nbind", "codec: wire, peer_timeout: 0s}}\nbind"),
			`x.yaml:3:95: endpoints.site-a.udp.peer_timeout: must be positive`},
		{"unknown codec", with("codec: wire}}\nbind", "codec: wires}}\nbind"),
			`x.yaml:3:75: endpoints.site-a.udp.codec: "wires" is not a line codec (want wire); did you mean wire?`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBench("x.yaml", []byte(tc.yaml), p)
			var list lang.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
