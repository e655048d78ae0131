package profiles

import "net/netip"

// UDPSocket is a UDP socket.
type UDPSocket struct {
	Listen   *string `yaml:"listen" doc:"local address to receive on, host:port (give listen or dial)"`
	Dial     *string `yaml:"dial" doc:"remote address to exchange datagrams with, host:port"`
	Peer     *string `yaml:"peer" doc:"with listen: where to send frames" default:"whoever sent the last datagram"`
	MaxFrame *Size   `yaml:"max_frame" doc:"larger datagrams are dropped and counted" default:"65507B"`
}

func init() {
	registerDevice(DeviceKind{Key: "udp", Doc: "a UDP socket: one datagram per frame", Bytes: true, Place: 40}, &UDPSocket{})
}

func (u *UDPSocket) check(c *deviceCheck, path string) {
	d := c.d
	c.listenOnce(path+".listen", "udp", u.Listen)
	checkAddresses(d, path, u.Listen, u.Dial)
	if u.Peer != nil {
		if u.Listen == nil {
			d.errorAt(path+".peer", "peer goes with listen; a dialed socket answers its own address")
		} else if checkHostPort(d, path+".peer", *u.Peer) {
			if _, err := netip.ParseAddrPort(*u.Peer); err != nil {
				d.errorAt(path+".peer", "%q: give the peer's IP address (e.g. 127.0.0.1:9000), not a name: datagrams go to exactly it", *u.Peer)
			}
		}
	}
	if m := u.MaxFrame; m != nil && (*m <= 0 || *m > 65507) {
		d.errorAt(path+".max_frame", "must be between 1B and 65507B, the largest UDP payload")
	}
}

// Frames is nil: a datagram is a frame.
func (u *UDPSocket) Frames() *FrameSettings { return nil }
