package tests

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// startCommands are commands that need none of the web server, the
// report's page or the metrics: what they pay for before main is what
// every command pays.
var startCommands = [][]string{
	{"version"},
	{"check", "../profiles/bottleneck.yaml"},
	{"sim", "bottleneck", "--duration", "2s"},
}

// packageInit is one package's line of GODEBUG=inittrace=1.
type packageInit struct {
	pkg    string
	ms     float64
	allocs int
}

// traceInit runs hilrig with args and GODEBUG=inittrace=1 and returns its
// packages' initialisation and its peak resident memory.
func traceInit(t testing.TB, args ...string) (inits []packageInit, peak int64) {
	t.Helper()
	stderr, err := os.CreateTemp(t.TempDir(), "inittrace")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd := exec.Command(hilrig, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	cmd.Stderr = stderr
	peak, code := residentPeak(t, cmd)
	if code != 0 {
		t.Fatalf("hilrig %s: exit %d", strings.Join(args, " "), code)
	}
	trace, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	// init PKG @T ms, MS ms clock, BYTES bytes, ALLOCS allocs
	for line := range bytes.Lines(trace) {
		f := strings.Fields(string(line))
		if len(f) != 11 || f[0] != "init" || f[6] != "clock," || f[10] != "allocs" {
			continue
		}
		ms, err1 := strconv.ParseFloat(f[4], 64)
		allocs, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("an inittrace line not understood: %q", line)
		}
		inits = append(inits, packageInit{f[1], ms, allocs})
	}
	if len(inits) < 100 {
		t.Fatalf("hilrig %s: %d packages' init traced, fewer than it links:\n%s", strings.Join(args, " "), len(inits), trace)
	}
	return inits, peak
}

// TestStartPaysOnlyForWhatItUses: hilrig's own packages do no work at
// the start of a command that they may not need, such as parsing the
// report's page template (1 300 allocations), compiling the live API's
// phase name pattern (760); such work is done at its first use.
//
// The proof is the allocations of hilrig's packages' init, which do not
// depend on the machine's load: 2 918 on main before the change (rig/report
// 1 301, rig/web 1 027, profiles 306, rig/expect 149), 617 after (profiles
// 306, the most; rig/web 168: its metric descriptions and the live
// changes' file keys). The bounds (1 000
// in all, 400 for one package) leave room for a few small tables or
// patterns, each tens of allocations, and none for work like the above.
//
// Init time and peak memory are logged and bounded loosely, against a
// regression of another order, not against load. The init of all packages
// summed to a median of 4.2 ms before and 3.0 ms after (GODEBUG=inittrace=1,
// 21 runs, loaded 2-core VM), of which prometheus's and gonum/plot's own
// init (the default registry with Go and process collectors, 12 fonts
// parsed) are about 1 ms that hilrig cannot defer while it links them. The
// peak resident memory is 26.5 MB before and after: 24 MB of it are the
// binary's own pages (text 10 MB, read-only data and pclntab 10 MB, data 3
// MB), which this kernel maps in whole large folios as soon as a page of
// them is touched (the same binary copied with cp, its page cache filled
// in smaller folios, peaks at 20.7 MB); the process's anonymous memory is 2.4 MB (2.7 before)
// and libc's and the loader's pages 1.5 MB. So the bound is the size of the
// binary's loaded segments (25.6 MB now) and 8 MB, twice the rest: it
// follows the binary's growth, which is another matter, and fails for a
// table of a few MB built at the start.
func TestStartPaysOnlyForWhatItUses(t *testing.T) {
	const (
		ownAllocsBound     = 1000
		packageAllocsBound = 400
		initMsBound        = 15.0 // 3.5× the median before, on a loaded machine
		othersAllowance    = 8 << 20
		runs               = 5
	)
	peakBound := loadedSize(t, hilrig) + othersAllowance
	for _, args := range startCommands {
		name := strings.Join(args, " ")
		var sums []float64
		var peaks []int64
		for range runs {
			inits, peak := traceInit(t, args...)
			peaks = append(peaks, peak)
			sum, own := 0.0, 0
			for _, in := range inits {
				sum += in.ms
				if !strings.HasPrefix(in.pkg, "github.com/hilrig/hilrig/") {
					continue
				}
				own += in.allocs
				if in.allocs > packageAllocsBound {
					t.Errorf("hilrig %s: the init of %s made %d allocations (at most %d): work a command may not need, to do at its first use", name, in.pkg, in.allocs, packageAllocsBound)
				}
			}
			sums = append(sums, sum)
			if own > ownAllocsBound {
				t.Errorf("hilrig %s: hilrig's packages' init made %d allocations (at most %d)", name, own, ownAllocsBound)
			}
			if t.Failed() {
				return
			}
		}
		slices.Sort(sums)
		slices.Sort(peaks)
		initMs, peak := sums[runs/2], peaks[runs/2]
		t.Logf("hilrig %s: init %.2f ms (median of %d; %.2f to %.2f), peak resident %.1f MB", name, initMs, runs, sums[0], sums[runs-1], float64(peak)/(1<<20))
		if initMs > initMsBound {
			t.Errorf("hilrig %s: init took %.2f ms (median of %d), more than %.0f", name, initMs, runs, initMsBound)
		}
		if peak > peakBound {
			t.Errorf("hilrig %s: peak resident memory %.1f MB (median of %d), more than %.1f", name, float64(peak)/(1<<20), runs, float64(peakBound)/(1<<20))
		}
	}
}

// loadedSize is the size of what the loader maps of the executable at
// path from its file: its loadable segments' contents.
func loadedSize(t testing.TB, path string) int64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var size int64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			size += int64(p.Filesz)
		}
	}
	return size
}

// BenchmarkStart runs the commands of startCommands and reports their
// packages' init time summed (init-ms), hilrig's own packages' init
// allocations (own-init-allocs) and the peak resident memory (peak-MB).
// Before and after a change, interleaved, with the old tree's binary:
//
//	go test ./tests -run XXX -bench Start -count 10 | benchstat -
func BenchmarkStart(b *testing.B) {
	for _, args := range startCommands {
		b.Run(args[0], func(b *testing.B) {
			var initMs float64
			var own, peak int64
			for range b.N {
				inits, p := traceInit(b, args...)
				for _, in := range inits {
					initMs += in.ms
					if strings.HasPrefix(in.pkg, "github.com/hilrig/hilrig/") {
						own += int64(in.allocs)
					}
				}
				peak += p
			}
			n := float64(b.N)
			b.ReportMetric(initMs/n, "init-ms")
			b.ReportMetric(float64(own)/n, "own-init-allocs")
			b.ReportMetric(float64(peak)/n/(1<<20), "peak-MB")
		})
	}
}
