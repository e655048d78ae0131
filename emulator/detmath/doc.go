// Package detmath is the math hilrig's results are computed with: the
// same bits on every architecture Go builds for, so that a virtual-time
// run gives the same trace from the same seed on a lab's x86 CI and on
// the ARM board its rig runs on.
//
// Go's math package does not promise that. Its Exp is assembly on
// amd64, arm64, loong64 and s390x, each its own algorithm, and amd64's
// takes another path on a CPU without FMA; Log and Hypot are assembly on
// amd64 (Log wrong for subnormal numbers); and the compiler fuses x*y + z
// into one multiply-add, rounded once, on arm64, ppc64, s390x, riscv64,
// loong64 and on amd64 built with GOAMD64=v3, which changes the last bits
// of everything written in Go, math's own Sin, Cos, Log1p, Pow and the
// rest included. This package holds the functions the rig needs, ported
// from Go's pure-Go math (itself from FreeBSD's msun and Cephes) with
// every product that is added to something rounded first (float64(x*y) +
// z, which the Go specification says the compiler may not fuse), and
// Exp from amd64's assembly, written with math.FMA, so that results
// recorded on amd64 hold. Each returns, bit for bit, what Go's math
// returns where it runs that code without fusing: Exp on amd64 with FMA,
// the rest on 32-bit arm (and on amd64, 386, for most).
//
// Mul, Div, Abs and Cis do the same for complex128, whose *, / and
// math/cmplx are fused or call math like the rest.
//
// math's Sqrt, Abs, Floor, Ceil, Trunc, Round, Mod, Min, Max, Frexp,
// Ldexp, Modf, Copysign, Nextafter and FMA are exact (correctly rounded
// or no rounding at all) wherever they run; use them from math.
//
// The code is derived from Go's, under Go's BSD licence (LICENSE).
package detmath
