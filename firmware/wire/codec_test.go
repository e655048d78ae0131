package wire

import (
	"math"
	"strings"
	"testing"
)

func TestCSV(t *testing.T) {
	c := CSV{}
	values := []float64{1.5, -0.001, 1e6, math.Pi}
	line := c.Append(nil, values)
	if string(line) != "1.5,-0.001,1e+06,3.141592653589793" {
		t.Errorf("encoded %q", line)
	}
	got := make([]float64, 4)
	if err := c.Decode(line, got); err != nil || got[3] != math.Pi || got[1] != -0.001 {
		t.Errorf("decoded %v, %v", got, err)
	}
	if err := c.Decode([]byte(" 2 ,3\r"), got[:2]); err != nil || got[0] != 2 || got[1] != 3 {
		t.Errorf("spaces and CR: %v, %v", got[:2], err)
	}
	if got := string(CSV{Precision: 3}.Append(nil, []float64{math.Pi})); got != "3.14" {
		t.Errorf("precision 3: %q", got)
	}
	for _, tc := range []struct{ in, want string }{
		{"1,2", "more than 1 values"},
		{"", `value 1: "" is not a number`},
		{"x", `value 1: "x" is not a number`},
	} {
		if err := c.Decode([]byte(tc.in), got[:1]); err == nil || err.Error() != tc.want {
			t.Errorf("%q: %v, want %s", tc.in, err, tc.want)
		}
	}
	if err := c.Decode([]byte("1"), got[:2]); err == nil || err.Error() != "1 values, want 2" {
		t.Errorf("too few: %v", err)
	}
}

func TestStruct(t *testing.T) {
	s, err := NewStruct([]Field{
		{Type: F64LE},
		{Type: F32BE},
		{Type: I16LE, Scale: 0.01},
		{Type: U8, Scale: 2, Offset: 100},
		{Type: I8},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Size() != 8+4+2+1+1 {
		t.Errorf("size %d", s.Size())
	}
	in := []float64{math.Pi, 1.25, -1.234, 150, 1000}
	frame := s.Append(nil, in)
	out := make([]float64, 5)
	if err := s.Decode(frame, out); err != nil {
		t.Fatal(err)
	}
	// f64 exact; f32 to 2^-24 relative; i16 at 0.01 steps; u8 at 2 from
	// 100; i8 clamped to 127.
	want := []float64{math.Pi, 1.25, -1.23, 150, 127}
	for i := range want {
		if math.Abs(out[i]-want[i]) > 1e-12 {
			t.Errorf("field %d: %v, want %v", i, out[i], want[i])
		}
	}
	if frame[12] != 0x85 || frame[13] != 0xff { // −123 as i16 little-endian
		t.Errorf("i16 bytes % x", frame[12:14])
	}
	if err := s.Decode(frame[:3], out); err == nil || err.Error() != "3 bytes, want 16" {
		t.Errorf("short frame: %v", err)
	}
	if _, err := NewStruct([]Field{{Type: "f16"}}); err == nil || !strings.Contains(err.Error(), `no type "f16"`) {
		t.Errorf("bad type: %v", err)
	}
}

func TestCodecsAllocateNothing(t *testing.T) {
	s, _ := NewStruct([]Field{{Type: F32LE}, {Type: I16BE, Scale: 0.1}})
	values := []float64{1.5, -2.5}
	buf := make([]byte, 0, 64)
	for _, c := range []Codec{CSV{}, s} {
		frame := c.Append(buf[:0], values)
		if a := testing.AllocsPerRun(100, func() {
			frame = c.Append(buf[:0], values)
			c.Decode(frame, values)
		}); a != 0 {
			t.Errorf("%s: %v allocations", c, a)
		}
	}
}

func FuzzCSV(f *testing.F) {
	f.Add([]byte("1.5,-2"), 2)
	f.Add([]byte("nan,inf,-inf"), 3)
	f.Add([]byte("1e999,"), 2)
	f.Fuzz(func(t *testing.T, payload []byte, n int) {
		if n < 0 || n > 16 {
			return
		}
		values := make([]float64, n)
		if (CSV{}).Decode(payload, values) != nil {
			return
		}
		// What decodes re-encodes to a line that decodes the same.
		again := make([]float64, n)
		if err := (CSV{}).Decode(CSV{}.Append(nil, values), again); err != nil {
			t.Fatalf("%q decoded to %v, which does not round-trip: %v", payload, values, err)
		}
		for i := range values {
			if again[i] != values[i] && !(math.IsNaN(again[i]) && math.IsNaN(values[i])) {
				t.Fatalf("%v became %v", values, again)
			}
		}
	})
}

func FuzzStruct(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	s, _ := NewStruct([]Field{{Type: F64BE}, {Type: U16LE, Scale: 0.5, Offset: -3}, {Type: I8}})
	f.Fuzz(func(t *testing.T, payload []byte) {
		values := make([]float64, 3)
		if s.Decode(payload, values) != nil {
			if len(payload) == s.Size() {
				t.Fatal("a frame of the right size was refused")
			}
			return
		}
		// A frame decodes and re-encodes to itself (NaN payloads aside).
		if again := s.Append(nil, values); string(again) != string(payload) && !math.IsNaN(values[0]) {
			t.Fatalf("% x became % x", payload, again)
		}
	})
}
