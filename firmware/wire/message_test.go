package wire

import (
	"bytes"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestCRC32CIsCastagnoli(t *testing.T) {
	if got := CRC32C([]byte("123456789")); got != 0xE3069283 {
		t.Errorf("check value %#08x, want 0xe3069283 (the CRC-32C catalogue's)", got)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		data := make([]byte, r.IntN(300))
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		if got, want := CRC32C(data), crc32.Checksum(data, table); got != want {
			t.Fatalf("% x: %#08x, hash/crc32 says %#08x", data, got, want)
		}
	}
}

func TestFieldTypeCodes(t *testing.T) {
	if len(fieldTypeCodes) != len(FieldTypes) {
		t.Fatalf("%d codes for %d field types", len(fieldTypeCodes), len(FieldTypes))
	}
	seen := map[byte]FieldType{}
	for _, ft := range FieldTypes {
		c := ft.Code()
		if c == 0 || seen[c] != "" {
			t.Errorf("%s: code %d (taken by %q)", ft, c, seen[c])
		}
		seen[c] = ft
		if back, ok := FieldTypeOfCode(c); !ok || back != ft {
			t.Errorf("code %d is %q, want %q", c, back, ft)
		}
	}
	for _, c := range []byte{0, 15, 255} {
		if ft, ok := FieldTypeOfCode(c); ok {
			t.Errorf("code %d is %q", c, ft)
		}
	}
	if FieldType("f16").Code() != 0 {
		t.Error("an unknown type has a code")
	}
}

func testLayout(t testing.TB) *Struct {
	s, err := NewStruct([]Field{{Type: F32LE}, {Type: I16LE, Scale: 0.01}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMessagesRoundTrip(t *testing.T) {
	layout := testLayout(t)
	var s Sender
	var body []byte
	check := func(typ Type, seq uint32, now time.Duration) Message {
		t.Helper()
		m, err := Parse(body)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if m.Type != typ || m.Seq != seq || m.Time != now {
			t.Fatalf("%s: header %+v, want type %s, seq %d, time %v", typ, m.Header, typ, seq, now)
		}
		if len(body) != Overhead+len(m.Payload) {
			t.Fatalf("%s: %d bytes for a payload of %d", typ, len(body), len(m.Payload))
		}
		return m
	}

	body = s.Values(body[:0], Sample, 1500*time.Millisecond, layout, []float64{1.25, -0.5})
	m := check(Sample, 0, 1500*time.Millisecond)
	got := make([]float64, 2)
	if err := m.Values(layout, got); err != nil || got[0] != 1.25 || math.Abs(got[1]+0.5) > 1e-12 {
		t.Errorf("values %v, %v", got, err)
	}
	if ft := m.FieldTypes(nil); len(ft) != 2 || ft[0] != F32LE || ft[1] != I16LE {
		t.Errorf("field types %v", ft)
	}

	body = s.Values(body[:0], Command, -time.Second, layout, []float64{3, 4})
	if m = check(Command, 1, -time.Second); m.Values(layout, got) != nil || got[0] != 3 || got[1] != 4 {
		t.Errorf("command values %v", got)
	}

	body = s.Heartbeat(body[:0], 2*time.Second, StatusFault|StatusSafe)
	if m = check(Heartbeat, 2, 2*time.Second); m.Status() != StatusFault|StatusSafe {
		t.Errorf("status %b", m.Status())
	}

	a := Acknowledgement{Seq: 0xDEADBEEF, Type: Command, Result: Rejected}
	body = s.Ack(body[:0], 3, a)
	if m = check(Ack, 3, 3); m.Acknowledgement() != a {
		t.Errorf("ack %+v, want %+v", m.Acknowledgement(), a)
	}

	// Time messages carry the next number without taking it.
	body = s.TimeRequest(body[:0], 4)
	check(TimeRequest, 4, 4)

	r := TimeReply{Requested: 4, Received: 1 << 40}
	body = s.TimeResponse(body[:0], 1<<41, r)
	if m = check(TimeResponse, 4, 1<<41); m.TimeReply() != r {
		t.Errorf("time reply %+v, want %+v", m.TimeReply(), r)
	}

	// Accessors of the wrong type give zero values, not garbage.
	if m.Status() != 0 || m.Acknowledgement() != (Acknowledgement{}) || m.Values(layout, got) != ErrPayload || m.FieldTypes(nil) != nil {
		t.Error("a time response answered as another type")
	}
}

func TestSenderNumbersSkipZeroOnWrap(t *testing.T) {
	s := Sender{next: math.MaxUint32 - 1}
	var seqs []uint32
	for range 4 {
		m, _ := Parse(s.Heartbeat(nil, 0, 0))
		seqs = append(seqs, m.Seq)
	}
	if want := []uint32{math.MaxUint32 - 1, math.MaxUint32, 1, 2}; !equalUint32(seqs, want) {
		t.Errorf("numbers %v, want %v", seqs, want)
	}
}

func equalUint32(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseRefusesWhatIsNoMessage(t *testing.T) {
	layout := testLayout(t)
	var s Sender
	good := s.Values(nil, Sample, time.Second, layout, []float64{1, 2})
	// reseal rewrites the CRC, so that the check behind it is reached.
	reseal := func(body []byte) []byte {
		body = bytes.Clone(body)
		n := len(body) - TrailerSize
		crc := CRC32C(body[:n])
		body[n], body[n+1], body[n+2], body[n+3] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
		return body
	}
	with := func(i int, b byte) []byte {
		body := bytes.Clone(good)
		body[i] = b
		return reseal(body)
	}
	tests := []struct {
		name string
		body []byte
		want error
	}{
		{"empty", nil, ErrShort},
		{"a header and no CRC", good[:HeaderSize], ErrShort},
		{"version 2", with(0, 2), ErrVersion},
		{"type 0", with(1, 0), ErrType},
		{"type 7", with(1, 7), ErrType},
		{"a field count over the payload", with(HeaderSize, 9), ErrPayload},
		{"an unknown field type", with(HeaderSize+1, 15), ErrPayload},
		{"a field type of another size", with(HeaderSize+1, F64LE.Code()), ErrPayload},
		{"a heartbeat with a sample's payload", with(1, byte(Heartbeat)), ErrPayload},
		{"an ack with a sample's payload", with(1, byte(Ack)), ErrPayload},
		{"a time request with a payload", with(1, byte(TimeRequest)), ErrPayload},
		{"a time response with a sample's payload", with(1, byte(TimeResponse)), ErrPayload},
		{"an empty sample", AppendMessage(nil, Header{Type: Sample}, nil), ErrPayload},
		{"a sample of no fields", AppendMessage(nil, Header{Type: Sample}, []byte{0}), nil},
	}
	for _, tc := range tests {
		if _, err := Parse(tc.body); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A CRC-32 detects every error of up to 3 bits in a frame this short
	// (and any burst of up to 32): flip each bit and each pair of
	// adjacent bits.
	for bit := range 8 * len(good) {
		for _, width := range []int{1, 2} {
			body := bytes.Clone(good)
			for b := bit; b < bit+width && b < 8*len(body); b++ {
				body[b/8] ^= 1 << (b % 8)
			}
			if _, err := Parse(body); err != ErrCRC {
				t.Fatalf("bits %d..%d flipped: %v, want %v", bit, bit+width-1, err, ErrCRC)
			}
		}
	}
}

func TestValuesRefusesAnotherLayout(t *testing.T) {
	var s Sender
	body := s.Values(nil, Sample, 0, testLayout(t), []float64{1, 2})
	m, err := Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	for _, fields := range [][]Field{
		{{Type: F32LE}},
		{{Type: F32LE}, {Type: I16BE}},
		{{Type: F32LE}, {Type: I16LE}, {Type: U8}},
	} {
		other, _ := NewStruct(fields)
		if err := m.Values(other, make([]float64, 3)); err != ErrLayout {
			t.Errorf("%v: %v, want %v", fields, err, ErrLayout)
		}
	}
	if err := m.Values(testLayout(t), make([]float64, 1)); err != ErrLayout {
		t.Errorf("no room for the values: %v", err)
	}
}

func TestTracker(t *testing.T) {
	type counts struct{ gaps, missed, duplicates, late, restarts uint64 }
	tests := []struct {
		name     string
		seqs     []uint32
		arrivals []Arrival
		want     counts
	}{
		{"in order", []uint32{0, 1, 2, 3}, []Arrival{InOrder, InOrder, InOrder, InOrder}, counts{}},
		{"joining a running sender", []uint32{500, 501}, []Arrival{InOrder, InOrder}, counts{}},
		{"a gap", []uint32{0, 1, 4, 5}, []Arrival{InOrder, InOrder, AfterGap, InOrder}, counts{gaps: 1, missed: 2}},
		{"a gap filled late", []uint32{0, 1, 4, 2, 3, 5}, []Arrival{InOrder, InOrder, AfterGap, Late, Late, InOrder}, counts{gaps: 1, late: 2}},
		{"swapped", []uint32{1, 3, 2, 4}, []Arrival{InOrder, AfterGap, Late, InOrder}, counts{gaps: 1, late: 1}},
		{"duplicates", []uint32{0, 1, 1, 2, 1, 0}, []Arrival{InOrder, InOrder, Duplicate, InOrder, Duplicate, Duplicate}, counts{duplicates: 3}},
		{"the first message twice", []uint32{0, 0, 1}, []Arrival{InOrder, Duplicate, InOrder}, counts{duplicates: 1}},
		{"older than the tracker", []uint32{10, 11, 9}, []Arrival{InOrder, InOrder, Late}, counts{late: 1}},
		{"far behind is a restart", []uint32{1000, 1001, 5}, []Arrival{InOrder, InOrder, Restarted}, counts{restarts: 1}},
		{"the edge of the window", []uint32{100, 101, 101 - window + 1, 101 - window}, []Arrival{InOrder, InOrder, Late, Restarted}, counts{late: 1, restarts: 1}},
		{"a gap longer than the window, then a late one", []uint32{1, 200, 150}, []Arrival{InOrder, AfterGap, Late}, counts{gaps: 1, missed: 197, late: 1}},
		// A sender skips 0 when it wraps: 0xFFFFFFFF is followed by 1.
		{"across the wrap", []uint32{math.MaxUint32 - 1, math.MaxUint32, 1, 3, 2}, []Arrival{InOrder, InOrder, InOrder, AfterGap, Late}, counts{gaps: 1, late: 1}},
		{"a gap across the wrap", []uint32{math.MaxUint32 - 1, 2, 1}, []Arrival{InOrder, AfterGap, Late}, counts{gaps: 1, missed: 1, late: 1}},
		{"late across the wrap", []uint32{math.MaxUint32 - 2, 1, math.MaxUint32, math.MaxUint32 - 1, 1}, []Arrival{InOrder, AfterGap, Late, Late, Duplicate}, counts{gaps: 1, late: 2, duplicates: 1}},
		{"behind across the wrap", []uint32{math.MaxUint32 - window + 2, 1, math.MaxUint32 - window + 3, math.MaxUint32 - window + 1}, []Arrival{InOrder, AfterGap, Late, Restarted}, counts{gaps: 1, missed: window - 3, late: 1, restarts: 1}},
	}
	for _, tc := range tests {
		var tr Tracker
		var s Sender
		for i, seq := range tc.seqs {
			s.next = seq
			body := s.Heartbeat(nil, time.Duration(seq), 0)
			m, arrival, err := tr.Receive(body, time.Duration(i))
			if err != nil || m.Seq != seq {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if arrival != tc.arrivals[i] {
				t.Errorf("%s: number %d (#%d) arrived %s, want %s", tc.name, seq, i, arrival, tc.arrivals[i])
			}
		}
		st := tr.Stats()
		if got := (counts{st.Gaps, st.Missed, st.Duplicates, st.Late, st.Restarts}); got != tc.want {
			t.Errorf("%s: gaps, missed, duplicates, late, restarts %+v, want %+v", tc.name, got, tc.want)
		}
		if st.Messages != uint64(len(tc.seqs)) {
			t.Errorf("%s: %d messages", tc.name, st.Messages)
		}
	}
}

// TestTrackerTellsARestartByItsTimes: a number received before but
// stamped with another time is no duplicate (a duplicate is a copy) but
// the first message of a sender that started again, its message 0 lost
// or itself 0; a copy of a message of a restarted sender is still a
// duplicate.
func TestTrackerTellsARestartByItsTimes(t *testing.T) {
	type msg struct {
		seq  uint32
		time time.Duration
	}
	tests := []struct {
		name     string
		msgs     []msg
		arrivals []Arrival
		restarts uint64
		dups     uint64
	}{
		{"message 0 lost", []msg{{0, 100}, {1, 101}, {2, 102}, {3, 103}, {10, 110}, {1, 5}, {2, 6}, {3, 7}},
			[]Arrival{InOrder, InOrder, InOrder, InOrder, AfterGap, Restarted, InOrder, InOrder}, 1, 0},
		{"0 and a fresh 0", []msg{{0, 100}, {0, 3}, {1, 4}}, []Arrival{InOrder, Restarted, InOrder}, 1, 0},
		{"0 and its copy", []msg{{0, 100}, {0, 100}, {1, 101}}, []Arrival{InOrder, Duplicate, InOrder}, 0, 1},
		// A copy of the 0 the stream began with (a hop that duplicates or
		// reorders) is no restart: only a 0 stamped anew is.
		{"0, 1, a copy of 0", []msg{{0, 100}, {1, 101}, {0, 100}, {2, 102}}, []Arrival{InOrder, InOrder, Duplicate, InOrder}, 0, 1},
		{"restart at 0", []msg{{0, 100}, {1, 101}, {2, 102}, {0, 3}, {1, 4}}, []Arrival{InOrder, InOrder, InOrder, Restarted, InOrder}, 1, 0},
		{"0 arriving late", []msg{{0, 100}, {2, 102}, {0, 100}, {1, 101}}, []Arrival{InOrder, AfterGap, Duplicate, Late}, 0, 1},
		{"a copy after a restart", []msg{{0, 100}, {1, 101}, {2, 102}, {1, 7}, {1, 7}, {2, 8}}, []Arrival{InOrder, InOrder, InOrder, Restarted, Duplicate, InOrder}, 1, 1},
		// A number never received cannot tell: late, until the next.
		{"a restart onto a gap", []msg{{0, 100}, {5, 105}, {3, 7}, {4, 8}, {5, 9}}, []Arrival{InOrder, AfterGap, Late, Late, Restarted}, 1, 0},
	}
	for _, tc := range tests {
		var tr Tracker
		for i, m := range tc.msgs {
			if got := tr.Observe(Header{Type: Heartbeat, Seq: m.seq, Time: m.time}, 0); got != tc.arrivals[i] {
				t.Errorf("%s: #%d (number %d at %d) arrived %s, want %s", tc.name, i, m.seq, m.time, got, tc.arrivals[i])
			}
		}
		if st := tr.Stats(); st.Restarts != tc.restarts || st.Duplicates != tc.dups {
			t.Errorf("%s: %d restarts, %d duplicates", tc.name, st.Restarts, st.Duplicates)
		}
	}
}

// TestValuesSizeIsChecked: a layout whose messages exceed a receiver's
// limit is refused when configured.
func TestValuesSizeIsChecked(t *testing.T) {
	fields := make([]Field, MaxFields)
	for i := range fields {
		fields[i] = Field{Type: U8}
	}
	big, _ := NewStruct(fields)
	if n := len(new(Sender).Values(nil, Sample, 0, big, make([]float64, MaxFields))); n != ValuesSize(big) || n != 529 {
		t.Errorf("a message of %d bytes, ValuesSize %d", n, ValuesSize(big))
	}
	if err := CheckValues(big, 0); err == nil {
		t.Error("255 u8 fields (529 bytes) accepted for 512")
	}
	if err := CheckValues(big, 529); err != nil {
		t.Error(err)
	}
	f64s := make([]Field, 32)
	for i := range f64s {
		f64s[i] = Field{Type: F64LE}
	}
	ok, _ := NewStruct(f64s)
	if err := CheckValues(ok, 0); err != nil {
		t.Errorf("32 f64: %v", err)
	}
}

// TestTimeMessagesAreOutsideTheStream: a third party's time requests
// (the rig's, numbered by its own Sender) and a device's answers, kept by
// that third party, leave the device's stream as its peer sees it without
// a gap, a duplicate or a restart.
func TestTimeMessagesAreOutsideTheStream(t *testing.T) {
	var peer, rig, device Sender
	var atDevice, atPeer Tracker
	layout := testLayout(t)
	for i := range 10 {
		now := time.Duration(i) * time.Millisecond
		// The peer's command and the rig's request reach the device.
		if _, a, err := atDevice.Receive(peer.Values(nil, Command, now, layout, []float64{1, 2}), now); err != nil || a != InOrder {
			t.Fatalf("command %d at the device: %s, %v", i, a, err)
		}
		req, a, err := atDevice.Receive(rig.TimeRequest(nil, now), now)
		if err != nil || a != InOrder {
			t.Fatalf("request %d: %s, %v", i, a, err)
		}
		// The device samples and answers; the rig keeps the answer, the
		// peer gets the sample.
		device.TimeResponse(nil, now, TimeReply{Requested: req.Time, Received: now})
		if _, a, err := atPeer.Receive(device.Values(nil, Sample, now, layout, []float64{3, 4}), now); err != nil || a != InOrder {
			t.Fatalf("sample %d at the peer: %s, %v", i, a, err)
		}
	}
	for _, st := range []LinkStats{atDevice.Stats(), atPeer.Stats()} {
		if st.Gaps != 0 || st.Missed != 0 || st.Duplicates != 0 || st.Late != 0 || st.Restarts != 0 {
			t.Errorf("stats %+v", st)
		}
	}
	if st := atDevice.Stats(); st.Messages != 20 {
		t.Errorf("%d messages at the device, want 20 (the time requests counted)", st.Messages)
	}
}

func TestTrackerCountsBadFramesAndKeepsTheLast(t *testing.T) {
	var tr Tracker
	var s Sender
	if _, _, ok := tr.Last(); ok {
		t.Error("a last message before any")
	}
	body := s.Heartbeat(nil, 5*time.Second, 0)
	tr.Receive(body, 6*time.Second)
	body[HeaderSize] ^= 1
	if _, _, err := tr.Receive(body, 7*time.Second); err != ErrCRC {
		t.Errorf("corrupted: %v", err)
	}
	if _, _, err := tr.Receive(body[:5], 7*time.Second); err != ErrShort {
		t.Errorf("short: %v", err)
	}
	tr.Receive(s.Heartbeat(nil, 8*time.Second, 0), 9*time.Second)
	s.next = 1
	tr.Receive(s.Heartbeat(nil, 8*time.Second, 0), 99*time.Second) // a duplicate (a copy, its time too): not the last
	h, at, ok := tr.Last()
	if !ok || h.Seq != 1 || h.Time != 8*time.Second || at != 9*time.Second {
		t.Errorf("last %+v at %v", h, at)
	}
	if st := tr.Stats(); st.CRCErrors != 1 || st.Malformed != 1 || st.Messages != 3 || st.Duplicates != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestStreamResynchronises damages a stream of framed messages in every
// way a line does (noise between frames, bits flipped, a frame cut short,
// bytes lost) and checks that at most the frame hit is lost: every
// message whose frame is intact arrives, and nothing arrives that was not
// sent.
func TestStreamResynchronises(t *testing.T) {
	layout := testLayout(t)
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 500 {
		var s Sender
		var stream []byte
		var frames [][]byte
		const n = 12
		for i := range n {
			body := s.Values(nil, Sample, time.Duration(i), layout, []float64{float64(i), float64(-i) / 100})
			frames = append(frames, COBS{}.Append(nil, body))
		}
		hit := 1 + r.IntN(n-2) // the frame damaged; the ones either side intact
		for i, f := range frames {
			if i != hit {
				stream = append(stream, f...)
				continue
			}
			switch trial % 4 {
			case 0: // noise before the frame, no zero in it: the two merge
				for range 1 + r.IntN(20) {
					stream = append(stream, byte(1+r.IntN(255)))
				}
				stream = append(stream, f...)
			case 1: // bits flipped inside
				f = bytes.Clone(f)
				for range 1 + r.IntN(3) {
					f[r.IntN(len(f)-1)] ^= 1 << r.IntN(8)
				}
				stream = append(stream, f...)
			case 2: // cut short: the tail and its delimiter lost
				stream = append(stream, f[:r.IntN(len(f)-1)]...)
			case 3: // the head lost: the frame starts mid-way
				stream = append(stream, f[1+r.IntN(len(f)-1):]...)
			}
		}
		dec := COBS{}.NewDecoder(DefaultMaxMessage)
		var tr Tracker
		var got []uint32
		values := make([]float64, 2)
		dec.Feed(stream, 0, func(frame []byte, at time.Duration) {
			m, _, err := tr.Receive(frame, at)
			if err != nil {
				return
			}
			if m.Values(layout, values) != nil || values[0] != float64(m.Seq) || m.Time != time.Duration(m.Seq) {
				t.Fatalf("trial %d: message %d came with %v at %v", trial, m.Seq, values, m.Time)
			}
			got = append(got, m.Seq)
		})
		for i := range n {
			if i == hit {
				continue
			}
			if !containsUint32(got, uint32(i)) {
				t.Fatalf("trial %d (damage %d to frame %d): frame %d lost; got %v", trial, trial%4, hit, i, got)
			}
		}
		st := tr.Stats()
		if ds := dec.Stats(); ds.Frames != st.Messages+st.CRCErrors+st.Malformed {
			t.Fatalf("trial %d: %d frames, %+v", trial, ds.Frames, st)
		}
	}
}

func containsUint32(s []uint32, v uint32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestProtocolAllocatesNothing(t *testing.T) {
	layout := testLayout(t)
	var s Sender
	var tr Tracker
	dec := COBS{}.NewDecoder(DefaultMaxMessage)
	body := make([]byte, 0, DefaultMaxMessage)
	frame := make([]byte, 0, 2*DefaultMaxMessage)
	values := []float64{1.5, -2.5}
	var c ClockEstimator
	emit := func(f []byte, at time.Duration) {
		m, _, err := tr.Receive(f, at)
		if err != nil {
			panic(err)
		}
		switch m.Type {
		case Sample:
			if err := m.Values(layout, values); err != nil {
				panic(err)
			}
		case TimeResponse:
			r := m.TimeReply()
			c.Add(TimeSample{T1: r.Requested, T2: r.Received, T3: m.Time, T4: at + time.Millisecond})
		}
	}
	now := time.Duration(0)
	if a := testing.AllocsPerRun(200, func() {
		now += time.Millisecond
		body = s.Values(body[:0], Sample, now, layout, values)
		frame = COBS{}.Append(frame[:0], body)
		body = s.Heartbeat(body[:0], now, StatusSafe)
		frame = COBS{}.Append(frame, body)
		body = s.TimeResponse(body[:0], now, TimeReply{Requested: now - time.Millisecond, Received: now})
		frame = COBS{}.Append(frame, body)
		dec.Feed(frame, now, emit)
		_ = c.OneWayDelay(now, now+time.Millisecond)
	}); a != 0 {
		t.Errorf("%v allocations per exchange", a)
	}
	if st := tr.Stats(); st.Messages < 600 || st.Gaps != 0 || c.Exchanges() != ClockWindow {
		t.Errorf("the exchanges did not happen: %+v, %d time exchanges", st, c.Exchanges())
	}
}

// FuzzParse: any bytes parse or are refused without panic; what parses
// re-encodes to the same bytes, and its accessors agree with its type.
func FuzzParse(f *testing.F) {
	layout := testLayout(f)
	var s Sender
	f.Add(s.Values(nil, Sample, time.Second, layout, []float64{1, 2}))
	f.Add(s.Heartbeat(nil, 1, StatusFault))
	f.Add(s.Ack(nil, 1, Acknowledgement{Seq: 1, Type: Command}))
	f.Add(s.TimeRequest(nil, 1))
	f.Add(s.TimeResponse(nil, 1, TimeReply{Requested: 1, Received: 2}))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Parse(body)
		if err != nil {
			if m.Payload != nil || m.Header != (Header{}) {
				t.Fatal("a refused message came with content")
			}
			return
		}
		if again := AppendMessage(nil, m.Header, m.Payload); !bytes.Equal(again, body) {
			t.Fatalf("% x re-encoded as % x", body, again)
		}
		values := make([]float64, MaxFields)
		switch m.Type {
		case Sample, Command:
			types := m.FieldTypes(nil)
			fields := make([]Field, len(types))
			for i, ft := range types {
				fields[i].Type = ft
			}
			st, err := NewStruct(fields)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Values(st, values); err != nil {
				t.Fatalf("its own layout: %v", err)
			}
		default:
			if m.Values(layout, values) != ErrPayload {
				t.Fatalf("values from a %s", m.Type)
			}
		}
	})
}

// FuzzStream: any byte stream through the COBS decoder and a Tracker:
// no panic, every byte and every frame accounted for.
func FuzzStream(f *testing.F) {
	layout := testLayout(f)
	var s Sender
	var stream []byte
	for i := range 4 {
		stream = COBS{}.Append(stream, s.Values(nil, Sample, time.Duration(i), layout, []float64{1, 2}))
	}
	f.Add(stream, uint8(7))
	f.Add(stream[5:40], uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		dec := COBS{}.NewDecoder(64)
		var tr Tracker
		frames := uint64(0)
		emit := func(frame []byte, at time.Duration) {
			frames++
			if len(frame) > 64 {
				t.Fatalf("a frame of %d bytes", len(frame))
			}
			tr.Receive(frame, at)
		}
		step := int(chunk%32) + 1
		for i := 0; i < len(data); i += step {
			dec.Feed(data[i:min(i+step, len(data))], time.Duration(i), emit)
		}
		ds, st := dec.Stats(), tr.Stats()
		if ds.Bytes != uint64(len(data)) || ds.FrameBytes+ds.BadBytes+ds.IdleBytes+ds.Pending != ds.Bytes {
			t.Fatalf("bytes unaccounted: %+v", ds)
		}
		if ds.Frames != frames || frames != st.Messages+st.CRCErrors+st.Malformed {
			t.Fatalf("%d frames, decoder %+v, tracker %+v", frames, ds, st)
		}
		if st.Late+st.Duplicates > st.Messages {
			t.Fatalf("tracker %+v", st)
		}
	})
}
