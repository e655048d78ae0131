//go:build linux

package e2e

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/internal/ptytest"
	"github.com/hilrig/hilrig/firmware/wire"
)

// build builds the host programs for goos/goarch into a new directory.
func build(t testing.TB, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(goTool(t), "build", "-o", dir+string(os.PathSeparator), "./firmware/cmd/pid", "./firmware/cmd/plantnode")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, env...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", env, err, out)
	}
	return dir
}

// TestBuildsForRaspberryPi cross-compiles every firmware package and the
// host programs for 32-bit ARM (a Pi 2 or later, and a Pi Zero's ARMv6)
// and 64-bit ARM (a Pi 3, 4 or 5 on a 64-bit OS), and checks that the
// programs are ARM executables.
func TestBuildsForRaspberryPi(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiling takes a while")
	}
	for _, tc := range []struct {
		env     []string
		machine elf.Machine
	}{
		{[]string{"GOOS=linux", "GOARCH=arm", "GOARM=6"}, elf.EM_ARM},
		{[]string{"GOOS=linux", "GOARCH=arm", "GOARM=7"}, elf.EM_ARM},
		{[]string{"GOOS=linux", "GOARCH=arm64"}, elf.EM_AARCH64},
	} {
		// Every package, tests included, compiles for the target.
		vet := exec.Command(goTool(t), "vet", "./firmware/...")
		vet.Dir = "../.."
		vet.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, tc.env...)...)
		if out, err := vet.CombinedOutput(); err != nil {
			t.Fatalf("go vet %v: %v\n%s", tc.env, err, out)
		}
		dir := build(t, tc.env...)
		for _, name := range []string{"pid", "plantnode"} {
			f, err := elf.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatalf("%v: %v", tc.env, err)
			}
			if f.Machine != tc.machine {
				t.Errorf("%v: %s is for %v", tc.env, name, f.Machine)
			}
			f.Close()
		}
	}
}

// watch reads one master of a relay, notes what passes (each frame parsed
// and tracked), and forwards it to the other master unless the link is
// cut: the rig's part, written small.
type watch struct {
	mu       sync.Mutex
	tracker  wire.Tracker
	values   []float64
	statuses []wire.Status
	frames   wire.DecoderStats
}

func (w *watch) relay(from, to *ptytest.FD, cut *atomic.Bool, done <-chan struct{}) {
	dec := wire.COBS{}.NewDecoder(wire.DefaultMaxMessage)
	f64, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	v := make([]float64, 1)
	emit := func(frame []byte, at time.Duration) {
		m, _, err := w.tracker.Receive(frame, at)
		if err != nil {
			return
		}
		switch m.Type {
		case wire.Sample, wire.Command:
			if m.Values(f64, v) == nil {
				w.values = append(w.values, v[0])
			}
		case wire.Heartbeat:
			w.statuses = append(w.statuses, m.Status())
		}
	}
	buf := make([]byte, 4096)
	for {
		select {
		case <-done:
			return
		default:
		}
		if !from.Wait(20 * time.Millisecond) {
			continue
		}
		n, err := from.Read(buf)
		if err != nil {
			return
		}
		w.mu.Lock()
		dec.Feed(buf[:n], 0, emit)
		w.frames = dec.Stats()
		w.mu.Unlock()
		if !cut.Load() {
			to.Write(buf[:n])
		}
	}
}

// lastStatus is the status of the latest heartbeat, and how many there
// have been.
func (w *watch) lastStatus() (wire.Status, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.statuses) == 0 {
		return 0, 0
	}
	return w.statuses[len(w.statuses)-1], len(w.statuses)
}

// settled reports whether the last n values are within tol of want.
func (w *watch) settled(n int, want, tol float64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.values) < n {
		return false
	}
	for _, v := range w.values[len(w.values)-n:] {
		if v < want-tol || v > want+tol {
			return false
		}
	}
	return true
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never", what)
		}
	}
}

// TestHostProgramsCloseTheLoop runs the host programs, built, on two
// pseudo-terminals in real time with the test relaying between them: the
// PID at 200 Hz brings the node's simulated plant to its setpoint; a cut
// link raises the PID's fault flag and trips the node's watchdog (both
// seen in their heartbeats, which the relay still reads); the link back,
// the loop settles again; SIGTERM ends both with status 0, nothing on
// stdout, and their counts on stderr. Nothing here depends on how fast
// the machine is, only on what happens in order (the timeouts are long
// beside a busy VM's hiccups).
func TestHostProgramsCloseTheLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the programs")
	}
	dir := build(t)
	pidSide, nodeSide := ptytest.Open(t), ptytest.Open(t)
	var cut atomic.Bool
	done := make(chan struct{})
	var samples, commands watch
	var relays sync.WaitGroup
	relays.Add(2)
	go func() { defer relays.Done(); samples.relay(nodeSide.Master, pidSide.Master, &cut, done) }()
	go func() { defer relays.Done(); commands.relay(pidSide.Master, nodeSide.Master, &cut, done) }()
	defer func() { close(done); relays.Wait() }()

	start := func(name string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(dir, name), args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &stdout, &stderr
	}
	node, nodeOut, nodeErr := start("plantnode", "--port", nodeSide.Path, "--rate", "200", "--tau", "100ms", "--gain", "2",
		"--safe", "-0.5", "--watchdog", "500ms", "--heartbeat", "50ms")
	ctl, ctlOut, ctlErr := start("pid", "--port", pidSide.Path, "--rate", "200", "--kp", "1", "--ki", "10",
		"--min", "-5", "--max", "5", "--setpoint", "1", "--timeout", "300ms", "--heartbeat", "50ms")

	waitFor(t, "the loop settling at the setpoint", func() bool { return samples.settled(40, 1, 0.01) })
	waitFor(t, "heartbeats: fault down, plant commanded", func() bool {
		f, _ := commands.lastStatus()
		s, _ := samples.lastStatus()
		return f&wire.StatusFault == 0 && s&wire.StatusSafe == 0
	})
	cut.Store(true)
	waitFor(t, "the PID's fault flag", func() bool { s, _ := commands.lastStatus(); return s&wire.StatusFault != 0 })
	waitFor(t, "the node's watchdog", func() bool { s, _ := samples.lastStatus(); return s&wire.StatusSafe != 0 })
	// The plant heads for 2·(−0.5) = −1 under the safe level.
	waitFor(t, "the plant driven safe", func() bool { return samples.settled(10, -1, 0.2) })
	cut.Store(false)
	waitFor(t, "the loop back at the setpoint", func() bool { return samples.settled(40, 1, 0.01) })
	waitFor(t, "heartbeats: fault down, plant commanded again", func() bool {
		f, _ := commands.lastStatus()
		s, _ := samples.lastStatus()
		return f&wire.StatusFault == 0 && s&wire.StatusSafe == 0
	})

	for _, p := range []struct {
		name        string
		cmd         *exec.Cmd
		out, errOut *bytes.Buffer
		want        string
	}{
		{"pid", ctl, ctlOut, ctlErr, "1 faults"},
		{"plantnode", node, nodeOut, nodeErr, "1 watchdog trips"},
	} {
		p.cmd.Process.Signal(syscall.SIGTERM)
		if err := p.cmd.Wait(); err != nil {
			t.Errorf("%s: %v\n%s", p.name, err, p.errOut)
		}
		if p.out.Len() != 0 {
			t.Errorf("%s printed on stdout: %q", p.name, p.out)
		}
		if s := p.errOut.String(); !strings.Contains(s, p.want) || !strings.Contains(s, "0 CRC errors") || strings.Count(s, "\n") != 1 {
			t.Errorf("%s said %q; want one line with %q and no CRC errors", p.name, s, p.want)
		}
	}
	for _, w := range []*watch{&samples, &commands} {
		w.mu.Lock()
		if st := w.tracker.Stats(); st.CRCErrors != 0 || st.Malformed != 0 || w.frames.BadFrames != 0 {
			t.Errorf("on the line: %+v, %+v", st, w.frames)
		}
		w.mu.Unlock()
	}
}
