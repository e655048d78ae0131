package benchfile

import "github.com/hilrig/hilrig/profiles/lang"

// TCPSocket is a TCP connection.
type TCPSocket struct {
	Listen    *string        `yaml:"listen" doc:"local address to accept one connection at a time on (give listen or dial)"`
	Dial      *string        `yaml:"dial" doc:"remote address to connect to"`
	Reconnect *lang.Duration `yaml:"reconnect" doc:"with dial: connect again at this interval after a disconnection" default:"stop"`
	FrameSettings
}

func init() {
	registerDevice(DeviceKind{Key: "tcp", Doc: "a TCP connection, cut into frames as a serial line is", Bytes: true, Place: 50}, &TCPSocket{})
}

func (t *TCPSocket) check(c *deviceCheck, path string) {
	d := c.d
	c.listenOnce(path+".listen", "tcp", t.Listen)
	checkAddresses(d, path, t.Listen, t.Dial)
	t.FrameSettings.check(d, path)
	if f := t.Framing; f != nil && *f == "idle" && t.Gap == nil {
		d.ErrorAt(path+".framing", "idle framing over TCP needs a gap: a stream has no character time to count from")
	}
	if t.Reconnect != nil && t.Dial == nil {
		d.ErrorAt(path+".reconnect", "reconnect goes with dial; a listening endpoint always waits for the next connection")
	}
	positiveDuration(d, path+".reconnect", t.Reconnect)
}

// Frames returns how the stream is cut into frames.
func (t *TCPSocket) Frames() *FrameSettings { return &t.FrameSettings }
