package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func framings(t testing.TB) []Framing {
	var out []Framing
	for _, spec := range []struct {
		name string
		o    FramingOptions
	}{
		{"line", FramingOptions{}},
		{"line", FramingOptions{Delimiter: []byte("\r\n")}},
		{"line", FramingOptions{AnyLineEnd: true, Delimiter: []byte("\r\n")}},
		{"line", FramingOptions{AnyLineEnd: true, Delimiter: []byte("\r")}},
		{"slip", FramingOptions{}},
		{"cobs", FramingOptions{}},
	} {
		f, err := NewFraming(spec.name, spec.o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// decodeAll feeds data to a fresh decoder in the given chunk sizes. It
// fails the test if, after any chunk, the decoder's stats do not account
// for every byte fed.
func decodeAll(t testing.TB, f Framing, data []byte, chunks []int, max int) ([][]byte, DecoderStats) {
	d := f.NewDecoder(max)
	var frames [][]byte
	emit := func(frame []byte, _ time.Duration) { frames = append(frames, bytes.Clone(frame)) }
	fed := uint64(0)
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(chunks) > 0 {
			n = min(chunks[i%len(chunks)], len(data))
		}
		d.Feed(data[:n], time.Duration(i), emit)
		fed += uint64(n)
		data = data[n:]
		checkAccounting(t, f, d.Stats(), fed, uint64(len(frames)))
	}
	d.Gap(emit)
	s := d.Stats()
	checkAccounting(t, f, s, fed, uint64(len(frames)))
	if s.BadFrames != d.Errors() {
		t.Fatalf("%s: Errors %d, BadFrames %d", f.Name(), d.Errors(), s.BadFrames)
	}
	return frames, s
}

func checkAccounting(t testing.TB, f Framing, s DecoderStats, fed, frames uint64) {
	t.Helper()
	if s.Bytes != fed || s.FrameBytes+s.BadBytes+s.IdleBytes+s.Pending != fed || s.Frames != frames {
		t.Fatalf("%s: fed %d bytes, %d frames emitted; stats %+v do not add up", f.Name(), fed, frames, s)
	}
}

func names(f Framing) string {
	switch l := f.(type) {
	case Line:
		return fmt.Sprintf("line %q", l.Delimiter)
	case AnyLine:
		return fmt.Sprintf("any line end, writing %q", l.Delimiter)
	}
	return f.Name()
}

func TestFramingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range framings(t) {
		for trial := range 200 {
			var payloads [][]byte
			var wire []byte
			for range 1 + r.IntN(10) {
				p := make([]byte, r.IntN(600))
				for i := range p {
					p[i] = byte(r.IntN(256))
					if trial%2 == 0 {
						p[i] = []byte{0, 0xC0, 0xDB, 0xDC, 0xDD, '\n', '\r', 'a'}[r.IntN(8)] // the special bytes
					}
				}
				switch l := f.(type) {
				case Line:
					p = bytes.ReplaceAll(p, l.Delimiter, []byte("x")) // a line cannot contain its delimiter
				case AnyLine:
					p = bytes.ReplaceAll(bytes.ReplaceAll(p, []byte("\r"), []byte("x")), []byte("\n"), []byte("x"))
				}
				if _, isSLIP := f.(SLIP); isSLIP && len(p) == 0 {
					continue // SLIP ignores empty frames
				}
				payloads = append(payloads, p)
				wire = f.Append(wire, p)
			}
			got, stats := decodeAll(t, f, wire, []int{1 + r.IntN(7), 1 + r.IntN(300)}, 1000)
			if stats.BadFrames != 0 || len(got) != len(payloads) {
				t.Fatalf("%s: %d frames (%d errors), want %d", names(f), len(got), stats.BadFrames, len(payloads))
			}
			if stats.Pending != 0 || stats.FrameBytes+stats.IdleBytes != uint64(len(wire)) {
				t.Fatalf("%s: %+v for %d bytes of whole frames", names(f), stats, len(wire))
			}
			for i := range got {
				if !bytes.Equal(got[i], payloads[i]) {
					t.Fatalf("%s: frame %d = %x, want %x", names(f), i, got[i], payloads[i])
				}
			}
		}
	}
}

func TestFramingDecoding(t *testing.T) {
	line, _ := NewFraming("line", FramingOptions{})
	anyEnd, _ := NewFraming("line", FramingOptions{AnyLineEnd: true})
	// stats are frame bytes, bad frames, bad bytes, idle bytes, pending.
	type stats struct{ frameBytes, badFrames, badBytes, idleBytes, pending uint64 }
	tests := []struct {
		name   string
		f      Framing
		wire   string
		chunks []int
		max    int
		want   []string
		stats  stats
	}{
		{"lines", line, "a\nbc\n\nd", nil, 10, []string{"a", "bc", ""}, stats{6, 0, 0, 0, 1}},
		{"a too long line is dropped, the next kept", line, "0123456789abc\nok\n", []int{3}, 10, []string{"ok"}, stats{3, 1, 14, 0, 0}},
		{"CR, LF and CRLF end lines", anyEnd, "a\rb\nc\r\nd\r\re", nil, 10, []string{"a", "b", "c", "d", ""}, stats{10, 0, 0, 0, 1}},
		{"a CRLF split between reads is one line end", anyEnd, "a\r\nb\n", []int{2}, 10, []string{"a", "b"}, stats{5, 0, 0, 0, 0}},
		{"the LF of a too long line's CRLF is the bad line's", anyEnd, "0123456789ab\r\nok\n", []int{5}, 10, []string{"ok"}, stats{3, 1, 14, 0, 0}},
		{"LF LF is an empty line, CR LF is not", anyEnd, "\n\n\r\n", nil, 10, []string{"", "", ""}, stats{4, 0, 0, 0, 0}},
		{"slip", SLIP{}, "\xc0ab\xdb\xdcc\xc0\xc0\xc0d\xdb\xdd\xc0", nil, 10, []string{"ab\xc0c", "d\xdb"}, stats{10, 0, 0, 3, 0}},
		{"slip bad escape drops the frame", SLIP{}, "\xc0a\xdbxb\xc0c\xc0", nil, 10, []string{"c"}, stats{2, 1, 5, 1, 0}},
		{"slip too long", SLIP{}, "0123456789ab\xc0xy\xc0", []int{4}, 10, []string{"xy"}, stats{3, 1, 13, 0, 0}},
		{"slip cut", SLIP{}, "\xc0ab\xc0cd", nil, 10, []string{"ab"}, stats{3, 0, 0, 1, 2}},
		{"cobs", COBS{}, "\x03ab\x02c\x00\x01\x01\x00", nil, 10, []string{"ab\x00c", "\x00"}, stats{9, 0, 0, 0, 0}},
		{"cobs block past the end", COBS{}, "\x05ab\x00\x02z\x00", nil, 10, []string{"z"}, stats{3, 1, 4, 0, 0}},
		{"cobs zeros between frames", COBS{}, "\x00\x00\x02z\x00\x00", nil, 10, []string{"z"}, stats{3, 0, 0, 3, 0}},
		{"cobs too long", COBS{}, "\x0d0123456789ab\x00\x02z\x00", []int{3}, 10, []string{"z"}, stats{3, 1, 14, 0, 0}},
		{"fixed", Fixed{Size: 3}, "abcdefg", []int{2}, 10, []string{"abc", "def"}, stats{6, 0, 0, 0, 1}},
		{"idle ends at the gap", Idle{}, "abc", []int{1}, 10, []string{"abc"}, stats{3, 0, 0, 0, 0}},
		{"idle too long", Idle{}, "0123456789ab", []int{5}, 10, nil, stats{0, 1, 12, 0, 0}},
	}
	for _, tc := range tests {
		got, st := decodeAll(t, tc.f, []byte(tc.wire), tc.chunks, tc.max)
		var s []string
		for _, g := range got {
			s = append(s, string(g))
		}
		if fmt.Sprint(s) != fmt.Sprint(tc.want) || len(s) != len(tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
		}
		if g := (stats{st.FrameBytes, st.BadFrames, st.BadBytes, st.IdleBytes, st.Pending}); g != tc.stats {
			t.Errorf("%s: frame bytes, bad frames, bad bytes, idle bytes, pending %v, want %v", tc.name, g, tc.stats)
		}
	}
}

func TestDiscardCountsTheCutFrame(t *testing.T) {
	// Payloads of 8 bytes, so that the fixed framing frames them too.
	for _, f := range append(framings(t), Fixed{Size: 8}, Idle{}) {
		d := f.NewDecoder(64)
		wire := f.Append(nil, []byte("complete"))
		wire = append(wire, f.Append(nil, []byte("cutframe"))[:3]...)
		var frames []string
		emit := func(frame []byte, _ time.Duration) { frames = append(frames, string(frame)) }
		d.Feed(wire, 0, emit)
		if _, idle := f.(Idle); idle {
			frames = []string{"complete"} // the idle framing has one frame pending
		}
		before := d.Stats()
		d.Discard()
		after := d.Stats()
		if after.Pending != 0 || after.BadFrames != before.BadFrames+1 || after.BadBytes != before.BadBytes+before.Pending || before.Pending == 0 {
			t.Errorf("%s: discarding took %+v to %+v", names(f), before, after)
		}
		// What follows the cut decodes.
		d.Feed(f.Append(nil, []byte("nextone!")), 1, emit)
		d.Gap(emit)
		if len(frames) != 2 || frames[0] != "complete" || frames[1] != "nextone!" {
			t.Errorf("%s: %q after the cut", names(f), frames)
		}
		d.Discard()
		if s := d.Stats(); s.BadFrames != after.BadFrames {
			t.Errorf("%s: discarding nothing counted a bad frame", names(f))
		}
	}
}

func TestIdleStampsTheLastByte(t *testing.T) {
	d := Idle{}.NewDecoder(100)
	var at time.Duration
	d.Feed([]byte("ab"), 5, nil)
	d.Feed([]byte("c"), 9, nil)
	d.Gap(func(_ []byte, t time.Duration) { at = t })
	if at != 9 {
		t.Errorf("frame stamped %v, want the time of its last byte (9)", at)
	}
}

func TestDecodersDoNotAllocate(t *testing.T) {
	for _, f := range append(framings(t), Fixed{Size: 16}, Idle{}) {
		d := f.NewDecoder(256)
		wire := f.Append(nil, []byte("0123456789abcdef\xc0\xdb\x00"))
		emit := func([]byte, time.Duration) {}
		if allocs := testing.AllocsPerRun(100, func() { d.Feed(wire, 1, emit); d.Gap(emit) }); allocs != 0 {
			t.Errorf("%s: %v allocations per frame", f.Name(), allocs)
		}
	}
}

// fuzzDecoder checks that any input decodes without panic, within the
// maximum size, in any chunking, with every byte accounted for; and that
// encoding what was decoded and decoding it again gives the same frames.
func fuzzDecoder(f *testing.F, framing Framing) {
	f.Add([]byte("hello\n"), uint8(3))
	f.Add([]byte("a\r\nb\r\r\n\n"), uint8(1))
	f.Add(framing.Append(nil, []byte("\x00\xc0\xdb\n payload")), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		const max = 64
		frames, _ := decodeAll(t, framing, data, []int{int(chunk%16) + 1}, max)
		var again []byte
		for _, fr := range frames {
			if len(fr) > max+len("\r\n") {
				t.Fatalf("frame of %d bytes over the %d maximum", len(fr), max)
			}
			again = framing.Append(again, fr)
		}
		round, st := decodeAll(t, framing, again, nil, max)
		if st.BadFrames != 0 || len(round) != len(frames) {
			t.Fatalf("re-encoded frames decode to %d (%d errors), want %d", len(round), st.BadFrames, len(frames))
		}
		for i := range round {
			if !bytes.Equal(round[i], frames[i]) {
				t.Fatalf("frame %d changed on the round trip", i)
			}
		}
	})
}

func FuzzLine(f *testing.F)    { fuzzDecoder(f, Line{Delimiter: []byte("\r\n")}) }
func FuzzAnyLine(f *testing.F) { fuzzDecoder(f, AnyLine{Delimiter: []byte("\r\n")}) }
func FuzzSLIP(f *testing.F)    { fuzzDecoder(f, SLIP{}) }
func FuzzCOBS(f *testing.F)    { fuzzDecoder(f, COBS{}) }
func FuzzFixed(f *testing.F)   { fuzzDecoder(f, Fixed{Size: 5}) }
func FuzzIdle(f *testing.F)    { fuzzDecoder(f, Idle{}) }
