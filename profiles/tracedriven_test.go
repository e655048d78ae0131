package profiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// FuzzTraceSeries: any file given as a recorded delay or loss series is
// read into a series or refused with positioned errors; nothing panics.
func FuzzTraceSeries(f *testing.F) {
	f.Add("flow,seq,bytes,t_send,t_recv,status\nm2s,0,100,0.001000000,0.006000000,delivered\nm2s,1,100,0.002000000,,loss_drop\n", false)
	f.Add("flow,seq,bytes,t_send,t_recv,status\nm2s,0,100,0.001000000,0.006000000,delivered\nm2s,1,100,0.002000000,,loss_drop\n", true)
	f.Add("5ms\n7.5ms # a comment\n\n12ms\n", false)
	f.Add("0\n1\n1\n0\n", true)
	f.Add("flow,seq,bytes,t_send,t_recv,status\nx,y\n", true)
	f.Add("flow,seq,bytes,t_send,t_recv,status\nm2s,0,100,0.001000000,0.006000000,delivered\nm2s,0,100,0.001000000,0.006500000,duplicate\nm2s,1,100,0.002000000,,in_flight\nm2s,1,100,0.002000000,,queue_drop\n", true)
	f.Add("flow,seq,bytes,t_send,t_recv,status,t_due\nm2s,0,29,0.010000000,0.012000000,delivered,0.011000000\ncontroller,,,0.015000000,,fault_raised,\nm2s,1,29,0.020000000,,egress_drop,0.023000000\n", false)
	f.Fuzz(func(t *testing.T, content string, loss bool) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "series.csv"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		key := "delay: {trace: series.csv}"
		if loss {
			key = "loss: {trace: series.csv}"
		}
		l, err := Parse(filepath.Join(dir, "p.yaml"), []byte("duration: 1s\nhops:\n  h: {"+key+"}\nflows:\n  m2s: {route: [h]}\n"))
		if err != nil {
			var list lang.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("not a positioned error: %v", err)
			}
			return
		}
		h := l.Config.Hops[0]
		if loss && h.Loss == nil || !loss && len(h.DelayTrace) == 0 {
			t.Fatalf("accepted, but no series: %+v", h)
		}
	})
}

// TestTraceSeries reads the series of hilrig traces and plain files: one
// value per frame sent, none for the copies a hop's duplication made
// (rows with their original's seq and status duplicate: 58 of 200 frames
// replayed another frame's fate when copies counted too), rows that are not frames skipped (a run's events), only
// the followed flow's rows read; and mistakes at their file's line and
// column (issue 16, items 1, 3, 4, 5 and 7).
func TestTraceSeries(t *testing.T) {
	const head = "flow,seq,bytes,t_send,t_recv,status\n"
	const runHead = "flow,seq,bytes,t_send,t_recv,status,t_due\n"
	ms := time.Millisecond
	for _, tc := range []struct {
		name, content, ref string // ref: the {trace: ...} value
		delays             []time.Duration
		lost               []bool
		err                string // the file's name is series.csv
	}{
		{name: "copies", ref: "series.csv", content: head +
			"f,0,10,0.000000000,0.005000000,delivered\n" +
			"f,0,10,0.000000000,0.006000000,duplicate\n" +
			"f,1,10,0.010000000,,loss_drop\n" +
			"f,3,10,0.030000000,0.038000000,duplicate\n" + // before its original
			"f,2,10,0.020000000,0.027000000,corrupted\n" +
			"f,3,10,0.030000000,0.039000000,delivered\n" +
			"f,4,10,0.040000000,,queue_drop\n" +
			"f,5,10,0.050000000,,in_flight\n", // its fate not known
			delays: []time.Duration{5 * ms, 7 * ms, 9 * ms}, lost: []bool{false, true, false, false, true}},
		{name: "a run's trace", ref: "{file: series.csv, flow: m2s}", content: runHead +
			"m2s,0,29,0.010000000,0.012000000,delivered,0.011000000\n" +
			"controller,,,0.015000000,,fault_raised,\n" +
			"s2m,x,?,bad,,whatever,\n" + // another flow's rows are not read
			"plant,,,0.016000000,,out_of_sync,\n" +
			"m2s,1,29,0.020000000,,egress_drop,0.023000000\n" +
			"m2s,2,29,0.030000000,0.034000000,delivered,0.033500000\n",
			delays: []time.Duration{2 * ms, 4 * ms}, lost: []bool{false, true, false}},
		{name: "a run's only flow", ref: "series.csv", content: runHead +
			"controller,,,0.005000000,,watchdog_tripped,\n" +
			"m2s,0,29,0.010000000,0.012000000,delivered,0.011000000\n",
			delays: []time.Duration{2 * ms}, lost: []bool{false}},
		{name: "several flows", ref: "series.csv", content: runHead +
			"m2s,0,29,0.010000000,0.012000000,delivered,0.011000000\n" +
			"s2m,x,?,bad,,whatever,\n",
			err: `p.yaml:3:22: hops.h.X.trace: DIR/series.csv holds flows m2s, s2m: say which to follow (flow)`},
		{name: "negative delay", ref: "series.csv", content: head +
			"f,0,10,0.000000000,0.005000000,delivered\n" +
			"f,1,10,0.020000000,0.015000000,delivered\n",
			err: `DIR/series.csv:3:20: hops.h.X.trace.file: t_recv 0.015000000 is before t_send 0.020000000: a delay cannot be negative`},
		{name: "unknown status", ref: "{file: series.csv}", content: head + "a,0,10,0.1,,bogus\n",
			err: `DIR/series.csv:2:13: hops.h.X.trace.file: "bogus" is not a frame's status (want in_flight, delivered, queue_drop, outage_drop, loss_drop, corrupted, duplicate, collision_drop, egress_drop)`},
		{name: "arrived without t_recv", ref: "series.csv", content: head + "a,0,10,0.1,,delivered\n",
			err: `DIR/series.csv:2:12: hops.h.X.trace.file: a frame that arrived (delivered) has a t_recv`},
		{name: "bad seq", ref: "series.csv", content: head + "a,zero,10,0.1,,loss_drop\n",
			err: `DIR/series.csv:2:3: hops.h.X.trace.file: "zero" is not a sequence number`},
		{name: "no file, short", ref: "none.csv", err: `p.yaml:3:22: hops.h.X.trace.file: cannot read DIR/none.csv: no such file`},
		{name: "no file, long", ref: "{file: none.csv}", err: `p.yaml:3:29: hops.h.X.trace.file: cannot read DIR/none.csv: no such file`},
	} {
		for _, loss := range []bool{false, true} {
			key := map[bool]string{false: "delay", true: "loss"}[loss]
			t.Run(tc.name+"/"+key, func(t *testing.T) {
				dir := t.TempDir()
				if tc.content != "" {
					if err := os.WriteFile(filepath.Join(dir, "series.csv"), []byte(tc.content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p, err := Parse(filepath.Join(dir, "p.yaml"), []byte("duration: 1s\nhops:\n  h: {"+key+": {trace: "+tc.ref+"}}\nflows:\n  m2s: {route: [h]}\n"))
				if tc.err != "" {
					want := strings.ReplaceAll(strings.ReplaceAll(tc.err, "DIR", dir), ".X.", "."+key+".")
					if loss {
						want = strings.Replace(want, "p.yaml:3:22:", "p.yaml:3:21:", 1)
						want = strings.Replace(want, "p.yaml:3:29:", "p.yaml:3:28:", 1)
					}
					if got := strings.ReplaceAll(fmt.Sprint(err), filepath.Join(dir, "p.yaml"), "p.yaml"); got != want {
						t.Errorf("got\n  %s\nwant\n  %s", got, want)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				h := p.Config.Hops[0]
				if !loss && !reflect.DeepEqual(h.DelayTrace, tc.delays) {
					t.Errorf("delays %v, want %v", h.DelayTrace, tc.delays)
				}
				if loss && !reflect.DeepEqual(h.Loss, emulator.LossTrace{Lost: tc.lost}) {
					t.Errorf("loss %v, want %v", h.Loss, tc.lost)
				}
			})
		}
	}
}

// TestBareNumbersNameTheUnitKey: a plain file of bare numbers says which
// key would give their unit, the series' own, not a jitter's.
func TestBareNumbersNameTheUnitKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "d.txt"), []byte("12.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Parse(filepath.Join(dir, "p.yaml"), []byte("duration: 1s\nhops:\n  l7: {delay: {trace: d.txt}}\nflows:\n  f: {route: [l7]}\n"))
	want := filepath.Join(dir, "d.txt") + `:1:1: hops.l7.delay.trace.file: "12.5" is not a duration (want e.g. 1.5ms, 2s, 250us); write each value with its unit, or say the unit of bare numbers (hops.l7.delay.trace.unit: ms)`
	if fmt.Sprint(err) != want {
		t.Errorf("got\n  %v\nwant\n  %s", err, want)
	}
}
