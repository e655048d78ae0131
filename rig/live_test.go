package rig

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hilrig/hilrig/rig/record"
)

func sampleSnapshot(t time.Duration) func(*record.Snapshot) {
	return func(s *record.Snapshot) {
		s.Reset(t, time.Time{})
		m := record.ModelProgress{Endpoint: "car", Output: "x", Value: 0.0123, Ideal: 0.0121, Peak: 0.05, MaxError: 0.0004,
			Sync: record.SyncProgress{Supervised: true, OutOfSync: true, TDiff: 312 * time.Millisecond}, NCut: 3}
		m.Cut[0] = record.CutValue{Name: "x", Value: 0.0123, ToHardware: true}
		m.Cut[1] = record.CutValue{Name: "r", Value: 0.02, ToHardware: true}
		m.Cut[2] = record.CutValue{Name: "F", Value: -3.5}
		s.Models = append(s.Models, m)
		s.Wire = append(s.Wire, record.WireProgress{Name: "seat", Messages: 512, CRCErrors: 1, Missed: 2, Heard: true, Safe: true, ClockKnown: true, OneWay: 1500 * time.Microsecond},
			record.WireProgress{Name: "controller", Messages: 30, Heard: true})
		s.Flows = append(s.Flows,
			record.FlowProgress{Name: "to-seat", Sent: 1500, Delivered: 1490, LossDrops: 2, Recent: record.DelayProgress{Count: 50, P50: 19 * time.Millisecond}},
			record.FlowProgress{Name: "from-seat", Sent: 1500, Delivered: 1495})
		s.Hops = append(s.Hops, record.HopProgress{Name: "wan", Outage: 1})
		s.Timing = record.TimingProgress{Real: true, Release: record.DelayProgress{Count: 10, Mean: 3 * time.Microsecond, Max: 42 * time.Microsecond}}
	}
}

// TestStatusLineFits writes the same run at several widths: never wider,
// the time always first, what matters most kept longest.
func TestStatusLineFits(t *testing.T) {
	var mon record.Monitor
	mon.Publish(sampleSnapshot(2500 * time.Millisecond))
	s := mon.Snapshot()
	full := StatusLine(&s, 10*time.Second, 0)
	for _, want := range []string{"  2.5/10s", "x +0.0123 (uncut +0.0121) r +0.02 → F -3.5", "worst error 0.80% of peak", "car OUT OF SYNC (t_diff 312ms)",
		"seat SAFE", "seat 512 msgs 1 bad missed 2 1.5ms", "controller 30 msgs ok",
		"to-seat 1490/1500 19ms lost 2", "from-seat 1495/1500", "wan DOWN", "released late by 3µs on average, at most 42µs"} {
		if !strings.Contains(full, want) {
			t.Errorf("%q lacks %q", full, want)
		}
	}
	for _, width := range []int{10, 40, 79, 120, 200} {
		line := StatusLine(&s, 10*time.Second, width)
		if n := utf8.RuneCountInString(line); n > width || !strings.HasPrefix(line, "  2.5/10s") {
			t.Errorf("width %d: %d columns: %q", width, n, line)
		}
		if width >= 79 && !strings.Contains(line, "OUT OF SYNC") {
			t.Errorf("width %d: the sync state is left out: %q", width, line)
		}
	}
}

// TestStatusPlainLines writes a line a second of the run when the writer
// is not a terminal, and the last state at the end.
func TestStatusPlainLines(t *testing.T) {
	var out strings.Builder
	var mon record.Monitor
	st := NewStatus(&out, 10*time.Second)
	if st.Terminal() {
		t.Fatal("a strings.Builder is a terminal")
	}
	for ms := 0; ms <= 2500; ms += 100 {
		mon.Publish(sampleSnapshot(time.Duration(ms) * time.Millisecond))
		st.Show(&mon)
	}
	st.Close(&mon)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "  1.0/10s") || !strings.HasPrefix(lines[3], "  2.5/10s") || strings.Contains(out.String(), "\r") {
		t.Errorf("%d lines:\n%s", len(lines), out.String())
	}
}
