package drivers_test

import (
	"net"
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
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	c := drivers.NewTCP(drivers.TCPConfig{Name: "controller", Listen: "127.0.0.1:0", Framing: line})
	sink := driverstest.NewSink()
	if err := c.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
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
		sink.WaitFor(t, "the client to leave", func() bool { return len(sink.GoneErrors()) == client+1 })
	}
	if sink.BackCount() != 1 || sink.Payloads()[2] != "one" || sink.Payloads()[3] != "two" {
		t.Errorf("frames %q, back %d", sink.Payloads(), sink.BackCount())
	}
}
