package tests

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestUARTLineTimeInSim: a hop written as a UART line, 115 200 baud 8N1,
// sends each byte as a 10-bit character, so a 100-byte frame alone on the
// line takes 100·10/115200 s, and frame k of a line that never idles ends at
// (k+1)·100·10/115200 s: in whole nanoseconds, floor(1e9·(k+1)·1000/115200),
// rounded once and not k times (issue 10, item 8; 115200bit would take
// 100·8/115200 s, 25 % less).
func TestUARTLineTimeInSim(t *testing.T) {
	dir := t.TempDir()
	profile := filepath.Join(dir, "uart.yaml")
	// A frame every 1 ms against a character time of 86.8 µs per byte:
	// after the first, the line is never idle until the last of 100 frames.
	if err := os.WriteFile(profile, []byte(`duration: 2s
hops:
  line: {rate: {baud: 115200, format: 8N1}}
flows:
  f: {route: [line], traffic: {cbr: {interval: 1ms, size: 100B, stop: 100ms}}}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "trace.csv")
	if r := runHilrig(t, "sim", profile, "--trace", trace); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rows := readTrace(t, trace)
	if len(rows) != 100 {
		t.Fatalf("%d frames, want 100", len(rows))
	}
	const charBits, baud, size = 10, 115200, 100
	for k, r := range rows {
		// Exact: 1e9·(k+1)·size·charBits/baud ns, floored once.
		want := time.Duration(int64(1e9) * int64(k+1) * size * charBits / baud)
		if r.status != "delivered" || r.recv != want {
			t.Fatalf("frame %d: %s at %v, want delivered at %v", k, r.status, r.recv, want)
		}
	}
	if first := rows[0].recv - rows[0].sent; first != 8680555*time.Nanosecond {
		t.Errorf("a 100-byte frame takes %v, want 100·10/115200 s = 8680555.6 ns, 8680555 ns", first)
	}
}
