package rig

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// ptyBench is a bench of two pseudo-terminals linked in dir.
func ptyBench(dir, framing string) string {
	return fmt.Sprintf(`endpoints:
  controller: {pty: {link: %s/controller, framing: %s}}
  plant:      {pty: {link: %s/plant, framing: %s}}
bind:
  m2s: {from: controller, to: plant}
  s2m: {from: plant, to: controller}
`, dir, framing, dir, framing)
}

// startRun starts Run in the background on a profile and bench given as
// text; it returns the devices to attach to and a function that stops the
// run and returns its summary.
func startRun(t testing.TB, profile, bench string, opt RunOptions) (ctrl, plant serial.Port, stop func() (RunSummary, error)) {
	t.Helper()
	dir := t.TempDir()
	p, err := profiles.Parse(filepath.Join(dir, "p.yaml"), []byte(profile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := profiles.ParseBench(filepath.Join(dir, "b.yaml"), []byte(strings.ReplaceAll(bench, "DIR", dir)), p)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		s   RunSummary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Run(ctx, p, b, opt)
		done <- result{s, err}
	}()
	open := func(name string) serial.Port {
		path := filepath.Join(dir, name)
		for range 500 {
			if _, err := os.Stat(path); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		port, err := serial.Open(path, &serial.Mode{BaudRate: 115200})
		if err != nil {
			t.Fatalf("attaching to %s: %v", name, err)
		}
		return port
	}
	ctrl, plant = open("controller"), open("plant")
	return ctrl, plant, func() (RunSummary, error) {
		cancel()
		r := <-done
		ctrl.Close()
		plant.Close()
		return r.s, r.err
	}
}

const plainLink = `duration: 60s
hops:
  down: {delay: 5ms}
  up:   {delay: 5ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`

// TestRunAllocations forwards frames between two pseudo-terminals and
// reports the allocations per frame. Run with HILRIG_ALLOC_PROBE=1.
func TestRunAllocations(t *testing.T) {
	if os.Getenv("HILRIG_ALLOC_PROBE") == "" {
		t.Skip("set HILRIG_ALLOC_PROBE=1")
	}
	ctrl, plant, stop := startRun(t, plainLink, ptyBench("DIR", "line"), RunOptions{})
	go func() {
		r := bufio.NewReader(plant)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	for i := range 3000 {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Millisecond)))
		ctrl.Write([]byte(strconv.Itoa(i) + "\n"))
	}
	time.Sleep(100 * time.Millisecond)
	s, err := stop()
	t.Logf("allocs per frame %.3f, err %v, stopped %s", s.Timing.AllocsPerFrame, err, s.Stopped)
}

// memoryEndpoint takes frames into a fixed buffer.
type memoryEndpoint struct {
	got [][]byte
	n   int
}

func (m *memoryEndpoint) Name() string                                 { return "memory" }
func (m *memoryEndpoint) Start(drivers.Clock, drivers.Sink, int) error { return nil }
func (m *memoryEndpoint) Stop() error                                  { return nil }
func (m *memoryEndpoint) Write(p []byte) error {
	m.got[m.n%len(m.got)] = append(m.got[m.n%len(m.got)][:0], p...)
	m.n++
	return nil
}

// TestForwardingAllocatesNothing drives the executor's per-frame path, from
// a reader handing a frame to the ingress ring to the egress write and the
// trace, and counts allocations once the path is warm.
func TestForwardingAllocatesNothing(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte(`duration: 1h
hops:
  link: {rate: 10Mbit, delay: 1ms, jitter: {dist: normal, sigma: 100us}, loss: {gilbert: {p: 1%, r: 30%}}}
flows:
  m2s: {route: [link]}
`))
	if err != nil {
		t.Fatal(err)
	}
	out := &memoryEndpoint{got: make([][]byte, 16)}
	for i := range out.got {
		out.got[i] = make([]byte, 0, 64)
	}
	clock := &stepClock{}
	r := &runner{endpoints: []endpoint{{Endpoint: &memoryEndpoint{}}, {Endpoint: out}}, flowOf: []int{0, -1}, egress: []int{1}}
	if r.net, err = emulator.New(p.Config, r); err != nil {
		t.Fatal(err)
	}
	r.clock = clock
	r.in = newIngress(64, func() {})
	r.trace = newRunTrace(io.Discard, []string{"m2s"}, []bool{true})
	defer r.trace.close()
	spare := make([]byte, 0, slotBytes)
	payload := []byte("0123456789 a control frame")
	frame := func() {
		clock.now += time.Millisecond
		r.in.Frame(0, payload, r.clock.Now())
		spare, _ = r.step(spare, time.Hour)
	}
	for range 2000 { // warm: queues, histograms and heaps at their size
		frame()
	}
	if allocs := testing.AllocsPerRun(1000, frame); allocs != 0 {
		t.Errorf("%v allocations per forwarded frame", allocs)
	}
	if out.n == 0 {
		t.Error("nothing was forwarded")
	}
}

// stepClock is a clock the test moves.
type stepClock struct{ now time.Duration }

func (c *stepClock) Now() time.Duration { return c.now }
