package fmu

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestSprintf: FMI 2 messages are formatted as C's printf would, from the
// arguments where the calling convention put them: integers in the
// registers left, then on the stack; doubles in their own registers, then
// on the stack in the order of the arguments.
func TestSprintf(t *testing.T) {
	strs := map[uintptr]string{100: "fmi2DoStep", 200: "x"}
	read := func(p uintptr) string { return strs[p] }
	bits := func(f float64) uintptr { return uintptr(math.Float64bits(f)) }
	for _, tc := range []struct {
		format string
		args   varargs
		want   string
	}{
		{"deliberate error at t = %g in %s (mode %d)", varargs{ints: []uintptr{100}, stack: []uintptr{2}, floats: []float64{0.5}}, "deliberate error at t = 0.5 in fmi2DoStep (mode 2)"},
		{"100%% done", varargs{}, "100% done"},
		{"%5.2f|%-4d|%04x|%+d|%u", varargs{ints: []uintptr{7, 255, ^uintptr(0), ^uintptr(0)}, floats: []float64{3.14159}}, " 3.14|7   |00ff|-1|4294967295"},
		{"%ld %lu %zu", varargs{ints: []uintptr{^uintptr(0), ^uintptr(0), 12}}, "-1 18446744073709551615 12"},
		{"%e %E %G", varargs{floats: []float64{12345.678, 0.5, 1e-10}}, "1.234568e+04 5.000000E-01 1E-10"},
		{"%c%c %p %s", varargs{ints: []uintptr{'o', 'k', 0xdead, 0}}, "ok 0xdead (null)"},
		{"%*d|%.*f", varargs{ints: []uintptr{5, 42, 2}, floats: []float64{2.718}}, "   42|2.72"},
		// Nine doubles: the ninth is on the stack, after the integers that
		// did not fit in registers, in argument order.
		{"%g %g %g %g %g %g %g %g %s %g %d", varargs{ints: nil, stack: []uintptr{200, bits(9), 10}, floats: []float64{1, 2, 3, 4, 5, 6, 7, 8}}, "1 2 3 4 5 6 7 8 x 9 10"},
		{"%d and %d", varargs{ints: []uintptr{1}}, "1 and %d"}, // arguments run out: the rest as written
		{"%Lf is long", varargs{floats: []float64{1}}, "%Lf is long"},
		{"%n", varargs{ints: []uintptr{0}}, "%n"},
		{"trailing %", varargs{}, "trailing %"},
	} {
		args := tc.args
		if got := sprintf(tc.format, &args, read); got != tc.want {
			t.Errorf("sprintf(%q) = %q; want %q", tc.format, got, tc.want)
		}
	}
}

// TestLogTail: the log keeps its last TailLines messages, oldest first,
// each cut to MaxLine bytes on a character boundary, and counts them all.
func TestLogTail(t *testing.T) {
	var l Log
	for i := range 40 {
		l.add("fmi2Warning", "cat", fmt.Sprintf("message %d", i))
	}
	tail := l.Tail(0)
	if len(tail) != TailLines || tail[0] != "fmi2Warning cat: message 24" || tail[TailLines-1] != "fmi2Warning cat: message 39" {
		t.Errorf("tail %q", tail)
	}
	if last := l.Tail(2); len(last) != 2 || last[1] != "fmi2Warning cat: message 39" {
		t.Errorf("last two %q", last)
	}
	l.add("fmi3Error", "", strings.Repeat("é", MaxLine))
	line := l.Tail(1)[0]
	if !strings.HasSuffix(line, "é…") || len(line) > MaxLine+len("…") || !strings.HasPrefix(line, "fmi3Error: é") {
		t.Errorf("a long message kept as %d bytes ending %q", len(line), line[len(line)-8:])
	}
	// "message 0" … "message 9" are 9 bytes, the next 30 are 10, and é is 2.
	if lines, bytes := l.Counts(); lines != 41 || bytes != 10*9+30*10+2*MaxLine {
		t.Errorf("counted %d messages, %d bytes", lines, bytes)
	}
}

// FuzzSprintf: whatever an FMU's format and arguments, formatting its
// message never panics and never reads a string the format does not ask
// for.
func FuzzSprintf(f *testing.F) {
	f.Add("deliberate error at t = %g in %s (mode %d)", uint64(100), uint64(2), 0.5)
	f.Add("%*.*f|%-08.3e|%lld|%zu|%c|%p|%%|%n|%Lf", uint64(5), uint64(2), 3.14)
	f.Add("%s%s%s%s%s%s%s%s", uint64(1), uint64(2), 1.0)
	f.Fuzz(func(t *testing.T, format string, i0, i1 uint64, f0 float64) {
		args := varargs{ints: []uintptr{uintptr(i0)}, stack: []uintptr{uintptr(i1), uintptr(i0)}, floats: []float64{f0}}
		sprintf(format, &args, func(p uintptr) string {
			if p != uintptr(i0) && p != uintptr(i1) {
				t.Fatalf("read a string at %#x, which no argument holds", p)
			}
			return "s"
		})
	})
}
