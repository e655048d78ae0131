// Copyright 2010 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package detmath

import "math"

// Go compiles complex128's * inline, and its / into a call of the
// runtime's complex128div, both with products the compiler may fuse;
// these are the same operations with each product rounded.

// Mul returns x·y, as x*y is compiled on an architecture that does not
// fuse: (a·c − b·d) + (a·d + b·c)i.
func Mul(x, y complex128) complex128 {
	a, b, c, d := real(x), imag(x), real(y), imag(y)
	return complex(float64(a*c)-float64(b*d), float64(a*d)+float64(b*c))
}

// Div returns n/m, as Go's runtime computes it (Smith's algorithm, with
// C99's infinities and zeros).
func Div(n, m complex128) complex128 {
	var e, f float64 // complex(e, f) = n/m
	if math.Abs(real(m)) >= math.Abs(imag(m)) {
		ratio := imag(m) / real(m)
		denom := real(m) + float64(ratio*imag(m))
		e = (real(n) + float64(imag(n)*ratio)) / denom
		f = (imag(n) - float64(real(n)*ratio)) / denom
	} else {
		ratio := real(m) / imag(m)
		denom := imag(m) + float64(ratio*real(m))
		e = (float64(real(n)*ratio) + imag(n)) / denom
		f = (float64(imag(n)*ratio) - real(n)) / denom
	}

	if math.IsNaN(e) && math.IsNaN(f) {
		// Correct final result to infinities and zeros if applicable.
		// Matches C99: ISO/IEC 9899:1999 - G.5.1  Multiplicative operators.
		a, b := real(n), imag(n)
		c, d := real(m), imag(m)
		inf := math.Inf(1)
		switch {
		case m == 0 && (!math.IsNaN(a) || !math.IsNaN(b)):
			e = math.Copysign(inf, c) * a
			f = math.Copysign(inf, c) * b
		case (math.IsInf(a, 0) || math.IsInf(b, 0)) && isFinite(c) && isFinite(d):
			a = infToOne(a)
			b = infToOne(b)
			e = inf * (float64(a*c) + float64(b*d))
			f = inf * (float64(b*c) - float64(a*d))
		case (math.IsInf(c, 0) || math.IsInf(d, 0)) && isFinite(a) && isFinite(b):
			c = infToOne(c)
			d = infToOne(d)
			e = 0 * (float64(a*c) + float64(b*d))
			f = 0 * (float64(b*c) - float64(a*d))
		}
	}
	return complex(e, f)
}

func isFinite(f float64) bool { return !math.IsNaN(f - f) }

// infToOne returns a signed 1 if f is an infinity and a signed 0 otherwise.
func infToOne(f float64) float64 {
	g := 0.0
	if math.IsInf(f, 0) {
		g = 1.0
	}
	return math.Copysign(g, f)
}

// Abs returns the modulus of z, as math/cmplx.Abs.
func Abs(z complex128) float64 { return Hypot(real(z), imag(z)) }

// Cis returns e^(iθ) = cos θ + i·sin θ, as math/cmplx.Exp(complex(0, θ))
// for a finite θ.
func Cis(theta float64) complex128 {
	s, c := Sincos(theta)
	return complex(c, s)
}
