package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// openPty opens a pseudo-terminal pair as socat and test rigs do: the test
// keeps the master, and a bench names the slave as a serial: device.
func openPty(t *testing.T) (*os.File, string) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	master := os.NewFile(uintptr(m), "ptmx")
	t.Cleanup(func() { master.Close() })
	return master, fmt.Sprintf("/dev/pts/%d", n)
}

// waitOpened waits until process pid has path open.
func waitOpened(t *testing.T, r *rigProcess, path string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", r.cmd.Process.Pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		entries, _ := os.ReadDir(fds)
		for _, e := range entries {
			if target, _ := os.Readlink(filepath.Join(fds, e.Name())); target == path {
				return
			}
		}
		select {
		case <-r.exited:
			t.Fatalf("hilrig exited %d: %s", r.code, r.stderr.String())
		default:
		}
	}
	t.Fatalf("hilrig never opened %s: %s", path, r.stderr.String())
}

// TestSerialOnAPtyIsNotLed is issue 10's first finding: a bench whose
// serial: devices are pseudo-terminals at 921 600 baud, 20 ms each way, at
// 1 kHz. A pty moves bytes at once, so a write led by the UART's line time
// would arrive early; the rig must see a pseudo-terminal whatever the
// endpoint kind and not lead. The test's measurement can only err late (it
// stamps a frame before writing it and after reading it), so the delay it
// measures must never be below 20 ms.
func TestSerialOnAPtyIsNotLed(t *testing.T) {
	ctrl, ctrlDev := openPty(t)
	plant, plantDev := openPty(t)
	bench := fmt.Sprintf(`endpoints:
  controller: {serial: {device: %s, baud: 921600, framing: line}}
  plant:      {serial: {device: %s, baud: 921600, framing: line}}
bind:
  m2s: {from: controller, to: plant}
  s2m: {from: plant, to: controller}
`, ctrlDev, plantDev)
	r := startRig(t, link20ms, bench)
	waitOpened(t, r, ctrlDev)
	waitOpened(t, r, plantDev)
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	const n = 2000
	start := time.Now()
	reading := make(chan []received)
	go func() {
		got, _ := receive(plant, line, start)
		reading <- got
	}()
	send(ctrl, line, n, time.Millisecond, start)
	time.Sleep(200 * time.Millisecond)
	if code := r.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("hilrig exited %d: %s", code, r.stderr.String())
	}
	plant.Close() // ends the reader
	got := <-reading
	if len(got) < n*99/100 {
		t.Fatalf("%d of %d frames arrived", len(got), n)
	}
	errs := make([]time.Duration, len(got))
	for i, g := range got {
		errs[i] = g.delay - 20*time.Millisecond
	}
	t.Logf("delay error: %s", quantiles(errs))
	if early := slices.Min(errs); early < 0 {
		t.Errorf("a frame arrived %v before its due time", -early)
	}
	s := r.readSummary()
	for _, e := range s.Endpoints {
		if !strings.HasPrefix(e.LineTime, "pseudo-terminal") {
			t.Errorf("endpoint %s: line time %q; want the pseudo-terminal seen", e.Name, e.LineTime)
		}
	}
}

// TestTwoRunsOneBench is issue 10's second finding: a second run on a
// bench in use is refused, naming the process that holds it, and leaves
// the first run's links alone.
func TestTwoRunsOneBench(t *testing.T) {
	shared := t.TempDir()
	bench := strings.ReplaceAll(ptyBenchText("line", ""), "DIR", shared)
	first := startRig(t, plainLink, bench)
	// Attached, as a user's program would be (closing it would end the
	// first run: the device vanished).
	port := first.attach("../" + filepath.Base(shared) + "/controller")
	defer port.Close()
	second := startRig(t, plainLink, bench)
	if code := second.wait(); code != 2 {
		t.Errorf("the second run exited %d; want 2 (a device in use)", code)
	}
	want := fmt.Sprintf("is in use by process %d (", first.cmd.Process.Pid)
	if !strings.Contains(second.stderr.String(), want) {
		t.Errorf("the second run said %q; want it to name the first (%q)", second.stderr.String(), want)
	}
	for _, link := range []string{"controller", "plant"} {
		if _, err := os.Readlink(filepath.Join(shared, link)); err != nil {
			t.Errorf("the first run's link %s is gone: %v", link, err)
		}
	}
	if code := first.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("the first run exited %d: %s", code, first.stderr.String())
	}
	if _, err := os.Lstat(filepath.Join(shared, "controller")); !os.IsNotExist(err) {
		t.Errorf("the first run left its link behind: %v", err)
	}
}

// TestEveryByteAccountedFor is issue 10's sixth finding: every byte that
// enters an endpoint is in its frames, its bad frames, idle delimiters or
// the frame left unfinished when the run stopped.
func TestEveryByteAccountedFor(t *testing.T) {
	r := startRig(t, plainLink, ptyBenchText("line", ""))
	ctrl, plant := r.attach("controller"), r.attach("plant")
	defer plant.Close()
	long := strings.Repeat("x", 10000) // over max_frame (4096)
	ctrl.Write([]byte("one\ntwo\n" + long + "\n\n\n"))
	ctrl.Write([]byte(strings.Repeat("y", 5000))) // never ended
	time.Sleep(200 * time.Millisecond)
	if code := r.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	ctrl.Close()
	data, err := os.ReadFile(r.summary)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Endpoints []struct {
			Name         string
			FramesIn     uint64 `json:"frames_in"`
			BytesIn      uint64 `json:"bytes_in"`
			FrameBytes   uint64 `json:"frame_bytes"`
			BadFrames    uint64 `json:"bad_frames"`
			BadBytes     uint64 `json:"bad_bytes"`
			IdleBytes    uint64 `json:"idle_bytes"`
			PendingBytes uint64 `json:"partial_frame_bytes"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	c := s.Endpoints[0]
	sent := uint64(len("one\ntwo\n"+long+"\n\n\n") + 5000)
	if c.BytesIn != sent || c.FrameBytes+c.BadBytes+c.IdleBytes+c.PendingBytes != c.BytesIn {
		t.Errorf("controller %+v: %d bytes sent; frames + bad + idle + partial must be bytes in", c, sent)
	}
	if c.FramesIn != 4 || c.BadFrames != 1 || c.BadBytes != 10001 || c.PendingBytes != 5000 {
		t.Errorf("controller %+v: want 4 frames (one, two and two empty lines), 1 bad of 10 001 bytes, 5000 pending", c)
	}
}

// TestTerminalOnTheVirtualBench is issue 10's eleventh finding: a terminal
// program (picocom) sends CR for Enter, which ends a line on the virtual
// bench as LF does; and quitting it closes the device, which is a gap the
// run records and waits out, not a failure.
func TestTerminalOnTheVirtualBench(t *testing.T) {
	r := startRig(t, plainLink, ptyBenchText("line", ""))
	ctrl, plant := r.attach("controller"), r.attach("plant")
	defer plant.Close()
	ctrl.Write([]byte("typed\r"))
	ctrl.Write([]byte("pasted\r\n"))
	plant.SetReadTimeout(2 * time.Second)
	var got []byte
	buf := make([]byte, 64)
	for !strings.Contains(string(got), "pasted\n") {
		n, err := plant.Read(buf)
		if err != nil || n == 0 {
			t.Fatalf("the plant read %q", got)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "typed\npasted\n" {
		t.Errorf("the plant read %q; want two lines", got)
	}
	ctrl.Close() // quit the terminal
	time.Sleep(200 * time.Millisecond)
	ctrl = r.attach("controller") // and start it again
	ctrl.Write([]byte("again\r"))
	time.Sleep(100 * time.Millisecond)
	if code := r.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	ctrl.Close()
	s := r.readSummary()
	if len(s.Endpoints[0].Gaps) != 1 || s.Endpoints[0].FramesIn != 3 {
		t.Errorf("controller: %d frames in, gaps %v; want 3 frames and the one gap", s.Endpoints[0].FramesIn, s.Endpoints[0].Gaps)
	}
}
