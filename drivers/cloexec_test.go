package drivers

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// testPty opens a pseudo-terminal pair as socat does and returns its
// master and the slave's path.
func testPty(t *testing.T) (int, string) {
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

// TestPortDescriptors: the descriptors openPort finds in go.bug.st/serial's
// port are the device's and its close-signal pipe's, and it made them
// close on exec, the device's non-blocking. A version of the library that
// keeps them elsewhere fails here, rather than leave them to children.
func TestPortDescriptors(t *testing.T) {
	_, slave := testPty(t)
	port, err := openPort(slave, &serial.Mode{BaudRate: 9600})
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	fds, err := portDescriptors(port)
	if err != nil || len(fds) != 3 {
		t.Fatalf("descriptors %v: %v", fds, err)
	}
	var dev unix.Stat_t
	if err := unix.Stat(slave, &dev); err != nil {
		t.Fatal(err)
	}
	for i, fd := range fds {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatalf("descriptor %d (%d): %v", i, fd, err)
		}
		switch {
		case i == 0 && st.Rdev != dev.Rdev:
			t.Errorf("descriptor %d is not %s", fd, slave)
		case i > 0 && st.Mode&unix.S_IFMT != unix.S_IFIFO:
			t.Errorf("descriptor %d is no pipe: mode %o", fd, st.Mode)
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("descriptor %d (%d) is not closed on exec: %v", i, fd, err)
		}
	}
	if flags, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Errorf("the device's descriptor is blocking: %v", err)
	}
}

// childFiles lists the files a program the process starts has open, as
// "fd -> target", but its standard input, output and error and the
// directory it lists them from.
func childFiles(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("ls", "-l", "/proc/self/fd/").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		fields := strings.Fields(l)
		if len(fields) < 3 || fields[len(fields)-2] != "->" {
			continue
		}
		fd, target := fields[len(fields)-3], fields[len(fields)-1]
		if fd != "0" && fd != "1" && fd != "2" && !strings.HasPrefix(target, "/proc/") {
			files[fd+" -> "+target] = true
		}
	}
	return files
}

// TestChildrenGetNoDevices is the hardening issue's drivers item 2: the rig
// starts processes of its own (the live server), and a child that inherits
// a device's descriptor holds the device (a serial port stays open, and
// locked, after the rig has closed it; a pseudo-terminal never hangs up).
// With every kind of endpoint open, a program the process starts has no
// file it did not have before they were opened (what the test itself was
// started with, it passes on).
func TestChildrenGetNoDevices(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	sink, clock := &noticed{}, &setClock{}
	_, slave := testPty(t)
	dir := t.TempDir()
	before := childFiles(t)
	endpoints := []Endpoint{
		NewSerial(SerialConfig{Name: "serial", Device: slave, Baud: 9600, DataBits: 8, Framing: line}),
		NewPty(SerialConfig{Name: "pty", Baud: 9600, DataBits: 8, Framing: line, Reconnect: 20e6}, filepath.Join(dir, "device")),
		NewTCP(TCPConfig{Name: "tcp", Listen: "127.0.0.1:0", Framing: line}),
		NewUDP(UDPConfig{Name: "udp", Listen: "127.0.0.1:0"}),
	}
	for i, e := range endpoints {
		if err := e.Start(clock, sink, i); err != nil {
			t.Fatal(err)
		}
		defer e.Stop()
	}
	peer, err := net.Dial("tcp", endpoints[2].(*TCP).Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	var inherited []string
	for f := range childFiles(t) {
		if !before[f] {
			inherited = append(inherited, f)
		}
	}
	if len(inherited) > 0 {
		t.Errorf("a child inherits %s", strings.Join(inherited, ", "))
	}
}
