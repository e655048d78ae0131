package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScheduleRecurringEveryNanosecond is issue 10's schedule through the
// binary: check takes an outage recurring every nanosecond for 100 s
// (10^11 occurrences, which used to be written out past 2.5 GB); run
// refuses it at its place, since the real-time executor cannot act on
// changes that often, and takes one recurring every 100 µs as far as the
// schedule goes (it then fails only for want of a device).
func TestScheduleRecurringEveryNanosecond(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "often.yaml")
	write := func(every string) {
		text := `duration: 100s
hops:
  up: {delay: 1ms}
  down: {delay: 1ms}
flows:
  m2s: {route: [up], role: to-plant}
  s2m: {route: [down], role: to-controller}
schedule:
  - {at: 0s, for: 1ns, every: ` + every + `, hop: up, outage: drop}
`
		if err := os.WriteFile(profile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1ns")
	if r := runHilrig(t, "check", profile); r.code != 0 || !strings.Contains(r.stdout, "ok  "+profile) {
		t.Fatalf("check: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	r := runHilrig(t, "run", profile, "--bench", "../profiles/benches/usb-serial.yaml", "--duration", "1s")
	want := profile + ":9:31: schedule[0].every: 1ns is shorter than the real-time executor's resolution (100us)"
	if r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("run: exit %d: %s\nwant exit 2 and %s", r.code, r.stderr, want)
	}
	write("100us")
	if r := runHilrig(t, "run", profile, "--bench", "../profiles/benches/usb-serial.yaml", "--duration", "1s"); strings.Contains(r.stderr, "resolution") {
		t.Fatalf("run with a 100us period: %s", r.stderr)
	}
}
