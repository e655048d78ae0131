package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTraceDrivenReplaysARun records a run over an impaired hop (a delay
// with correlated jitter, Gilbert–Elliott loss) and replays its trace as
// the delay and loss of a plain hop: every frame gets the recorded fate
// and, delivered, the recorded delay to the nanosecond, in order (but
// those still in flight when the recording ended, whose fate it does not
// know).
func TestTraceDrivenReplaysARun(t *testing.T) {
	dir := t.TempDir()
	const traffic = `flows:
  m2s: {route: [link], traffic: {cbr: {interval: 10ms, size: 200B}}}
`
	recorded := filepath.Join(dir, "recorded.yaml")
	os.WriteFile(recorded, []byte(`duration: 20s
seed: 11
hops:
  link: {delay: 20ms, jitter: {dist: normal, sigma: 3ms, correlation: 0.6}, loss: {gilbert: {p: 2%, r: 30%}}}
`+traffic), 0o644)
	recTrace := filepath.Join(dir, "trace.csv")
	if r := runHilrig(t, "sim", recorded, "--trace", recTrace); r.code != 0 {
		t.Fatalf("recording: exit %d: %s", r.code, r.stderr)
	}
	replay := filepath.Join(dir, "replay.yaml")
	os.WriteFile(replay, []byte(`duration: 20s
hops:
  link: {delay: {trace: trace.csv}, loss: {trace: {file: trace.csv, flow: m2s}}}
`+traffic), 0o644)
	repTrace := filepath.Join(dir, "replayed.csv")
	if r := runHilrig(t, "sim", replay, "--trace", repTrace); r.code != 0 {
		t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
	}
	want, got := readTrace(t, recTrace), readTrace(t, repTrace)
	if len(got) != len(want) || len(want) != 2000 {
		t.Fatalf("%d frames replayed, %d recorded (want 2000)", len(got), len(want))
	}
	lost := 0
	for i := range want {
		w, g := want[i], got[i]
		if w.status == "in_flight" {
			continue // its fate was not known when the recording ended
		}
		if g.seq != w.seq || g.status != w.status || g.sent != w.sent || g.recv-g.sent != w.recv-w.sent {
			t.Fatalf("frame %d: replayed %+v, recorded %+v", i, g, w)
		}
		if w.status == "loss_drop" {
			lost++
		}
	}
	if lost < 20 {
		t.Errorf("only %d frames lost in the recording: the loss series was not exercised", lost)
	}
	t.Logf("%d frames, %d lost, replayed with their recorded delays (%v to %v)", len(want), lost, minDelay(want), maxDelay(want))

	// Mistakes: a trace of several flows without flow, an unknown flow, a
	// bad line of a plain file.
	os.WriteFile(filepath.Join(dir, "two.csv"), []byte("flow,seq,bytes,t_send,t_recv,status\na,0,1,0.000000000,0.001000000,delivered\nb,0,1,0.000000000,0.002000000,delivered\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("1\n0\n2\n"), 0o644)
	for _, tc := range []struct{ hop, want string }{
		{"{delay: {trace: two.csv}}", "bad.yaml:3:25: hops.link.delay.trace: " + filepath.Join(dir, "two.csv") + " holds flows a, b: say which to follow (flow)"},
		{"{delay: {trace: {file: two.csv, flow: c}}}", "bad.yaml:3:47: hops.link.delay.trace.flow: " + filepath.Join(dir, "two.csv") + ` has no flow "c"`},
		{"{loss: {trace: bad.txt}}", filepath.Join(dir, "bad.txt") + `:3:1: hops.link.loss.trace: "2" is not 1 (lost) or 0 (arrived)`},
	} {
		os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("duration: 1s\nhops:\n  link: "+tc.hop+"\n"+traffic), 0o644)
		r := runHilrig(t, "check", filepath.Join(dir, "bad.yaml"))
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", tc.hop, r.code, tc.want, r.stderr)
		}
	}
}

func minDelay(rows []row) time.Duration {
	m := time.Duration(1 << 62)
	for _, r := range rows {
		if r.status == "delivered" {
			m = min(m, r.recv-r.sent)
		}
	}
	return m
}

func maxDelay(rows []row) time.Duration {
	var m time.Duration
	for _, r := range rows {
		if r.status == "delivered" {
			m = max(m, r.recv-r.sent)
		}
	}
	return m
}
