//go:build amd64 && !amd64.v3

package plant

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// TestLUIsGonums: on amd64 without fusing, where the rig's results were
// recorded with gonum's LU, luFactors gives its factors, pivots and
// solutions bit for bit, so that replacing it changed no result there;
// singular matrices included.
func TestLUIsGonums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		n := 1 + trial%12
		f := newLUFactors(n)
		g := blas64.General{Rows: n, Cols: n, Stride: n, Data: make([]float64, n*n)}
		for i := range g.Data {
			v := r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
			if trial%5 == 0 && r.IntN(3) == 0 {
				v = 0 // sparse, and now and then singular
			}
			f.a[i], g.Data[i] = v, v
		}
		if trial%7 == 0 && n > 1 { // two equal rows: singular
			copy(f.a[n:2*n], f.a[:n])
			copy(g.Data[n:2*n], g.Data[:n])
		}
		pivots := make([]int, n)
		f.factorise()
		ok := lapack64.Getrf(g, pivots)
		if f.singular == ok {
			t.Fatalf("trial %d: singular %v, gonum's ok %v", trial, f.singular, ok)
		}
		for i := range g.Data {
			if math.Float64bits(f.a[i]) != math.Float64bits(g.Data[i]) && !(math.IsNaN(f.a[i]) && math.IsNaN(g.Data[i])) {
				t.Fatalf("trial %d (n %d): factor %d is %v, gonum's %v", trial, n, i, f.a[i], g.Data[i])
			}
		}
		for i := range pivots {
			if f.pivots[i] != pivots[i] {
				t.Fatalf("trial %d: pivots %v, gonum's %v", trial, f.pivots, pivots)
			}
		}
		if !ok {
			continue
		}
		b := make([]float64, n)
		for i := range b {
			b[i] = r.NormFloat64()
		}
		want := append([]float64(nil), b...)
		lapack64.Getrs(blas.NoTrans, g, blas64.General{Rows: n, Cols: 1, Stride: 1, Data: want}, pivots)
		f.solve(b)
		for i := range b {
			if math.Float64bits(b[i]) != math.Float64bits(want[i]) {
				t.Fatalf("trial %d: x[%d] = %v, gonum's %v", trial, i, b[i], want[i])
			}
		}
	}
}
