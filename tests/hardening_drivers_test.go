package tests

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// The hardening issue's drivers items end to end: a device that does not
// read what the rig writes to it must never hold up the executor.

// frameBytes is the size of the frames these tests send, delimiter
// included: 100 bytes at 1 kHz fill a pseudo-terminal's buffers (some
// 140 kB both pairs together) in about 1.4 s.
const frameBytes = 100

// numberedFrame is frame seq, frameBytes long with its line feed.
func numberedFrame(seq int) []byte {
	b := fmt.Appendf(nil, "%06d ", seq)
	for len(b) < frameBytes-1 {
		b = append(b, 'x')
	}
	return append(b, '\n')
}

// linkFor is a link with nothing on it that runs d.
func linkFor(d string) string {
	return "duration: " + d + "\nhops:\n  down: {}\n  up:   {}\nflows:\n  m2s: {route: [down]}\n  s2m: {route: [up]}\n"
}

// sendFrames writes numbered frames to w at 1 kHz, from start on the wall
// clock, until n are written, a write fails (the rig is gone) or stop is
// closed; it returns how many it wrote.
func sendFrames(w io.Writer, n int, start time.Time, stop <-chan struct{}) int {
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Millisecond)))
		select {
		case <-stop:
			return i
		default:
		}
		if _, err := w.Write(numberedFrame(i)); err != nil {
			return i
		}
	}
	return n
}

// driverSummary is what these tests read of a run's summary.
type driverSummary struct {
	Stopped  string  `json:"stopped"`
	Duration float64 `json:"duration_s"`
	Flows    []struct {
		Name      string            `json:"name"`
		Sent      uint64            `json:"sent"`
		Delivered uint64            `json:"delivered"`
		Dropped   map[string]uint64 `json:"dropped"`
		InFlight  uint64            `json:"in_flight"`
	} `json:"flows"`
	Endpoints []struct {
		Name        string `json:"name"`
		FramesIn    uint64 `json:"frames_in"`
		FramesOut   uint64 `json:"frames_out"`
		BytesOut    uint64 `json:"bytes_out"`
		WriteErrors uint64 `json:"write_errors"`
		NotTaken    uint64 `json:"frames_not_taken"`
		Cut         uint64 `json:"frames_cut"`
		Error       string `json:"error"`
	} `json:"endpoints"`
	Events []struct {
		AtS    float64 `json:"at_s"`
		Kind   string  `json:"kind"`
		Detail string  `json:"detail"`
	} `json:"events"`
}

func readDriverSummary(t *testing.T, r *rigProcess) driverSummary {
	t.Helper()
	data, err := os.ReadFile(r.summary)
	if err != nil {
		t.Fatalf("no summary: %v; stderr: %s", err, r.stderr.String())
	}
	var s driverSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("summary: %v\n%s", err, data)
	}
	return s
}

// waitExit waits at most limit for the rig to exit and returns its code.
func waitExit(t *testing.T, r *rigProcess, limit time.Duration, why string) int {
	t.Helper()
	select {
	case <-r.exited:
		return r.code
	case <-time.After(limit):
		t.Fatalf("hilrig had not exited %v after %s: %s", limit, why, r.stderr.String())
		return -1
	}
}

// checkNotTakenCounts checks that every frame the network delivered to the
// plant is accounted for exactly: taken whole, cut (its head written when
// the run stopped), or not taken because the device was not reading, and
// that the trace and the flow's counts say the same.
func checkNotTakenCounts(t *testing.T, r *rigProcess, s driverSummary) (notTaken uint64) {
	t.Helper()
	if len(s.Endpoints) < 2 || len(s.Flows) < 1 || s.Endpoints[1].Name != "plant" || s.Flows[0].Name != "m2s" {
		t.Fatalf("summary endpoints %+v, flows %+v", s.Endpoints, s.Flows)
	}
	ctrl, plant, m2s := s.Endpoints[0], s.Endpoints[1], s.Flows[0]
	t.Logf("controller in %d; m2s sent %d delivered %d dropped %v in flight %d; plant out %d (%d B), not taken %d, cut %d, write errors %d",
		ctrl.FramesIn, m2s.Sent, m2s.Delivered, m2s.Dropped, m2s.InFlight, plant.FramesOut, plant.BytesOut, plant.NotTaken, plant.Cut, plant.WriteErrors)
	// The controller's frames read after the run stopped, and before its
	// device was closed, entered no flow.
	if m2s.Sent > ctrl.FramesIn || m2s.InFlight != 0 || m2s.Delivered+m2s.Dropped["egress_drop"] != m2s.Sent {
		t.Errorf("m2s sent %d, delivered %d, egress_drop %d, in flight %d; the controller read %d", m2s.Sent, m2s.Delivered, m2s.Dropped["egress_drop"], m2s.InFlight, ctrl.FramesIn)
	}
	if plant.NotTaken == 0 || plant.WriteErrors != plant.NotTaken || m2s.Dropped["egress_drop"] != plant.NotTaken {
		t.Errorf("plant: %d frames not taken, %d write errors, m2s egress_drop %d; want them equal and not 0", plant.NotTaken, plant.WriteErrors, m2s.Dropped["egress_drop"])
	}
	if m2s.Delivered != plant.FramesOut+plant.Cut {
		t.Errorf("m2s delivered %d; the plant took %d whole and %d cut", m2s.Delivered, plant.FramesOut, plant.Cut)
	}
	if head := plant.BytesOut - frameBytes*plant.FramesOut; plant.BytesOut < frameBytes*plant.FramesOut || (plant.Cut == 0) != (head == 0) || head >= frameBytes {
		t.Errorf("plant: %d bytes out for %d whole frames of %d B and %d cut", plant.BytesOut, plant.FramesOut, frameBytes, plant.Cut)
	}
	rows, _ := readRunTrace(t, r.trace)
	var dropped, delivered uint64
	for _, row := range rows {
		if row.flow != "m2s" {
			continue
		}
		switch row.status {
		case "egress_drop":
			dropped++
		case "delivered":
			delivered++
		}
	}
	if dropped != plant.NotTaken || delivered != m2s.Delivered {
		t.Errorf("the trace has %d egress_drop and %d delivered m2s rows; the summary %d not taken and %d delivered", dropped, delivered, plant.NotTaken, m2s.Delivered)
	}
	return plant.NotTaken
}

// eventsOf lists the summary's events of a kind.
func eventsOf(s driverSummary, kind string) []string {
	var out []string
	for _, e := range s.Events {
		if e.Kind == kind {
			out = append(out, fmt.Sprintf("%.3f s %s", e.AtS, e.Detail))
		}
	}
	return out
}

// TestDeviceThatDoesNotRead is the hardening issue's drivers item 1: on a
// pty bench the plant's device is opened and never read while the
// controller sends 100-byte frames at 1 kHz. The rig's writes to the plant
// used to block once the pseudo-terminals' buffers were full: the run went
// past its duration and SIGTERM did not end it. Now the frames the device
// does not take are counted (the trace's egress_drop), the run is no
// failure, it ends at its duration or at SIGTERM.
func TestDeviceThatDoesNotRead(t *testing.T) {
	t.Run("duration", func(t *testing.T) {
		started := time.Now()
		r := startRig(t, linkFor("5s"), ptyBenchText("line", ""))
		ctrl, plant := r.attach("controller"), r.attach("plant")
		defer plant.Close() // opened, never read
		stop := make(chan struct{})
		sent := make(chan int)
		go func() { sent <- sendFrames(ctrl, 10000, time.Now(), stop) }()
		code := waitExit(t, r, 12*time.Second, "a run of 5 s started")
		t.Logf("exited %v after it started", time.Since(started))
		close(stop)
		<-sent
		ctrl.Close()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
		s := readDriverSummary(t, r)
		if s.Stopped != "duration" || s.Duration != 5 {
			t.Errorf("stopped %q at %v s; want duration, 5 s", s.Stopped, s.Duration)
		}
		checkNotTakenCounts(t, r, s)
		if got := eventsOf(s, "device_not_reading"); len(got) != 1 || !strings.Contains(got[0], "plant") {
			t.Errorf("device_not_reading events %q; want one, for the plant", got)
		}
		if got := eventsOf(s, "device_reading"); len(got) != 0 {
			t.Errorf("device_reading events %q from a device that never read", got)
		}
	})
	t.Run("SIGTERM", func(t *testing.T) {
		r := startRig(t, linkFor("30s"), ptyBenchText("line", ""))
		ctrl, plant := r.attach("controller"), r.attach("plant")
		defer plant.Close()
		stop := make(chan struct{})
		sent := make(chan int)
		go func() { sent <- sendFrames(ctrl, 30000, time.Now(), stop) }()
		time.Sleep(3 * time.Second) // the buffers are full after 1.4 s
		r.cmd.Process.Signal(syscall.SIGTERM)
		signalled := time.Now()
		code := waitExit(t, r, 5*time.Second, "SIGTERM")
		t.Logf("exited %v after SIGTERM", time.Since(signalled))
		close(stop)
		<-sent
		ctrl.Close()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
		s := readDriverSummary(t, r)
		if s.Stopped != "interrupted" {
			t.Errorf("stopped %q; want interrupted", s.Stopped)
		}
		checkNotTakenCounts(t, r, s)
		if got := eventsOf(s, "device_not_reading"); len(got) != 1 {
			t.Errorf("device_not_reading events %q; want one", got)
		}
	})
}

// TestDeviceThatPausesGetsWholeFrames: the plant's device stops reading for
// 2 s and then reads again. Every frame it gets is whole (a write the
// device took only the head of is finished before anything else is
// written), the frames it misses are exactly those counted not taken, the
// bytes it reads are the bytes the rig says it wrote, and the pause is two
// events: not reading, and reading again.
func TestDeviceThatPausesGetsWholeFrames(t *testing.T) {
	r := startRig(t, linkFor("6s"), ptyBenchText("line", ""))
	ctrl, plant := r.attach("controller"), r.attach("plant")
	start := time.Now()
	const n = 4000 // 4 s at 1 kHz, done before the run's 6 s end
	sent := make(chan int)
	go func() { sent <- sendFrames(ctrl, n, start, nil) }()

	time.Sleep(2 * time.Second) // not reading
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	decoder := line.NewDecoder(4096)
	var seqs []int
	var bad, bytesRead int
	emit := func(frame []byte, _ time.Duration) {
		seq, err := strconv.Atoi(string(frame[:6]))
		if err != nil || len(frame) != frameBytes-1 || string(frame) != string(numberedFrame(seq)[:frameBytes-1]) {
			bad++
			return
		}
		seqs = append(seqs, seq)
	}
	buf := make([]byte, 4096)
	plant.SetReadTimeout(500 * time.Millisecond)
	for {
		k, err := plant.Read(buf)
		bytesRead += k
		decoder.Feed(buf[:k], 0, emit)
		if err != nil || k == 0 && len(seqs) > 0 && seqs[len(seqs)-1] == n-1 || time.Since(start) > 10*time.Second {
			break
		}
	}
	if got := <-sent; got != n {
		t.Fatalf("sent %d of %d frames", got, n)
	}
	code := waitExit(t, r, 10*time.Second, "a run of 6 s started")
	ctrl.Close()
	plant.Close()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	s := readDriverSummary(t, r)
	notTaken := checkNotTakenCounts(t, r, s)
	p := s.Endpoints[1]
	if bad != 0 || decoder.Errors() != 0 {
		t.Errorf("the device read %d damaged frames (%d undecodable)", bad, decoder.Errors())
	}
	if uint64(len(seqs)) != p.FramesOut || p.Cut != 0 || uint64(bytesRead) != p.BytesOut {
		t.Errorf("the device read %d frames, %d bytes; the rig wrote %d whole, %d cut, %d bytes", len(seqs), bytesRead, p.FramesOut, p.Cut, p.BytesOut)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("frame %d read after %d", seqs[i], seqs[i-1])
		}
	}
	if uint64(n-len(seqs)) != notTaken {
		t.Errorf("the device missed %d of %d frames; %d counted not taken", n-len(seqs), n, notTaken)
	}
	notReading, reading := eventsOf(s, "device_not_reading"), eventsOf(s, "device_reading")
	t.Logf("events: %q, %q", notReading, reading)
	if len(notReading) != 1 || len(reading) != 1 || !strings.Contains(reading[0], fmt.Sprint(notTaken)) {
		t.Errorf("not reading %q, reading again %q; want one each, the second counting %d frames", notReading, reading, notTaken)
	}
}

// lowestFreeDescriptor is the lowest descriptor number process pid does
// not have open.
func lowestFreeDescriptor(t *testing.T, pid int) uint64 {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	open := map[uint64]bool{}
	for _, e := range entries {
		n, _ := strconv.ParseUint(e.Name(), 10, 64)
		open[n] = true
	}
	var n uint64
	for open[n] {
		n++
	}
	return n
}

// openFiles is how many files process pid has open.
func openFiles(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestPtyCannotBePluggedBackIn is the hardening issue's drivers item 4 end
// to end: on the virtual bench the controller's program quits and starts
// again while the rig cannot make a new pseudo-terminal pair for its side
// (here it has no descriptor left). The rig said nothing and never tried
// again: the gap lasted until the program quit and started once more. Now
// the run's events say why the device is not back, once; the rig tries
// again, and the device is back once a pair can be made; a run that stops
// before then says why in the endpoint's error.
func TestPtyCannotBePluggedBackIn(t *testing.T) {
	const why = "cannot plug the cable back in: opening /dev/ptmx: too many open files; trying again every 20ms"
	t.Run("back once it can", func(t *testing.T) {
		r, ctrl, plant, restore := ptyWithoutDescriptors(t)
		restore()
		// Back: the controller's frames reach the plant again.
		untilThrough(t, r, ctrl, plant, "back\n")
		r.cmd.Process.Signal(syscall.SIGTERM)
		if code := waitExit(t, r, 10*time.Second, "SIGTERM"); code != 0 {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
		s := readDriverSummary(t, r)
		failed := eventsOf(s, "device_reopen_failed")
		t.Logf("%q", failed)
		if len(failed) != 1 || !strings.Contains(failed[0], "controller: pseudo-terminal "+r.dir+"/controller: "+why) {
			t.Errorf("device_reopen_failed events %q; want one, saying why", failed)
		}
		if back := eventsOf(s, "device_back"); len(back) != 1 {
			t.Errorf("device_back events %q; want one", back)
		}
	})
	t.Run("stopped before", func(t *testing.T) {
		r, _, _, restore := ptyWithoutDescriptors(t)
		r.cmd.Process.Signal(syscall.SIGTERM) // stopping closes what the summary needs
		code := waitExit(t, r, 10*time.Second, "SIGTERM")
		restore()
		if code != 0 {
			t.Fatalf("exit %d: %s", code, r.stderr.String())
		}
		s := readDriverSummary(t, r)
		if len(s.Endpoints) == 0 || !strings.HasSuffix(s.Endpoints[0].Error, why) {
			t.Errorf("endpoints %+v; want the controller's error to say %q", s.Endpoints, why)
		}
	})
}

// ptyWithoutDescriptors starts a rig on the virtual bench, closes the
// controller's device and, once the rig has closed its side, leaves it no
// descriptor to open and opens the device again: the rig cannot plug its
// side back in until restore. It waits 300 ms (fifteen tries) first.
func ptyWithoutDescriptors(t *testing.T) (r *rigProcess, ctrl, plant serial.Port, restore func()) {
	t.Helper()
	r = startRig(t, linkFor("30s"), ptyBenchText("line", ""))
	ctrl, plant = r.attach("controller"), r.attach("plant")
	t.Cleanup(func() { plant.Close() })
	// The controller's frames reach the plant: the rig has its side of
	// both open (counted before that, on a loaded machine, its side of the
	// controller was not yet, and closing it seemed to close one file).
	untilThrough(t, r, ctrl, plant, "up\n")
	pid := r.cmd.Process.Pid
	files := openFiles(t, pid)
	ctrl.Close() // the program quits
	// The rig closes its side's master, its port and the port's pipe.
	for deadline := time.Now().Add(10 * time.Second); openFiles(t, pid) > files-4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the rig still has %d files of %d: %s", openFiles(t, pid), files, r.stderr.String())
		}
	}
	var limit unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &limit); err != nil {
		t.Fatal(err)
	}
	low := limit
	low.Cur = lowestFreeDescriptor(t, pid)
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &low, nil); err != nil {
		t.Skipf("cannot lower the rig's descriptor limit: %v", err)
	}
	restore = func() { unix.Prlimit(pid, unix.RLIMIT_NOFILE, &limit, nil) }
	t.Cleanup(restore)
	ctrl = r.attach("controller") // and starts again
	t.Cleanup(func() { ctrl.Close() })
	time.Sleep(300 * time.Millisecond)
	return r, ctrl, plant, restore
}

// untilThrough writes line to the controller until the plant reads it
// (within 10 s): the rig has both sides open and forwards.
func untilThrough(t *testing.T, r *rigProcess, ctrl, plant serial.Port, line string) {
	t.Helper()
	plant.SetReadTimeout(100 * time.Millisecond)
	var got []byte
	buf := make([]byte, 256)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(string(got), line); {
		if time.Now().After(deadline) {
			t.Fatalf("the controller's %q never reached the plant: it read %q; %s", line, got, r.stderr.String())
		}
		ctrl.Write([]byte(line))
		n, _ := plant.Read(buf)
		got = append(got, buf[:n]...)
	}
}
