// Package cyclichist reads the latency histogram that cyclictest (Debian's
// rt-tests) prints with -h and -q, one thread: the machine's own wake-up
// latency, which the performance scripts and benchmarks set beside the
// rig's.
package cyclichist

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Bucket is the number of wake-ups N that were US microseconds late.
type Bucket struct{ US, N uint64 }

// Histogram is what cyclictest printed.
type Histogram struct {
	Buckets   []Bucket // by latency, those with wake-ups only
	Overflows uint64   // wake-ups later than the histogram's last bucket
	MaxUS     uint64   // its "Max Latencies" line; 0 when absent
}

// Total is the number of wake-ups counted.
func (h Histogram) Total() uint64 {
	n := h.Overflows
	for _, b := range h.Buckets {
		n += b.N
	}
	return n
}

// Read reads the histogram: a line "latency count" per microsecond of
// latency, then comment lines, "# Histogram Overflows: N" and "# Max
// Latencies: M" among them.
func Read(r io.Reader) (Histogram, error) {
	var h Histogram
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		line := lines.Text()
		if rest, ok := strings.CutPrefix(line, "# Histogram Overflows:"); ok {
			h.Overflows, _ = strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# Max Latencies:"); ok {
			h.MaxUS, _ = strconv.ParseUint(strings.TrimSpace(rest), 10, 64)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || strings.HasPrefix(line, "#") {
			continue
		}
		us, err1 := strconv.ParseUint(f[0], 10, 64)
		n, err2 := strconv.ParseUint(f[1], 10, 64)
		if err1 == nil && err2 == nil && n > 0 {
			h.Buckets = append(h.Buckets, Bucket{us, n})
		}
	}
	if err := lines.Err(); err != nil {
		return h, err
	}
	if h.Total() == 0 {
		return h, errors.New("no histogram (cyclictest -q -h N)")
	}
	return h, nil
}
