// Package driverstest holds fakes of the drivers' interfaces for tests: a
// clock the test moves, a sink that keeps what endpoints report, and an
// endpoint in memory that records what is written to it and sends what the
// test tells it to. They stand in for the rig's side (clock and sink) when
// a test drives a real endpoint, and for a device when a test drives the
// rig. MonitorWakeUps counts what Go's runtime monitor does in a process,
// for the tests of the threads that must let it rest.
package driverstest

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"golang.org/x/sys/unix"
)

// Clock is a clock the test sets; it is safe for concurrent use.
type Clock struct{ now atomic.Int64 }

var _ drivers.Clock = (*Clock)(nil)

func (c *Clock) Now() time.Duration { return time.Duration(c.now.Load()) }

// Set moves the clock to t.
func (c *Clock) Set(t time.Duration) { c.now.Store(int64(t)) }

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) { c.now.Add(int64(d)) }

// WallClock is the time since it was made.
type WallClock struct{ start time.Time }

var _ drivers.Clock = WallClock{}

// NewWallClock starts a wall clock at zero now.
func NewWallClock() WallClock { return WallClock{start: time.Now()} }

func (c WallClock) Now() time.Duration { return time.Since(c.start) }

// Sink keeps what endpoints report; it is safe for concurrent use.
type Sink struct {
	mu      sync.Mutex
	frames  []Frame
	gone    []error
	back    int
	notices []Notice
	notify  chan struct{}
}

// Notice is a notice a sink was given.
type Notice struct {
	Endpoint int
	At       time.Duration
	Kind     string
	Err      error
}

// Frame is a frame a sink was given.
type Frame struct {
	Endpoint int
	Payload  []byte
	At       time.Duration
}

var _ drivers.Sink = (*Sink)(nil)

// NewSink returns an empty sink.
func NewSink() *Sink { return &Sink{notify: make(chan struct{}, 1)} }

func (s *Sink) Frame(endpoint int, payload []byte, at time.Duration) {
	s.mu.Lock()
	s.frames = append(s.frames, Frame{endpoint, append([]byte(nil), payload...), at})
	s.mu.Unlock()
	s.kick()
}

func (s *Sink) Gone(_ int, _ time.Duration, err error) {
	s.mu.Lock()
	s.gone = append(s.gone, err)
	s.mu.Unlock()
	s.kick()
}

func (s *Sink) Back(int, time.Duration) {
	s.mu.Lock()
	s.back++
	s.mu.Unlock()
	s.kick()
}

// Read does nothing: a test's sink holds no reader back.
func (s *Sink) Read(int, *drivers.ReaderMeter, time.Duration) {}

func (s *Sink) Notice(endpoint int, at time.Duration, kind string, err error) {
	s.mu.Lock()
	s.notices = append(s.notices, Notice{endpoint, at, kind, err})
	s.mu.Unlock()
	s.kick()
}

func (s *Sink) kick() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Frames returns a copy of the frames so far.
func (s *Sink) Frames() []Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Frame(nil), s.frames...)
}

// Payloads returns the frames' payloads as strings.
func (s *Sink) Payloads() []string {
	var out []string
	for _, f := range s.Frames() {
		out = append(out, string(f.Payload))
	}
	return out
}

// GoneErrors returns the errors of the devices that went away, in order.
func (s *Sink) GoneErrors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.gone...)
}

// Notices returns the notices so far, in order.
func (s *Sink) Notices() []Notice {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notice(nil), s.notices...)
}

// BackCount is how many times a device came back.
func (s *Sink) BackCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.back
}

// WaitFor waits until cond holds, for at most 5 s (a generous bound: it
// only fails a test that would otherwise hang).
func (s *Sink) WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for !cond() {
		select {
		case <-s.notify:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Endpoint is a device in memory: it keeps the last frames written to it
// in buffers it allocates once, so that writing to it allocates nothing,
// and Send makes it read a frame.
type Endpoint struct {
	name    string
	clock   drivers.Clock
	sink    drivers.Sink
	index   int
	mu      sync.Mutex
	written [][]byte
	n       int
}

var _ drivers.Endpoint = (*Endpoint)(nil)

// NewEndpoint returns an endpoint that keeps the last keep frames written
// to it, each up to 256 bytes without allocating.
func NewEndpoint(name string, keep int) *Endpoint {
	e := &Endpoint{name: name, written: make([][]byte, keep)}
	for i := range e.written {
		e.written[i] = make([]byte, 0, 256)
	}
	return e
}

func (e *Endpoint) Name() string { return e.name }

func (e *Endpoint) Start(clock drivers.Clock, sink drivers.Sink, index int) error {
	e.clock, e.sink, e.index = clock, sink, index
	return nil
}

func (e *Endpoint) Stop() error { return nil }

func (e *Endpoint) Write(payload []byte) error {
	e.mu.Lock()
	i := e.n % len(e.written)
	e.written[i] = append(e.written[i][:0], payload...)
	e.n++
	e.mu.Unlock()
	return nil
}

// Send makes the endpoint read a frame now, as its reader would.
func (e *Endpoint) Send(payload []byte) { e.sink.Frame(e.index, payload, e.clock.Now()) }

// Written is how many frames were written to it.
func (e *Endpoint) Written() int { e.mu.Lock(); defer e.mu.Unlock(); return e.n }

// Last returns the last frame written, or nil.
func (e *Endpoint) Last() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		return nil
	}
	return append([]byte(nil), e.written[(e.n-1)%len(e.written)]...)
}

// OpenTerminal opens a pseudo-terminal as a terminal emulator or `script`
// does, raw (so that what reaches its slave is read as it was sent), and
// returns its non-blocking master and its number (/dev/pts/N); the test
// is skipped where there are no pseudo-terminals, and the master closed
// when it ends.
func OpenTerminal(tb testing.TB) (master, n int) {
	tb.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Skipf("no pseudo-terminals: %v", err)
	}
	tb.Cleanup(func() { unix.Close(m) })
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		tb.Fatal(err)
	}
	num, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		tb.Fatal(err)
	}
	tio, err := unix.IoctlGetTermios(m, unix.TCGETS)
	if err != nil {
		tb.Fatal(err)
	}
	tio.Lflag &^= unix.ECHO | unix.ICANON
	tio.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(m, unix.TCSETS, tio); err != nil {
		tb.Fatal(err)
	}
	return m, int(num)
}

// MonitorWakeUps is how many times the runtime's monitor (sysmon) of Go
// process pid has gone to sleep and been woken: the voluntary context
// switches of its second thread, which runtime.main starts for it before
// anything else. It reads Linux's /proc.
func MonitorWakeUps(t testing.TB, pid int) int {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	var tids []int
	for _, task := range tasks {
		if tid, err := strconv.Atoi(task.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	slices.Sort(tids)
	if len(tids) < 2 || tids[0] != pid {
		t.Fatalf("threads %v of %d: not a Go process's as the test knows them", tids, pid)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tids[1]))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no voluntary_ctxt_switches in %s", status)
	return 0
}
