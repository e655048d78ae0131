package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/tests/perf/cyclichist"
)

// The quarter car's real-time exchange rate, measured from the rig's own
// summary: BenchmarkRunModelRate (2 s runs, the rate BENCHMARKS.md quotes)
// and BenchmarkRunModelRateClean (10 s runs at 4 to 50 kHz, with what the
// machine did meanwhile) share the bench and the reading here.

// udpSink is a UDP socket on the loopback that reads and drops whatever
// is sent to it: the device a model exchanges with. It closes with b.
func udpSink(b *testing.B) *net.UDPConn {
	sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sink.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := sink.ReadFromUDP(buf); err != nil {
				return
			}
		}
	}()
	return sink
}

// modelRate is what one run of the quarter car at one exchange period
// did, from its summary, and what the machine did meanwhile.
type modelRate struct {
	Stopped   string  `json:"stopped"`
	DurationS float64 `json:"duration_s"` // how long it ran
	Models    []struct {
		Exchanges    uint64             `json:"exchanges"`
		Overruns     uint64             `json:"overruns"`
		StepLateness map[string]float64 `json:"step_lateness_s"`
	} `json:"models"`
	Timing struct {
		WakeLateness  map[string]float64 `json:"wake_lateness_s"`
		Busy          float64            `json:"busy"`
		SpinShedS     float64            `json:"spin_shed_s"`
		ProcessAllocs uint64             `json:"process_allocs"`
	} `json:"timing"`
	steal time.Duration // the machine's steal time during the run, all CPUs
	load  float64       // the one-minute load average at its start
}

// runModelRate runs `hilrig run` for d with the quarter car's simulated
// part (cut at CP2, trapezoidal, one step an exchange) exchanging every
// period with a device on sink, and reads its summary. A run that the rig
// stopped because it could not keep up (exit 1, stopped "failed:
// overload") is a result, not a failure of the benchmark.
func runModelRate(b *testing.B, sink *net.UDPConn, period, d time.Duration) modelRate {
	b.Helper()
	bench := fmt.Sprintf(`endpoints:
  car:  {model: {name: quarter-car, cut: CP2, exchange: %v}}
  seat: {udp: {dial: "%s"}}
bind:
  m2s: {from: car, to: seat}
  s2m: {from: seat, to: car}
`, period, sink.LocalAddr())
	var r modelRate
	r.load = loadAverage()
	steal := stealTime()
	rig := startRig(b, direct, bench, "--duration", d.String())
	code := rig.wait()
	r.steal = stealTime() - steal
	data, _ := os.ReadFile(rig.summary)
	if err := json.Unmarshal(data, &r); err != nil || len(r.Models) != 1 {
		b.Fatalf("exit %d, summary: %v: %s", code, err, rig.stderr.String())
	}
	if code != 0 && !(code == 1 && r.overloaded()) {
		b.Fatalf("exit %d: %s", code, rig.stderr.String())
	}
	return r
}

// overloaded reports whether the rig stopped the run for falling behind.
func (r modelRate) overloaded() bool { return strings.HasPrefix(r.Stopped, "failed: overload") }

// report reports the run's rate, overruns and lateness; a run stopped
// for overload reports how long it lasted.
func (r modelRate) report(b *testing.B) {
	m := r.Models[0]
	b.ReportMetric(float64(m.Exchanges)/r.DurationS, "exchanges/s")
	if r.overloaded() {
		b.ReportMetric(r.DurationS, "stopped-after-s")
	}
	b.ReportMetric(float64(m.Overruns), "overruns")
	b.ReportMetric(m.StepLateness["p50"]*1e6, "late-p50-µs")
	b.ReportMetric(m.StepLateness["p99"]*1e6, "late-p99-µs")
	b.ReportMetric(m.StepLateness["max"]*1e6, "late-max-µs")
}

// BenchmarkRunModelRateClean looks for the highest exchange rate the rig
// keeps without overrun: 10 s runs (HILRIG_EXCHANGE_RUN sets another
// length) at 4, 10, 20 and 50 kHz. Beside the rig's figures it reports
// what tells the rig's doing from the machine's: the executor's wake-up
// lateness (the kernel's), how busy its thread was and how long it gave
// up spinning (its load policy), and the machine's steal time and load
// average; and, where rt-tests' cyclictest is installed, the machine's own
// floor run right after at the same priority and period: how many of its
// wake-ups came a period or more late (each one an overrun, had it been an
// exchange). A rig that overruns about as often has done what a thread on
// this machine can; no fewer than that is luck. Run with -benchtime=1x.
func BenchmarkRunModelRateClean(b *testing.B) {
	d := 10 * time.Second
	if s := os.Getenv("HILRIG_EXCHANGE_RUN"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			b.Fatalf("HILRIG_EXCHANGE_RUN: %v", err)
		}
	}
	sink := udpSink(b)
	for _, period := range []time.Duration{250 * time.Microsecond, 100 * time.Microsecond, 50 * time.Microsecond, 20 * time.Microsecond} {
		b.Run("exchange="+period.String(), func(b *testing.B) {
			for range b.N {
				r := runModelRate(b, sink, period, d)
				r.report(b)
				b.ReportMetric(r.Models[0].StepLateness["p99_9"]*1e6, "late-p99.9-µs")
				b.ReportMetric(r.Timing.WakeLateness["p99_9"]*1e6, "wake-p99.9-µs")
				b.ReportMetric(100*r.Timing.Busy, "busy-%")
				b.ReportMetric(100*r.Timing.SpinShedS/r.DurationS, "spin-shed-%")
				b.ReportMetric(float64(r.Timing.ProcessAllocs), "process-allocs")
				b.ReportMetric(float64(r.steal)/1e6, "steal-ms")
				b.ReportMetric(r.load, "load")
				if f, ok := machineFloor(b, period, d); ok {
					b.ReportMetric(float64(f.late), "machine-late")
					b.ReportMetric(float64(f.p999)/1e3, "machine-p99.9-µs")
				}
			}
		})
	}
}

// stealTime is the time the machine's host ran something else while the
// guest had work for its CPUs, all CPUs together (/proc/stat, in the
// kernel's ticks of 10 ms); 0 where it is not counted.
func stealTime() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0
	}
	ticks, _ := strconv.ParseUint(fields[8], 10, 64)
	return time.Duration(ticks) * 10 * time.Millisecond
}

// loadAverage is the machine's one-minute load average, 0 where unknown.
func loadAverage() float64 {
	data, _ := os.ReadFile("/proc/loadavg")
	first, _, _ := strings.Cut(string(data), " ")
	v, _ := strconv.ParseFloat(first, 64)
	return v
}

// floorHistogram is how far, in microseconds, cyclictest's histogram
// goes; it counts longer latencies as overflows.
const floorHistogram = 20000

// floor is what cyclictest saw: wake-ups a period or more late, and the
// 99.9th percentile of its wake-up latency.
type floor struct {
	late uint64
	p999 time.Duration
}

// machineFloor runs cyclictest for d, one thread at the executor's
// SCHED_FIFO priority (80, `hilrig run`'s default) waking every period;
// false where cyclictest is not installed or cannot run.
func machineFloor(b *testing.B, period, d time.Duration) (floor, bool) {
	path, err := exec.LookPath("cyclictest")
	if err != nil {
		return floor{}, false
	}
	out, err := exec.Command(path, "-p", "80", "--policy=fifo", "-m", "-q", "-t1",
		"-i", strconv.FormatInt(period.Microseconds(), 10), "-D", strconv.Itoa(max(1, int(d.Seconds()))),
		"-h", strconv.Itoa(floorHistogram)).Output()
	if err != nil {
		b.Logf("cyclictest: %v", err)
		return floor{}, false
	}
	return parseFloor(out, period)
}

// parseFloor reads cyclictest's histogram: the wake-ups a period or more
// late, and the 99.9th percentile.
func parseFloor(out []byte, period time.Duration) (floor, bool) {
	h, err := cyclichist.Read(bytes.NewReader(out))
	if err != nil {
		return floor{}, false
	}
	total := h.Total()
	fl := floor{late: h.Overflows, p999: -1}
	var seen uint64
	for _, b := range h.Buckets {
		if time.Duration(b.US)*time.Microsecond >= period {
			fl.late += b.N
		}
		seen += b.N
		if fl.p999 < 0 && seen*1000 >= total*999 {
			fl.p999 = time.Duration(b.US) * time.Microsecond
		}
	}
	if fl.p999 < 0 { // among the overflows: at least the histogram's end
		fl.p999 = floorHistogram * time.Microsecond
	}
	return fl, true
}

func TestParseFloor(t *testing.T) {
	for _, tc := range []struct {
		name   string
		out    string
		period time.Duration
		want   floor
		ok     bool
	}{
		{"nothing", "# Total: 000000000\n", 100 * time.Microsecond, floor{}, false},
		{"none late", "000010 000998\n000050 000002\n# Histogram Overflows: 00000\n", 100 * time.Microsecond,
			floor{late: 0, p999: 50 * time.Microsecond}, true},
		{"the period is late", "000010 000990\n000099 000005\n000100 000004\n000150 000001\n# Max Latencies: 00150\n# Histogram Overflows: 00000\n", 100 * time.Microsecond,
			floor{late: 5, p999: 100 * time.Microsecond}, true},
		{"overflows are late", "000010 000997\n# Histogram Overflows: 00003\n", 100 * time.Microsecond,
			floor{late: 3, p999: floorHistogram * time.Microsecond}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseFloor([]byte(tc.out), tc.period)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %+v %v, want %+v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
