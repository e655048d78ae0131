package drivers_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"golang.org/x/sys/unix"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/firmware/wire"
)

func attach(t *testing.T, path string) serial.Port {
	t.Helper()
	port, err := serial.Open(path, &serial.Mode{BaudRate: 115200})
	if err != nil {
		t.Fatalf("attaching to %s: %v", path, err)
	}
	port.SetReadTimeout(2 * time.Second)
	return port
}

func readUntil(t *testing.T, port serial.Port, want []byte) {
	t.Helper()
	var got []byte
	buf := make([]byte, 256)
	for !bytes.Contains(got, want) {
		n, err := port.Read(buf)
		if err != nil || n == 0 {
			t.Fatalf("read %q so far, want %q: %v", got, want, err)
		}
		got = append(got, buf[:n]...)
	}
}

func TestPtyCarriesFramesBothWays(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	link := t.TempDir() + "/controller"
	p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line}, link)
	sink := driverstest.NewSink()
	if err := p.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	dev := attach(t, p.DevicePath())
	defer dev.Close()

	dev.Write([]byte("hello\nwor"))
	dev.Write([]byte("ld\n"))
	sink.WaitFor(t, "two frames", func() bool { return len(sink.Frames()) == 2 })
	if sink.Payloads()[0] != "hello" || sink.Payloads()[1] != "world" || sink.Frames()[1].At < sink.Frames()[0].At {
		t.Errorf("frames %q", sink.Payloads())
	}
	if err := p.Write([]byte("to the device")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, dev, []byte("to the device\n"))
	if c := p.Counts(); c.FramesIn != 2 || c.FramesOut != 1 {
		t.Errorf("counts %+v", c)
	}
}

func TestPtyUnplugAndReconnect(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	for _, reconnect := range []time.Duration{0, 20 * time.Millisecond} {
		p := drivers.NewPty(drivers.SerialConfig{Name: "plant", Baud: 9600, DataBits: 8, Framing: line, Reconnect: reconnect}, "")
		sink := driverstest.NewSink()
		if err := p.Start(driverstest.NewWallClock(), sink, 0); err != nil {
			t.Fatal(err)
		}
		dev := attach(t, p.DevicePath())
		dev.Write([]byte("a\n"))
		sink.WaitFor(t, "a frame", func() bool { return len(sink.Frames()) == 1 })
		dev.Close() // unplug
		sink.WaitFor(t, "the device to vanish", func() bool { return len(sink.GoneErrors()) == 1 })
		var de *drivers.DeviceError
		if !errors.As(sink.GoneErrors()[0], &de) || de.Endpoint != "plant" {
			t.Errorf("gone with %v", sink.GoneErrors()[0])
		}
		if err := p.Write([]byte("lost")); !errors.Is(err, drivers.ErrDisconnected) {
			t.Errorf("write while unplugged: %v", err)
		}
		if reconnect > 0 {
			dev = attach(t, p.DevicePath()) // plug back in
			sink.WaitFor(t, "reconnection", func() bool { return sink.BackCount() == 1 })
			dev.Write([]byte("b\n"))
			sink.WaitFor(t, "a frame after reconnecting", func() bool { return len(sink.Frames()) == 2 })
			if err := p.Write([]byte("again")); err != nil {
				t.Errorf("write after reconnecting: %v", err)
			}
			readUntil(t, dev, []byte("again\n"))
			dev.Close()
		}
		p.Stop()
	}
}

func TestMissingSerialDeviceIsNamed(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	s := drivers.NewSerial(drivers.SerialConfig{Name: "controller", Device: "/dev/ttyUSB9", Baud: 115200, DataBits: 8, Framing: line})
	err := s.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0)
	if err == nil || !bytesContains(err.Error(), "controller: /dev/ttyUSB9: no such device") {
		t.Errorf("got %v", err)
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

func TestLineTime(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	// 8N1 is 10 bits a character: 9 bytes (8 + "\n") at 115200 baud take
	// 90/115200 s = 781.25 µs; 8E2 is 12 bits.
	s := drivers.NewSerial(drivers.SerialConfig{Baud: 115200, DataBits: 8, Framing: line})
	if got := s.LineTime(8); got != 781250*time.Nanosecond {
		t.Errorf("8N1: %v", got)
	}
	s = drivers.NewSerial(drivers.SerialConfig{Baud: 9600, DataBits: 8, Parity: serial.EvenParity, StopBits: serial.TwoStopBits, Framing: wire.Fixed{Size: 4}})
	if got := s.LineTime(4); got != 5*time.Millisecond {
		t.Errorf("8E2: %v", got)
	}
	// A COBS frame of 300 bytes is 300 + 3 + 1 bytes on the line: the two
	// zeros around it, its first code byte and one more after 254 bytes
	// (wire.COBS.Append's very output, checked), for bytes other than zero.
	frame := wire.COBS{}.Append(nil, bytes.Repeat([]byte{7}, 300))
	s = drivers.NewSerial(drivers.SerialConfig{Baud: 100000, DataBits: 8, Framing: wire.COBS{}})
	if got, want := s.LineTime(300), time.Duration(len(frame))*100*time.Microsecond; len(frame) != 304 || got != want {
		t.Errorf("COBS: %v for %d bytes, want %v", got, len(frame), want)
	}
	if got := drivers.NewPty(drivers.SerialConfig{Baud: 9600, DataBits: 8, Framing: line}, "").LineTime(100); got != 0 {
		t.Errorf("a pseudo-terminal takes %v", got)
	}
}

// TestTwoPtysOneLink: a second endpoint on a link in use is refused with
// the process that holds it, and leaves the first one's link alone.
func TestTwoPtysOneLink(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	link := t.TempDir() + "/controller"
	first := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line}, link)
	if err := first.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
		t.Fatal(err)
	}
	defer first.Stop()
	before, _ := os.Readlink(link)
	second := drivers.NewPty(drivers.SerialConfig{Name: "again", Baud: 115200, DataBits: 8, Framing: line}, link)
	err := second.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0)
	want := fmt.Sprintf("%s is in use by process %d (", link, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second start: %v; want it to say %q", err, want)
	}
	second.Stop()
	if after, err := os.Readlink(link); err != nil || after != before {
		t.Errorf("the first endpoint's link is now %q, %v; was %q", after, err, before)
	}
}

// TestTwoSerialsOneDevice: a serial device in use by one endpoint is
// refused to another, even for root, whom the kernel's exclusive mode
// does not stop.
func TestTwoSerialsOneDevice(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	p := drivers.NewPty(drivers.SerialConfig{Name: "plant", Baud: 115200, DataBits: 8, Framing: line}, "")
	if err := p.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	first := drivers.NewSerial(drivers.SerialConfig{Name: "one", Device: p.DevicePath(), Baud: 115200, DataBits: 8, Framing: line})
	if err := first.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
		t.Fatal(err)
	}
	second := drivers.NewSerial(drivers.SerialConfig{Name: "two", Device: p.DevicePath(), Baud: 115200, DataBits: 8, Framing: line})
	err := second.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0)
	if err == nil || !strings.Contains(err.Error(), "is in use by process") {
		t.Errorf("second start: %v", err)
	}
	first.Stop()
	if err := second.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
		t.Errorf("after the first stopped: %v", err)
	}
	second.Stop()
}

// TestReadErrorsNameAVanishedDevice: a device that went away reads as a
// closed port or as EIO, depending on when the read caught it; both say
// the device vanished.
func TestReadErrorsNameAVanishedDevice(t *testing.T) {
	for _, err := range []error{&os.PathError{Op: "read", Path: "/dev/pts/3", Err: unix.EIO}, fmt.Errorf("read: %w", unix.EIO)} {
		if got := drivers.DescribeReadError(err); got.Error() != "device vanished (unplugged?)" {
			t.Errorf("%v: %v", err, got)
		}
	}
}
