package rig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// Mode is the clock a session runs on.
type Mode uint8

const (
	// Virtual time: the profile's generators and the bench's models (with
	// stand-ins for their hardware), as fast as the CPU allows,
	// reproducible bit for bit from the seed.
	Virtual Mode = iota
	// RealTime: the bench's devices, at the wall clock, on a real-time
	// thread.
	RealTime
)

func (m Mode) String() string {
	if m == RealTime {
		return "real"
	}
	return "virtual"
}

// Options control a session.
type Options struct {
	Duration time.Duration // 0: the profile's
	Seed     *uint64       // nil: the profile's
	Trace    io.Writer     // one CSV row per frame; nil: none
	Signals  io.Writer     // the models' signals as CSV, a row per exchange; nil: none
	// Queues receives what each hop holds (bytes and frames waiting, frames
	// held by an outage) as CSV, a row every QueueEvery (0: 10 ms); nil:
	// none.
	Queues     io.Writer
	QueueEvery time.Duration
	Monitor    *record.Monitor
	Log        io.Writer // announcements and warnings; nil: discarded
	// Players play bench endpoints in software, by name: those endpoints
	// are not opened, and the players send and take their frames.
	Players map[string]Player
	// Record receives the recording of the frames that the bench's
	// devices and players sent and were sent (pcapng, see
	// record.Recording): a session to replay. In virtual time its times
	// are the run's, from the epoch.
	Record io.Writer
	// Paced paces a virtual-time run to the wall clock, so that it can be
	// watched and changed live: it records what the run would as fast as
	// the CPU allows (the engine's events keep their exact times), with
	// changes made by hand at the instants they were made.
	Paced bool

	// Real time only. Priority is the executor's SCHED_FIFO priority (the
	// endpoints' reader threads get one less, see threadPriorities); 0
	// leaves the scheduling alone. Spin is how long before a deadline the
	// executor stops sleeping and spins; 0 means realtime.DefaultSpin.
	Priority int
	Spin     time.Duration
}

// pacedClock is the wall clock standing in for virtual time (Options.Paced):
// the executor treats it as virtual, so the run records what a virtual
// one records, and waits on it for real.
type pacedClock struct{ wall *executor.Real }

func (c pacedClock) Now() time.Duration { return c.wall.Now() }
func (c pacedClock) Until(deadline time.Duration, pending func() bool) bool {
	return c.wall.Until(deadline, pending)
}
func (pacedClock) Real() bool { return false }

// Start is when the run began on the wall clock: a paced run's events
// have their wall-clock time, as a real-time run's do.
func (c pacedClock) Start() time.Time { return c.wall.Start() }
func (c pacedClock) Wake()            { c.wall.Wake() }

// Session is a profile and a bench ready to run on a clock.
type Session struct {
	profile *profiles.Loaded
	bench   *benchfile.LoadedBench
	mode    Mode
	opt     Options
	logf    func(format string, args ...any)

	x         *executor.Executor
	bind      binding
	real      *executor.Real // the clock, in real time
	devices   []endpoint
	trace     *record.Trace
	signals   *record.Signals
	queues    *record.Signals
	recording *record.Recording
	outputs   []output  // the files above that were asked for
	replays   []*replay // the players that replay a recording, by name
	fmus      []runningFMU
	// fmuSummaries are the FMUs as they were closed, for the summary.
	fmuSummaries []runningFMU
	timing       record.TimingSummary
	priorities   priorities // in real time, the threads'
	ran          bool
	refused      bool // the kernel refused a real-time facility for want of privilege

	mu    sync.Mutex
	final *record.Summary // once the run has ended
}

// Open prepares a session: it resolves the bench against the profile,
// builds the devices (in real time; they are opened when it runs), the
// models and the executor, and starts the writers of the trace and the
// signals. b may be nil in virtual time.
func Open(p *profiles.Loaded, b *benchfile.LoadedBench, mode Mode, opt Options) (*Session, error) {
	if b != nil {
		var err error
		if opt.Players, err = withBenchReplays(b, opt.Players); err != nil {
			return nil, err
		}
	}
	s := &Session{profile: p, bench: b, mode: mode, opt: opt}
	if mode == RealTime {
		s.priorities = threadPriorities(opt.Priority, runtime.NumCPU())
	}
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	s.logf = func(format string, args ...any) { fmt.Fprintf(log, "hilrig: "+format+"\n", args...) }
	cfg := p.Config
	if opt.Seed != nil {
		cfg.Seed = *opt.Seed
	}
	end := p.RunDuration()
	if opt.Duration > 0 {
		end = opt.Duration
	}
	var clock executor.Clock = &executor.Virtual{}
	var ingress *executor.Ingress
	if mode == RealTime {
		if b == nil {
			return nil, errors.New("a real-time run needs a bench")
		}
		if err := CheckRealTime(p); err != nil {
			return nil, err
		}
		spin := opt.Spin
		if spin <= 0 {
			spin = realtime.DefaultSpin
		}
		// Spinning through most of a model's exchange period would keep a
		// CPU busy at real-time priority all the time, and the kernel
		// throttles that (sched_rt_runtime_us: 50 ms of every second by
		// default): never spin more than a fifth of the shortest exchange.
		for _, bm := range b.Models {
			spin = min(spin, bm.Exchange/5)
		}
		s.timing = record.TimingSummary{Scheduler: "SCHED_OTHER", SpinS: spin.Seconds()}
		readerThread := func() {
			if p := s.priorities.readers; p > 0 {
				realtime.RaiseThread(p) // refused only where the executor's is: reported there
			}
		}
		var err error
		if s.devices, err = buildEndpoints(b, opt.Players, readerThread); err != nil {
			return nil, err
		}
		if s.real, err = executor.NewReal(spin); err != nil {
			return nil, err
		}
		clock, ingress = s.real, executor.NewIngress(1024, s.real.Wake)
	} else if b != nil && len(b.Models) == 0 && len(opt.Players) == 0 {
		// A virtual-time session given a bench with nothing to simulate.
		return nil, fmt.Errorf("%s has no model endpoint and plays none (replay, or a player); in sim the profile's traffic stands in for hardware, so a bench matters only for the models it cuts and the endpoints played in software", b.Source)
	} else if opt.Paced {
		// Sleeping alone (no spin) is punctual enough for a person.
		var err error
		if s.real, err = executor.NewReal(0); err != nil {
			return nil, err
		}
		clock = pacedClock{s.real}
	}
	for _, name := range slices.Sorted(maps.Keys(opt.Players)) {
		if b == nil || b.Endpoints.Index(name) < 0 {
			s.closeClock()
			return nil, fmt.Errorf("no endpoint %q in the bench to play", name)
		}
		if r, ok := opt.Players[name].(*replay); ok {
			s.replays = append(s.replays, r)
			if cut := r.cutShort(); cut != "" {
				s.logf("%s", cut)
			}
		}
	}
	var err error
	// In real time the executor waits for an isolated FMU at every step:
	// its process runs below the executor's priority.
	if s.fmus, err = startFMUs(b, s.priorities.fmus); err != nil {
		s.closeClock()
		return nil, err
	}
	bd, err := bind(p, b, mode, s.devices, opt.Players)
	if err != nil {
		s.closeFiles()
		s.closeClock()
		return nil, err
	}
	cfg.Flows = bd.flows
	s.bind = bd
	real := mode == RealTime
	if opt.Trace != nil {
		// The flows' rows, then the rows of the models' supervisors.
		names, traced := slices.Clone(p.Flows.Names), make([]bool, len(cfg.Flows))
		for i := range traced {
			traced[i] = p.Traced(i)
		}
		for _, name := range executor.EventRowNames(bd.models, bd.deviceWire, bd.sourceWire) {
			names, traced = append(names, name), append(traced, true)
		}
		s.trace = record.NewTrace(opt.Trace, names, traced, real)
	}
	var phases *record.Phases
	if len(p.Phases()) > 0 || opt.Monitor != nil { // a run being watched may have phases marked by hand
		phases = record.NewPhases(p.Phases(), p.Flows.Names)
	}
	if opt.Signals != nil && len(bd.models) > 0 {
		s.signals = record.NewSignals(opt.Signals, executor.SignalColumns(bd.models), real)
	}
	queueEvery := opt.QueueEvery
	if opt.Queues != nil {
		s.queues = record.NewSignals(opt.Queues, executor.QueueColumns(p.Hops.Names), real)
		if queueEvery <= 0 {
			queueEvery = 10 * time.Millisecond
		}
	}
	if opt.Record != nil && b != nil {
		about := fmt.Sprintf("profile %s, bench %s, %s time", p.Name, b.Name, mode)
		var ifaces []record.RecordingInterface
		for i, name := range bd.interfaces {
			desc := "played in software"
			if i < len(s.devices) {
				desc = s.devices[i].kind + " " + s.devices[i].device
			}
			ifaces = append(ifaces, record.RecordingInterface{Name: name, Description: desc})
		}
		s.recording = record.NewRecording(opt.Record, about, ifaces, p.Flows.Names)
	}
	s.listOutputs()
	s.x, err = executor.New(executor.Config{
		Network: cfg, Clock: clock, End: end, Egress: bd.egress,
		Ingress: ingress, FlowOf: bd.flowOf, Reconnects: bd.reconnects, Endpoints: bd.interfaces, Models: bd.models, Sources: bd.sources, SourceInterfaces: bd.playerAt,
		DeviceWire: bd.deviceWire, SourceWire: bd.sourceWire,
		Trace: s.trace, Phases: phases, Signals: s.signals, Monitor: opt.Monitor, Recording: s.recording,
		Queues: s.queues, QueueEvery: queueEvery,
		Notify: func(e record.Event) {
			s.logf("%s at %.3f s: %s", strings.ReplaceAll(e.Kind, "_", " "), e.AtS, e.Detail)
		},
	})
	if err != nil {
		s.closeFiles()
		s.closeClock()
		return nil, err
	}
	return s, nil
}

// output is a file the run writes as it goes.
type output struct {
	name, units string // "trace", "rows"
	file        interface {
		OnFailure(func(error))
		Account() record.Account
		Close() error
	}
}

// listOutputs lists the files asked for, in the order the summary
// accounts for them.
func (s *Session) listOutputs() {
	if s.trace != nil {
		s.outputs = append(s.outputs, output{record.OutputTrace, "rows", s.trace})
	}
	if s.signals != nil {
		s.outputs = append(s.outputs, output{record.OutputSignals, "rows", s.signals})
	}
	if s.queues != nil {
		s.outputs = append(s.outputs, output{record.OutputQueues, "rows", s.queues})
	}
	if s.recording != nil {
		s.outputs = append(s.outputs, output{record.OutputRecording, "frames", s.recording})
	}
}

// Run runs the session until its duration ends, ctx is done, or (in real
// time) a device fails. However it stops, outputs go to their safe levels
// and the trace is complete up to that instant. A run that ran but failed
// returns a *RunError with the summary: a failed device (a
// *drivers.DeviceError, in RunError.Stopped), and an output that lost rows
// (which does not stop the run: see record.Writer) or a recording that
// could not be replayed to its end, in RunError.Others. A device that
// cannot be opened is returned before anything runs, with an empty
// summary.
func (s *Session) Run(ctx context.Context) (record.Summary, error) {
	if s.ran {
		return record.Summary{}, errors.New("a session runs once")
	}
	s.ran = true
	if s.mode == Virtual {
		if s.real != nil { // paced
			defer s.closeClock()
			defer context.AfterFunc(ctx, s.real.Wake)()
		}
		s.begin()
		s.x.Start()
		stopped, err := s.x.Run(ctx)
		s.x.Finish()
		s.closeFiles()
		return s.finish(s.summary(stopped, err))
	}
	defer s.closeClock()
	if err := realtime.LockMemory(); err != nil {
		s.logf("cannot lock memory (%v): page faults may delay frames", err)
		s.refused = s.refused || realtime.Refused(err)
	} else {
		s.timing.MemoryLocked = true
	}
	// Before the clock starts: it reads the kernel's configuration, a
	// millisecond or more.
	s.timing.KernelPreemption = realtime.KernelPreemption()
	s.begin()
	for i, e := range s.devices {
		if err := e.Start(s.real, s.x.Ingress(), i); err != nil {
			s.stopDevices(s.devices[:i])
			s.closeFiles()
			return record.Summary{}, err
		}
		if a, ok := e.Endpoint.(drivers.Announcer); ok {
			s.logf("%s: %s", e.Name(), a.Announce())
		}
	}
	stopped, failure, allocs := s.loop(ctx)
	// Shut down: outputs to safe levels, frames still inside reported in
	// flight, the files written out.
	s.stopDevices(s.devices)
	s.x.Finish()
	s.closeFiles()
	s.timing.ProcessAllocs = allocs
	return s.finish(s.summary(stopped, failure))
}

// begin makes now the run's time zero: a real clock restarts, so that
// what preparing the run took (opening devices and the recordings to
// replay, starting a server, locking memory) neither shortens it nor
// makes its first events late, and the recording states that instant (a
// virtual-time recording's is the epoch: its times are the run's).
func (s *Session) begin() {
	for _, r := range s.replays {
		r.open()
	}
	start := time.Unix(0, 0)
	now := s.x.Network().Now // in virtual time the writers write on the executor's goroutine
	if s.real != nil {
		s.real.Restart()
		start, now = s.real.Start(), s.real.Now
	}
	// Each output tells its failure as it happens (or now, if it failed
	// before the run began), at the run's time: so that the writers
	// read the real clock only once it has restarted.
	for _, o := range s.outputs {
		o.file.OnFailure(func(err error) {
			s.logf("writing the %s failed at %.3f s: %v; the run goes on, and counts the %s the %s loses", o.name, now().Seconds(), err, o.units, o.name)
		})
	}
	if s.recording != nil {
		s.recording.Begin(start)
	}
}

// loop runs the executor on this goroutine, locked to its thread, raised
// to SCHED_FIFO when asked, and counts what the process allocated.
func (s *Session) loop(ctx context.Context) (stopped string, failure error, allocs uint64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threadsFor(len(s.devices))))
	if s.opt.Priority > 0 {
		if err := realtime.RaiseThread(s.opt.Priority); err != nil {
			s.logf("cannot run the executor at SCHED_FIFO priority %d (%v): timing will be less precise", s.opt.Priority, err)
			s.refused = s.refused || realtime.Refused(err)
		} else {
			defer realtime.LowerThread() // before the thread is unlocked
			s.timing.Scheduler = fmt.Sprintf("SCHED_FIFO priority %d", s.opt.Priority)
			if realtime.PreemptionHoldsUp(s.timing.KernelPreemption) && preemptionSaid.CompareAndSwap(false, true) {
				s.logf("the kernel does not preempt itself (preemption model %s): the executor waits, ready to run, for whatever system call another process is in on its CPU, milliseconds on a busy machine; boot with preempt=full where the kernel allows it (PREEMPT_DYNAMIC), or run a PREEMPT_RT kernel (README: On a board)", s.timing.KernelPreemption)
			}
			if others := s.priorities.others; others > 0 {
				if restore, err := realtime.RaiseProcess(others); err != nil {
					s.logf("cannot raise the process's other threads to SCHED_FIFO priority %d (%v): the executor may wait on them when the machine is loaded", others, err)
				} else {
					defer restore()
					s.timing.Scheduler += fmt.Sprintf(", the process's other threads %d", others)
					if s.priorities.readers == 0 { // raised with the others: one CPU
						s.logf("the process may use one CPU: its threads other than the executor's all run at SCHED_FIFO priority %d, or Go's runtime, spinning on a thread below another there, could stall the run", others)
					}
				}
			}
		}
		if qos, err := realtime.HoldIdleLatency(); err != nil {
			s.logf("cannot keep idle CPUs awake (%v): waking for a frame may take longer", err)
			s.refused = s.refused || realtime.Refused(err)
		} else {
			defer qos.Close()
			s.timing.IdlePolling = true
		}
	}
	if s.refused {
		s.logf("%s", realtime.Grant())
	}
	stopWaking := context.AfterFunc(ctx, s.real.Wake)
	defer stopWaking()
	defer holdGC()()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s.x.Start()
	watching := make(chan struct{})
	s.x.Watch(watching)
	stopped, failure = s.x.Run(ctx)
	close(watching)
	runtime.ReadMemStats(&after)
	return stopped, failure, after.Mallocs - before.Mallocs
}

// preemptionSaid is whether a run of the process has warned of the
// kernel's preemption: a suite's real-time cases say it once between them.
var preemptionSaid atomic.Bool

// priorities are the SCHED_FIFO priorities of a real-time run's threads
// other than the executor's, which is Options.Priority (0: SCHED_OTHER,
// or, on one CPU, raised with the others as the run starts).
type priorities struct {
	// readers are the endpoints' reader threads, one below the executor,
	// so that a frame is stamped as it arrives; they raise themselves as
	// they start.
	readers int
	// fmus are isolated FMUs' processes, which the executor waits on.
	fmus int
	// devices are devices the process plays itself (the demo's firmware),
	// below the readers.
	devices int
	// others are the process's other threads, and with them on one CPU
	// the readers and devices: raised together as the run starts.
	others int
}

// threadPriorities are a run's priorities when the executor is to run at
// SCHED_FIFO priority executor and the process may use cpus CPUs (runtime.NumCPU: the
// machine's, or fewer where its affinity or cpuset says so).
//
// On one CPU every thread but the executor's runs one below it, all
// alike, and raised together: the readers do not raise themselves as
// they start, which would put them above the rest until the run does.
// Go's runtime monitor (sysmon, one of the other threads) holds a
// goroutine's scan bit for a moment whenever it looks at a thread in a
// system call, and a thread coming back from the call spins until the bit
// is released, yielding only to threads of its own priority; other
// threads take the bit too (to stop the world, say, which the demo's
// firmware thread did). A thread above the holder's priority that woke on
// the holder's only CPU while it held the bit preempted it and spun for
// good: the rig stopped forwarding within seconds and answered no signal
// but SIGKILL (TestRealTimeOnOneCPU, and `hilrig demo` under `taskset -c
// 1`). The executor stays above the rest because it never sleeps in a
// system call the monitor can see (realtime.Waiter); every other thread
// may. With two CPUs or more the kernel moves the preempted holder to
// another, and the readers keep their place above the rest.
func threadPriorities(executor, cpus int) (p priorities) {
	switch {
	case executor <= 0:
	case cpus == 1:
		below := executor - 1
		p = priorities{fmus: below, others: below}
	default:
		p = priorities{readers: executor - 1, fmus: executor - 1, devices: max(executor-2, 0)}
		if p.readers > RuntimePriority {
			p.others = RuntimePriority
		}
	}
	return p
}

// RuntimePriority is the SCHED_FIFO priority of the process's threads
// other than the executor's and the readers' during a real-time run with
// two CPUs or more (realtime.RaiseProcess, threadPriorities): Go's runtime
// hands the executor's goroutine back to its thread through them, and at
// normal priority, on a loaded machine, they kept it waiting for tens of
// milliseconds. The live server,
// which does what clients ask, is another process, at normal priority.
const RuntimePriority = 1

// GCHeadroom is how far the heap may grow during a real-time run before
// the garbage collector runs at all.
const GCHeadroom = 256 << 20

// holdGC keeps the garbage collector from running during a real-time run
// unless the heap grows by GCHeadroom, and returns what restores it. A
// collection stops every goroutine for a moment and parks the executor's
// to scan its stack: the locked thread then waits for a thread of normal
// priority to hand it back, which on a loaded machine took tens of
// milliseconds (a release 59 ms late, watched by a live server). The
// executor allocates nothing per frame and the rest of the process a few
// hundred bytes a second (the status line), so in practice no collection
// runs; a leak would still be collected, at the limit.
func holdGC() (restore func()) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	limit := debug.SetMemoryLimit(-1)
	held := min(limit, int64(ms.HeapAlloc)+GCHeadroom)
	debug.SetMemoryLimit(held)
	percent := debug.SetGCPercent(-1)
	return func() {
		// Settings changed by someone else meanwhile stand (a profile
		// decoded for a link as the run ended holds the collector too,
		// profiles.Parse).
		if now := debug.SetGCPercent(percent); now != -1 {
			debug.SetGCPercent(now)
		}
		if now := debug.SetMemoryLimit(limit); now != held {
			debug.SetMemoryLimit(now)
		}
	}
}

// threadsFor is the GOMAXPROCS a run needs: one P (a Go processor) more
// than the process had for each thread that may hold one while it waits.
// The executor keeps its P while it sleeps (realtime.Waiter), and so does
// a device the process plays itself, whose P its caller adds (Demo).
// Every reader and bridge runs on a locked thread that blocks in system
// calls; a thread coming back from one needs a P, and if none is idle it
// waits until the runtime's monitor takes one back from a thread in a
// system call, and the monitor, when idle, looks only every 10 ms: readers
// then stalled for milliseconds (measured: idle frames of a pty bench cut
// late). Idle Ps cost nothing.
func threadsFor(endpoints int) int {
	return max(runtime.GOMAXPROCS(0), runtime.NumCPU()) + 1 + 2*endpoints
}

// Profile is the profile the session runs.
func (s *Session) Profile() *profiles.Loaded { return s.profile }

// Bench is the session's bench, or nil.
func (s *Session) Bench() *benchfile.LoadedBench { return s.bench }

// Mode is the session's clock.
func (s *Session) Mode() Mode { return s.mode }

// Executor is the session's loop, for work posted to it while it runs
// (Executor.Post).
func (s *Session) Executor() *executor.Executor { return s.x }

// CountEndpoints fills in the counts of a snapshot's endpoints from their
// drivers, which keep them in atomics: from any goroutine, so that the
// executor, which publishes the endpoints' state, need not read them.
func (s *Session) CountEndpoints(snap *record.Snapshot) {
	for i := range snap.Endpoints {
		if i >= len(s.devices) {
			return
		}
		c, ok := s.devices[i].Endpoint.(drivers.Counter)
		if !ok {
			continue
		}
		n := c.Counts()
		ep := &snap.Endpoints[i]
		ep.FramesIn, ep.FramesOut, ep.BytesIn, ep.BytesOut = n.FramesIn, n.FramesOut, n.BytesIn, n.BytesOut
		ep.BadFrames, ep.WriteErrors = n.BadFrames, n.WriteErrors
	}
}

// SummaryNow is the summary so far, in the shape of the final one, with
// Stopped "running" while the run goes on. It is computed on the
// executor's goroutine between two events; ctx bounds the wait.
func (s *Session) SummaryNow(ctx context.Context) (record.Summary, error) {
	s.mu.Lock()
	final := s.final
	s.mu.Unlock()
	if final != nil {
		return *final, nil
	}
	got := make(chan record.Summary, 1)
	s.x.Post(func(*executor.Executor, time.Duration) {
		sum, _ := s.summary("running", nil)
		got <- sum
	})
	select {
	case sum := <-got:
		return sum, nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.final != nil { // it ended meanwhile
			return *s.final, nil
		}
		return record.Summary{}, ctx.Err()
	}
}

// finish keeps the final summary for SummaryNow.
func (s *Session) finish(sum record.Summary, failure error) (record.Summary, error) {
	s.mu.Lock()
	s.final = &sum
	s.mu.Unlock()
	return sum, failure
}

func (s *Session) summary(stopped string, failure error) (record.Summary, error) {
	sum := record.Summary{Profile: s.profile.Name, Clock: s.mode.String(), Stopped: stopped}
	runErr := &RunError{Stopped: failure}
	for _, o := range s.outputs {
		c := o.file.Account()
		sum.Outputs = append(sum.Outputs, c.Summary(o.name))
		if err := c.Failure(o.name, o.units); err != nil {
			runErr.Others = append(runErr.Others, err)
		}
	}
	for _, r := range s.replays {
		if err := r.failure(); err != nil {
			runErr.Others = append(runErr.Others, err)
		}
	}
	for _, m := range s.bind.models {
		if m.Continued() {
			runErr.Others = append(runErr.Others, m.Failed())
		}
	}
	for _, err := range runErr.all() {
		sum.Failures = append(sum.Failures, err.Error())
	}
	if s.bench != nil {
		sum.Bench = s.bench.Name
	}
	sum.Summary, sum.Models = s.x.Summary()
	for _, f := range s.fmuSummaries {
		for i := range sum.Models {
			if sum.Models[i].Endpoint == f.endpoint {
				sum.Models[i].FMU = f.final
			}
		}
	}
	if ph := s.x.Phases(); ph != nil {
		sum.Phases = ph.Summary(s.x.Network().Now())
	}
	sum.Events = slices.Clone(s.x.Events())
	// The endpoints played in software that speak the wire protocol: what
	// their firmware sent.
	var played []record.EndpointSummary
	for i, l := range s.bind.sourceWire {
		if l != nil {
			played = append(played, record.EndpointSummary{Name: s.bind.interfaces[s.bind.playerAt[i]], Kind: "played", Device: "played in software", Wire: s.x.WireSummary(l)})
		}
	}
	if s.mode == Virtual {
		sum.Endpoints = played
		return sum, runErr.orNil()
	}
	sum.Endpoints = []record.EndpointSummary{}
	for i, e := range s.devices {
		es := record.EndpointSummary{Name: e.Name(), Kind: e.kind, Device: e.device}
		if c, ok := e.Endpoint.(drivers.Counter); ok {
			n := c.Counts()
			es.FramesIn, es.FramesOut, es.BytesIn, es.BytesOut, es.WriteErrors = n.FramesIn, n.FramesOut, n.BytesIn, n.BytesOut, n.WriteErrors
			es.FrameBytes, es.BadFrames, es.BadBytes, es.IdleBytes, es.PendingBytes = n.FrameBytes, n.BadFrames, n.BadBytes, n.IdleBytes, n.PendingBytes
			es.NotTaken, es.CutFrames = n.NotTaken, n.CutFrames
		}
		if l, ok := e.Endpoint.(drivers.Leader); ok {
			es.LineTime = l.LineMode()
		}
		es.Gaps, es.Error = s.x.EndpointState(i)
		es.ReaderRestS = s.x.ReaderRest(i).Seconds()
		es.Wire = s.x.WireSummary(s.bind.deviceWire[i])
		sum.Endpoints = append(sum.Endpoints, es)
	}
	sum.Endpoints = append(sum.Endpoints, played...)
	timing := s.timing
	s.x.Timing(&timing)
	for _, o := range sum.Outputs {
		switch o.Output {
		case record.OutputTrace:
			timing.TraceDropped = o.Lost
		case record.OutputSignals:
			timing.SignalsDropped = o.Lost
		case record.OutputRecording:
			timing.RecordingDropped = o.Lost
		}
	}
	timing.MaxRSSKiB = realtime.MaxRSS()
	sum.Timing = &timing
	return sum, runErr.orNil()
}

// closeFiles writes out the outputs (what they lost is in their
// accounts), closes the recordings replayed and ends the FMUs.
func (s *Session) closeFiles() {
	for _, o := range s.outputs {
		o.file.Close()
	}
	for _, r := range s.replays {
		r.close()
	}
	if err := closeFMUs(s.fmus); err != nil {
		s.logf("%v", err)
	}
	s.fmuSummaries = append(s.fmuSummaries, s.fmus...)
	s.fmus = nil
}

// RunError is what went wrong with a run that ran: the failure that
// stopped it, if one did (a device, a model), and what the run could not
// do as asked while it went on (an output that lost rows or frames, a
// recording that could not be replayed to its end). Each is also in the
// summary's failures.
type RunError struct {
	Stopped error
	Others  []error
}

func (e *RunError) Error() string {
	var lines []string
	if e.Stopped != nil {
		lines = append(lines, "run stopped: "+e.Stopped.Error())
	}
	for _, err := range e.Others {
		lines = append(lines, err.Error())
	}
	return strings.Join(lines, "\n")
}

// Unwrap is every failure, the one that stopped the run first.
func (e *RunError) Unwrap() []error { return e.all() }

func (e *RunError) all() []error {
	if e.Stopped == nil {
		return e.Others
	}
	return append([]error{e.Stopped}, e.Others...)
}

// orNil is e, or nil when nothing went wrong.
func (e *RunError) orNil() error {
	if e.Stopped == nil && len(e.Others) == 0 {
		return nil
	}
	return e
}

func (s *Session) closeClock() {
	if s.real != nil {
		s.real.Close()
	}
}

func (s *Session) stopDevices(eps []endpoint) {
	for i := len(eps) - 1; i >= 0; i-- {
		if err := eps[i].Stop(); err != nil && !errors.Is(err, drivers.ErrDisconnected) {
			s.logf("%s: stopping: %v", eps[i].Name(), err)
		}
	}
}

// Close releases what Open took, for a session that will not run.
func (s *Session) Close() {
	if !s.ran {
		s.ran = true
		s.closeFiles()
		s.closeClock()
	}
}

// Sim runs a profile in virtual time, with the models of bench b (nil:
// none), as fast as the CPU allows.
func Sim(p *profiles.Loaded, b *benchfile.LoadedBench, opt Options) (record.Summary, error) {
	s, err := Open(p, b, Virtual, opt)
	if err != nil {
		return record.Summary{}, err
	}
	return s.Run(context.Background())
}

// Run forwards frames between a bench's devices through a profile's
// emulated network, in real time, until the duration ends, ctx is done,
// or a device fails (see Session.Run).
func Run(ctx context.Context, p *profiles.Loaded, b *benchfile.LoadedBench, opt Options) (record.Summary, error) {
	s, err := Open(p, b, RealTime, opt)
	if err != nil {
		return record.Summary{}, err
	}
	return s.Run(ctx)
}
