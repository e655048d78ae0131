package drivers_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
)

// A UDP endpoint's socket is not in the epoll set of Go's netpoller: each
// datagram sent on a socket in it raises EPOLLOUT as the kernel frees the
// datagram, which wakes the netpoller's thread (another thread, its
// scheduler, futex wake-ups) once per frame the executor writes; that was
// most of the executor's CPU at 10 kHz (BENCHMARKS.md). The peer's socket,
// opened by the net package, is in it: the check sees what it looks for.
func TestUDPSocketOutOfNetpoller(t *testing.T) {
	peer, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	peerPort := peer.LocalAddr().(*net.UDPAddr).Port
	if !polled(t, peerPort) {
		t.Fatalf("the net package's socket on port %d is not found in an epoll set: the check cannot see a polled socket", peerPort)
	}
	for _, cfg := range []drivers.UDPConfig{
		{Name: "dialed", Dial: peer.LocalAddr().String()},
		{Name: "listening", Listen: "127.0.0.1:0"},
		{Name: "listening to its peer", Listen: "127.0.0.1:0", Peer: peer.LocalAddr().String()},
		{Name: "listening on every address", Listen: ":0"},
	} {
		t.Run(cfg.Name, func(t *testing.T) {
			u := drivers.NewUDP(cfg)
			if err := u.Start(driverstest.NewWallClock(), driverstest.NewSink(), 0); err != nil {
				t.Fatal(err)
			}
			defer u.Stop()
			if port := u.LocalAddr().(*net.UDPAddr).Port; polled(t, port) {
				t.Errorf("the endpoint's socket (port %d) is in the netpoller's epoll set: every datagram it sends wakes the netpoller", port)
			}
		})
	}
}

// polled reports whether a socket of this process bound to UDP port is in
// one of the process's epoll sets (/proc/self/fdinfo of an epoll
// descriptor lists the inode of each descriptor it watches).
func polled(t *testing.T, port int) bool {
	t.Helper()
	inodes := udpInodes(t, port)
	if len(inodes) == 0 {
		t.Fatalf("no UDP socket bound to port %d in /proc/net/udp{,6}", port)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if link, _ := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			continue // closed meanwhile
		}
		for _, line := range strings.Split(string(info), "\n") {
			// tfd:        7 events:  8000201d data: 7f0e... pos:0 ino:1c2f sdev:8
			if !strings.HasPrefix(line, "tfd:") {
				continue
			}
			for _, field := range strings.Fields(line) {
				if hex, ok := strings.CutPrefix(field, "ino:"); ok {
					if ino, err := strconv.ParseUint(hex, 16, 64); err == nil && inodes[ino] {
						return true
					}
				}
			}
		}
	}
	return false
}

// udpInodes is the inodes of the UDP sockets bound to port.
func udpInodes(t *testing.T, port int) map[uint64]bool {
	t.Helper()
	inodes := map[uint64]bool{}
	suffix := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue // no IPv6
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || !strings.HasSuffix(fields[1], suffix) {
				continue
			}
			if ino, err := strconv.ParseUint(fields[9], 10, 64); err == nil {
				inodes[ino] = true
			}
		}
		f.Close()
	}
	return inodes
}
