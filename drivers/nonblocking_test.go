package drivers_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/firmware/wire"
)

// unreadDevice is a device's side that the test reads only when told.
type unreadDevice interface {
	// drain reads what there is until nothing more comes for a while.
	drain(t *testing.T) []byte
}

// fdDevice is a device's side the test holds as a descriptor.
type fdDevice int

func (fd fdDevice) drain(t *testing.T) []byte {
	var got []byte
	buf := make([]byte, 1<<16)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 300); n == 0 || err != nil && !errors.Is(err, unix.EINTR) {
			return got
		}
		n, err := unix.Read(int(fd), buf)
		if n <= 0 && !errors.Is(err, unix.EAGAIN) {
			t.Fatalf("reading the device's side: %v", err)
		}
		got = append(got, buf[:max(n, 0)]...)
	}
}

// connDevice is a TCP peer.
type connDevice struct{ net.Conn }

func (c connDevice) drain(t *testing.T) []byte {
	var got []byte
	buf := make([]byte, 1<<16)
	for {
		c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			return got
		}
	}
}

// rawPty opens a pseudo-terminal pair in raw mode and returns its master
// (non-blocking) and the slave's path.
func rawPty(t *testing.T) (int, string) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	t.Cleanup(func() { unix.Close(m) })
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	return m, fmt.Sprintf("/dev/pts/%d", n)
}

// unreadCase is an endpoint whose device the test reads only when told.
type unreadCase struct {
	name  string
	frame int // bytes, line feed included
	open  func(t *testing.T, clock drivers.Clock, sink drivers.Sink) (drivers.Endpoint, unreadDevice)
}

// unreadCases are the endpoints whose writes a device can refuse: a serial
// port (the other end of its line: the master of a pseudo-terminal pair,
// as socat makes them), a pty endpoint and a TCP endpoint.
func unreadCases() []unreadCase {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	return []unreadCase{
		{"serial", 100, func(t *testing.T, clock drivers.Clock, sink drivers.Sink) (drivers.Endpoint, unreadDevice) {
			m, slave := rawPty(t)
			s := drivers.NewSerial(drivers.SerialConfig{Name: "plant", Device: slave, Baud: 9600, DataBits: 8, Framing: line})
			if err := s.Start(clock, sink, 0); err != nil {
				t.Fatal(err)
			}
			return s, fdDevice(m)
		}},
		{"pty", 100, func(t *testing.T, clock drivers.Clock, sink drivers.Sink) (drivers.Endpoint, unreadDevice) {
			p := drivers.NewPty(drivers.SerialConfig{Name: "plant", Baud: 115200, DataBits: 8, Framing: line}, "")
			if err := p.Start(clock, sink, 0); err != nil {
				t.Fatal(err)
			}
			dev, err := unix.Open(p.DevicePath(), unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { unix.Close(dev) })
			waitFor(t, "the rig's side to be plugged in", func() bool { return p.Write([]byte("")) == nil })
			fdDevice(dev).drain(t)
			return p, fdDevice(dev)
		}},
		{"tcp", 4000, func(t *testing.T, clock drivers.Clock, sink drivers.Sink) (drivers.Endpoint, unreadDevice) {
			c := drivers.NewTCP(drivers.TCPConfig{Name: "plant", Listen: "127.0.0.1:0", Framing: line})
			if err := c.Start(clock, sink, 0); err != nil {
				t.Fatal(err)
			}
			peer, err := net.Dial("tcp", c.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { peer.Close() })
			waitFor(t, "the client to be taken", func() bool { return c.Write([]byte("")) == nil })
			connDevice{peer}.drain(t)
			return c, connDevice{peer}
		}},
	}
}

// TestWriteNeverWaits is the hardening issue's drivers item 1 at the
// driver: a device that does not read what is written to it (a program
// that leaves its pseudo-terminal unread, the other end of a serial line,
// a TCP peer) filled its side, and the next Write waited for it to read,
// holding up the executor's thread. Now every Write returns at once: the
// frames the device does not take are refused with ErrNotReading and
// counted, the stretch is told when it starts and when the device has read
// again for a second; and once the device reads, it gets every frame it
// was counted out whole, in order, and exactly the bytes counted.
func TestWriteNeverWaits(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	for _, tc := range unreadCases() {
		t.Run(tc.name, func(t *testing.T) {
			var clock driverstest.Clock
			sink := driverstest.NewSink()
			e, dev := tc.open(t, &clock, sink)
			defer e.Stop()
			before := e.(drivers.Counter).Counts()
			payload := func(seq int) []byte {
				p := fmt.Appendf(nil, "%07d ", seq)
				return append(p, bytes.Repeat([]byte{'x'}, tc.frame-1-len(p))...)
			}

			// Written until the device's side is full, and 100 more.
			done := make(chan struct{})
			var written, refused int
			var slowest time.Duration
			go func() {
				defer close(done)
				for ; refused < 100 && written < 1_000_000; written++ {
					start := time.Now()
					err := e.Write(payload(written))
					slowest = max(slowest, time.Since(start))
					if errors.Is(err, drivers.ErrNotReading) {
						refused++
					} else if err != nil {
						t.Errorf("write %d: %v", written, err)
						return
					}
				}
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("a write waited for the device to read (%d frames written, %d refused)", written, refused)
			}
			t.Logf("%d frames written, the slowest write took %v", written, slowest)

			// The device reads again; a second later the rig writes again.
			got := dev.drain(t)
			clock.Set(2 * time.Second)
			if err := e.Write(payload(written)); err != nil {
				t.Fatalf("the write after the device read: %v", err)
			}
			written++
			got = append(got, dev.drain(t)...)

			c := e.(drivers.Counter).Counts()
			c.FramesOut -= before.FramesOut
			c.BytesOut -= before.BytesOut
			var frames [][]byte
			d := line.NewDecoder(1 << 16)
			d.Feed(got, 0, func(f []byte, _ time.Duration) { frames = append(frames, bytes.Clone(f)) })
			if uint64(len(frames)) != c.FramesOut || uint64(len(got)) != c.BytesOut || d.Errors() != 0 || d.Stats().Pending != 0 {
				t.Errorf("the device read %d frames in %d bytes (%d bad, %d pending); the endpoint wrote %d frames, %d bytes", len(frames), len(got), d.Errors(), d.Stats().Pending, c.FramesOut, c.BytesOut)
			}
			last := -1
			for _, f := range frames {
				var seq int
				fmt.Sscanf(string(f), "%d", &seq)
				if seq <= last || !bytes.Equal(f, payload(seq)) {
					t.Fatalf("frame %q read after frame %d", f[:min(len(f), 20)], last)
				}
				last = seq
			}
			if c.NotTaken == 0 || c.NotTaken != c.WriteErrors-before.WriteErrors || c.FramesOut+c.NotTaken != uint64(written) || c.CutFrames != 0 {
				t.Errorf("%d written: %d out, %d not taken, %d write errors, %d cut", written, c.FramesOut, c.NotTaken, c.WriteErrors-before.WriteErrors, c.CutFrames)
			}
			var said []string
			for _, n := range sink.Notices() {
				said = append(said, fmt.Sprintf("%v %s: %v", n.At, n.Kind, n.Err))
			}
			if len(said) != 2 || !strings.HasPrefix(said[0], "0s device_not_reading: plant: ") ||
				!strings.HasSuffix(said[1], fmt.Sprintf("reading again after 2s: %d frames not taken", c.NotTaken)) {
				t.Errorf("notices %q; want a stretch of %d frames from 0 s to 2 s", said, c.NotTaken)
			}
		})
	}
}

// TestWriteAllocatesNothing: the executor writes every frame from its
// real-time thread, where an allocation is garbage to collect under the
// release loop. A frame taken and a frame refused (in a stretch already
// told) cost no allocation, on every kind of endpoint; so does a datagram.
func TestWriteAllocatesNothing(t *testing.T) {
	for _, tc := range unreadCases() {
		t.Run(tc.name, func(t *testing.T) {
			e, dev := tc.open(t, driverstest.NewWallClock(), driverstest.NewSink())
			defer e.Stop()
			frame := []byte("taken")
			if n := testing.AllocsPerRun(100, func() { e.Write(frame) }); n != 0 {
				t.Errorf("%v allocations a frame taken", n)
			}
			dev.drain(t)
			for i := 0; e.Write(frame) == nil; i++ {
				if i > 1_000_000 {
					t.Fatal("the device never refused a frame")
				}
			}
			if n := testing.AllocsPerRun(100, func() { e.Write(frame) }); n != 0 {
				t.Errorf("%v allocations a frame refused", n)
			}
		})
	}
	t.Run("udp", func(t *testing.T) {
		peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer peer.Close()
		for _, cfg := range []drivers.UDPConfig{{Name: "dialed", Dial: peer.LocalAddr().String()}, {Name: "to its peer", Listen: "127.0.0.1:0", Peer: peer.LocalAddr().String()}} {
			u := drivers.NewUDP(cfg)
			if err := u.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
				t.Fatal(err)
			}
			datagram := []byte("datagram")
			u.Write(datagram) // the peer's address made
			if n := testing.AllocsPerRun(100, func() {
				if err := u.Write(datagram); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("%s: %v allocations a datagram", cfg.Name, n)
			}
			u.Stop()
		}
	})
}

// waitFor waits until cond holds, for at most 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestPtyTellsWhyItCannotPlugBackIn is the hardening issue's drivers item
// 4: a program closes the device side of a pty endpoint and opens it again,
// and the rig cannot make a new pair for its side (here no descriptors are
// left; no pseudo-terminals left is the same failure). Nothing was said,
// and the rig never tried again: the gap lasted until the program closed
// and opened the device once more. Now the failure is told once, the rig
// tries again every reconnect interval, and the device is back as soon as
// a pair can be made.
func TestPtyTellsWhyItCannotPlugBackIn(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	p := drivers.NewPty(drivers.SerialConfig{Name: "controller", Baud: 9600, DataBits: 8, Framing: line, Reconnect: 20 * time.Millisecond}, "")
	sink := driverstest.NewSink()
	if err := p.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	dev, err := unix.Open(p.DevicePath(), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(dev) // the program quits
	sink.WaitFor(t, "the device to go", func() bool { return len(sink.GoneErrors()) == 1 })

	// No descriptor left but the one the program reopens the device with.
	var limit unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &limit); err != nil {
		t.Fatal(err)
	}
	free, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0) // the lowest free number
	if err != nil {
		t.Fatal(err)
	}
	low := limit
	low.Cur = uint64(free) + 1
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Skipf("cannot lower the descriptor limit: %v", err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			unix.Setrlimit(unix.RLIMIT_NOFILE, &limit)
		}
	}
	defer restore()
	unix.Close(free)
	for deadline := time.Now().Add(5 * time.Second); ; {
		if dev, err = unix.Open(p.DevicePath(), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
			break
		}
		if time.Now().After(deadline) { // the slot was taken, by the rig's tries, every time
			restore()
			t.Fatalf("reopening the device: %v", err)
		}
	}
	defer unix.Close(dev)
	sink.WaitFor(t, "the failure to be told", func() bool { return len(sink.Notices()) > 0 })
	time.Sleep(100 * time.Millisecond) // five more tries
	restore()
	sink.WaitFor(t, "the device to be back", func() bool { return sink.BackCount() == 1 })
	unix.Write(dev, []byte("after\n"))
	sink.WaitFor(t, "a frame", func() bool { return len(sink.Frames()) == 1 })

	notices := sink.Notices()
	if len(notices) != 1 || notices[0].Kind != drivers.NoticeReopenFailed || !strings.Contains(notices[0].Err.Error(),
		"controller: pseudo-terminal "+p.DevicePath()+": cannot plug the cable back in: opening /dev/ptmx: too many open files; trying again every 20ms") {
		t.Errorf("notices %+v; want the failure once", notices)
	}
}
