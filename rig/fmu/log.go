package fmu

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// Log is what an instance's FMU logged: the last lines, each cut to
// MaxLine bytes, and a count of everything, so that an FMU that logs
// megabytes a step costs the rig a bounded amount of memory.
type Log struct {
	mu    sync.Mutex
	ring  []string
	next  int
	lines uint64
	bytes uint64
	// mirror, when set, is given each line kept with the counts after it:
	// an isolated FMU's process copies its log to the rig with it.
	mirror func(line string, lines, bytes uint64)
}

const (
	// TailLines is how many of its last messages an instance keeps.
	TailLines = 16
	// MaxLine is the longest message kept, in bytes; a longer one is cut
	// and ends in "…".
	MaxLine = 512
)

// add keeps a message, cut to MaxLine, and counts it.
func (l *Log) add(status, category, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines++
	l.bytes += uint64(len(message))
	line := status
	if category != "" {
		line += " " + category
	}
	line += ": " + message
	if len(line) > MaxLine {
		line = strings.ToValidUTF8(line[:MaxLine], "") + "…"
	}
	if l.mirror != nil {
		l.mirror(line, l.lines, l.bytes)
	}
	l.keep(line)
}

// keep puts a line in the ring, over the oldest when it is full.
func (l *Log) keep(line string) {
	if len(l.ring) < TailLines {
		l.ring = append(l.ring, line)
		return
	}
	l.ring[l.next] = line
	l.next = (l.next + 1) % TailLines
}

// setMirror gives mirror the lines kept so far, each with its number, and
// then every line as it comes.
func (l *Log) setMirror(mirror func(line string, lines, bytes uint64)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	tail := l.tail()
	for i, line := range tail {
		mirror(line, l.lines-uint64(len(tail)-1-i), l.bytes)
	}
	l.mirror = mirror
}

// received keeps lines an isolated FMU logged, the last of them, and
// takes the counts of everything it logged.
func (l *Log) received(last []string, lines, bytes uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range last {
		l.keep(line)
	}
	l.lines, l.bytes = lines, bytes
}

// Tail is the last n messages kept (all kept when n ≤ 0), oldest first.
func (l *Log) Tail(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.tail()
	if n > 0 && len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// tail is the lines kept, oldest first.
func (l *Log) tail() []string {
	out := make([]string, 0, len(l.ring))
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}

// Counts is how many messages the FMU logged, and their bytes, kept or
// not.
func (l *Log) Counts() (lines, bytes uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines, l.bytes
}

// varargs are an FMI 2 log message's arguments as the C calling
// convention passed them: the integer registers left after the fixed
// arguments, the floating-point registers, and the stack slots, which hold
// whatever did not fit in registers in the order of the arguments.
type varargs struct {
	ints   []uintptr
	floats []float64
	stack  []uintptr
}

func (a *varargs) int() (uintptr, bool) {
	if len(a.ints) > 0 {
		v := a.ints[0]
		a.ints = a.ints[1:]
		return v, true
	}
	return a.fromStack()
}

func (a *varargs) float() (float64, bool) {
	if len(a.floats) > 0 {
		v := a.floats[0]
		a.floats = a.floats[1:]
		return v, true
	}
	v, ok := a.fromStack()
	return math.Float64frombits(uint64(v)), ok
}

func (a *varargs) fromStack() (uintptr, bool) {
	if len(a.stack) == 0 {
		return 0, false
	}
	v := a.stack[0]
	a.stack = a.stack[1:]
	return v, true
}

// sprintf formats an FMI 2 message the way C's printf would, for the
// conversions FMUs use (d i u x X o c s p e E f F g G a A, with flags,
// width, precision and length). readString reads a C string. When the
// arguments run out, or at a conversion it cannot take (long double, %n),
// the rest of the format is kept as written.
func sprintf(format string, args *varargs, readString func(uintptr) string) string {
	var b strings.Builder
	for i := 0; i < len(format); {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			i++
			continue
		}
		start := i
		i++
		if i < len(format) && format[i] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		flags := ""
		for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
			flags += string(format[i])
			i++
		}
		width, prec := "", ""
		// A width or precision is held to MaxLine: the message is cut there
		// anyway, and an FMU's %999999d would cost a megabyte.
		readNumber := func() (string, bool) {
			n, ok := 0, true
			if i < len(format) && format[i] == '*' {
				i++
				var v uintptr
				v, ok = args.int()
				n = int(int32(v))
			} else {
				j := i
				for i < len(format) && format[i] >= '0' && format[i] <= '9' {
					i++
				}
				if i == j {
					return "", true
				}
				n, _ = strconv.Atoi(format[j:min(i, j+6)])
			}
			return strconv.Itoa(max(min(n, MaxLine), -MaxLine)), ok
		}
		var ok bool
		if width, ok = readNumber(); !ok {
			return b.String() + format[start:]
		}
		if i < len(format) && format[i] == '.' {
			i++
			if prec, ok = readNumber(); !ok {
				return b.String() + format[start:]
			}
			if prec == "" {
				prec = "0"
			}
		}
		long := false
		for i < len(format) && strings.IndexByte("hlLqjzt", format[i]) >= 0 {
			if format[i] == 'L' {
				return b.String() + format[start:] // a long double: not in registers as a double
			}
			long = long || format[i] != 'h'
			i++
		}
		if i == len(format) {
			return b.String() + format[start:]
		}
		verb := format[i]
		i++
		spec := "%" + flags + width
		if prec != "" {
			spec += "." + prec
		}
		switch verb {
		case 'd', 'i':
			v, ok := args.int()
			if !ok {
				return b.String() + format[start:]
			}
			n := int64(int32(v))
			if long {
				n = int64(v)
			}
			fmt.Fprintf(&b, spec+"d", n)
		case 'u', 'x', 'X', 'o':
			v, ok := args.int()
			if !ok {
				return b.String() + format[start:]
			}
			n := uint64(uint32(v))
			if long {
				n = uint64(v)
			}
			goVerb := map[byte]string{'u': "d", 'x': "x", 'X': "X", 'o': "o"}[verb]
			fmt.Fprintf(&b, spec+goVerb, n)
		case 'c':
			v, ok := args.int()
			if !ok {
				return b.String() + format[start:]
			}
			fmt.Fprintf(&b, "%"+flags+width+"c", rune(byte(v)))
		case 's':
			v, ok := args.int()
			if !ok {
				return b.String() + format[start:]
			}
			s := "(null)"
			if v != 0 {
				s = readString(v)
			}
			fmt.Fprintf(&b, spec+"s", s)
		case 'p':
			v, ok := args.int()
			if !ok {
				return b.String() + format[start:]
			}
			fmt.Fprintf(&b, "%"+flags+width+"s", "0x"+strconv.FormatUint(uint64(v), 16))
		case 'e', 'E', 'f', 'F', 'g', 'G', 'a', 'A':
			v, ok := args.float()
			if !ok {
				return b.String() + format[start:]
			}
			if prec == "" && verb != 'a' && verb != 'A' {
				spec += ".6" // C's default precision
			}
			goVerb := map[byte]string{'e': "e", 'E': "E", 'f': "f", 'F': "f", 'g': "g", 'G': "G", 'a': "x", 'A': "X"}[verb]
			fmt.Fprintf(&b, spec+goVerb, v)
		default: // %n writes through a pointer, and anything else is unknown
			return b.String() + format[start:]
		}
	}
	return b.String()
}
