package wire

import (
	"testing"
	"time"
)

func TestProtocolAsACodec(t *testing.T) {
	layout := testLayout(t)
	now := time.Duration(0)
	send := &Protocol{Layout: layout, Sends: Sample, Clock: func() time.Duration { return now }}
	receive := &Protocol{Layout: layout}
	values := make([]float64, 2)
	var bodies [][]byte
	for i := range 4 {
		now = time.Duration(i) * time.Millisecond
		bodies = append(bodies, send.Append(nil, []float64{float64(i), 0.5}))
	}
	var other Sender
	other.next = 9
	heartbeat := other.Heartbeat(nil, 0, 0)
	for _, tc := range []struct {
		body []byte
		want error
		v0   float64
	}{
		{bodies[0], nil, 0},
		{bodies[2], nil, 2},
		{bodies[2], ErrStale, 2},
		{bodies[1], ErrStale, 2},
		{bodies[3][:10], ErrShort, 2},
		{heartbeat, ErrNoValues, 2},
	} {
		if err := receive.Decode(tc.body, values); err != tc.want || values[0] != tc.v0 {
			t.Errorf("%v, values %v; want %v, %v", err, values, tc.want, tc.v0)
		}
	}
	if h := receive.Last(); h.Type != Heartbeat || h.Seq != 9 {
		t.Errorf("last %+v", h)
	}
	// Numbers 0, 2 (1 missed), 2 again, 1 (late: no longer missed), 9
	// (3 to 8 missed).
	if st := receive.Tracker.Stats(); st.Messages != 5 || st.Malformed != 1 || st.Missed != 6 || st.Gaps != 2 || st.Duplicates != 1 || st.Late != 1 {
		t.Errorf("stats %+v", st)
	}
	if m, _ := Parse(bodies[3]); m.Time != 3*time.Millisecond || m.Seq != 3 {
		t.Errorf("stamped %+v", m.Header)
	}
	if a := testing.AllocsPerRun(100, func() {
		b := send.Append(bodies[0][:0], values)
		receive.Decode(b, values)
	}); a != 0 {
		t.Errorf("%v allocations", a)
	}
}

// BenchmarkMessageRoundTrip: a sample of 4 f32 signals numbered, stamped,
// CRC'd and COBS-framed, then decoded, parsed, tracked and its values
// read: the per-frame cost on each side of a link.
func BenchmarkMessageRoundTrip(b *testing.B) {
	layout, _ := NewStruct([]Field{{Type: F32LE}, {Type: F32LE}, {Type: F32LE}, {Type: F32LE}})
	var s Sender
	var tr Tracker
	dec := COBS{}.NewDecoder(DefaultMaxMessage)
	values := []float64{1, 2, 3, 4}
	body := make([]byte, 0, 64)
	frame := make([]byte, 0, 80)
	emit := func(f []byte, at time.Duration) {
		m, _, err := tr.Receive(f, at)
		if err != nil || m.Values(layout, values) != nil {
			b.Fatal("a frame lost")
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		body = s.Values(body[:0], Sample, time.Duration(i), layout, values)
		frame = COBS{}.Append(frame[:0], body)
		dec.Feed(frame, time.Duration(i), emit)
	}
	b.SetBytes(int64(len(frame)))
}
