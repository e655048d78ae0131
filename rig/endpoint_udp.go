package rig

import (
	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles"
)

func init() { registerDriver(udpEndpoint, nil) }

func udpEndpoint(name string, u *profiles.UDPSocket, readerThread func()) (endpoint, error) {
	cfg := drivers.UDPConfig{Name: name, Listen: deref(u.Listen), Dial: deref(u.Dial), Peer: deref(u.Peer), ReaderThread: readerThread}
	if u.MaxFrame != nil {
		cfg.MaxFrame = int(*u.MaxFrame)
	}
	return endpoint{Endpoint: drivers.NewUDP(cfg), device: "udp " + cfg.Listen + cfg.Dial}, nil
}
