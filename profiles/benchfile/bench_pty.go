package benchfile

import (
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
)

// PtyPort is a virtual serial device.
type PtyPort struct {
	Link      *string        `yaml:"link" doc:"make this path a symlink to the device to attach to" default:"none: the /dev/pts path is printed"`
	Reconnect *lang.Duration `yaml:"reconnect" doc:"when the attached program closes the device (quitting picocom, say), the run waits for a program to open it again, looking at this interval, and records the gap; 0s: the run stops instead, as for a real adapter unplugged" default:"20ms"`
	LineSettings
	FrameSettings
}

// DefaultPtyReconnect is how often a pty endpoint whose device side was
// closed looks for it to be opened again.
const DefaultPtyReconnect = 20 * time.Millisecond

func init() {
	registerDevice(DeviceKind{Key: "pty", Doc: "a virtual serial port: a pseudo-terminal that a program attaches to as if it were a USB adapter", Bytes: true, Place: 20}, &PtyPort{})
}

func (p *PtyPort) check(c *deviceCheck, path string) {
	p.LineSettings.check(c.d, path)
	p.FrameSettings.check(c.d, path)
	if p.Reconnect != nil && *p.Reconnect < 0 {
		c.d.ErrorAt(path+".reconnect", "must not be negative (0s: stop the run)")
	}
}

// Frames returns how the line is cut into frames.
func (p *PtyPort) Frames() *FrameSettings { return &p.FrameSettings }
