package tests

import (
	"bytes"
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTraceDrivenReplaysARun records runs over impaired hops and replays
// each trace as the delay and loss of a plain hop: every frame gets the
// recorded fate and, delivered, the recorded delay to the nanosecond, in
// order (but those still in flight when the recording ended, whose fate it
// does not know). One recording has a delay with correlated jitter and
// Gilbert–Elliott loss; the other duplicates frames on its first hop, whose
// copies arrive or are lost on the second (the delivered ones have rows,
// with their original's seq): a replay must take one value per frame
// sent, the original's (58 of 200 frames got another frame's fate when the
// copies counted too).
func TestTraceDrivenReplaysARun(t *testing.T) {
	dir := t.TempDir()
	const traffic = `flows:
  m2s: {route: [link], traffic: {cbr: {interval: 10ms, size: 200B}}}
`
	for _, rec := range []struct {
		name, profile string
		copies        bool
	}{
		{"gilbert", `seed: 11
hops:
  link: {delay: 20ms, jitter: {dist: normal, sigma: 3ms, correlation: 0.6}, loss: {gilbert: {p: 2%, r: 30%}}}
` + traffic, false},
		{"duplicates", `seed: 5
hops:
  first: {delay: 10ms, duplicate: 20%, jitter: {dist: uniform, spread: 2ms}}
  link: {delay: 5ms, loss: {random: 20%}}
flows:
  m2s: {route: [first, link], traffic: {cbr: {interval: 10ms, size: 200B}}}
`, true},
	} {
		t.Run(rec.name, func(t *testing.T) {
			recorded := filepath.Join(dir, rec.name+".yaml")
			os.WriteFile(recorded, []byte("duration: 20s\n"+rec.profile), 0o644)
			recTrace := filepath.Join(dir, rec.name+".csv")
			if r := runHilrig(t, "sim", recorded, "--trace", recTrace); r.code != 0 {
				t.Fatalf("recording: exit %d: %s", r.code, r.stderr)
			}
			replay := filepath.Join(dir, "replay.yaml")
			os.WriteFile(replay, []byte(`duration: 20s
hops:
  link: {delay: {trace: `+rec.name+`.csv}, loss: {trace: {file: `+rec.name+`.csv, flow: m2s}}}
`+traffic), 0o644)
			repTrace := filepath.Join(dir, "replayed.csv")
			if r := runHilrig(t, "sim", replay, "--trace", repTrace); r.code != 0 {
				t.Fatalf("replay: exit %d: %s", r.code, r.stderr)
			}
			var want []row
			copies := 0
			for _, r := range readTrace(t, recTrace) {
				if r.status == "duplicate" {
					copies++ // a copy delivered (one dropped has no row)
					continue
				}
				want = append(want, r)
			}
			slices.SortFunc(want, func(a, b row) int { return cmp.Compare(a.seq, b.seq) })
			got := readTrace(t, repTrace)
			slices.SortFunc(got, func(a, b row) int { return cmp.Compare(a.seq, b.seq) })
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
			if rec.copies && copies < 100 {
				t.Errorf("%d copies delivered in the recording: duplication was not exercised", copies)
			}
			t.Logf("%d frames, %d lost, %d copies delivered, replayed with their recorded delays (%v to %v)", len(want), lost, copies, minDelay(want), maxDelay(want))
		})
	}

	// Mistakes: a trace of several flows without flow, an unknown flow, a
	// bad line of a plain file.
	os.WriteFile(filepath.Join(dir, "two.csv"), []byte("flow,seq,bytes,t_send,t_recv,status\na,0,1,0.000000000,0.001000000,delivered\nb,0,1,0.000000000,0.002000000,delivered\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad.txt"), []byte("1\n0\n2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "neg.csv"), []byte("flow,seq,bytes,t_send,t_recv,status\nf,0,10,0.000000000,0.005000000,delivered\nf,1,10,0.020000000,0.015000000,delivered\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bogus.csv"), []byte("flow,seq,bytes,t_send,t_recv,status\na,0,10,0.1,,bogus\n"), 0o644)
	for _, tc := range []struct{ hop, want string }{
		{"{delay: {trace: two.csv}}", "bad.yaml:3:25: hops.link.delay.trace: " + filepath.Join(dir, "two.csv") + " holds flows a, b: say which to follow (flow)"},
		{"{delay: {trace: {file: two.csv, flow: c}}}", "bad.yaml:3:47: hops.link.delay.trace.flow: " + filepath.Join(dir, "two.csv") + ` has no flow "c"`},
		{"{loss: {trace: bad.txt}}", filepath.Join(dir, "bad.txt") + `:3:1: hops.link.loss.trace.file: "2" is not 1 (lost) or 0 (arrived)`},
		{"{delay: {trace: neg.csv}}", filepath.Join(dir, "neg.csv") + ":3:20: hops.link.delay.trace.file: t_recv 0.015000000 is before t_send 0.020000000: a delay cannot be negative"},
		{"{loss: {trace: {file: bogus.csv}}}", filepath.Join(dir, "bogus.csv") + `:2:13: hops.link.loss.trace.file: "bogus" is not a frame's status (want in_flight, delivered,`},
	} {
		os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("duration: 1s\nhops:\n  link: "+tc.hop+"\n"+traffic), 0o644)
		// check, show and sim refuse it alike, sim before it writes a trace.
		for _, cmd := range [][]string{{"check"}, {"show"}, {"sim", "--trace", filepath.Join(dir, "bad-trace.csv")}} {
			r := runHilrig(t, append(cmd, filepath.Join(dir, "bad.yaml"))...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("%s %s: exit %d, want 2 and %q:\n%s", cmd[0], tc.hop, r.code, tc.want, r.stderr)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "bad-trace.csv")); err == nil {
			t.Errorf("%s: sim refused the profile but wrote a trace", tc.hop)
		}
	}
}

// TestShowRebasesFiles: hilrig show names every file a profile reads (a
// recorded delay or loss series, short or long form, an empirical jitter's
// delays, in a hop or a schedule entry) as seen from the profile shown,
// whether a base in another directory named it or a --set (relative to
// the working directory): what it prints, saved next to the profile and
// run from another directory, gives the same trace, byte for byte (issue
// 16, item 2: a --set trace was shown as my/my/s3.txt).
func TestShowRebasesFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("base/series.txt", "5ms\n7ms\n6ms\n")
	write("base/losses.txt", "0\n0\n1\n0\n")
	write("base/jitter.txt", "1ms\n2ms\n")
	write("lab/my/s3.txt", "2ms\n9ms\n")
	write("base/b.yaml", `duration: 2s
hops:
  l: {delay: {trace: series.txt}, loss: {trace: {file: losses.txt}}, jitter: {dist: empirical, file: jitter.txt}}
  b: {delay: 1ms}
flows:
  f: {route: [l, b], traffic: {cbr: {interval: 10ms, size: 100B}}}
schedule:
  - {at: 1s, for: 500ms, hop: b, delay: {trace: series.txt}}
`)
	write("lab/v.yaml", "extends: ../base/b.yaml\nseed: 3\n")
	run := func(in string, args ...string) result {
		t.Helper()
		cmd := exec.Command(hilrig, args...)
		cmd.Dir = filepath.Join(dir, in)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v in %s: %v\n%s", args, in, err, errOut.String())
		}
		return result{out.String(), errOut.String(), 0}
	}
	set := []string{"--set", "hops.b.delay={trace: my/s3.txt}", "--set", "schedule[0].jitter={dist: empirical, file: my/s3.txt}"}
	shown := run("lab", append([]string{"show", "v.yaml"}, set...)...).stdout
	for _, want := range []string{"{trace: ../base/series.txt}", "{file: ../base/losses.txt}", "file: ../base/jitter.txt", "b: {delay: {trace: my/s3.txt}}", "file: my/s3.txt}"} {
		if !strings.Contains(shown, want) {
			t.Errorf("show lacks %q:\n%s", want, shown)
		}
	}
	write("lab/shown.yaml", shown)
	run("lab", append([]string{"sim", "v.yaml", "--trace", filepath.Join(dir, "want.csv")}, set...)...)
	run("base", "sim", filepath.Join(dir, "lab/shown.yaml"), "--trace", filepath.Join(dir, "got.csv"))
	want, _ := os.ReadFile(filepath.Join(dir, "want.csv"))
	got, _ := os.ReadFile(filepath.Join(dir, "got.csv"))
	if len(want) < 1000 || !bytes.Equal(got, want) {
		t.Errorf("what show printed runs differently: %d bytes of trace, %d wanted", len(got), len(want))
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
