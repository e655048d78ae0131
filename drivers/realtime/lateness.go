package realtime

import (
	"math"
	"time"
)

// A spin costs the CPU it runs on: at SCHED_FIFO nothing of normal priority
// runs there while it lasts, and that includes the kernel workers that carry
// the very frames the rig forwards (a pty's flush_to_ldisc). A fixed spin
// long enough for a busy machine took that CPU from them for 100 µs before
// every deadline of a quiet one, whose wake-ups are 30 µs late at p99
// (BENCHMARKS.md: a quarter of the 124 µs by which a 20 ms hop's frames
// arrived later at p99 than undelayed ones). So a waiter spins as long as
// its own recent sleeps ended late at their p99, within the spin it was
// given.
const (
	lateWindow  = 1024                 // sleeps remembered: about a second at 1 kHz
	lateBucket  = 2 * time.Microsecond // resolution of the remembered lateness
	lateBuckets = 256                  // up to 510 µs; the last holds every later sleep
	lateSpare   = lateWindow / 100     // sleeps allowed later than the spin: 1 %
	lateEvery   = 64                   // sleeps between recomputations of the spin
)

// lateness keeps how late the last lateWindow sleeps ended, to tell how long
// a spin absorbs all but lateSpare of them.
type lateness struct {
	ring  [lateWindow]uint8 // each remembered sleep's bucket, the oldest overwritten
	next  int               // where the next sleep goes in ring
	n     int               // sleeps remembered, up to lateWindow
	count [lateBuckets]uint16
	since int           // sleeps recorded since the spin was computed
	spin  time.Duration // the spin computed; 0 until the window is full
}

// record notes a sleep that ended late by late.
func (l *lateness) record(late time.Duration) {
	b := min(max(int(late/lateBucket), 0), lateBuckets-1)
	if l.n == lateWindow {
		l.count[l.ring[l.next]]--
	} else {
		l.n++
	}
	l.ring[l.next] = uint8(b)
	l.count[b]++
	l.next = (l.next + 1) % lateWindow
	if l.since++; l.since >= lateEvery && l.n == lateWindow {
		l.since = 0
		l.spin = l.covering()
	}
}

// covering is the least whole number of buckets that holds all but
// lateSpare of the remembered sleeps' lateness; past the buckets, as long
// as a spin may be.
func (l *lateness) covering() time.Duration {
	if int(l.count[lateBuckets-1]) > lateSpare {
		return math.MaxInt64
	}
	over := int(l.count[lateBuckets-1])
	for b := lateBuckets - 2; b > 0; b-- {
		if over += int(l.count[b]); over > lateSpare {
			return time.Duration(b+1) * lateBucket
		}
	}
	return lateBucket
}

// spinFor is how long to spin, given at most ceiling: the ceiling until a
// window of sleeps has been seen, then what covers their lateness.
func (l *lateness) spinFor(ceiling time.Duration) time.Duration {
	if l.spin == 0 {
		return ceiling
	}
	return min(l.spin, ceiling)
}
