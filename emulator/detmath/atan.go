// Copyright 2009 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package detmath

import "math"

// The inverse trigonometric functions are Cephes' (Stephen L. Moshier), as
// Go's math has them.

// xatan evaluates a series valid in the range [0, 0.66].
func xatan(x float64) float64 {
	z := x * x
	p := horner(z, atanP[:])
	q := horner(z, atanQ[:])
	z = z * p / q
	return float64(x*z) + x
}

var atanP = [...]float64{
	-8.750608600031904122785e-01,
	-1.615753718733365076637e+01,
	-7.500855792314704667340e+01,
	-1.228866684490136173410e+02,
	-6.485021904942025371773e+01,
}

// atanQ's leading 1 is exact: Go's math writes its first term z + Q0.
var atanQ = [...]float64{
	1,
	+2.485846490142306297962e+01,
	+1.650270098316988542046e+02,
	+4.328810604912902668951e+02,
	+4.853903996359136964868e+02,
	+1.945506571482613964425e+02,
}

// satan reduces its non-negative argument (using tan(π/8) and tan(3π/8))
// to the range of xatan.
func satan(x float64) float64 {
	const (
		Morebits = 6.123233995736765886130e-17 // pi/2 = PIO2 + Morebits
		Tan3pio8 = 2.41421356237309504880      // tan(3*pi/8)
	)
	if x <= 0.66 {
		return xatan(x)
	}
	if x > Tan3pio8 {
		return math.Pi/2 - xatan(1/x) + Morebits
	}
	return math.Pi/4 + xatan((x-1)/(x+1)) + 0.5*Morebits
}

// Atan returns the arctangent, in radians, of x, as math.Atan.
func Atan(x float64) float64 {
	if x == 0 {
		return x
	}
	if x > 0 {
		return satan(x)
	}
	return -satan(-x)
}

// Atan2 returns the arc tangent of y/x, using the signs of the two to
// determine the quadrant of the return value, as math.Atan2 (the same
// special cases).
func Atan2(y, x float64) float64 {
	switch {
	case math.IsNaN(y) || math.IsNaN(x):
		return math.NaN()
	case y == 0:
		if x >= 0 && !math.Signbit(x) {
			return math.Copysign(0, y)
		}
		return math.Copysign(math.Pi, y)
	case x == 0:
		return math.Copysign(math.Pi/2, y)
	case math.IsInf(x, 0):
		if math.IsInf(x, 1) {
			switch {
			case math.IsInf(y, 0):
				return math.Copysign(math.Pi/4, y)
			default:
				return math.Copysign(0, y)
			}
		}
		switch {
		case math.IsInf(y, 0):
			return math.Copysign(3*math.Pi/4, y)
		default:
			return math.Copysign(math.Pi, y)
		}
	case math.IsInf(y, 0):
		return math.Copysign(math.Pi/2, y)
	}

	// Call atan and determine the quadrant.
	q := Atan(y / x)
	if x < 0 {
		if q <= 0 {
			return q + math.Pi
		}
		return q - math.Pi
	}
	return q
}

// Asin returns the arcsine, in radians, of x, as math.Asin.
func Asin(x float64) float64 {
	if x == 0 {
		return x // special case
	}
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}
	if x > 1 {
		return math.NaN() // special case
	}

	temp := math.Sqrt(1 - float64(x*x))
	if x > 0.7 {
		temp = math.Pi/2 - satan(temp/x)
	} else {
		temp = satan(x / temp)
	}

	if sign {
		temp = -temp
	}
	return temp
}

// Acos returns the arccosine, in radians, of x, as math.Acos.
func Acos(x float64) float64 {
	return math.Pi/2 - Asin(x)
}
