package realtime

import (
	"math"
	"time"
)

// A waiter's sleep ends late by the machine's wakeup latency: the timer's
// interrupt, the scheduler, on a VM the hypervisor delivering it, and the
// Go runtime handing the thread its processor back. The spin before a
// deadline exists to absorb it, and a spin shorter than the latency's tail
// makes that tail the release lateness: on the 2-core VM of BENCHMARKS.md,
// loaded by other builds, 1.6 % of the executor's sleeps ended more than
// 100 µs (the default spin) late (p50 25 µs, p99 165 µs, p99.9 0.69 ms),
// and 6 in 10 of its releases later than 20 µs were those wakes. So the
// waiter measures its sleeps and spins, before each deadline, for the p99
// of how late they ended: BaseSpin at least, the spin it was given at
// most (DefaultSpin unless told otherwise: a quarter of a core at 1 kHz;
// the executor's load meter gives up spinning altogether when it costs
// more than its share, load.go).
const (
	// BaseSpin is the least a waiter spins before a deadline (unless
	// given less): the VM's usual wakeup latency (BENCHMARKS.md).
	BaseSpin = 100 * time.Microsecond
	// wakeBucket is the resolution of the account of late wakes.
	wakeBucket = 2 * time.Microsecond
	// wakeEvery is how many sleeps go by between updates of the spin;
	// each update then halves what was counted, so that the spin follows
	// the machine's load: a sleep counts half as much wakeEvery sleeps
	// later (a quarter of a second at 1 kHz).
	wakeEvery = 256
	// wakeMargin is added to the measured p99: the spin loop's own turn
	// and the reading of the clock after the sleep.
	wakeMargin = 10 * time.Microsecond
	// wakeBuckets counts wakes up to a millisecond late; a p99 later
	// still spins as long as it is given.
	wakeBuckets = int(time.Millisecond/wakeBucket) + 1
)

// wakeLatency is the account of how late a waiter's sleeps ended, in
// buckets of wakeBucket up to a millisecond (the last bucket: later
// still), and the p99 it last gave. Fixed in size: recording allocates
// nothing.
type wakeLatency struct {
	counts [wakeBuckets]uint32
	total  uint32 // in counts
	since  uint32 // sleeps recorded since the last update
	p99    time.Duration
}

// record counts a sleep that ended late after its end, and every
// wakeEvery sleeps updates the p99.
func (l *wakeLatency) record(late time.Duration) {
	if late < 0 {
		return // woken before its end: says nothing of the latency
	}
	l.counts[min(int(late/wakeBucket), len(l.counts)-1)]++
	l.total++
	if l.since++; l.since < wakeEvery {
		return
	}
	l.since = 0
	rank := (l.total*99 + 99) / 100 // ceil(0.99 total)
	var seen uint32
	for i, c := range l.counts {
		if seen += c; seen >= rank {
			l.p99 = time.Duration(i+1) * wakeBucket
			if i == len(l.counts)-1 {
				l.p99 = math.MaxInt64 / 2 // later than counted
			}
			break
		}
	}
	l.total = 0
	for i := range l.counts {
		l.counts[i] /= 2
		l.total += l.counts[i]
	}
}

// spinFor is how long to spin before a deadline, given spin: the
// measured p99 of the wakes with a margin, at least BaseSpin and at most
// spin. No spin stays none.
func (l *wakeLatency) spinFor(spin time.Duration) time.Duration {
	return min(spin, max(BaseSpin, l.p99+wakeMargin))
}
