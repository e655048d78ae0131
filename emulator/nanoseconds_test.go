package emulator

import (
	"math"
	"testing"
	"time"
)

// TestNanoseconds: a draw becomes a Duration the same way on every
// architecture, however large, small or undefined it is (converted
// directly, 1e30 is the most negative Duration on amd64 and the largest
// on arm64).
func TestNanoseconds(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want time.Duration
	}{
		{0, 0},
		{0.4999, 0},
		{0.5, 1}, // rounded half away from zero, as math.Round
		{1.5e9, 1500 * time.Millisecond},
		{-3, 0},
		{math.Copysign(0, -1), 0},
		{1 << 61, 1 << 61},
		{1e30, 1 << 61},
		{math.Inf(1), 1 << 61},
		{math.Inf(-1), 0},
		{math.NaN(), 0},
	} {
		if got := nanoseconds(tc.ns); got != tc.want {
			t.Errorf("nanoseconds(%v) = %d, want %d", tc.ns, got, tc.want)
		}
	}
}
