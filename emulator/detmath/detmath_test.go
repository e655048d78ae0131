package detmath

import (
	"math"
	"math/cmplx"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// function is one of the package's functions beside Go's own, with
// where Go's computes exactly what ours does: where it is the code ours
// is ported from (not assembly of its own) and the compiler does not
// fuse.
type function struct {
	name   string
	ours   func(x, y float64) float64
	gos    func(x, y float64) float64
	same   func(x float64) bool // on this build, for this x
	x0, x1 float64              // the range random arguments are drawn from
	y0, y1 float64
}

func re(z complex128) float64 { return real(z) }
func im(z complex128) float64 { return imag(z) }

var (
	pureGo = !compilerFuses && runtime.GOARCH != "s390x"
	// amd64Exp: Go's Exp is amd64's assembly on its FMA path.
	amd64Exp = runtime.GOARCH == "amd64" && cpu.X86.HasAVX && cpu.X86.HasFMA
	// goLog: Go's Log is FreeBSD's, or amd64's assembly, which is the
	// same but for subnormal numbers.
	goLog = func(x float64) bool {
		return pureGo && (runtime.GOARCH != "amd64" || !(x > 0 && x < 0x1p-1022))
	}
	everywhere  = func(float64) bool { return pureGo }
	notOn386    = func(float64) bool { return pureGo && runtime.GOARCH != "386" } // Hypot is x87 there
	onAmd64Exp  = func(float64) bool { return amd64Exp }
	withExpOnly = func(float64) bool { return amd64Exp && pureGo }
)

var functions = []function{
	{"Exp", func(x, _ float64) float64 { return Exp(x) }, func(x, _ float64) float64 { return math.Exp(x) }, onAmd64Exp, -750, 750, 0, 0},
	{"Log", func(x, _ float64) float64 { return Log(x) }, func(x, _ float64) float64 { return math.Log(x) }, goLog, 0, 1e6, 0, 0},
	{"Log10", func(x, _ float64) float64 { return Log10(x) }, func(x, _ float64) float64 { return math.Log10(x) }, goLog, 0, 1e6, 0, 0},
	{"Log1p", func(x, _ float64) float64 { return Log1p(x) }, func(x, _ float64) float64 { return math.Log1p(x) }, everywhere, -1, 3, 0, 0},
	{"Pow", Pow, math.Pow, func(x float64) bool { return withExpOnly(x) && goLog(x) }, 0, 20, -8, 8},
	{"Tanh", func(x, _ float64) float64 { return Tanh(x) }, func(x, _ float64) float64 { return math.Tanh(x) }, withExpOnly, -25, 25, 0, 0},
	{"Sin", func(x, _ float64) float64 { return Sin(x) }, func(x, _ float64) float64 { return math.Sin(x) }, everywhere, -1e3, 1e3, 0, 0},
	{"Cos", func(x, _ float64) float64 { return Cos(x) }, func(x, _ float64) float64 { return math.Cos(x) }, everywhere, -1e3, 1e3, 0, 0},
	{"Sincos.sin", func(x, _ float64) float64 { s, _ := Sincos(x); return s }, func(x, _ float64) float64 { s, _ := math.Sincos(x); return s }, everywhere, -1e3, 1e3, 0, 0},
	{"Sincos.cos", func(x, _ float64) float64 { _, c := Sincos(x); return c }, func(x, _ float64) float64 { _, c := math.Sincos(x); return c }, everywhere, -1e3, 1e3, 0, 0},
	{"Tan", func(x, _ float64) float64 { return Tan(x) }, func(x, _ float64) float64 { return math.Tan(x) }, everywhere, -1e3, 1e3, 0, 0},
	{"Atan", func(x, _ float64) float64 { return Atan(x) }, func(x, _ float64) float64 { return math.Atan(x) }, everywhere, -20, 20, 0, 0},
	{"Atan2", Atan2, math.Atan2, everywhere, -2, 2, -2, 2},
	{"Asin", func(x, _ float64) float64 { return Asin(x) }, func(x, _ float64) float64 { return math.Asin(x) }, everywhere, -1, 1, 0, 0},
	{"Acos", func(x, _ float64) float64 { return Acos(x) }, func(x, _ float64) float64 { return math.Acos(x) }, everywhere, -1, 1, 0, 0},
	{"Hypot", Hypot, math.Hypot, notOn386, -1e3, 1e3, -1e3, 1e3},
	{"Mul.re", func(x, y float64) float64 { return re(Mul(complex(x, y), complex(y, -x/3))) }, func(x, y float64) float64 { return re(mulNoInline(complex(x, y), complex(y, -x/3))) }, everywhere, -1e3, 1e3, -1e3, 1e3},
	{"Mul.im", func(x, y float64) float64 { return im(Mul(complex(x, y), complex(y, -x/3))) }, func(x, y float64) float64 { return im(mulNoInline(complex(x, y), complex(y, -x/3))) }, everywhere, -1e3, 1e3, -1e3, 1e3},
	{"Div.re", func(x, y float64) float64 { return re(Div(complex(x, y), complex(y, x/3))) }, func(x, y float64) float64 { return re(complex(x, y) / complex(y, x/3)) }, everywhere, -1e3, 1e3, -1e3, 1e3},
	{"Div.im", func(x, y float64) float64 { return im(Div(complex(x, y), complex(y, x/3))) }, func(x, y float64) float64 { return im(complex(x, y) / complex(y, x/3)) }, everywhere, -1e3, 1e3, -1e3, 1e3},
	{"Abs", func(x, y float64) float64 { return Abs(complex(x, y)) }, func(x, y float64) float64 { return cmplx.Abs(complex(x, y)) }, notOn386, -1e3, 1e3, -1e3, 1e3},
	{"Cis.re", func(x, _ float64) float64 { return re(Cis(x)) }, func(x, _ float64) float64 { return re(cmplx.Exp(complex(0, x))) }, everywhere, -1e3, 1e3, 0, 0},
	{"Cis.im", func(x, _ float64) float64 { return im(Cis(x)) }, func(x, _ float64) float64 { return im(cmplx.Exp(complex(0, x))) }, everywhere, -1e3, 1e3, 0, 0},
}

//go:noinline
func mulNoInline(x, y complex128) complex128 { return x * y }

// special are arguments at the edges: zeros, infinities, NaN, the
// extremes, the points where the algorithms change branches.
var special = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, -2, 0.625, 0.66, 0.7, 2.41421356237309504880,
	math.Pi / 4, math.Pi / 2, math.Pi, 3 * math.Pi / 4, 1 << 29, 1<<29 + 1, 1e300, -1e300, 1 << 53, 1<<53 + 2, 1e-300, 5e-324,
	math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 709.78, 709.79, -745.13, -745.14, 1.0 / (1 << 28),
	math.Inf(1), math.Inf(-1), math.NaN(), 0.4142135623730950488, -0.2928932188134524755, 1.0 / (1 << 29), 1.0 / (1 << 54), 1e-14}

// xorshift gives the same arguments on every architecture.
type xorshift uint64

func (s *xorshift) float(lo, hi float64) float64 {
	*s ^= *s << 13
	*s ^= *s >> 7
	*s ^= *s << 17
	u := float64(uint64(*s)>>11) * 0x1p-53
	return lo + float64(u*(hi-lo)) // not fused: the same arguments everywhere
}

// arguments calls each with the function's special and random arguments.
func (f function) arguments(n int, each func(x, y float64)) {
	for _, x := range special {
		for _, y := range special {
			each(x, y)
		}
	}
	s := xorshift(88172645463325252)
	for range n {
		each(s.float(f.x0, f.x1), s.float(f.y0, f.y1))
	}
}

// bitsOf is v's bits, every NaN's the same: which NaN an operation makes
// (its sign, its payload) is the processor's, as IEEE 754 allows, and
// none is ever printed other than as NaN.
func bitsOf(v float64) uint64 {
	if math.IsNaN(v) {
		return 0x7ff8000000000000
	}
	return math.Float64bits(v)
}

func sameBits(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || math.IsNaN(a) && math.IsNaN(b)
}

// TestMatchesGoMath: where Go's math runs the code this package is
// ported from, without fusing (Exp on amd64 with FMA; the rest on 32-bit
// arm, and but for Hypot's x87 assembly on 386; amd64 at its default
// level for most), each function returns Go's bits for every argument
// tried.
func TestMatchesGoMath(t *testing.T) {
	var compared []string
	for _, f := range functions {
		n, bad := 0, 0
		f.arguments(100_000, func(x, y float64) {
			if !f.same(x) {
				return
			}
			n++
			if got, want := f.ours(x, y), f.gos(x, y); !sameBits(got, want) && bad < 10 {
				bad++
				t.Errorf("%s(%v, %v) = %v (%#x); Go's math gives %v (%#x)", f.name, x, y, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		})
		if n > 0 {
			compared = append(compared, f.name)
		}
	}
	t.Logf("compared with Go's math on %s: %d of %d functions, %v", runtime.GOARCH, len(compared), len(functions), compared)
}

// FuzzMatchesGoMath looks for an argument where a function and Go's
// differ, where they are comparable (see TestMatchesGoMath).
func FuzzMatchesGoMath(f *testing.F) {
	for _, x := range special {
		f.Add(x, 0.5)
	}
	f.Fuzz(func(t *testing.T, x, y float64) {
		for _, fn := range functions {
			if !fn.same(x) {
				continue
			}
			if got, want := fn.ours(x, y), fn.gos(x, y); !sameBits(got, want) {
				t.Errorf("%s(%v, %v) = %v (%#x); Go's math gives %v (%#x)", fn.name, x, y, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	})
}

// sameEverywhere is the FNV-1a hash of each function's bits over its
// arguments (special and 20 000 random), as computed on amd64. A build
// on another architecture, or one where the compiler fuses (GOAMD64=v3,
// arm64), must give the same: .ci/run runs this test under qemu-user.
var sameEverywhere = map[string]uint64{
	"Exp":        0xc5c14a2bd3215059,
	"Log":        0xbfd9bca7acaeeb00,
	"Log10":      0x1d8f28613fca1a5f,
	"Log1p":      0xa74c21bdec1f6cd2,
	"Pow":        0x7aa3e3159e3c7e41,
	"Tanh":       0x8563595b12ae439d,
	"Sin":        0x26270247301d88c5,
	"Cos":        0xe7df4da9b83bdf0c,
	"Sincos.sin": 0x26270247301d88c5,
	"Sincos.cos": 0xe7df4da9b83bdf0c,
	"Tan":        0x77cedc0cb9c8d797,
	"Atan":       0x8acd3150a21aa78b,
	"Atan2":      0xea73fb82b04cdb7e,
	"Asin":       0x10984284d3057cdf,
	"Acos":       0xd946a9d4bd5d4b0,
	"Hypot":      0x8324aa2eeb542ace,
	"Mul.re":     0x727ec1ff9690a0ed,
	"Mul.im":     0xfd238c983d21b15f,
	"Div.re":     0xba119436f1dcf751,
	"Div.im":     0xffa24b2bb3d85d,
	"Abs":        0x8324aa2eeb542ace,
	"Cis.re":     0xe7df4da9b83bdf0c,
	"Cis.im":     0x26270247301d88c5,
}

// TestSameBitsEverywhere: every function gives the same bits, for the
// same arguments, on whatever architecture the test was built for.
func TestSameBitsEverywhere(t *testing.T) {
	for _, f := range functions {
		h := uint64(14695981039346656037)
		f.arguments(20_000, func(x, y float64) {
			h ^= bitsOf(f.ours(x, y))
			h *= 1099511628211
		})
		if want, ok := sameEverywhere[f.name]; !ok || h != want {
			t.Errorf("%s: hash %#x on %s, want %#x (amd64)", f.name, h, runtime.GOARCH, want)
		}
	}
}
