package rig

import (
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles/benchfile"
)

func init() { registerDriver(tcpEndpoint, nil) }

func tcpEndpoint(name string, t *benchfile.TCPSocket, readerThread func()) (endpoint, error) {
	spec := t.FrameSettings.Spec()
	framing, err := makeFraming(spec, 0)
	if err != nil {
		return endpoint{}, err
	}
	cfg := drivers.TCPConfig{Name: name, Listen: deref(t.Listen), Dial: deref(t.Dial), Framing: framing, MaxFrame: spec.MaxFrame, ReaderThread: readerThread}
	if t.Reconnect != nil {
		cfg.Reconnect = time.Duration(*t.Reconnect)
	}
	// A listening endpoint always waits for its next client.
	return endpoint{Endpoint: drivers.NewTCP(cfg), device: "tcp " + cfg.Listen + cfg.Dial, reconnects: cfg.Reconnect > 0 || cfg.Listen != ""}, nil
}
