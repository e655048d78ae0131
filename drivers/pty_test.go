package drivers

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/firmware/wire"
)

// wallClock is the time since a test began.
type wallClock struct{ start time.Time }

func (c wallClock) Now() time.Duration { return time.Since(c.start) }

// collector is a Sink that keeps what it is told.
type collector struct {
	mu     sync.Mutex
	frames []string
	times  []time.Duration
	gone   []error
	back   int
	notify chan struct{}
}

func newCollector() *collector { return &collector{notify: make(chan struct{}, 100)} }

func (c *collector) Frame(_ int, payload []byte, at time.Duration) {
	c.mu.Lock()
	c.frames = append(c.frames, string(payload))
	c.times = append(c.times, at)
	c.mu.Unlock()
	c.notify <- struct{}{}
}

func (c *collector) Gone(_ int, _ time.Duration, err error) {
	c.mu.Lock()
	c.gone = append(c.gone, err)
	c.mu.Unlock()
	c.notify <- struct{}{}
}

func (c *collector) Back(int, time.Duration) {
	c.mu.Lock()
	c.back++
	c.mu.Unlock()
	c.notify <- struct{}{}
}

// waitFor waits until cond holds, for a generous while.
func (c *collector) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		ok := cond()
		c.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-c.notify:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

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
	p := NewPty(SerialConfig{Name: "controller", Baud: 115200, DataBits: 8, Framing: line}, link)
	sink := newCollector()
	if err := p.Start(wallClock{time.Now()}, sink, 0); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	dev := attach(t, p.DevicePath())
	defer dev.Close()

	dev.Write([]byte("hello\nwor"))
	dev.Write([]byte("ld\n"))
	sink.waitFor(t, "two frames", func() bool { return len(sink.frames) == 2 })
	if sink.frames[0] != "hello" || sink.frames[1] != "world" || sink.times[1] < sink.times[0] {
		t.Errorf("frames %q at %v", sink.frames, sink.times)
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
		p := NewPty(SerialConfig{Name: "plant", Baud: 9600, DataBits: 8, Framing: line, Reconnect: reconnect}, "")
		sink := newCollector()
		if err := p.Start(wallClock{time.Now()}, sink, 0); err != nil {
			t.Fatal(err)
		}
		dev := attach(t, p.DevicePath())
		dev.Write([]byte("a\n"))
		sink.waitFor(t, "a frame", func() bool { return len(sink.frames) == 1 })
		dev.Close() // unplug
		sink.waitFor(t, "the device to vanish", func() bool { return len(sink.gone) == 1 })
		var de *DeviceError
		if !errors.As(sink.gone[0], &de) || de.Endpoint != "plant" {
			t.Errorf("gone with %v", sink.gone[0])
		}
		if err := p.Write([]byte("lost")); !errors.Is(err, ErrDisconnected) {
			t.Errorf("write while unplugged: %v", err)
		}
		if reconnect > 0 {
			dev = attach(t, p.DevicePath()) // plug back in
			sink.waitFor(t, "reconnection", func() bool { return sink.back == 1 })
			dev.Write([]byte("b\n"))
			sink.waitFor(t, "a frame after reconnecting", func() bool { return len(sink.frames) == 2 })
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
	s := NewSerial(SerialConfig{Name: "controller", Device: "/dev/ttyUSB9", Baud: 115200, DataBits: 8, Framing: line})
	err := s.Start(wallClock{time.Now()}, newCollector(), 0)
	if err == nil || !bytesContains(err.Error(), "controller: /dev/ttyUSB9: no such device") {
		t.Errorf("got %v", err)
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }

func TestLineTime(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	// 8N1 is 10 bits a character: 9 bytes (8 + "\n") at 115200 baud take
	// 90/115200 s = 781.25 µs; 8E2 is 12 bits.
	s := NewSerial(SerialConfig{Baud: 115200, DataBits: 8, Framing: line})
	if got := s.LineTime(8); got != 781250*time.Nanosecond {
		t.Errorf("8N1: %v", got)
	}
	s = NewSerial(SerialConfig{Baud: 9600, DataBits: 8, Parity: serial.EvenParity, StopBits: serial.TwoStopBits, Framing: wire.Fixed{Size: 4}})
	if got := s.LineTime(4); got != 5*time.Millisecond {
		t.Errorf("8E2: %v", got)
	}
	if got := NewPty(SerialConfig{Baud: 9600, DataBits: 8, Framing: line}, "").LineTime(100); got != 0 {
		t.Errorf("a pseudo-terminal takes %v", got)
	}
}
