package rig

import (
	"bytes"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig/record"
)

func load(t testing.TB, ref string) *profiles.Loaded {
	t.Helper()
	p, err := profiles.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// random is a small profile whose outcome depends on the seed.
const random = `duration: 20s
hops:
  link: {rate: 2Mbit, delay: 5ms, queue: 20 frames}
flows:
  control: {route: [link], traffic: {cbr: {interval: 10ms, size: 200B}}}
  bursts:  {route: [link], traffic: {onoff: {rate: 3Mbit, size: 1500B, on: {dist: exponential, mean: 500ms}, off: {dist: pareto, mean: 1s}}}}
  noise:   {route: [link], traffic: {poisson: {rate: 500kbit, size: 500B}}}
`

func simTrace(t *testing.T, p *profiles.Loaded, opt Options) (string, record.Summary) {
	t.Helper()
	var buf bytes.Buffer
	opt.Trace = &buf
	s, err := Sim(p, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return buf.String(), s
}

var traceRow = regexp.MustCompile(`^[A-Za-z0-9_-]+,[0-9]+,[0-9]+,[0-9]+\.[0-9]{9},([0-9]+\.[0-9]{9})?,(delivered|queue_drop|outage_drop|loss_drop|corrupted|duplicate|in_flight)$`)

func TestTraceFormat(t *testing.T) {
	trace, summary := simTrace(t, load(t, "bottleneck"), Options{})
	lines := strings.Split(strings.TrimSuffix(trace, "\n"), "\n")
	if lines[0] != record.TraceHeader {
		t.Fatalf("header %q", lines[0])
	}
	rows := 0
	for _, line := range lines[1:] {
		if !traceRow.MatchString(line) {
			t.Fatalf("malformed row %q", line)
		}
		fields := strings.Split(line, ",")
		if (fields[4] == "") != (fields[5] == "queue_drop" || fields[5] == "outage_drop" || fields[5] == "loss_drop" || fields[5] == "in_flight") {
			t.Fatalf("t_recv must be set exactly for delivered frames: %q", line)
		}
		if fields[0] == "cross" {
			t.Fatalf("cross has trace: false but is traced: %q", line)
		}
		rows++
	}
	var want uint64
	for _, f := range summary.Flows {
		if f.Name != "cross" {
			want += f.Sent
		}
	}
	if uint64(rows) != want {
		t.Errorf("%d rows for %d frames sent by traced flows", rows, want)
	}
}

func TestInFlightRows(t *testing.T) {
	// Stop the bottleneck run in the middle of the hold outage: the held
	// frames are reported in flight, after every other row.
	trace, summary := simTrace(t, load(t, "bottleneck"), Options{Duration: 20500 * time.Millisecond})
	if !strings.HasSuffix(trace, "in_flight\n") {
		t.Error("the trace does not end with in_flight rows")
	}
	if got := strings.Count(trace, ",in_flight\n"); got < 25 || uint64(got) != summary.Flows[0].InFlight+summary.Flows[1].InFlight {
		t.Errorf("%d in_flight rows; summary says m2s %d, s2m %d", got, summary.Flows[0].InFlight, summary.Flows[1].InFlight)
	}
}

func TestSimReproducible(t *testing.T) {
	p, err := profiles.Parse("random.yaml", []byte(random))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := simTrace(t, p, Options{})
	b, _ := simTrace(t, p, Options{})
	seed := uint64(99)
	c, _ := simTrace(t, p, Options{Seed: &seed})
	if a != b {
		t.Error("the same seed gave different traces")
	}
	if a == c {
		t.Error("a different seed gave the same trace")
	}
}

// TestMemoryFlat runs 60 s and 600 s of the bottleneck, tracing every frame,
// and checks that the longer run allocates (almost) no more: the trace is
// streamed and the engine keeps no per-frame history.
func TestMemoryFlat(t *testing.T) {
	p := load(t, "bottleneck")
	allocated := func(d time.Duration) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := Sim(p, nil, Options{Duration: d, Trace: io.Discard}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	short, long := allocated(60*time.Second), allocated(600*time.Second)
	t.Logf("allocated %d B for 60 s, %d B for 600 s", short, long)
	if long > short+64<<10 {
		t.Errorf("10× the duration allocated %d B more", long-short)
	}
}

func BenchmarkSimBottleneck300s(b *testing.B) {
	p := load(b, "bottleneck")
	for _, tc := range []struct {
		name  string
		trace io.Writer
	}{{"summary", nil}, {"trace", io.Discard}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var frames uint64
			for b.Loop() {
				s, err := Sim(p, nil, Options{Duration: 300 * time.Second, Trace: tc.trace})
				if err != nil {
					b.Fatal(err)
				}
				frames = 0
				for _, f := range s.Flows {
					frames += f.Sent
				}
			}
			b.ReportMetric(float64(frames)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkCoSim60s is paper 001's quarter car at CP2 over its Internet
// link for 60 s of virtual time: 30 000 exchanges of both parts and the
// uncut car.
func BenchmarkCoSim60s(b *testing.B) {
	p := load(b, "internet-hil")
	bench, err := benchfile.LoadBench("../profiles/benches/quarter-car-seat.yaml", p)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Sim(p, bench, Options{Duration: 60 * time.Second}); err != nil {
			b.Fatal(err)
		}
	}
}

// echo is a Player: it sends a frame every period and keeps what it gets.
type echo struct {
	flow   int
	next   time.Duration
	period time.Duration
	got    []string
}

func (e *echo) Feed(flow int)       { e.flow = flow }
func (e *echo) Next() time.Duration { return e.next }
func (e *echo) Emit(now time.Duration, inject func(int, []byte)) {
	inject(e.flow, []byte(now.String()))
	e.next += e.period
}
func (e *echo) Write(p []byte) error { e.got = append(e.got, string(p)); return nil }

// TestPlayersInVirtualTime plays both endpoints of the virtual bench in
// software: no device is opened, and each side receives the other's frames
// after the profile's delay.
func TestPlayersInVirtualTime(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte(`duration: 1s
hops:
  down: {delay: 5ms}
  up:   {delay: 7ms}
flows:
  m2s: {route: [down], role: to-plant}
  s2m: {route: [up], role: to-controller}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../profiles/benches/virtual.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, plant := &echo{period: 100 * time.Millisecond}, &echo{period: 250 * time.Millisecond}
	s, err := Sim(p, b, Options{Players: map[string]Player{"controller": ctrl, "plant": plant}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plant.got) != 10 || plant.got[9] != "900ms" || len(ctrl.got) != 4 || ctrl.got[3] != "750ms" {
		t.Errorf("the plant got %q, the controller %q", plant.got, ctrl.got)
	}
	if d := s.Flows[0].Delay; d == nil || d.Min != 0.005 || d.Max != 0.005 {
		t.Errorf("m2s delay %+v", d)
	}
}

// TestStandInReplies: paper 002's robot, its controller standing in for
// the hardware. Answering each sample at once (as the reference
// implementation's controller does), the stand-in is stepped by the
// samples it answers: over links without delay the loop is the uncut one,
// exactly, at any exchange; sending at the exchanges instead adds a sample
// of latency. Over links of 102.4 µs each way (a 100 B frame on paper 002's
// bus) the robot's tracking strays by less the sooner it takes up the
// torque after it arrives: at the next 1 ms sample, 50 µs or 10 µs
// exchange.
func TestStandInReplies(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte("duration: 1s\nhops:\n  up: {}\n  down: {}\nflows:\n  samples: {route: [up]}\n  commands: {route: [down]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(model string, delay time.Duration) record.OutputError {
		b, err := benchfile.ParseBench("b.yaml", []byte(`endpoints:
  robot: {model: {name: parallel-robot, cut: controller, solver: rk4, `+model+`}}
  controller: {pty: {}}
bind:
  samples: {from: robot, to: controller}
  commands: {from: controller, to: robot}
`), p)
		if err != nil {
			t.Fatal(err)
		}
		p.Config.Hops[0].Delay, p.Config.Hops[1].Delay = delay, delay
		s, err := Sim(p, b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Models[0].Output.Peak == 0 {
			t.Fatalf("%s: the robot did not move", model)
		}
		return *s.Models[0].Output
	}
	if o := run("exchange: 1ms, stand_in: clock", 0); o.MaxError == 0 {
		t.Errorf("stand_in clock without delay: %+v; want a sample of latency", o)
	}
	var errs []float64
	for _, exchange := range []string{"exchange: 1ms", "exchange: 50us, send_every: 1ms", "exchange: 10us, send_every: 1ms"} {
		if o := run(exchange+", stand_in: reply", 0); o.MaxError != 0 {
			t.Errorf("%s without delay: error %g, want none", exchange, o.MaxError)
		}
		errs = append(errs, run(exchange+", stand_in: reply", 102400*time.Nanosecond).MaxError)
	}
	t.Logf("tracking error over 102.4 µs each way, taken up at 1 ms, 50 µs, 10 µs: %.3g m", errs)
	if !(errs[0] > errs[1] && errs[1] > errs[2] && errs[2] > 0) {
		t.Errorf("errors %g: want them falling as the exchange shortens, and not zero", errs)
	}
}

// TestQueues: the queues file samples what each hop holds every 10 ms.
// Paper 000's bottleneck fills its 30 000 B queue with 1000 B frames while
// the cross traffic is on, and the sampled depth never exceeds the limit.
func TestQueues(t *testing.T) {
	var q strings.Builder
	s, err := Sim(load(t, "bottleneck"), nil, Options{Duration: 10 * time.Second, Queues: &q})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(q.String()), "\n")
	head := strings.Split(lines[0], ",")
	if len(lines) != 1001 || len(head) != 1+3*len(s.Hops) || head[4] != "core-up.queue_bytes" {
		t.Fatalf("%d rows, header %q", len(lines)-1, lines[0])
	}
	var peak float64
	for _, l := range lines[1:] {
		v, err := strconv.ParseFloat(strings.Split(l, ",")[4], 64)
		if err != nil {
			t.Fatal(err)
		}
		peak = max(peak, v)
	}
	if peak < 28000 || peak > 30000 || float64(s.Hops[1].PeakQueueBytes) < peak {
		t.Errorf("core-up sampled up to %v B; its peak was %d B, its limit 30000 B", peak, s.Hops[1].PeakQueueBytes)
	}
}

// TestThreadPriorities holds a run's threads to their priorities: the
// readers under the executor and the runtime's under the readers where
// there are CPUs to move a preempted thread to; on one CPU, all alike
// under the executor.
func TestThreadPriorities(t *testing.T) {
	for _, tc := range []struct {
		asked, cpus int
		want        priorities
	}{
		{0, 4, priorities{}},
		{0, 1, priorities{}},
		{1, 2, priorities{}},
		{2, 2, priorities{readers: 1, fmus: 1}},
		{3, 2, priorities{readers: 2, fmus: 2, devices: 1, others: RuntimePriority}},
		{80, 2, priorities{readers: 79, fmus: 79, devices: 78, others: RuntimePriority}},
		{80, 64, priorities{readers: 79, fmus: 79, devices: 78, others: RuntimePriority}},
		// One CPU: the readers and devices are raised with the others.
		{80, 1, priorities{fmus: 79, others: 79}},
		{2, 1, priorities{fmus: 1, others: 1}},
		{1, 1, priorities{}},
	} {
		if got := threadPriorities(tc.asked, tc.cpus); got != tc.want {
			t.Errorf("threadPriorities(%d, %d CPUs) = %+v, want %+v", tc.asked, tc.cpus, got, tc.want)
		}
	}
}
