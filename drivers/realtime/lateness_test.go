package realtime

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestSpinCoversTheLatenessOfRecentSleeps: once a window of sleeps is
// seen, the spin is the least whole bucket that holds all but 1 % of their
// lateness (the 1 % is lateSpare = 10 of 1024), within the ceiling; before
// that, the ceiling.
func TestSpinCoversTheLatenessOfRecentSleeps(t *testing.T) {
	us := time.Microsecond
	for _, c := range []struct {
		name    string
		late    func(i int) time.Duration
		ceiling time.Duration
		want    time.Duration
	}{
		{"all 17µs", func(int) time.Duration { return 17 * us }, 100 * us, 18 * us},
		{"all on a bucket's edge", func(int) time.Duration { return 20 * us }, 100 * us, 22 * us},
		{"none late", func(int) time.Duration { return 0 }, 100 * us, 2 * us},
		// 10 sleeps of 1024 at 300 µs are the 1 % allowed past the spin;
		// 11 are not.
		{"10 outliers", func(i int) time.Duration { return outlier(i, 10, 300*us, 17*us) }, 400 * us, 18 * us},
		{"11 outliers", func(i int) time.Duration { return outlier(i, 11, 300*us, 17*us) }, 400 * us, 302 * us},
		// Sleeps later than the buckets reach: as long as the ceiling allows.
		{"past the buckets", func(i int) time.Duration { return outlier(i, 11, 10*time.Millisecond, 17*us) }, 100 * time.Millisecond, 100 * time.Millisecond},
		{"10 past the buckets", func(i int) time.Duration { return outlier(i, 10, 10*time.Millisecond, 17*us) }, 100 * time.Millisecond, 18 * us},
		{"the ceiling", func(int) time.Duration { return 80 * us }, 50 * us, 50 * us},
		{"negative, as a clock's step may give", func(int) time.Duration { return -5 * us }, 100 * us, 2 * us},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l lateness
			for i := range lateWindow - 1 {
				l.record(c.late(i))
			}
			if got := l.spinFor(c.ceiling); got != c.ceiling {
				t.Fatalf("before a window of sleeps: spin %v, want the ceiling %v", got, c.ceiling)
			}
			// The spin is computed every lateEvery sleeps once the window is full.
			for i := lateWindow - 1; i < lateWindow-1+lateEvery; i++ {
				l.record(c.late(i))
			}
			if got := l.spinFor(c.ceiling); got != c.want {
				t.Errorf("spin %v, want %v", got, c.want)
			}
		})
	}
}

// outlier is late for the first n of every lateWindow sleeps, usual for the rest.
func outlier(i, n int, late, usual time.Duration) time.Duration {
	if i%lateWindow < n {
		return late
	}
	return usual
}

// TestSpinForgetsOldSleeps: the window slides, so a machine that got busy
// and quiet again spins as the quiet one does.
func TestSpinForgetsOldSleeps(t *testing.T) {
	var l lateness
	for range lateWindow {
		l.record(250 * time.Microsecond)
	}
	for range lateWindow + lateEvery {
		l.record(15 * time.Microsecond)
	}
	if got, want := l.spinFor(time.Millisecond), 16*time.Microsecond; got != want {
		t.Errorf("spin %v after a quiet window, want %v", got, want)
	}
}

// TestSpinMatchesTheSortedQuantile holds the buckets to the definition on
// random lateness: at most lateSpare sleeps of the window are later than
// the spin, and more than lateSpare are later than one bucket less.
func TestSpinMatchesTheSortedQuantile(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		var l lateness
		var window []time.Duration
		for i := range lateWindow * 3 {
			// Exponential lateness of mean 5 to 100 µs: the machine's tail.
			late := time.Duration(r.ExpFloat64() * float64(time.Duration(5+trial*2)*time.Microsecond))
			l.record(late)
			window = append(window, late)
			if i%lateEvery == lateEvery-1 && len(window) >= lateWindow {
				last := slices.Clone(window[len(window)-lateWindow:])
				spin := l.spinFor(time.Second)
				later := func(d time.Duration) int {
					n := 0
					for _, x := range last {
						if x >= d {
							n++
						}
					}
					return n
				}
				// Past the buckets (the last holds every sleep later than
				// (lateBuckets-1) buckets), the spin is all it may be.
				beyond := (lateBuckets - 1) * lateBucket
				if spin == time.Second {
					if n := later(beyond); n <= lateSpare {
						t.Fatalf("trial %d: spin %v, but only %d sleeps were later than %v", trial, spin, n, beyond)
					}
					continue
				}
				if n := later(spin); n > lateSpare {
					t.Fatalf("trial %d: %d sleeps of the window were %v late or more, want at most %d", trial, n, spin, lateSpare)
				}
				if spin > lateBucket {
					if n := later(spin - lateBucket); n <= lateSpare {
						t.Fatalf("trial %d: spin %v, but %v covers all but %d", trial, spin, spin-lateBucket, n)
					}
				}
			}
		}
	}
}
