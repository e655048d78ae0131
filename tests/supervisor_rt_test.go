package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// twinLink is the digital twin's link for real-time tests: 5 ms each way.
const twinLink = `duration: 1h
hops:
  up:   {delay: 5ms}
  down: {delay: 5ms}
flows:
  state:   {route: [up]}
  command: {route: [down]}
`

const twinBench = `endpoints:
  twin:
    model:
      name: bicycle
      cut: robot
      exchange: 100ms
      step: 10ms
      stepping: wait
      maxage: 300ms
      supervisor: {theta_safe: 299ms, check: 10ms, jump: 3}
  robot: {pty: {link: DIR/robot, framing: line}}
bind:
  state:   {from: robot, to: twin}
  command: {from: twin, to: robot}
`

// TestSupervisorRealTime is issue 12's real-time acceptance test: the
// test plays the physical twin on a pseudo-terminal, sending its state
// every 100 ms, and stops for 1 s. The digital twin steps on the stale
// state while it is valid (maxage), then stalls; t_diff grows from that
// last step, and the supervisor must flag within θ_safe + Δ + 10 ms of it
// (10 ms for the real-time executor's own lateness), command nothing while
// flagged, and resync once the states come back.
func TestSupervisorRealTime(t *testing.T) {
	r := startRig(t, twinLink, twinBench, "--duration", "4s")
	robot := r.attach("robot")
	defer robot.Close()
	var mu sync.Mutex
	var commands []time.Duration // when the robot read each command, on its clock
	start := time.Now()
	go func() {
		sc := bufio.NewScanner(robot)
		for sc.Scan() {
			mu.Lock()
			commands = append(commands, time.Since(start))
			mu.Unlock()
		}
	}()
	const pauseFrom, pauseTo = 1500 * time.Millisecond, 2500 * time.Millisecond
	for k := 0; ; k++ {
		at := time.Duration(k) * 100 * time.Millisecond
		if at >= 4*time.Second {
			break
		}
		time.Sleep(time.Until(start.Add(at)))
		if at >= pauseFrom && at < pauseTo {
			continue // the robot falls silent
		}
		fmt.Fprintf(robot, "%.3f,0\n", 0.2)
	}
	if code := r.wait(); code != 0 {
		t.Fatalf("hilrig exited %d: %s", code, r.stderr.String())
	}
	data, err := os.ReadFile(r.summary)
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Events []struct {
			AtS  float64 `json:"at_s"`
			Kind string  `json:"kind"`
		} `json:"events"`
		twinSummary
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	rows, _ := readRunTrace(t, r.trace)
	// The rig's clock less the test's: the state k was written at k·100 ms
	// of the test's clock and stamped by the rig microseconds later, so
	// the smallest difference is the offset (a late write only adds).
	var offset time.Duration = math.MaxInt64
	var states []row
	for _, row := range rows {
		if row.flow == "state" {
			states = append(states, row)
		}
	}
	for k, row := range states {
		at := time.Duration(k) * 100 * time.Millisecond
		if at >= pauseFrom {
			at += pauseTo - pauseFrom
		}
		offset = min(offset, row.sent-at)
	}
	// The last state before the pause, on the rig's clock.
	lastBefore := time.Duration(-1)
	for _, row := range states {
		if row.sent < offset+pauseFrom {
			lastBefore = row.sent
		}
	}
	m := s.Models[0]
	if len(m.Sync.Episodes) != 1 || m.Sync.Episodes[0].EndS == nil {
		t.Fatalf("episodes %+v; want one, ended", m.Sync.Episodes)
	}
	ep := m.Sync.Episodes[0]
	flagged, resynced := secs(ep.StartS), secs(*ep.EndS)
	// The twin's time starts with its first state, stamped like the
	// others on the rig's clock; it steps on the last state before the
	// pause until its time reaches T_last + maxage, or the exchange before
	// it (the stamps jitter by microseconds, so T_last + maxage may fall
	// just short of a whole exchange): it stalls at a wall instant between
	// T_last + maxage − 100 ms and T_last + maxage. From then t_diff grows
	// and crosses θ_safe θ_safe later; the supervisor, checking every Δ,
	// must flag within Δ of that, and 10 ms more for the real-time
	// executor's own lateness.
	earliest := lastBefore + 300*time.Millisecond - 100*time.Millisecond + 299*time.Millisecond
	bound := lastBefore + 300*time.Millisecond + 299*time.Millisecond + 10*time.Millisecond + 10*time.Millisecond
	t.Logf("last state before the pause at %v, flagged at %v (within (%v, %v]), back in sync at %v", lastBefore, flagged, earliest, bound, resynced)
	if flagged <= earliest || flagged > bound {
		t.Errorf("flagged at %v; want it in (%v, %v]", flagged, earliest, bound)
	}
	if resynced < offset+pauseTo || resynced > offset+pauseTo+500*time.Millisecond {
		t.Errorf("back in sync at %v; the states came back at %v", resynced, offset+pauseTo)
	}
	for _, row := range rows {
		if row.flow == "command" && row.sent >= flagged && row.sent < resynced {
			t.Errorf("command sent at %v while out of sync", row.sent)
		}
	}
	// Each change of the flag is one instant: its event's and its trace
	// row's (the watchdog's alarm had its row at the executor's next turn,
	// 2.593738 s for an event at 2.593307 s).
	var flagRows, flagEvents []string
	for _, row := range rows {
		if row.flow == "twin" && (row.status == "out_of_sync" || row.status == "in_sync") {
			flagRows = append(flagRows, fmt.Sprintf("%s at %v", row.status, row.sent))
		}
	}
	for _, e := range s.Events {
		if e.Kind == "out_of_sync" || e.Kind == "in_sync" {
			flagEvents = append(flagEvents, fmt.Sprintf("%s at %v", e.Kind, secs(e.AtS)))
		}
	}
	if fmt.Sprint(flagRows) != fmt.Sprint(flagEvents) {
		t.Errorf("the trace's rows %v; the events %v", flagRows, flagEvents)
	}
	// What the robot read: nothing from a command's delay after the flag
	// until the resync.
	mu.Lock()
	defer mu.Unlock()
	for _, at := range commands {
		rig := at + offset
		if rig > flagged+20*time.Millisecond && rig < resynced {
			t.Errorf("the robot read a command at %v (rig clock) while out of sync", rig)
		}
	}
	if c := m.Messages; c.Skipped+c.SkippedDisruption == 0 || len(commands) < 25 {
		t.Errorf("messages %+v; the robot read %d commands", c, len(commands))
	}
}

func secs(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// TestSupervisorHeavyModel: a model too slow for its exchange (the quarter
// car stepped every 100 ns, 10 000 steps an exchange of 1 ms) falls behind
// the clock; the supervisor's watchdog flags it out of sync while it is
// busy integrating, not only as overruns counted afterwards.
func TestSupervisorHeavyModel(t *testing.T) {
	bench := `endpoints:
  car:
    model:
      name: quarter-car
      cut: CP2
      exchange: 1ms
      step: 100ns
      supervisor: {theta_safe: 50ms, check: 5ms, on_out_of_sync: stop}
  seat: {udp: {listen: "127.0.0.1:0"}}
bind:
  to-remote:   {from: car, to: seat}
  from-remote: {from: seat, to: car}
`
	profile := strings.ReplaceAll(twinLink, "state", "to-remote")
	profile = strings.ReplaceAll(profile, "command", "from-remote")
	r := startRig(t, profile, bench, "--duration", "3s")
	if code := r.wait(); code != 1 {
		t.Fatalf("exited %d: %s", code, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "out of sync") {
		t.Errorf("stderr: %s", r.stderr.String())
	}
	data, _ := os.ReadFile(r.summary)
	var s struct {
		Stopped string `json:"stopped"`
		Models  []struct {
			Overruns uint64 `json:"overruns"`
			Sync     struct {
				Episodes []struct {
					StartS float64 `json:"start_s"`
				} `json:"episodes"`
			} `json:"sync"`
		} `json:"models"`
	}
	if err := json.Unmarshal(data, &s); err != nil || len(s.Models) != 1 {
		t.Fatalf("summary: %v: %s", err, data)
	}
	m := s.Models[0]
	t.Logf("stopped: %s; %d overruns; flagged at %v s", s.Stopped, m.Overruns, m.Sync.Episodes)
	if len(m.Sync.Episodes) != 1 || !strings.Contains(s.Stopped, "out of sync") {
		t.Errorf("stopped %q, episodes %+v", s.Stopped, m.Sync.Episodes)
	}
}
