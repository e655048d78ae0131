//go:build linux

package drivers_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/firmware/wire"
)

// TestReaderLetsTheMonitorRest: a serial endpoint's reader, fed a line a
// millisecond for a second, lets the runtime's monitor rest. Idle, the
// monitor looks 50 times 20 µs apart, then doubles its sleep up to 10 ms:
// some 100 wake-ups in the second, and 60 more each time something starts
// it again. A reader that never passed through the scheduler had the
// monitor take its P at every read and, having taken one, look again 20 µs
// later: some 3 000 wake-ups in the second here (2 895 to 2 993 measured),
// 15 000 to 20 000 a second in a run with two readers (BENCHMARKS.md). The
// bound, 400, leaves room for five starts and is a seventh of the other.
func TestReaderLetsTheMonitorRest(t *testing.T) {
	if testing.Short() {
		t.Skip("a second of lines")
	}
	if runtime.GOMAXPROCS(0) < 2 {
		// Measured: the first run after GOMAXPROCS is set to 1 (go test
		// -cpu 1) finds the monitor in its deep sleep (every P idle) and
		// woken four times a line, with or without the check-in; later
		// runs as at 2.
		t.Skip("GOMAXPROCS 1: the monitor's wake-ups are not the reader's to count")
	}
	// Ps to spare while the reader waits, as a run adds two for each
	// endpoint (rig's threadsFor): with none idle, the monitor takes Ps
	// back from threads in system calls, as it must.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 2)
	// The process above ordinary load, as a real-time run puts it
	// (realtime.RaiseProcess), where it may be: at normal priority, beside
	// other packages' tests, the monitor woke 1 212 times in the second
	// once (CI, 2026-11-28) with the reader checking in, and 1 124 to
	// 1 292 beside four busy loops, from the scheduling of the test's own
	// goroutines: raised, 105 to 295 there.
	if restore, err := realtime.RaiseProcess(1); err == nil {
		defer restore()
	}
	master, device := rawPty(t)
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	s := drivers.NewSerial(drivers.SerialConfig{Name: "s", Device: device, Baud: 115200, DataBits: 8, Framing: line,
		ReaderThread: func() { realtime.RaiseThread(2) }})
	sink := driverstest.NewSink()
	if err := s.Start(driverstest.NewWallClock(), sink, 0); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	const lines = 1000
	write := func(i int) {
		if _, err := unix.Write(master, fmt.Appendf(nil, "line %06d\n", i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	for i := range 50 { // the reader up and past its first check-ins
		write(i)
	}
	before := driverstest.MonitorWakeUps(t, os.Getpid())
	for i := range lines {
		write(50 + i)
	}
	woke := driverstest.MonitorWakeUps(t, os.Getpid()) - before
	if got := len(sink.Frames()); got < 50+lines/2 {
		t.Fatalf("the reader took %d of %d lines", got, 50+lines)
	}
	t.Logf("the monitor woke %d times over %d lines", woke, lines)
	if woke > 400 {
		t.Errorf("the runtime's monitor woke %d times over %d lines: it is taking the reader's P at its reads", woke, lines)
	}
}
