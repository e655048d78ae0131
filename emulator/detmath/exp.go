// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package detmath

import "math"

// Exp returns e**x, as math.Exp (the same special cases) computes it on
// amd64, where Go's is assembly (after Naoki Shibata's SLEEF): a Taylor
// series of e**(r/16) − 1, squared four times, with the fused
// multiply-adds of its FMA path. math.FMA rounds once wherever it runs,
// so this gives amd64's bits everywhere, those the rig's results were
// recorded with. (Go's Exp on other architectures is another algorithm,
// FreeBSD's, whose last bit differs for about one argument in seven; on
// an amd64 without FMA, Go's takes a path without it, which differs
// too.)
func Exp(x float64) float64 {
	const (
		LN2U     = 0.69314718055966295651160180568695068359375           // upper half LN2
		LN2L     = 0.28235290563031577122588448175013436025525412068e-12 // lower half LN2
		LOG2E    = 1.4426950408889634073599246810018920                  // 1/LN2
		Overflow = 7.09782712893384e+02
	)
	if math.Float64bits(x)&^(1<<63) >= 0x7FF0000000000000 { // not finite
		if math.IsInf(x, -1) {
			return 0
		}
		return x // NaN or +Inf
	}
	if x > Overflow {
		return math.Inf(1)
	}
	// k = x/ln 2 to the nearest integer, even on a tie, as the processor
	// converts it (CVTSD2SL), or the "integer indefinite" −2³¹ where it
	// does not fit.
	k := int32(math.MinInt32)
	if t := math.RoundToEven(LOG2E * x); t >= math.MinInt32 {
		k = int32(t)
	}
	fk := float64(k)
	r := math.FMA(-fk, LN2U, x)
	r = math.FMA(-fk, LN2L, r)
	r *= 0.0625 // reduce the argument
	// Taylor series evaluation of e**r − 1.
	p := 2.4801587301587301587e-5
	for _, c := range [...]float64{1.9841269841269841270e-4, 1.3888888888888888889e-3, 8.3333333333333333333e-3,
		4.1666666666666666667e-2, 1.6666666666666666667e-1, 0.5, 1.0} {
		p = math.FMA(p, r, c)
	}
	// e**(16r) − 1 from e**r − 1 by squaring: (1+y)² − 1 = y·(y+2), each
	// product rounded before 2 is added to it, as the assembly does.
	y := float64(r * p)
	y = float64(y * (y + 2))
	y = float64(y * (y + 2))
	y = float64(y * (y + 2))
	y = math.FMA(y, y+2, 1)
	// y·2**k, through a subnormal in two steps.
	switch e := k + 0x3FF; {
	case e >= 0x7FF:
		return math.Inf(1)
	case e > 0:
		return y * math.Float64frombits(uint64(e)<<52)
	case e < -52:
		return 0
	default:
		return y * math.Float64frombits(uint64(e+0x3FE)<<52) * 0x1p-1022
	}
}

// Pow returns x**y, as math.Pow (the same special cases).
func Pow(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case y == 1:
		return x
	case math.IsNaN(x) || math.IsNaN(y):
		return math.NaN()
	case x == 0:
		switch {
		case y < 0:
			if math.Signbit(x) && isOddInt(y) {
				return math.Inf(-1)
			}
			return math.Inf(1)
		case y > 0:
			if math.Signbit(x) && isOddInt(y) {
				return x
			}
			return 0
		}
	case math.IsInf(y, 0):
		switch {
		case x == -1:
			return 1
		case (math.Abs(x) < 1) == math.IsInf(y, 1):
			return 0
		default:
			return math.Inf(1)
		}
	case math.IsInf(x, 0):
		if math.IsInf(x, -1) {
			return Pow(1/x, -y) // Pow(-0, -y)
		}
		switch {
		case y < 0:
			return 0
		case y > 0:
			return math.Inf(1)
		}
	case y == 0.5:
		return math.Sqrt(x)
	case y == -0.5:
		return 1 / math.Sqrt(x)
	}

	yi, yf := math.Modf(math.Abs(y))
	if yf != 0 && x < 0 {
		return math.NaN()
	}
	if yi >= 1<<63 {
		// yi is a large even int that will lead to overflow (or underflow to 0)
		// for all x except -1 (x == 1 was handled earlier)
		switch {
		case x == -1:
			return 1
		case (math.Abs(x) < 1) == (y > 0):
			return 0
		default:
			return math.Inf(1)
		}
	}

	// ans = a1 * 2**ae (= 1 for now).
	a1 := 1.0
	ae := 0

	// ans *= x**yf
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a1 = Exp(yf * Log(x))
	}

	// ans *= x**yi by multiplying in successive squarings of x according
	// to the bits of yi, accumulating powers of two into ae.
	x1, xe := math.Frexp(x)
	for i := int64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			// xe would overflow the shift below; ae += xe is already a
			// bound beyond a float64's exponent, so Ldexp gives 0 or Inf.
			ae += xe
			break
		}
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 = float64(x1 * x1) // not fused with the doubling below
		xe <<= 1
		if x1 < .5 {
			x1 += x1
			xe--
		}
	}

	// ans = a1*2**ae; if y < 0 { ans = 1 / ans }, in the opposite order.
	if y < 0 {
		a1 = 1 / a1
		ae = -ae
	}
	return math.Ldexp(a1, ae)
}

func isOddInt(x float64) bool {
	if math.Abs(x) >= (1 << 53) {
		// Every float64 this large is an even integer (and int64(xi)
		// below would overflow, which differs by architecture).
		return false
	}
	xi, xf := math.Modf(x)
	return xf == 0 && int64(xi)&1 == 1
}

// Tanh returns the hyperbolic tangent of x, as math.Tanh.
func Tanh(x float64) float64 {
	const MAXLOG = 8.8029691931113054295988e+01 // log(2**127)
	z := math.Abs(x)
	switch {
	case z > 0.5*MAXLOG:
		if x < 0 {
			return -1
		}
		return 1
	case z >= 0.625:
		s := Exp(2 * z)
		z = 1 - 2/(s+1)
		if x < 0 {
			z = -z
		}
	default:
		if x == 0 {
			return x
		}
		s := x * x
		p, q := horner(s, tanhP[:]), horner(s, tanhQ[:])
		z = x + x*s*p/q
	}
	return z
}

var tanhP = [...]float64{
	-9.64399179425052238628e-1,
	-9.92877231001918586564e1,
	-1.61468768441708447952e3,
}

// tanhQ's leading 1 is exact: Go's math writes its first term s + Q0.
var tanhQ = [...]float64{
	1,
	1.12811678491632931402e2,
	2.23548839060100448583e3,
	4.84406305325125486048e3,
}
