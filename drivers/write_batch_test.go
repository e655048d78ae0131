package drivers

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
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
			if c.BytesOut != uint64(dev.taken.Len()) {
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

// FuzzStreamOutBatch: whatever the device takes at each attempt and
// however the frames are batched, the line carries, whole and in order,
// exactly the frames WriteBatch said were taken (but one whose rest is
// still owed at the end), and the counts agree with it.
func FuzzStreamOutBatch(f *testing.F) {
	f.Add([]byte{3, 0, 200, 5, 1, 1, 1}, []byte{3, 1, 4}, []byte("hello\xc0world\xdb!"))
	f.Add([]byte{0, 0, 0}, []byte{1}, []byte("abc"))
	f.Add([]byte{255}, []byte{7, 7}, []byte{0xc0, 0xc0, 0xdb})
	f.Fuzz(func(t *testing.T, room, sizes, payloads []byte) {
		slip, _ := wire.NewFraming("slip", wire.FramingOptions{})
		var counts atomicCounts
		w := newStreamOut(slip, 64, &counts)
		w.notices = newNotices(&setClock{}, &noticed{}, 0, "e", "d")
		dev := &line{}
		for _, r := range room {
			dev.room = append(dev.room, int(r)%60) // 0: not reading
		}
		dev.room = append(dev.room, 1<<20) // and at last everything
		var taken [][]byte
		written := 0
		for i := 0; len(payloads) > 0; i++ {
			k := 1
			if len(sizes) > 0 {
				k = 1 + int(sizes[i%len(sizes)])%6
			}
			var batch [][]byte
			for range k {
				if len(payloads) == 0 {
					break
				}
				n := min(len(payloads), 1+len(batch)%5)
				batch = append(batch, payloads[:n])
				payloads = payloads[n:]
			}
			n, err := w.writeBatch(dev, 1, batch)
			if n < 0 || n > len(batch) || (n < len(batch)) != (err != nil) || err != nil && !errors.Is(err, ErrNotReading) {
				t.Fatalf("batch of %d: %d taken, %v", len(batch), n, err)
			}
			taken = append(taken, batch[:n]...)
			written += len(batch)
		}
		want := taken
		if counts.restOwed.Load() {
			want = taken[:len(taken)-1]
		}
		var got [][]byte
		d := slip.NewDecoder(1 << 20)
		d.Feed(dev.taken.Bytes(), 0, func(frame []byte, _ time.Duration) { got = append(got, bytes.Clone(frame)) })
		c := counts.snapshot()
		if len(got) != len(want) || c.FramesOut != uint64(len(want)) || c.NotTaken != uint64(written-len(taken)) || d.Errors() != 0 {
			t.Fatalf("%d frames on the line, %d counted out, %d not taken (%d errors); want %d, %d, %d", len(got), c.FramesOut, c.NotTaken, d.Errors(), len(want), len(want), written-len(taken))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("frame %d on the line is %q; %q was taken", i, got[i], want[i])
			}
		}
		if c.BytesOut != uint64(dev.taken.Len()) {
			t.Fatalf("%d bytes out, %d on the line", c.BytesOut, dev.taken.Len())
		}
	})
}
