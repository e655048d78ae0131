package benchfile

import "github.com/hilrig/hilrig/profiles/lang"

// SerialPort is a serial device.
type SerialPort struct {
	Device    DevicePath     `yaml:"device,required" doc:"the device, e.g. /dev/ttyUSB0 or /dev/serial/by-id/..."`
	Reconnect *lang.Duration `yaml:"reconnect" doc:"if the device vanishes, reopen it at this interval instead of stopping; the gap is recorded" default:"stop"`
	LineSettings
	FrameSettings
}

func init() {
	registerDevice(DeviceKind{Key: "serial", Doc: "a serial port (USB adapter, UART)", Bytes: true, Place: 10}, &SerialPort{})
}

func (s *SerialPort) check(c *deviceCheck, path string) {
	s.LineSettings.check(c.d, path)
	s.FrameSettings.check(c.d, path)
	positiveDuration(c.d, path+".reconnect", s.Reconnect)
}

// Frames returns how the line is cut into frames.
func (s *SerialPort) Frames() *FrameSettings { return &s.FrameSettings }

// DevicePath is a device file.
type DevicePath string

func (DevicePath) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a device path", Example: "/dev/ttyUSB0"}
}
