package detmath

// horner evaluates the polynomial c[0]·x^(n−1) + … + c[n−1] as Go's math
// writes it, ((c[0]·x + c[1])·x + …)·x + c[n−1], rounding each product
// before the sum.
func horner(x float64, c []float64) float64 {
	h := c[0]
	for _, ci := range c[1:] {
		h = float64(h*x) + ci
	}
	return h
}
