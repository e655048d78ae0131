package rig

import (
	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles/benchfile"
)

func init() { registerDriver(udpEndpoint, nil) }

func udpEndpoint(name string, u *benchfile.UDPSocket, readerThread func()) (endpoint, error) {
	cfg := drivers.UDPConfig{Name: name, Listen: deref(u.Listen), Dial: deref(u.Dial), Peer: deref(u.Peer), ReaderThread: readerThread}
	if u.MaxFrame != nil {
		cfg.MaxFrame = int(*u.MaxFrame)
	}
	return endpoint{Endpoint: drivers.NewUDP(cfg), device: "udp " + cfg.Listen + cfg.Dial}, nil
}
