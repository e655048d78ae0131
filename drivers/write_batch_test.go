package drivers

import (
	"fmt"
	"strings"
	"testing"
)

// TestStreamOutWritesABatchAtOnce: frames that leave together go in one
// write (the executor's burst after a stall was a write each, 2 µs apart
// on a pty); what the device does not take is accounted frame by frame as
// Write accounts it: whole frames taken, the frame whose head went taken
// with its rest owed, the frames after it refused.
func TestStreamOutWritesABatchAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		room     []int // per attempt
		batches  []int // frames per batch, "frame0", "frame1"... in order
		attempts int
		onLine   string
		taken    []int // per batch
		out      uint64
		refused  uint64
		owed     bool
	}{
		{"all taken in one attempt", nil, []int{3}, 1, "frame0\nframe1\nframe2\n", []int{3}, 3, 0, false},
		{"a batch of one is Write", nil, []int{1, 1}, 2, "frame0\nframe1\n", []int{1, 1}, 2, 0, false},
		{"nothing taken: all refused", []int{0}, []int{3}, 1, "", []int{0}, 0, 3, false},
		{"room for one and a head: the rest owed, the last refused", []int{10}, []int{3}, 1, "frame0\nfra", []int{2}, 1, 1, true},
		{"the rest owed goes first with the next batch", []int{10, 100}, []int{3, 2}, 3, "frame0\nframe1\nframe3\nframe4\n", []int{2, 2}, 4, 1, false},
		{"a rest that does not go refuses the whole batch", []int{10, 0, 100}, []int{3, 2, 1}, 4, "frame0\nframe1\nframe5\n", []int{2, 0, 1}, 3, 3, false},
		{"whole frames exactly", []int{14}, []int{3}, 1, "frame0\nframe1\n", []int{2}, 2, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counts atomicCounts
			w := newTestOut(&setClock{}, &noticed{}, &counts)
			dev := &countingLine{line: line{room: tc.room}}
			frame := 0
			var taken []int
			for _, k := range tc.batches {
				var batch [][]byte
				for range k {
					batch = append(batch, fmt.Appendf(nil, "frame%d", frame))
					frame++
				}
				n, err := w.writeBatch(dev, 1, batch)
				if (n < k) != (err != nil) {
					t.Errorf("batch of %d: %d taken, error %v", k, n, err)
				}
				taken = append(taken, n)
			}
			c := counts.snapshot()
			if dev.taken.String() != tc.onLine || fmt.Sprint(taken) != fmt.Sprint(tc.taken) || c.FramesOut != tc.out || c.NotTaken != tc.refused || counts.restOwed.Load() != tc.owed {
				t.Errorf("line %q, taken %v, %d out, %d not taken, owed %v; want %q, %v, %d, %d, %v",
					dev.taken.String(), taken, c.FramesOut, c.NotTaken, counts.restOwed.Load(), tc.onLine, tc.taken, tc.out, tc.refused, tc.owed)
			}
			if dev.attempts != tc.attempts {
				t.Errorf("%d write attempts, want %d", dev.attempts, tc.attempts)
			}
			if c.BytesOut != uint64(dev.taken.Len()) || !strings.HasSuffix(dev.taken.String(), "\n") && !tc.owed && dev.taken.Len() > 0 {
				t.Errorf("%d bytes out, %d on the line", c.BytesOut, dev.taken.Len())
			}
		})
	}
}

// countingLine is a line that counts its write attempts.
type countingLine struct {
	line
	attempts int
}

func (l *countingLine) Write(b []byte) (int, error) {
	l.attempts++
	return l.line.Write(b)
}

// TestWriteBatchAllocatesNothing: once its buffer has grown to a batch,
// writing batches of that size allocates nothing.
func TestWriteBatchAllocatesNothing(t *testing.T) {
	var counts atomicCounts
	w := newTestOut(&setClock{}, &noticed{}, &counts)
	dev := &line{}
	batch := [][]byte{[]byte("frame0"), []byte("frame1"), []byte("frame2")}
	w.writeBatch(dev, 1, batch)
	if allocs := testing.AllocsPerRun(100, func() {
		dev.taken.Reset()
		w.writeBatch(dev, 1, batch)
	}); allocs != 0 {
		t.Errorf("%v allocations per batch", allocs)
	}
}
