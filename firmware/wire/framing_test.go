package wire

import (
	"bytes"
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

// decodeAll feeds data to a fresh decoder in the given chunk sizes.
func decodeAll(f Framing, data []byte, chunks []int, max int) ([][]byte, uint64) {
	d := f.NewDecoder(max)
	var frames [][]byte
	emit := func(frame []byte, _ time.Duration) { frames = append(frames, bytes.Clone(frame)) }
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(chunks) > 0 {
			n = min(chunks[i%len(chunks)], len(data))
		}
		d.Feed(data[:n], time.Duration(i), emit)
		data = data[n:]
	}
	d.Gap(emit)
	return frames, d.Errors()
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
				if _, isLine := f.(Line); isLine {
					p = bytes.ReplaceAll(p, f.(Line).Delimiter, []byte("x")) // a line cannot contain its delimiter
				}
				if _, isSLIP := f.(SLIP); isSLIP && len(p) == 0 {
					continue // SLIP ignores empty frames
				}
				payloads = append(payloads, p)
				wire = f.Append(wire, p)
			}
			got, errs := decodeAll(f, wire, []int{1 + r.IntN(7), 1 + r.IntN(300)}, 1000)
			if errs != 0 || len(got) != len(payloads) {
				t.Fatalf("%s: %d frames (%d errors), want %d", f.Name(), len(got), errs, len(payloads))
			}
			for i := range got {
				if !bytes.Equal(got[i], payloads[i]) {
					t.Fatalf("%s: frame %d = %x, want %x", f.Name(), i, got[i], payloads[i])
				}
			}
		}
	}
}

func TestFramingDecoding(t *testing.T) {
	line, _ := NewFraming("line", FramingOptions{})
	tests := []struct {
		name   string
		f      Framing
		wire   string
		chunks []int
		max    int
		want   []string
		errors uint64
	}{
		{"lines", line, "a\nbc\n\nd", nil, 10, []string{"a", "bc", ""}, 0},
		{"a too long line is dropped, the next kept", line, "0123456789abc\nok\n", []int{3}, 10, []string{"ok"}, 1},
		{"slip", SLIP{}, "\xc0ab\xdb\xdcc\xc0\xc0\xc0d\xdb\xdd\xc0", nil, 10, []string{"ab\xc0c", "d\xdb"}, 0},
		{"slip bad escape drops the frame", SLIP{}, "\xc0a\xdbxb\xc0c\xc0", nil, 10, []string{"c"}, 1},
		{"slip too long", SLIP{}, "0123456789ab\xc0xy\xc0", []int{4}, 10, []string{"xy"}, 1},
		{"cobs", COBS{}, "\x03ab\x02c\x00\x01\x01\x00", nil, 10, []string{"ab\x00c", "\x00"}, 0},
		{"cobs block past the end", COBS{}, "\x05ab\x00\x02z\x00", nil, 10, []string{"z"}, 1},
		{"fixed", Fixed{Size: 3}, "abcdefg", []int{2}, 10, []string{"abc", "def"}, 0},
		{"idle ends at the gap", Idle{}, "abc", []int{1}, 10, []string{"abc"}, 0},
		{"idle too long", Idle{}, "0123456789ab", []int{5}, 10, nil, 1},
	}
	for _, tc := range tests {
		got, errs := decodeAll(tc.f, []byte(tc.wire), tc.chunks, tc.max)
		var s []string
		for _, g := range got {
			s = append(s, string(g))
		}
		if len(s) != len(tc.want) || errs != tc.errors {
			t.Errorf("%s: %q with %d errors, want %q with %d", tc.name, s, errs, tc.want, tc.errors)
			continue
		}
		for i := range s {
			if s[i] != tc.want[i] {
				t.Errorf("%s: %q, want %q", tc.name, s, tc.want)
			}
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
// maximum size, in any chunking; and that encoding what was decoded and
// decoding it again gives the same frames.
func fuzzDecoder(f *testing.F, framing Framing) {
	f.Add([]byte("hello\n"), uint8(3))
	f.Add(framing.Append(nil, []byte("\x00\xc0\xdb\n payload")), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		const max = 64
		frames, _ := decodeAll(framing, data, []int{int(chunk%16) + 1}, max)
		var again []byte
		for _, fr := range frames {
			if len(fr) > max+len("\r\n") {
				t.Fatalf("frame of %d bytes over the %d maximum", len(fr), max)
			}
			again = framing.Append(again, fr)
		}
		round, errs := decodeAll(framing, again, nil, max)
		if errs != 0 || len(round) != len(frames) {
			t.Fatalf("re-encoded frames decode to %d (%d errors), want %d", len(round), errs, len(frames))
		}
		for i := range round {
			if !bytes.Equal(round[i], frames[i]) {
				t.Fatalf("frame %d changed on the round trip", i)
			}
		}
	})
}

func FuzzLine(f *testing.F)  { fuzzDecoder(f, Line{Delimiter: []byte("\r\n")}) }
func FuzzSLIP(f *testing.F)  { fuzzDecoder(f, SLIP{}) }
func FuzzCOBS(f *testing.F)  { fuzzDecoder(f, COBS{}) }
func FuzzFixed(f *testing.F) { fuzzDecoder(f, Fixed{Size: 5}) }
func FuzzIdle(f *testing.F)  { fuzzDecoder(f, Idle{}) }
