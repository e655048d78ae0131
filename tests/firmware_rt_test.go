//go:build linux

package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/record"
)

// The reference firmware's host programs on a bench of two
// pseudo-terminals, through `hilrig run`, both endpoints with codec wire
// (issue 11): the PID (firmware/cmd/pid) at 200 Hz on the controller's,
// the plant node (firmware/cmd/plantnode) with its simulated first-order
// plant on the plant's. The PID's setpoint is 1; the plant's gain 2 and
// time constant 100 ms; the PI (kp 1, ki 10) cancels the plant's pole, so
// the loop is an integrator crossing over at 20 rad/s, with 10 ms of
// round trip 78.5° of phase margin: it settles to the setpoint within
// 0.3 s. The PID raises its fault flag after 100 ms without a
// measurement, the node's watchdog drives its output to −0.5 after 200 ms
// without a command (its plant then settles at 2·−0.5 = −1); each says so
// in its heartbeat, every 100 ms.

const firmwareRTBench = `name: wire
endpoints:
  controller: {pty: {link: DIR/controller, codec: wire}}
  plant:      {pty: {link: DIR/plant, codec: wire}}
bind:
  m2s: {from: controller, to: plant}
  s2m: {from: plant, to: controller}
`

// firmwareRTLink is 5 ms each way with more hop settings and a schedule.
func firmwareRTLink(hop, schedule string) string {
	return fmt.Sprintf(`duration: 1h
hops:
  down: {delay: 5ms%[1]s}
  up:   {delay: 5ms%[1]s}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
%[2]s`, hop, schedule)
}

// canRaise says whether this process may start programs at SCHED_FIFO.
var canRaise = sync.OnceValue(func() bool {
	return exec.Command("chrt", "-f", strconv.Itoa(harnessPriority), "true").Run() == nil
})

// deviceCommand runs a program standing in for a device at harnessPriority
// (every thread it starts inherits it), or at normal priority where this
// process may not raise it: at normal priority on a loaded 2-core machine
// (load 8) the controller program skipped 220 of its 800 periods, which
// the tests would read as the rig's doing.
func deviceCommand(path string, args ...string) *exec.Cmd {
	if canRaise() {
		return exec.Command("chrt", append([]string{"-f", strconv.Itoa(harnessPriority), path}, args...)...)
	}
	return exec.Command(path, args...)
}

// firmwarePrograms builds the host programs once for the tests here.
func firmwarePrograms(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(os.PathSeparator), "./firmware/cmd/pid", "./firmware/cmd/plantnode")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// wireRun is what a run of the bench left: its summary, trace rows and
// the plant's samples (from the recording: what the plant node measured,
// at the time it reached the rig), and the programs' last lines.
type wireRun struct {
	summary     record.Summary
	trace       []row
	samples     []timedValue
	pid, node   string
	pidC, nodeC int
	controller  *record.WireSummary
	plant       *record.WireSummary
}

type timedValue struct {
	at time.Duration
	v  float64
}

// runFirmwareBench runs the bench for d with the programs attached,
// stops the programs after the run (they keep trying to reopen the
// line meanwhile) and reads what the run left.
func runFirmwareBench(t *testing.T, programs, profile string, d time.Duration) wireRun {
	t.Helper()
	rig := startRig(t, profile, firmwareRTBench, "--duration", d.String(), "--record", "DIR/run.pcapng")
	for _, name := range []string{"controller", "plant"} {
		path := filepath.Join(rig.dir, name)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(path); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never appeared: %s", path, rig.stderr.String())
			}
		}
	}
	start := func(name string, args ...string) (*exec.Cmd, *bytes.Buffer) {
		var stderr bytes.Buffer
		cmd := deviceCommand(filepath.Join(programs, name), args...)
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd, &stderr
	}
	node, nodeErr := start("plantnode", "--port", filepath.Join(rig.dir, "plant"), "--rate", "200", "--tau", "100ms", "--gain", "2",
		"--safe", "-0.5", "--watchdog", "200ms", "--heartbeat", "100ms", "--reconnect", "50ms")
	ctrl, ctrlErr := start("pid", "--port", filepath.Join(rig.dir, "controller"), "--rate", "200", "--kp", "1", "--ki", "10",
		"--min", "-5", "--max", "5", "--setpoint", "1", "--timeout", "100ms", "--heartbeat", "100ms", "--reconnect", "50ms")
	if code := rig.wait(); code != 0 {
		t.Fatalf("hilrig exited %d: %s", code, rig.stderr.String())
	}
	var r wireRun
	for _, p := range []struct {
		cmd    *exec.Cmd
		stderr *bytes.Buffer
		line   *string
		code   *int
	}{{node, nodeErr, &r.node, &r.nodeC}, {ctrl, ctrlErr, &r.pid, &r.pidC}} {
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
		*p.code = p.cmd.ProcessState.ExitCode()
		*p.line = strings.TrimSpace(p.stderr.String())
	}
	data, err := os.ReadFile(rig.summary)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r.summary); err != nil {
		t.Fatal(err)
	}
	for _, e := range r.summary.Endpoints {
		switch e.Name {
		case "controller":
			r.controller = e.Wire
		case "plant":
			r.plant = e.Wire
		}
	}
	if r.controller == nil || r.plant == nil {
		t.Fatalf("no wire summaries:\n%s", data)
	}
	r.trace = readRealTrace(t, rig.trace)
	f, err := os.Open(filepath.Join(rig.dir, "run.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := record.ReadRecording(f)
	if err != nil {
		t.Fatal(err)
	}
	layout, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	v := []float64{0}
	plant := -1
	for i, in := range rec.Interfaces {
		if in.Name == "plant" {
			plant = i
		}
	}
	for _, fr := range rec.Frames {
		if fr.Interface != plant || fr.Outbound {
			continue
		}
		if m, err := wire.Parse(fr.Payload); err == nil && m.Type == wire.Sample && m.Values(layout, v) == nil {
			r.samples = append(r.samples, timedValue{fr.At, v[0]})
		}
	}
	t.Logf("controller: %+v\nplant: %+v\nevents: %+v\n%s\n%s", *r.controller, *r.plant, r.summary.Events, r.pid, r.node)
	return r
}

// readRealTrace reads a real-time trace's rows (t_due dropped).
func readRealTrace(t *testing.T, path string) []row {
	t.Helper()
	records := readCSV(t, path)
	if got := strings.Join(records[0], ","); got != record.RealTraceHeader {
		t.Fatalf("trace header %q", got)
	}
	var out []row
	for i, f := range records[1:] {
		r := row{flow: f[0], status: f[5], recv: -1}
		var err error
		if f[1] != "" {
			r.seq, err = strconv.ParseUint(f[1], 10, 64)
		}
		if err == nil && f[2] != "" {
			r.bytes, err = strconv.Atoi(f[2])
		}
		if err == nil {
			r.sent, err = parseSeconds(f[3])
		}
		if err == nil && f[4] != "" {
			r.recv, err = parseSeconds(f[4])
		}
		if err != nil {
			t.Fatalf("trace line %d: %v", i+2, err)
		}
		out = append(out, r)
	}
	return out
}

// running is the run's events from the second the programs' loop is
// settled by (settled's start) to d: the programs start one after the
// other, and the PID raised its fault flag at start-up, before the plant
// node's first measurement reached it (in two of six runs at load 8, at
// 0.67 s), and cleared it with that measurement: the programs' doing, not
// the rig's.
func (r *wireRun) running(d time.Duration) []record.Event {
	var evs []record.Event
	for _, e := range r.summary.Events {
		if e.AtS >= 1 && e.AtS < d.Seconds() {
			evs = append(evs, e)
		}
	}
	return evs
}

// settled checks that the plant's samples over [from, to) are all within
// tol of want.
func settled(t *testing.T, what string, samples []timedValue, from, to time.Duration, want, tol float64) {
	t.Helper()
	n := 0
	for _, s := range samples {
		if s.at >= from && s.at < to {
			n++
			if math.Abs(s.v-want) > tol {
				t.Errorf("%s: the plant's output %.4f at %v, want %v ± %v", what, s.v, s.at, want, tol)
				return
			}
		}
	}
	// 200 samples a second.
	if n < int((to-from).Seconds()*200*0.9) {
		t.Errorf("%s: %d samples from %v to %v", what, n, from, to)
	}
}

// cleanLink checks that what each device sent reached the rig whole, and
// that the rig knew its clock. The device sent its samples or commands
// for sending of the run's d.
func cleanLink(t *testing.T, name string, w *record.WireSummary, d, sending time.Duration) {
	t.Helper()
	// At least 200 samples or commands a second and 10 heartbeats, from
	// about half a second in (the programs start after the rig).
	if w.CRCErrors != 0 || w.Malformed != 0 || w.Missed != 0 || w.Gaps != 0 || w.Restarts != 0 || w.Messages < uint64(200*(sending.Seconds()-0.5)) {
		t.Errorf("%s: %+v", name, *w)
	}
	if w.TimeExchanges < uint64(d.Seconds())-1 || w.ClockOffsetS == nil || w.OneWayDelay == nil || w.OneWayDelay.P50 > 0.002 {
		t.Errorf("%s: %d time exchanges, one-way delay %+v", name, w.TimeExchanges, w.OneWayDelay)
	}
}

func TestFirmwareProgramsThroughTheRig(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time runs of the host programs")
	}
	programs := firmwarePrograms(t)
	const d = 4 * time.Second

	t.Run("5ms each way", func(t *testing.T) {
		r := runFirmwareBench(t, programs, firmwareRTLink("", ""), d)
		cleanLink(t, "controller", r.controller, d, d)
		cleanLink(t, "plant", r.plant, d, d)
		if evs := r.running(d); len(evs) != 0 {
			t.Errorf("events %+v", evs)
		}
		settled(t, "5 ms each way", r.samples, time.Second, d-100*time.Millisecond, 1, 0.01)
		if r.controller.Status != "ok" || r.plant.Status != "ok" {
			t.Errorf("heartbeats: controller %s, plant %s", r.controller.Status, r.plant.Status)
		}
	})

	// Each frame is lost with p = 5 % on its way; the PID's fault flag
	// would need its measurements to stop for 100 ms, 20 lost in a row:
	// p^20 ≈ 1e-26. The losses themselves are binomial: out of n frames
	// n·p ± 5·√(n·p·(1−p)) are lost.
	t.Run("5% loss", func(t *testing.T) {
		r := runFirmwareBench(t, programs, firmwareRTLink(", loss: {random: 5%}", ""), d)
		cleanLink(t, "controller", r.controller, d, d)
		cleanLink(t, "plant", r.plant, d, d)
		if evs := r.running(d); len(evs) != 0 {
			t.Errorf("events %+v", evs)
		}
		for _, flow := range []string{"m2s", "s2m"} {
			n, lost := 0, 0
			for _, row := range r.trace {
				if row.flow == flow && row.status != "in_flight" {
					n++
					if row.status == "loss_drop" {
						lost++
					}
				}
			}
			mean, sd := 0.05*float64(n), math.Sqrt(float64(n)*0.05*0.95)
			if n < 800 || math.Abs(float64(lost)-mean) > 5*sd {
				t.Errorf("%s: %d of %d frames lost, want %.0f ± %.0f", flow, lost, n, mean, 5*sd)
			}
		}
		// A lost sample leaves the PID on the one before, 5 ms older: the
		// loop holds.
		settled(t, "5 % loss", r.samples, time.Second, d-100*time.Millisecond, 1, 0.02)
	})

	// A 1 s outage of both directions from 1.5 s. The last measurement
	// to reach the PID left the hop before 1.5 s (one sent later would
	// leave it during the outage and be dropped): it arrived between
	// 1.5 − 0.005 (a sample every 5 ms) and 1.5 + 0.005. At its first tick
	// 100 ms later (every 5 ms) the PID raises its flag and sends a
	// heartbeat at once, which the rig reads as it enters (no hop): from
	// 1.5 − 0.005 + 0.1 s to 1.5 + 0.005 + 0.1 + 0.005 s, plus the
	// machine's own delays (a pseudo-terminal and two processes' threads
	// on a shared 2-core VM: 50 ms). The node's watchdog is the same with
	// 200 ms. After the outage, at 2.5 s, a measurement reaches the PID
	// 5 ms later, which clears its flag at its next tick and commands the
	// node 5 ms later still, clearing the node's: each said at once.
	t.Run("1s outage", func(t *testing.T) {
		schedule := "schedule:\n  - {at: 1.5s, for: 1s, hop: down, outage: drop}\n  - {at: 1.5s, for: 1s, hop: up, outage: drop}\n"
		r := runFirmwareBench(t, programs, firmwareRTLink("", schedule), d)
		// The PID sends no commands while its flag is up, 0.9 s or so.
		cleanLink(t, "controller", r.controller, d, d-time.Second)
		cleanLink(t, "plant", r.plant, d, d)
		const slack, period, tick, hop = 0.05, 0.005, 0.005, 0.005
		want := []struct {
			kind, endpoint string
			from, to       float64
		}{
			{"fault_raised", "controller", 1.5 - period + 0.1, 1.5 + hop + 0.1 + tick + slack},
			{"watchdog_tripped", "plant", 1.5 - period + 0.2, 1.5 + hop + 0.2 + tick + slack},
			{"fault_cleared", "controller", 2.5, 2.5 + hop + tick + slack},
			{"watchdog_cleared", "plant", 2.5, 2.5 + 2*hop + 2*tick + slack},
		}
		got := r.running(d)
		if len(got) != len(want) {
			t.Fatalf("events %+v", got)
		}
		seen := map[string]record.Event{}
		for _, e := range got {
			seen[e.Kind] = e
		}
		for _, w := range want {
			e, ok := seen[w.kind]
			if !ok || !strings.HasPrefix(e.Detail, w.endpoint+": ") || e.AtS < w.from || e.AtS > w.to {
				t.Errorf("%s of %s: %+v, want from %.3f s to %.3f s", w.kind, w.endpoint, e, w.from, w.to)
			}
			// The trace has the same row, at the same instant.
			found := false
			for _, row := range r.trace {
				if row.flow == w.endpoint && row.status == w.kind && math.Abs(row.sent.Seconds()-e.AtS) < 1e-6 {
					found = true
				}
			}
			if !found {
				t.Errorf("no trace row %s of %s at %.6f s", w.kind, w.endpoint, e.AtS)
			}
		}
		// Safe, the node drove its plant to 2·−0.5: from its trip (1.8 s
		// at the latest) the lag has 0.7 s, seven time constants, to get
		// within e^−7·2 = 0.002 of −1. Then the loop settles again.
		settled(t, "the outage", r.samples, 2450*time.Millisecond, 2500*time.Millisecond, -1, 0.01)
		settled(t, "after the outage", r.samples, 3200*time.Millisecond, d-100*time.Millisecond, 1, 0.01)
		if r.pidC != 0 || r.nodeC != 0 || !strings.Contains(r.pid, "0 CRC errors") || !strings.Contains(r.node, "0 CRC errors") {
			t.Errorf("the programs: exit %d, %d:\n%s\n%s", r.pidC, r.nodeC, r.pid, r.node)
		}
	})
}
