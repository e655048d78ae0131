package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckBenchRefusesWhatRunRefuses (issue 18, item 15): check --bench
// checks a profile as run takes it on that bench, so an entry recurring
// faster than the real-time executor acts is refused by both, at its
// place and in the same words; check alone, and sim, take it.
func TestCheckBenchRefusesWhatRunRefuses(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "often.yaml")
	text := `duration: 1s
hops:
  up: {delay: 1ms}
  down: {delay: 1ms}
flows:
  m2s: {route: [up], role: to-plant, traffic: {cbr: {interval: 10ms, size: 10B}}}
  s2m: {route: [down], role: to-controller}
schedule:
  - {at: 0s, for: 1ns, every: 1ns, count: 3, hop: up, outage: drop}
`
	if err := os.WriteFile(profile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const bench = "../profiles/benches/usb-serial.yaml"
	want := "hilrig: " + profile + ":9:31: schedule[0].every: 1ns is shorter than the real-time executor's resolution (100us): a change cannot recur that often in real time (sim can)\n"
	check := runHilrig(t, "check", profile, "--bench", bench)
	run := runHilrig(t, "run", profile, "--bench", bench)
	if check.code != 2 || check.stderr != want || run.code != 2 || run.stderr != want {
		t.Errorf("check --bench: exit %d: %s\nrun: exit %d: %s\nwant both exit 2: %s", check.code, check.stderr, run.code, run.stderr, want)
	}
	// A --set is placed in its argument, by both.
	set := "schedule[0].every=2ns"
	check = runHilrig(t, "check", profile, "--bench", bench, "--set", set)
	run = runHilrig(t, "run", profile, "--bench", bench, "--set", set)
	want = "hilrig: --set:1:19: schedule[0].every: 2ns is shorter than the real-time executor's resolution (100us)"
	if check.code != 2 || !strings.HasPrefix(check.stderr, want) || run.stderr != check.stderr {
		t.Errorf("with --set %s: check --bench: exit %d: %s\nrun: %s\nwant %s", set, check.code, check.stderr, run.stderr, want)
	}
	for _, args := range [][]string{{"check", profile}, {"sim", profile, "--summary", filepath.Join(dir, "s.json")}} {
		if r := runHilrig(t, args...); r.code != 0 {
			t.Errorf("%s: exit %d: %s", args[0], r.code, r.stderr)
		}
	}
}

// TestCheckReadsOnlyRegularFiles (issue 18, item 8): a profile that
// extends the terminal's input, a device or a named pipe is refused at
// once, at its extends, however its input is left open; so is a delay
// file that never ends.
func TestCheckReadsOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("no mkfifo:", err)
	}
	for _, tc := range []struct{ text, want string }{
		{"extends: /dev/stdin\n", ":1:10: extends: /dev/stdin: is not a regular file"},
		{"extends: /dev/zero\n", ":1:10: extends: /dev/zero: is not a regular file (a character device)"},
		{"extends: " + fifo + "\n", ":1:10: extends: " + fifo + ": is not a regular file (a named pipe)"},
		{"duration: 1s\nhops: {a: {delay: {trace: /dev/zero}}}\nflows: {f: {route: [a]}}\n", ":2:27: hops.a.delay.trace.file: cannot read /dev/zero: is not a regular file (a character device)"},
	} {
		profile := filepath.Join(dir, "p.yaml")
		if err := os.WriteFile(profile, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(hilrig, "check", profile)
		stdin, err := cmd.StdinPipe() // open, and never written to or closed
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err = <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%q: check still reading after 20 s", tc.text)
		}
		if cmd.ProcessState.ExitCode() != 2 || !strings.Contains(stderr.String(), profile+tc.want) {
			t.Errorf("%q: %v: %s\nwant exit 2 and %s", tc.text, err, stderr.String(), profile+tc.want)
		}
	}
}

// TestCheckErrorsAreBounded (issue 18, item 9): a profile with a hundred
// thousand unknown keys is reported in 101 lines, the last counting what
// is not listed.
func TestCheckErrorsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("duration: 1s\nhops: {a: {delay: 1ms}}\nflows: {f: {route: [a]}}\n")
	for i := range 100_000 {
		fmt.Fprintf(&b, "unknown%d: 1\n", i)
	}
	profile := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(profile, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runHilrig(t, "check", profile)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != 2 || len(lines) != 101 || lines[100] != "hilrig: ... and 99900 more problems" {
		t.Fatalf("exit %d, %d lines, the last %q", r.code, len(lines), lines[len(lines)-1])
	}
}

// TestTimesPastACentury (issue 18, item 6): a duration or delay past
// emulator.MaxDuration (a century) is refused where it is given, and a run
// of a century writes its frames in order.
func TestTimesPastACentury(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "slow.yaml")
	text := `duration: 10s
hops:
  a: {rate: 1Mbit, delay: 1ms}
flows:
  f: {route: [a], traffic: {cbr: {interval: 1000h, size: 100B}}}
`
	if err := os.WriteFile(profile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	const tooLong = `"9223372036854775807ns" is too long: hilrig takes durations up to 876600h (a century)`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", profile, "--duration", "9223372036854775807ns"}, `for "--duration" flag: ` + tooLong},
		{[]string{"sim", profile, "--set", "hops.a.delay=9223372036854775807ns"}, "hilrig: --set:1:14: hops.a.delay: " + tooLong},
	} {
		if r := runHilrig(t, tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d: %s\nwant exit 2 and %s", tc.args, r.code, r.stderr, tc.want)
		}
	}
	trace := filepath.Join(dir, "trace.csv")
	if r := runHilrig(t, "sim", profile, "--duration", "876600h", "--trace", trace, "--summary", filepath.Join(dir, "s.json")); r.code != 0 {
		t.Fatalf("a century: exit %d: %s", r.code, r.stderr)
	}
	rows := readTrace(t, trace)
	if len(rows) != 877 { // at 0, 1000 h, … 876 000 h
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		if r.sent != time.Duration(i)*1000*time.Hour || r.recv < r.sent {
			t.Fatalf("row %d: sent %v, received %v", i, r.sent, r.recv)
		}
	}
}
