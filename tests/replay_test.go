package tests

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/record"
)

// TestRecordAndReplay is issue 14's replay acceptance: a real-time session
// on the virtual bench is recorded (--record), then replayed in virtual
// time through the same profile, both endpoints played from the
// recording (--replay): the replay's frames enter the network at exactly
// the recorded ingress times, with exactly the recorded payloads.
func TestRecordAndReplay(t *testing.T) {
	const profile = `duration: 30s
seed: 3
hops:
  down: {delay: 5ms, jitter: {dist: normal, sigma: 1ms}, loss: {random: 2%}}
  up:   {delay: 5ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`
	r := startRig(t, profile, ptyBenchText("line", ""), "--record", "DIR/session.pcapng")
	ctrl, plant := r.attach("controller"), r.attach("plant")
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	done := make(chan struct{})
	go func() { send(plant, line, 100, 7*time.Millisecond, time.Now()); close(done) }()
	send(ctrl, line, 200, 3*time.Millisecond, time.Now())
	<-done
	time.Sleep(100 * time.Millisecond)
	if code := r.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("hilrig exited %d: %s", code, r.stderr.String())
	}
	ctrl.Close()
	plant.Close()
	recPath := filepath.Join(r.dir, "session.pcapng")
	rec := readRecording(t, recPath)
	realRows, _ := readRunTrace(t, r.trace)

	dir := t.TempDir()
	bench, prof := filepath.Join(r.dir, "bench.yaml"), filepath.Join(r.dir, "link.yaml")
	simTrace, simRec := filepath.Join(dir, "trace.csv"), filepath.Join(dir, "replay.pcapng")
	out := runHilrig(t, "sim", prof, "--bench", bench, "--replay", "controller="+recPath, "--replay", "plant="+recPath,
		"--trace", simTrace, "--record", simRec, "--summary", filepath.Join(dir, "s.json"))
	if out.code != 0 {
		t.Fatalf("sim with replay: exit %d: %s", out.code, out.stderr)
	}
	replayed := readRecording(t, simRec)

	// What entered the network: the recorded ingress (inbound frames) and
	// the replay's, interface by interface, time and payload.
	for _, name := range []string{"controller", "plant"} {
		want, got := inbound(rec, name), inbound(replayed, name)
		if len(want) < 90 || len(got) != len(want) {
			t.Fatalf("%s: recorded %d frames, replayed %d", name, len(want), len(got))
		}
		for i := range want {
			if got[i].At != want[i].At || string(got[i].Payload) != string(want[i].Payload) {
				t.Fatalf("%s frame %d: replayed at %v %q, recorded at %v %q", name, i, got[i].At, got[i].Payload, want[i].At, want[i].Payload)
			}
		}
	}
	// And the trace agrees: every frame was sent at the same instant in
	// both runs.
	sent := func(rows []row) []time.Duration {
		var out []time.Duration
		for _, r := range rows {
			out = append(out, r.sent)
		}
		slices.Sort(out)
		return out
	}
	if a, b := sent(realRows), sent(readTrace(t, simTrace)); !slices.Equal(a, b) {
		t.Errorf("the real run's frames were sent at other times than the replay's (%d and %d frames)", len(a), len(b))
	}
}

func readRecording(t *testing.T, path string) *record.Recorded {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := record.ReadRecording(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rec
}

func inbound(rec *record.Recorded, endpoint string) []record.RecordedFrame {
	var out []record.RecordedFrame
	for _, f := range rec.Frames {
		if rec.Interfaces[f.Interface].Name == endpoint && !f.Outbound {
			out = append(out, f)
		}
	}
	return out
}
