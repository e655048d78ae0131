package tests

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

	// A bench whose endpoints replay the recording (the file next to the
	// bench) runs the same: the same trace, byte for byte.
	data, err := os.ReadFile(recPath)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "yesterday.pcapng"), data, 0o644)
	replayBench := filepath.Join(dir, "replay-bench.yaml")
	os.WriteFile(replayBench, []byte(`endpoints:
  controller: {replay: {file: yesterday.pcapng}}
  plant:      {replay: {file: yesterday.pcapng, endpoint: plant}}
bind:
  m2s: {from: controller, to: plant}
  s2m: {from: plant, to: controller}
`), 0o644)
	benchTrace := filepath.Join(dir, "bench-trace.csv")
	if out := runHilrig(t, "sim", prof, "--bench", replayBench, "--trace", benchTrace); out.code != 0 {
		t.Fatalf("sim on the replaying bench: exit %d: %s", out.code, out.stderr)
	}
	if a, b := mustRead(t, simTrace), mustRead(t, benchTrace); !bytes.Equal(a, b) {
		t.Errorf("the replaying bench's trace differs from --replay's (%d and %d bytes)", len(b), len(a))
	}
	// A recording that is not there, or an endpoint it does not have.
	os.WriteFile(replayBench, []byte("endpoints:\n  controller: {replay: {file: nowhere.pcapng}}\n  plant: {replay: {file: yesterday.pcapng, endpoint: robot}}\nbind:\n  m2s: {from: controller, to: plant}\n  s2m: {from: plant, to: controller}\n"), 0o644)
	if out := runHilrig(t, "check", "--bench", replayBench, prof); out.code != 2 || !strings.Contains(out.stderr, "replay-bench.yaml:2:31: endpoints.controller.replay.file: cannot read the recording: stat "+filepath.Join(dir, "nowhere.pcapng")+": no such file or directory") {
		t.Errorf("check of a missing recording: exit %d: %s", out.code, out.stderr)
	}
	os.WriteFile(replayBench, []byte("endpoints:\n  controller: {replay: {file: yesterday.pcapng}}\n  plant: {replay: {file: yesterday.pcapng, endpoint: robot}}\nbind:\n  m2s: {from: controller, to: plant}\n  s2m: {from: plant, to: controller}\n"), 0o644)
	if out := runHilrig(t, "sim", prof, "--bench", replayBench); out.code != 2 || !strings.Contains(out.stderr, "endpoint plant: "+filepath.Join(dir, "yesterday.pcapng")+": the recording has no endpoint robot (it has controller, plant)") {
		t.Errorf("sim replaying an endpoint the recording lacks: exit %d: %s", out.code, out.stderr)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
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
