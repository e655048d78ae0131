package drivers

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// TestReconnectExplainsOncePerGap is the hardening issue's drivers item 3:
// a reconnecting endpoint tries to open its device every 20 ms while it is
// away. A serial endpoint explained each failed try, listing the serial
// ports (the library reads sysfs and opens every ttyS placeholder):
// thousands of allocations a second away. Now the first failed try of a
// gap is explained, and told; the others cost next to nothing. A pty's rig
// side is not tried at all until its Pty has a pair to open (each try made
// and removed a lock file).
func TestReconnectExplainsOncePerGap(t *testing.T) {
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	for _, tc := range []struct {
		name   string
		unplug func(t *testing.T, sink Sink) (stop func() error, said string)
	}{
		{"serial adapter", func(t *testing.T, sink Sink) (func() error, string) {
			m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Skipf("no pseudo-terminals: %v", err)
			}
			unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0)
			n, _ := unix.IoctlGetUint32(m, unix.TIOCGPTN)
			// The adapter as udev names it: unplugged, the name goes.
			device := filepath.Join(t.TempDir(), "ttyUSB0")
			if err := os.Symlink("/dev/pts/"+strconv.Itoa(int(n)), device); err != nil {
				t.Fatal(err)
			}
			s := NewSerial(SerialConfig{Name: "controller", Device: device, Baud: 9600, DataBits: 8, Framing: line, Reconnect: 20 * time.Millisecond})
			if err := s.Start(&setClock{}, sink, 0); err != nil {
				unix.Close(m)
				t.Fatal(err)
			}
			os.Remove(device)
			unix.Close(m)
			return s.Stop, "device_reopen_failed: controller: " + device + ": cannot open it again: no such device (serial ports here: "
		}},
		{"pty", func(t *testing.T, sink Sink) (func() error, string) {
			p := NewPty(SerialConfig{Name: "controller", Baud: 9600, DataBits: 8, Framing: line, Reconnect: 20 * time.Millisecond}, "")
			if err := p.Start(&setClock{}, sink, 0); err != nil {
				t.Fatal(err)
			}
			dev, err := unix.Open(p.DevicePath(), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			unix.Close(dev) // the program quits
			return p.Stop, ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &goneSink{}
			stop, want := tc.unplug(t, sink)
			defer stop()
			for deadline := time.Now().Add(5 * time.Second); sink.gone.Load() == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the device never went")
				}
			}
			time.Sleep(100 * time.Millisecond) // past the first try
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			time.Sleep(time.Second)
			runtime.ReadMemStats(&after)
			allocs := after.Mallocs - before.Mallocs
			t.Logf("%d allocations in a second away (about 50 tries)", allocs)
			if allocs > 150 {
				t.Errorf("%d allocations in a second away: more than 3 a try", allocs)
			}
			if said := sink.notices(); want == "" && len(said) != 0 || want != "" && (len(said) != 1 || !strings.Contains(said[0], want)) {
				t.Errorf("notices %q; want %q", said, want)
			}
		})
	}
}
