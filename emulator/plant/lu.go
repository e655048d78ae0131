package plant

import "math"

// luFactors is a square matrix factorised in place by Gaussian
// elimination with partial pivoting, P·A = L·U, for solving A·x = b many
// times without allocating. It does what LAPACK's dgetf2 and dgetrs do
// (gonum's, for the matrices of up to 64 rows it factorises unblocked),
// operation for operation, with every product rounded before it is
// added: gonum's BLAS is assembly on amd64 and Go the compiler fuses on
// arm64, so its results differ between the two, and the solvers' and
// couple's must not (emulator/detmath's doc).
type luFactors struct {
	n int
	// a is row-major n×n: L below the diagonal (its diagonal of ones
	// implied) and U on and above it.
	a      []float64
	pivots []int // row i was swapped with row pivots[i] ≥ i, in order
	// singular: some pivot is zero, and solve must not be called.
	singular bool
}

func newLUFactors(n int) *luFactors {
	return &luFactors{n: n, a: make([]float64, n*n), pivots: make([]int, n)}
}

// at is the element (i, j) of the matrix to factorise, or of its factors.
func (f *luFactors) at(i, j int) *float64 { return &f.a[i*f.n+j] }

// factorise factorises the matrix set in a, in place.
func (f *luFactors) factorise() {
	n, a := f.n, f.a
	f.singular = false
	for j := range n {
		// The pivot: the first of the largest in magnitude on or below the
		// diagonal (a NaN is never larger).
		p, largest := j, math.Abs(a[j*n+j])
		for i := j + 1; i < n; i++ {
			if v := math.Abs(a[i*n+j]); v > largest {
				p, largest = i, v
			}
		}
		f.pivots[j] = p
		if a[p*n+j] == 0 {
			f.singular = true
		} else {
			if p != j {
				for k := range n {
					a[j*n+k], a[p*n+k] = a[p*n+k], a[j*n+k]
				}
			}
			// The multipliers, by the pivot's reciprocal as dgetf2 has
			// them unless it would overflow.
			if d := a[j*n+j]; math.Abs(d) >= 0x1p-1022 {
				r := 1 / d
				for i := j + 1; i < n; i++ {
					a[i*n+j] *= r
				}
			} else {
				for i := j + 1; i < n; i++ {
					a[i*n+j] /= d
				}
			}
		}
		// The rank-one update of the rows below (dger).
		for i := j + 1; i < n; i++ {
			l := a[i*n+j]
			for k := j + 1; k < n; k++ {
				a[i*n+k] -= float64(l * a[j*n+k])
			}
		}
	}
}

// solve overwrites b with the solution x of A·x = b.
func (f *luFactors) solve(b []float64) {
	n, a := f.n, f.a
	for i, p := range f.pivots {
		if p != i {
			b[i], b[p] = b[p], b[i]
		}
	}
	// L·y = P·b, then U·x = y (dtrsm, which skips zeros of the factors).
	for i := range n {
		for k, l := range a[i*n : i*n+i] {
			if l != 0 {
				b[i] -= float64(l * b[k])
			}
		}
	}
	for i := n - 1; i >= 0; i-- {
		for k := i + 1; k < n; k++ {
			if u := a[i*n+k]; u != 0 {
				b[i] -= float64(u * b[k])
			}
		}
		b[i] *= 1 / a[i*n+i]
	}
}
