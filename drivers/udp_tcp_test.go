package drivers_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"

	"github.com/hilrig/hilrig/firmware/wire"
)

func TestUDPEndpoint(t *testing.T) {
	u := drivers.NewUDP(drivers.UDPConfig{Name: "plant", Listen: "127.0.0.1:0"})
	sink := driverstest.NewSink()
	if err := u.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer u.Stop()
	if err := u.Write([]byte("nobody yet")); err != drivers.ErrDisconnected {
		t.Errorf("write before any peer: %v", err)
	}
	peer, err := net.DialUDP("udp", nil, u.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.Write([]byte("ping"))
	sink.WaitFor(t, "a datagram", func() bool { return len(sink.Frames()) == 1 })
	if sink.Payloads()[0] != "ping" {
		t.Errorf("got %q", sink.Payloads()[0])
	}
	if err := u.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 100)
	n, err := peer.Read(buf)
	if err != nil || string(buf[:n]) != "pong" {
		t.Errorf("reply %q, %v", buf[:n], err)
	}
}

func TestTCPEndpoint(t *testing.T) {
	sink := driverstest.NewSink()
	c := listeningLines(t, driverstest.NewWallClock(), sink)
	for client := range 2 { // a second client after the first leaves
		conn, err := net.Dial("tcp", c.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn.Write([]byte("one\ntw"))
		conn.Write([]byte("o\n"))
		sink.WaitFor(t, "two lines", func() bool { return len(sink.Frames()) == 2*(client+1) })
		for c.Write([]byte("back")) == drivers.ErrDisconnected {
			time.Sleep(time.Millisecond)
		}
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 100)
		n, _ := conn.Read(buf)
		if string(buf[:n]) != "back\n" {
			t.Errorf("client %d read %q", client, buf[:n])
		}
		conn.Close()
		sink.WaitFor(t, "the client to leave", func() bool { return len(sink.GoneErrors()) == client+2 })
	}
	// Gone at start (no client yet), back, gone, back, gone.
	if sink.BackCount() != 2 || sink.Payloads()[2] != "one" || sink.Payloads()[3] != "two" {
		t.Errorf("frames %q, back %d", sink.Payloads(), sink.BackCount())
	}
}

// A dialed UDP endpoint whose peer is not listening yet gets its sends
// refused (ICMP port unreachable, reported by the kernel on the socket's
// next read): UDP has no connection to lose, so that is a lost datagram,
// counted, and the endpoint keeps working once the peer binds.
func TestUDPDialedPeerNotListeningYet(t *testing.T) {
	probe, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	addr := probe.LocalAddr().(*net.UDPAddr)
	probe.Close() // nobody listens there now
	u := drivers.NewUDP(drivers.UDPConfig{Name: "plant", Dial: addr.String()})
	sink := driverstest.NewSink()
	if err := u.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer u.Stop()
	u.Write([]byte("too early")) // refused now or on the next read: a write error either way
	sink.WaitFor(t, "the refusal counted", func() bool { return u.Counts().WriteErrors == 1 })
	if gone := sink.GoneErrors(); len(gone) != 0 {
		t.Fatalf("a refused datagram lost the device: %v", gone)
	}
	peer, err := net.ListenUDP("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if _, err := peer.WriteToUDP([]byte("late"), u.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	sink.WaitFor(t, "the peer's datagram", func() bool { return len(sink.Frames()) == 1 })
	if err := u.Write([]byte("reply")); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 100)
	if n, err := peer.Read(buf); err != nil || string(buf[:n]) != "reply" {
		t.Errorf("peer read %q, %v", buf[:n], err)
	}
	if gone := sink.GoneErrors(); len(gone) != 0 {
		t.Errorf("gone: %v", gone)
	}
}

// Stop ends a dialing endpoint's wait to reconnect at once, not after the
// reconnect interval.
func TestTCPStopWhileWaitingToReconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	const reconnect = time.Hour
	c := drivers.NewTCP(drivers.TCPConfig{Name: "controller", Dial: ln.Addr().String(), Framing: line, Reconnect: reconnect})
	sink := driverstest.NewSink()
	if err := c.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	peer.Close()
	sink.WaitFor(t, "the peer to leave", func() bool { return len(sink.GoneErrors()) == 1 })
	stopped := make(chan struct{})
	go func() { c.Stop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second): // generous, and far under the hour it would wait
		t.Fatal("Stop waited for the reconnect interval")
	}
}

// goneAt is a sink that keeps when devices went away.
type goneAt struct {
	*driverstest.Sink
	mu sync.Mutex
	at []time.Duration
}

func (s *goneAt) Gone(i int, at time.Duration, err error) {
	s.mu.Lock()
	s.at = append(s.at, at)
	s.mu.Unlock()
	s.Sink.Gone(i, at, err)
}

// A listening endpoint has no peer until one connects: it is gone from its
// start, so that a run that nobody connected to says so, and back when the
// first client comes.
func TestTCPListeningGoneUntilFirstClient(t *testing.T) {
	sink := &goneAt{Sink: driverstest.NewSink()}
	var clock driverstest.Clock
	clock.Set(7 * time.Millisecond)
	c := listeningLines(t, &clock, sink)
	clock.Set(time.Second)
	sink.WaitFor(t, "gone at start", func() bool { return len(sink.GoneErrors()) == 1 })
	sink.mu.Lock()
	at := sink.at[0]
	sink.mu.Unlock()
	var de *drivers.DeviceError
	if err := sink.GoneErrors()[0]; at != 7*time.Millisecond || !errors.As(err, &de) || !strings.Contains(err.Error(), "no client") {
		t.Errorf("gone at %v: %v", at, err)
	}
	if err := c.Write([]byte("nobody")); err != drivers.ErrDisconnected {
		t.Errorf("write with no client: %v", err)
	}
	conn, err := net.Dial("tcp", c.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sink.WaitFor(t, "back at the first client", func() bool { return sink.BackCount() == 1 })
}

// A frame the peer's closing cuts is counted bad when the connection
// closes, not left pending until a next client comes.
func TestTCPFrameCutByCloseCountedAtClose(t *testing.T) {
	sink := driverstest.NewSink()
	c := listeningLines(t, driverstest.NewWallClock(), sink)
	conn, err := net.Dial("tcp", c.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("one\npart"))
	sink.WaitFor(t, "a line", func() bool { return len(sink.Frames()) == 1 })
	conn.Close()
	sink.WaitFor(t, "the client to leave", func() bool { return len(sink.GoneErrors()) == 2 })
	n := c.Counts()
	if n.BadFrames != 1 || n.BadBytes != 4 || n.PendingBytes != 0 || n.BytesIn != 8 {
		t.Errorf("counts %+v", n)
	}
}

// listeningLines starts a TCP endpoint listening on a free loopback port
// for lines, reporting to sink; it stops with the test.
func listeningLines(t *testing.T, clock drivers.Clock, sink drivers.Sink) *drivers.TCP {
	t.Helper()
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	c := drivers.NewTCP(drivers.TCPConfig{Name: "controller", Listen: "127.0.0.1:0", Framing: line})
	if err := c.Start(clock, sink, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	return c
}
