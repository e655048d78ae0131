package profiles_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/record"
)

// TestRunTraceStatuses replays a trace written by the run's own writer
// (rig/record, which profiles cannot import): its t_due column, its
// events' rows (no seq: a supervisor's, a heartbeat's) among the frames,
// a frame its device refused (egress_drop, a loss for the far end) and a
// frame of every status the engine has. Following either flow reads the
// series; the events are no flow (issue 16, item 3).
func TestRunTraceStatuses(t *testing.T) {
	var b bytes.Buffer
	tr := record.NewTrace(&b, []string{"m2s", "s2m", "controller", "plant"}, []bool{true, true, true, true}, true)
	ms := time.Millisecond
	var want []bool
	for seq, s := range append(statuses(), record.EgressDrop) {
		recv := time.Duration(-1)
		if s.Arrived() {
			recv = time.Duration(seq)*10*ms + 3*ms
		}
		tr.Add(record.TraceRow{Flow: 0, Seq: uint64(seq), Size: 29, Sent: time.Duration(seq) * 10 * ms, Recv: recv, Due: recv, Status: s})
		tr.Add(record.TraceRow{Flow: 2, Sent: time.Duration(seq) * 10 * ms, Recv: -1, Due: -1, Status: record.FaultRaised})
		tr.Add(record.TraceRow{Flow: 3, Sent: time.Duration(seq) * 10 * ms, Recv: -1, Due: -1, Status: record.OutOfSync})
		tr.Add(record.TraceRow{Flow: 1, Seq: uint64(seq), Size: 29, Sent: time.Duration(seq) * 10 * ms, Recv: -1, Due: -1, Status: emulator.LossDrop})
		if s != emulator.InFlight && s != emulator.Duplicate { // a lone copy says nothing of its original
			want = append(want, s.Dropped() || s == record.EgressDrop)
		}
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.csv"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for flow, lost := range map[string][]bool{"m2s": want, "s2m": {true, true, true, true, true, true, true, true, true}} {
		p, err := profiles.Parse(filepath.Join(dir, "p.yaml"), []byte("duration: 1s\nhops:\n  h: {delay: {trace: {file: run.csv, flow: m2s}}, loss: {trace: {file: run.csv, flow: "+flow+"}}}\nflows:\n  m2s: {route: [h]}\n"))
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if got := p.Config.Hops[0].Loss; !reflect.DeepEqual(got, emulator.LossTrace{Lost: lost}) {
			t.Errorf("%s: loss %v, want %v\n%s", flow, got, lost, b.String())
		}
		if got := p.Config.Hops[0].DelayTrace; len(got) != 2 || got[0] != 3*ms || got[1] != 3*ms {
			t.Errorf("delays %v, want the delivered and the corrupted frame's 3ms", got)
		}
	}
}

// statuses are the engine's, from its own names.
func statuses() []emulator.Status {
	var out []emulator.Status
	for _, name := range emulator.StatusNames() {
		s, ok := emulator.StatusNamed(name)
		if !ok {
			panic(name)
		}
		out = append(out, s)
	}
	return out
}
