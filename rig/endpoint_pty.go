package rig

import (
	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
)

func init() { registerDriver(ptyEndpoint, nil) }

func ptyEndpoint(name string, p *benchfile.PtyPort, readerThread func()) (endpoint, error) {
	reconnect := p.Reconnect
	if reconnect == nil {
		d := lang.Duration(benchfile.DefaultPtyReconnect)
		reconnect = &d
	}
	cfg, err := serialConfig(name, p.LineSettings, p.FrameSettings, reconnect, readerThread)
	if err != nil {
		return endpoint{}, err
	}
	return endpoint{Endpoint: drivers.NewPty(cfg, deref(p.Link)), device: "pseudo-terminal", reconnects: cfg.Reconnect > 0}, nil
}
