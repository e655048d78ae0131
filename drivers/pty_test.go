package drivers_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// ptsOpen lists the /dev/pts devices this process has open.
func ptsOpen(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	open := map[string]bool{}
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(target, "/dev/pts/") {
			open[target] = true
		}
	}
	return open
}

// TestPtyNeverAdoptsAnotherTerminal is the hardening issue's pty item: the
// program on the device side closes it, and then another program on the
// machine opens a terminal of its own, which the kernel numbers with the
// lowest free number, the one the rig's side had if the rig let it go. The
// rig must not take that terminal for its device coming back: no Back, no
// frame written into it, nothing typed into it read. The program opening
// the device again is a reconnection, as before.
func TestPtyNeverAdoptsAnotherTerminal(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	link := t.TempDir() + "/controller"
	before := ptsOpen(t)
	p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line, Reconnect: 20 * time.Millisecond}, link)
	sink := driverstest.NewSink()
	if err := p.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	devPath, _ := os.Readlink(link)
	rigSide := -1
	for path := range ptsOpen(t) {
		if !before[path] && path != devPath {
			fmt.Sscanf(path, "/dev/pts/%d", &rigSide)
		}
	}
	if rigSide < 0 {
		t.Fatalf("the rig's side is not open in this process (device side %s)", devPath)
	}

	dev := attach(t, link)
	dev.Write([]byte("a\n"))
	sink.WaitFor(t, "a frame", func() bool { return len(sink.Frames()) == 1 })
	dev.Close()
	sink.WaitFor(t, "the device to vanish", func() bool { return len(sink.GoneErrors()) == 1 })

	// Other terminals open until one gets the rig's old number or one past
	// it: the kernel gives the lowest free number, so past it means the
	// rig's number was not free.
	var terminals []int
	for len(terminals) < 256 {
		m, n := driverstest.OpenTerminal(t)
		terminals = append(terminals, m)
		if n >= rigSide {
			t.Logf("the rig's side was /dev/pts/%d; the last terminal opened got %d", rigSide, n)
			break
		}
	}
	for _, m := range terminals {
		unix.Write(m, []byte("typed into another terminal\n"))
	}
	// Ten reconnection intervals, writing to the device all along.
	var intoTerminals []byte
	buf := make([]byte, 4096)
	for end := time.Now().Add(200 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		p.Write([]byte("plant frame"))
		for _, m := range terminals {
			if n, _ := unix.Read(m, buf); n > 0 {
				intoTerminals = append(intoTerminals, buf[:n]...)
			}
		}
	}
	if back := sink.BackCount(); back != 0 {
		t.Errorf("the rig reported its device back %d times while only another terminal was opened", back)
	}
	if len(intoTerminals) > 0 {
		t.Errorf("the rig wrote %q into another program's terminal", intoTerminals)
	}
	if frames := sink.Payloads(); len(frames) != 1 {
		t.Errorf("the rig read %q; only %q came from its device", frames, "a")
	}
	for _, m := range terminals {
		unix.Close(m)
	}

	backBefore := sink.BackCount()
	dev = attach(t, link) // the device's own program opens it again
	defer dev.Close()
	sink.WaitFor(t, "reconnection", func() bool { return sink.BackCount() == backBefore+1 })
	dev.Write([]byte("b\n"))
	sink.WaitFor(t, "the frame sent after reconnecting", func() bool { return slices.Contains(sink.Payloads(), "b") })
	if err := p.Write([]byte("again")); err != nil {
		t.Errorf("write after reconnecting: %v", err)
	}
	readUntil(t, dev, []byte("again\n"))
}

// TestPtyLinkKeepsWhatItFinds: the link is made where the bench says, but
// only a symbolic link found there (left by a run that died) is replaced;
// somebody's file or directory is refused by name and left as it was.
func TestPtyLinkKeepsWhatItFinds(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	for _, tc := range []struct {
		name    string
		place   func(path string) error
		refused string // what the error says; empty: the link is made
	}{
		{"nothing", func(string) error { return nil }, ""},
		{"a link a dead run left", func(path string) error { return os.Symlink("/dev/pts/4095", path) }, ""},
		{"a file", func(path string) error { return os.WriteFile(path, []byte("notes\n"), 0o644) }, "exists and is a regular file, not a symbolic link; the link would replace it"},
		{"an empty directory", func(path string) error { return os.Mkdir(path, 0o755) }, "exists and is a directory, not a symbolic link; the link would replace it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := filepath.Join(t.TempDir(), "controller")
			if err := tc.place(link); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(link)
			p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line}, link)
			err := p.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0)
			defer p.Stop()
			if tc.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				if target, err := os.Readlink(link); err != nil || !strings.HasPrefix(target, "/dev/pts/") || target == "/dev/pts/4095" {
					t.Errorf("the link points at %q, %v", target, err)
				}
				return
			}
			want := "controller: pseudo-terminal: " + link + " " + tc.refused
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("start: %v; want it to say %q", err, want)
			}
			p.Stop()
			after, err := os.Lstat(link)
			if err != nil || after.Mode() != before.Mode() || after.Size() != before.Size() || !os.SameFile(before, after) {
				t.Errorf("what was at the link is now %v, %v; was %v", after, err, before)
			}
		})
	}
}

// TestPtyRemovesOnlyItsOwnLink: what somebody put at the link during the
// run is theirs, and stays when the run ends, even a link to the same
// device; and a link replaced to point at another terminal does not lead
// the rig there.
func TestPtyRemovesOnlyItsOwnLink(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	for _, tc := range []struct {
		name    string
		replace func(link, device string) error
	}{
		{"a file", func(link, _ string) error { return os.WriteFile(link, []byte("notes\n"), 0o644) }},
		{"a link elsewhere", func(link, _ string) error { return os.Symlink("/dev/null", link) }},
		{"somebody's link to the device", func(link, device string) error { return os.Symlink(device, link) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := filepath.Join(t.TempDir(), "controller")
			p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line}, link)
			if err := p.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
				t.Fatal(err)
			}
			device, _ := os.Readlink(link)
			// Later than the link was made, as a person would: the time
			// of a change, which tells two links apart, may be coarse
			// (a clock tick, 4 ms at 250 Hz).
			time.Sleep(20 * time.Millisecond)
			os.Remove(link)
			if err := tc.replace(link, device); err != nil {
				t.Fatal(err)
			}
			theirs, _ := os.Lstat(link)
			p.Stop()
			if after, err := os.Lstat(link); err != nil || !os.SameFile(theirs, after) {
				t.Errorf("after the run, the link is %v, %v; somebody had put %v there", after, err, theirs)
			}
		})
	}

	// Replaced by a link to another program's terminal: what is written
	// there never reaches the rig, and the rig writes nothing there.
	link := filepath.Join(t.TempDir(), "controller")
	p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line, Reconnect: 20 * time.Millisecond}, link)
	sink := driverstest.NewSink()
	if err := p.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	other, n := driverstest.OpenTerminal(t)
	os.Remove(link)
	os.Symlink(fmt.Sprintf("/dev/pts/%d", n), link)
	dev := attach(t, link) // a program that opens the link now opens the other terminal
	defer dev.Close()
	unix.Write(other, []byte("typed into the other terminal\n"))
	time.Sleep(100 * time.Millisecond) // five reconnection intervals
	p.Write([]byte("plant frame"))
	time.Sleep(20 * time.Millisecond)
	buf := make([]byte, 256)
	if got, _ := unix.Read(other, buf); got > 0 && bytes.Contains(buf[:got], []byte("plant frame")) {
		t.Errorf("the rig's frames reached the terminal the link was changed to: %q", buf[:got])
	}
	if frames := sink.Payloads(); len(frames) != 0 || sink.BackCount() != 0 {
		t.Errorf("the rig read %q (back %d times) from the terminal the link was changed to", frames, sink.BackCount())
	}
}
