package benchfile

import (
	"net/netip"
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
)

// UDPSocket is a UDP socket.
type UDPSocket struct {
	Listen      *string        `yaml:"listen" doc:"local address to receive on, host:port (give listen or dial)"`
	Dial        *string        `yaml:"dial" doc:"remote address to exchange datagrams with, host:port"`
	Peer        *string        `yaml:"peer" doc:"with listen: where to send frames" default:"whoever sent the last datagram"`
	MaxFrame    *lang.Size     `yaml:"max_frame" doc:"larger datagrams are dropped and counted" default:"65507B"`
	Codec       *LineCodec     `yaml:"codec" doc:"wire: each datagram is one rig wire protocol message (firmware/README.md; the datagram delimits it: no COBS); the rig forwards them as they are, tracks them and syncs with the clock of whoever sends them, and answers their time requests when it is another rig (the peer of a two-site loop: the frames go to a model)" default:"none: the datagrams are opaque"`
	PeerTimeout *lang.Duration `yaml:"peer_timeout" doc:"codec wire: the peer is lost after this long without a message from it (an event peer_lost at the instant), found again at its next (peer_back)" default:"100ms"`
	OnPeerLost  *PeerLostName  `yaml:"on_peer_lost" doc:"codec wire: stop, end the run as a failure when the peer is lost (the trace, signals and summary complete to the instant); or continue, the model taking the last values received until the peer is back" default:"stop"`
}

func init() {
	registerDevice(DeviceKind{Key: "udp", Doc: "a UDP socket: one datagram per frame", Bytes: true, Place: 40}, &UDPSocket{})
}

// PeerLostName is stop or continue.
type PeerLostName string

func (v *PeerLostName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "an action", "stop", "continue")
}

func (PeerLostName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "stop or continue", Example: ""}
}

// DefaultPeerTimeout is how long a wire peer may be silent before it is
// lost: fifty exchanges at paper 001's 500 Hz, far beyond its link's
// jitter (±2.75 ms) and the longest run of 0.07 % loss one would see.
const DefaultPeerTimeout = 100 * time.Millisecond

// PeerWatch is how long the peer may be silent, and whether losing it
// stops the run.
func (u *UDPSocket) PeerWatch() (timeout time.Duration, stop bool) {
	timeout = DefaultPeerTimeout
	if u.PeerTimeout != nil {
		timeout = time.Duration(*u.PeerTimeout)
	}
	return timeout, u.OnPeerLost == nil || *u.OnPeerLost == "stop"
}

func (u *UDPSocket) check(c *deviceCheck, path string) {
	d := c.d
	c.listenOnce(path+".listen", "udp", u.Listen)
	checkAddresses(d, path, u.Listen, u.Dial)
	if u.Peer != nil {
		if u.Listen == nil {
			d.ErrorAt(path+".peer", "peer goes with listen; a dialed socket answers its own address")
		} else if checkHostPort(d, path+".peer", *u.Peer) {
			if _, err := netip.ParseAddrPort(*u.Peer); err != nil {
				d.ErrorAt(path+".peer", "%q: give the peer's IP address (e.g. 127.0.0.1:9000), not a name: datagrams go to exactly it", *u.Peer)
			}
		}
	}
	positiveDuration(d, path+".peer_timeout", u.PeerTimeout)
	if !u.Wire() {
		if u.PeerTimeout != nil {
			d.ErrorAt(path+".peer_timeout", "goes with codec: wire: only the wire protocol's messages tell the peer is there")
		}
		if u.OnPeerLost != nil {
			d.ErrorAt(path+".on_peer_lost", "goes with codec: wire: only the wire protocol's messages tell the peer is there")
		}
	}
	if m := u.MaxFrame; m != nil && (*m <= 0 || *m > 65507) {
		d.ErrorAt(path+".max_frame", "must be between 1B and 65507B, the largest UDP payload")
	}
}

// Frames is nil: a datagram is a frame.
func (u *UDPSocket) Frames() *FrameSettings { return nil }

// Wire reports whether each datagram is a wire protocol message.
func (u *UDPSocket) Wire() bool { return u.Codec != nil && *u.Codec == "wire" }
