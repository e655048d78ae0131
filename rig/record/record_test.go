package record_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
)

// TestAsyncWriterNeverBlocks publishes 10 records into a ring of 4 slots
// while the writer is stuck on the first (as behind a disk far behind):
// publishing never waits, the 6 that do not fit are counted as dropped, and
// Close writes out the 4 in order.
func TestAsyncWriterNeverBlocks(t *testing.T) {
	stuck := make(chan struct{})
	var b strings.Builder
	w := record.NewWriter(&b, []byte("n\n"), 4, nil, func(dst []byte, r *int) []byte {
		<-stuck
		return append(append(dst, byte('0'+*r)), '\n')
	})
	for i := range 10 {
		if slot := w.Next(); slot != nil {
			*slot = i
			w.Publish()
		}
	}
	close(stuck)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if c := w.Account(); b.String() != "n\n0\n1\n2\n3\n" || c != (record.Account{Written: 4, Dropped: 6}) {
		t.Fatalf("wrote %q, %+v", b.String(), c)
	}
}

func TestTraceRows(t *testing.T) {
	for _, tc := range []struct {
		real bool
		want string
	}{
		{false, "flow,seq,bytes,t_send,t_recv,status\n" +
			"up,7,100,1.000000000,1.005000000,delivered\n" +
			"up,8,100,1.001000000,,loss_drop\n"},
		{true, "flow,seq,bytes,t_send,t_recv,status,t_due\n" +
			"up,7,100,1.000000000,1.005000000,delivered,1.004990000\n" +
			"up,8,100,1.001000000,,loss_drop,\n" +
			"up,9,100,1.002000000,,egress_drop,1.007000000\n"},
	} {
		var b strings.Builder
		tr := record.NewTrace(&b, []string{"up", "quiet"}, []bool{true, false}, tc.real)
		s := time.Second
		tr.Add(record.TraceRow{Seq: 7, Size: 100, Sent: s, Recv: s + 5*time.Millisecond, Due: s + 4990*time.Microsecond, Status: emulator.Delivered})
		tr.Add(record.TraceRow{Seq: 8, Size: 100, Sent: s + time.Millisecond, Recv: -1, Due: -1, Status: emulator.LossDrop})
		tr.Add(record.TraceRow{Flow: 1, Seq: 1, Size: 10, Sent: s, Recv: s, Due: s, Status: emulator.Delivered}) // not traced
		if tc.real {
			tr.Add(record.TraceRow{Seq: 9, Size: 100, Sent: s + 2*time.Millisecond, Recv: -1, Due: s + 7*time.Millisecond, Status: record.EgressDrop})
		}
		if err := tr.Close(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("real %v:\n%s\nwant\n%s", tc.real, b.String(), tc.want)
		}
	}
}

func TestAppendSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0.000000000", 1: "0.000000001", 1500 * time.Millisecond: "1.500000000",
		-2*time.Second - 5: "-2.000000005", 86400 * time.Second: "86400.000000000",
	} {
		if got := string(record.AppendSeconds(nil, d)); got != want {
			t.Errorf("%d ns: %q, want %q", d, got, want)
		}
	}
}
