package drivers

import (
	"net"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

func TestUDPEndpoint(t *testing.T) {
	u := NewUDP(UDPConfig{Name: "plant", Listen: "127.0.0.1:0"})
	sink := newCollector()
	if err := u.Start(wallClock{time.Now()}, sink, 0); err != nil {
		t.Fatal(err)
	}
	defer u.Stop()
	if err := u.Write([]byte("nobody yet")); err != ErrDisconnected {
		t.Errorf("write before any peer: %v", err)
	}
	peer, err := net.DialUDP("udp", nil, u.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peer.Write([]byte("ping"))
	sink.waitFor(t, "a datagram", func() bool { return len(sink.frames) == 1 })
	if sink.frames[0] != "ping" {
		t.Errorf("got %q", sink.frames[0])
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
	c := NewTCP(TCPConfig{Name: "controller", Listen: "127.0.0.1:0", Framing: line})
	sink := newCollector()
	if err := c.Start(wallClock{time.Now()}, sink, 0); err != nil {
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
		sink.waitFor(t, "two lines", func() bool { return len(sink.frames) == 2*(client+1) })
		for c.Write([]byte("back")) == ErrDisconnected {
			time.Sleep(time.Millisecond)
		}
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 100)
		n, _ := conn.Read(buf)
		if string(buf[:n]) != "back\n" {
			t.Errorf("client %d read %q", client, buf[:n])
		}
		conn.Close()
		sink.waitFor(t, "the client to leave", func() bool { return len(sink.gone) == client+1 })
	}
	if sink.back != 1 || sink.frames[2] != "one" || sink.frames[3] != "two" {
		t.Errorf("frames %q, back %d", sink.frames, sink.back)
	}
}
