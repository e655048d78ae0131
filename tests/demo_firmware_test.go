package tests

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
)

// TestDemoFirmware runs `hilrig demo` (the firmware scenario, the
// default) for 3 s: the reference PID firmware on a pseudo-terminal
// controls motor-speed through paper 001's Internet link, both sides on
// the wire protocol. Every message the firmware sent reached the rig
// whole; the rig knew its clock; nothing raised its fault flag. The same
// bench in virtual time (hilrig sim: the firmware's law in the model
// standing in for it) gives the loop's error on an ideal machine, most of
// it the link's delay at each setpoint step: real time can only add delay
// to the 40 ms loop (38 ms of round trip and an exchange), a tick of the
// firmware (10 ms: its ticks are not the exchanges') and the VM's worst
// stall (10 ms, BENCHMARKS.md) each way; the error growing with the delay
// about in proportion (ωc·τ ≪ 1), it may be at most (40 + 10 + 2·10)/40 of
// the virtual run's.
func TestDemoFirmware(t *testing.T) {
	// The controller is the device: what reaches it is the to-controller flow.
	ideal := cosim(t, "internet-hil", rig.FirmwareDemoBench(t.TempDir(), [2]string{"from-remote", "to-remote"}), "3s")
	summaryPath := filepath.Join(t.TempDir(), "s.json")
	r := runHilrig(t, "demo", "--duration", "3s", "--summary", summaryPath)
	if r.code != 0 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	t.Logf("\n%s", r.stdout)
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var s record.Summary
	if err := json.Unmarshal(data, &s); err != nil || len(s.Models) != 1 || len(s.Endpoints) != 1 {
		t.Fatalf("summary: %v\n%s", err, data)
	}
	m, e := s.Models[0], s.Endpoints[0]
	if e.Name != "controller" || e.Wire == nil || m.Wire == nil {
		t.Fatalf("endpoint %+v, model wire %+v", e, m.Wire)
	}
	// 3 s of commands at 100 Hz and heartbeats at 10 Hz, less the start.
	if w := e.Wire; w.CRCErrors != 0 || w.Malformed != 0 || w.Missed != 0 || w.Messages < 300 || w.TimeExchanges < 2 || w.ClockOffsetS == nil || w.Status != "ok" {
		t.Errorf("the controller's messages: %+v", *w)
	}
	// The controller's messages cross 19 ms ± 2.75 ms (uniform, width
	// w = 5.5 ms) to the model: the median of n of them has a standard
	// error of w/(2√n) (1/(2f√n), f = 1/w the density at the median), and
	// lies above 19 ms − 4 of them (it read 18.99 ms once, n = 295).
	medianFloor := 0.019 - 4*0.0055/(2*math.Sqrt(float64(max(m.FramesIn, 1))))
	if m.FramesIn < 250 || m.BadFrames != 0 || m.Exchanges < 1490 || m.Wire.OneWayDelay == nil || m.Wire.OneWayDelay.P50 < medianFloor {
		t.Errorf("the model: %d frames in, %d bad, %d exchanges; wire %+v", m.FramesIn, m.BadFrames, m.Exchanges, *m.Wire)
	}
	if len(s.Events) != 0 {
		t.Errorf("events %+v", s.Events)
	}
	bound := ideal.Output.OfPeak * (40 + 10 + 2*10) / 40
	t.Logf("largest error %.2f %% of the peak in real time, %.2f %% in virtual time (bound %.2f %%)", 100*m.Output.OfPeak, 100*ideal.Output.OfPeak, 100*bound)
	if m.Output == nil || m.Output.OfPeak > bound || m.Output.OfPeak == 0 {
		t.Errorf("largest error %+v, bound %.4f of the peak", m.Output, bound)
	}
	if !strings.Contains(r.stdout, "hilrig demo (firmware)") || !strings.Contains(r.stdout, "0 CRC failures") || s.Stopped != "duration" {
		t.Errorf("stopped %q; output:\n%s", s.Stopped, r.stdout)
	}
}

// TestDemoScenarios: a scenario or cut the demo cannot run is a usage
// error that says why.
func TestDemoScenarios(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--scenario", "motor"}, `--scenario: no scenario "motor" (want firmware or quarter-car)`},
		{[]string{"--scenario", "firmware", "--cut", "CP1"}, "--cut cuts the quarter car; scenario firmware is cut at its controller"},
		{[]string{"--scenario", "quarter-car", "--cut", "CP9"}, "model quarter-car has no cut CP9"},
	} {
		r := runHilrig(t, append([]string{"demo"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("demo %v: exit %d: %s", tc.args, r.code, r.stderr)
		}
	}
}
