package rig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// RunOptions control a run against hardware.
type RunOptions struct {
	Duration time.Duration // 0: the profile's
	Trace    io.Writer     // nil: no trace
	// Priority is the executor's SCHED_FIFO priority (the endpoints'
	// reader threads get one less); 0 leaves the scheduling alone.
	Priority int
	// Spin is how long before a deadline the executor stops sleeping and
	// spins; 0 means DefaultSpin.
	Spin time.Duration
	Log  io.Writer // announcements and warnings; nil: discarded
	// Signals receives the model endpoints' signals as CSV, a row per
	// exchange (as `hilrig sim --signals`, without the hardware's).
	Signals io.Writer
	// Monitor, when set, is kept up to date for another goroutine to read.
	Monitor *Monitor
}

// DefaultSpin is the executor's spin before a deadline: long enough to
// absorb the VM's usual timer wakeup latency (BENCHMARKS.md).
const DefaultSpin = 100 * time.Microsecond

// RunSummary is what `hilrig run` prints.
type RunSummary struct {
	Profile string `json:"profile"`
	Bench   string `json:"bench"`
	Stopped string `json:"stopped"` // duration, interrupted, or what failed
	emulator.Summary
	Phases    []PhaseSummary    `json:"phases,omitempty"`
	Endpoints []EndpointSummary `json:"endpoints"`
	Models    []ModelSummary    `json:"models,omitempty"`
	Timing    TimingSummary     `json:"timing"`
}

// EndpointSummary is what one endpoint saw.
type EndpointSummary struct {
	Name        string       `json:"name"`
	Kind        string       `json:"kind"`
	Device      string       `json:"device"`
	FramesIn    uint64       `json:"frames_in"`
	FramesOut   uint64       `json:"frames_out"`
	BytesIn     uint64       `json:"bytes_in"`
	BytesOut    uint64       `json:"bytes_out"`
	BadFrames   uint64       `json:"bad_frames"`
	WriteErrors uint64       `json:"write_errors"`
	Gaps        [][2]float64 `json:"gaps_s,omitempty"` // [from, to) while the device was away
	Error       string       `json:"error,omitempty"`
}

// TimingSummary says how well the executor kept time.
type TimingSummary struct {
	Scheduler    string `json:"scheduler"`
	MemoryLocked bool   `json:"memory_locked"`
	// IdlePolling is whether idle CPUs were asked to poll rather than
	// halt for the run (/dev/cpu_dma_latency at 0).
	IdlePolling bool    `json:"idle_polling"`
	SpinS       float64 `json:"spin_s"`
	Wakeups     uint64  `json:"wakeups"`
	// WakeLateness is how late the executor woke for its deadlines;
	// ReleaseLateness how late frames were handed to their egress device
	// after the engine released them.
	WakeLateness    *emulator.DelaySummary `json:"wake_lateness_s,omitempty"`
	ReleaseLateness *emulator.DelaySummary `json:"release_lateness_s,omitempty"`
	IngressDropped  uint64                 `json:"ingress_dropped"`
	TraceDropped    uint64                 `json:"trace_dropped"`
	SignalsDropped  uint64                 `json:"signals_dropped,omitempty"`
	AllocsPerFrame  float64                `json:"allocs_per_frame"`
	MaxRSSKiB       int64                  `json:"max_rss_kib"`
}

// runner is the executor: it feeds frames from the endpoints into the
// engine and writes the frames the engine releases to their endpoints, at
// the times the engine says.
type runner struct {
	net       *emulator.Network
	clock     drivers.Clock
	wait      *waiter
	in        *ingress
	endpoints []endpoint
	flowOf    []int // per endpoint: the flow it feeds, or -1
	egress    []int // per flow: the endpoint it goes to, or -1
	trace     *runTrace
	phases    *phaseRecorder
	gaps      [][][2]time.Duration // per endpoint; a gap still open ends at -1
	failures  []string             // per endpoint: why it stopped, or last went away

	models    []*modelEndpoint // stepped by the executor
	signals   *asyncWriter[signalRecord]
	monitor   *Monitor
	flowNames []string

	wakeLate, releaseLate emulator.DelayHistogram
	wakeups               uint64
}

// Finished writes a released frame to its endpoint and records it.
func (r *runner) Finished(f *emulator.Frame) {
	if f.Copy && !f.Status.Arrived() {
		return // as in sim: copies that die have no row
	}
	rec := traceRecord{seq: f.Seq, sent: f.Sent, recv: -1, due: -1, flow: int32(f.Flow), size: int32(f.Size), status: uint8(f.Status)}
	if f.Status.Arrived() {
		rec.due = f.Done
		rec.recv = f.Done // a flow that no endpoint receives ends in the engine
		if e := r.egress[f.Flow]; e >= 0 {
			start := r.clock.Now()
			r.releaseLate.Record(start - r.net.Now())
			if err := r.endpoints[e].Write(f.Payload); err != nil {
				rec.status, rec.recv = statusEgressDrop, -1
			} else {
				rec.recv = r.clock.Now()
			}
		}
	}
	if r.phases != nil {
		r.phases.Finished(f)
	}
	if r.trace != nil {
		r.trace.add(rec)
	}
}

// Run forwards frames between a bench's endpoints through a profile's
// emulated network, in real time, until the duration ends, ctx is done, or
// a device fails. However it stops, outputs go to their safe levels and the
// trace is complete up to that instant. A failed device is returned as a
// *drivers.DeviceError, with the summary.
func Run(ctx context.Context, p *profiles.Loaded, b *profiles.LoadedBench, opt RunOptions) (RunSummary, error) {
	log := opt.Log
	if log == nil {
		log = io.Discard
	}
	logf := func(format string, args ...any) { fmt.Fprintf(log, "hilrig: "+format+"\n", args...) }
	duration := p.RunDuration()
	if opt.Duration > 0 {
		duration = opt.Duration
	}
	spin := opt.Spin
	if spin <= 0 {
		spin = DefaultSpin
	}
	// Spinning through most of a model's exchange period would keep a CPU
	// busy at real-time priority all the time, and the kernel throttles
	// that (sched_rt_runtime_us: 50 ms of every second by default): never
	// spin more than a fifth of the shortest exchange.
	for _, bm := range b.Models {
		spin = min(spin, bm.Exchange/5)
	}
	timing := TimingSummary{Scheduler: "SCHED_OTHER", SpinS: spin.Seconds()}
	if err := lockMemory(); err != nil {
		logf("cannot lock memory (%v): page faults may delay frames", err)
	} else {
		timing.MemoryLocked = true
	}

	readerThread := func() {
		if opt.Priority > 1 {
			raiseThread(opt.Priority - 1) // refused only where the executor's is: reported there
		}
	}
	eps, err := buildEndpoints(b, readerThread)
	if err != nil {
		return RunSummary{}, err
	}
	r := &runner{endpoints: eps, gaps: make([][][2]time.Duration, len(eps)), failures: make([]string, len(eps))}
	cfg := p.Config
	cfg.Flows = slices.Clone(cfg.Flows)
	r.egress = slices.Repeat([]int{-1}, len(cfg.Flows))
	r.flowOf = slices.Repeat([]int{-1}, len(eps))
	for i, name := range b.Bind.Names {
		bind := b.Bind.Values[i]
		flow := p.Flows.Index(name)
		from, to := b.Endpoints.Index(string(bind.From)), b.Endpoints.Index(string(bind.To))
		r.flowOf[from], r.egress[flow] = flow, to
		cfg.Flows[flow].Traffic = nil // the endpoint is the source now
		if leader, ok := eps[to].Endpoint.(drivers.Leader); ok && leader.LineTime(1) > 0 {
			cfg.Flows[flow].Lead = leader.LineTime
		}
	}
	for i, e := range eps {
		if m, ok := e.Endpoint.(*modelEndpoint); ok {
			m.flow = r.flowOf[i]
			r.models = append(r.models, m)
		}
	}
	if opt.Signals != nil && len(r.models) > 0 {
		r.signals = startSignals(opt.Signals, r.models)
	}
	r.monitor, r.flowNames = opt.Monitor, p.Flows.Names
	if len(p.Phases()) > 0 {
		r.phases = newPhaseRecorder(p.Phases(), p.Flows.Names)
	}
	if r.net, err = emulator.New(cfg, r); err != nil {
		return RunSummary{}, err
	}
	clock := &monoClock{start: time.Now()}
	r.clock = clock
	if r.wait, err = newWaiter(clock, spin); err != nil {
		return RunSummary{}, err
	}
	defer r.wait.close()
	r.in = newIngress(1024, r.wait.wake)
	if opt.Trace != nil {
		traced := make([]bool, len(cfg.Flows))
		for i := range traced {
			traced[i] = p.Traced(i)
		}
		r.trace = newRunTrace(opt.Trace, p.Flows.Names, traced)
	}
	for i, e := range eps {
		if err := e.Start(r.clock, r.in, i); err != nil {
			r.stopEndpoints(eps[:i], logf)
			if r.trace != nil {
				r.trace.close()
			}
			if r.signals != nil {
				r.signals.close()
			}
			return RunSummary{}, err
		}
		if a, ok := e.Endpoint.(drivers.Announcer); ok {
			logf("%s: %s", e.Name(), a.Announce())
		}
	}

	// The executor runs on this goroutine, locked to its thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(threadsFor(len(eps))))
	if opt.Priority > 0 {
		if err := raiseThread(opt.Priority); err != nil {
			logf("cannot run the executor at SCHED_FIFO priority %d (%v): timing will be less precise", opt.Priority, err)
		} else {
			defer lowerThread() // before the thread is unlocked
			timing.Scheduler = fmt.Sprintf("SCHED_FIFO priority %d", opt.Priority)
		}
		if qos, err := holdIdleLatency(); err != nil {
			logf("cannot keep idle CPUs awake (%v): waking for a frame may take longer", err)
		} else {
			defer qos.Close()
			timing.IdlePolling = true
		}
	}
	stopWaking := context.AfterFunc(ctx, r.wait.wake)
	defer stopWaking()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// Models start now, not when the clock did: opening the devices took
	// time that they would otherwise have to catch up as overruns.
	for _, m := range r.models {
		m.next = r.clock.Now()
	}
	stopped, failure := r.loop(ctx, duration)
	runtime.ReadMemStats(&after)

	// Shut down: outputs to safe levels, frames still inside reported in
	// flight, the trace written out.
	r.stopEndpoints(eps, logf)
	r.net.Finish()
	if r.trace != nil {
		if err := r.trace.close(); err != nil && failure == nil {
			failure = fmt.Errorf("writing the trace: %w", err)
		}
	}
	if r.signals != nil {
		if err := r.signals.close(); err != nil && failure == nil {
			failure = fmt.Errorf("writing the signals: %w", err)
		}
		timing.SignalsDropped = r.signals.dropped.Load()
	}

	s := RunSummary{Profile: p.Name, Bench: b.Name, Stopped: stopped, Summary: r.net.Summary()}
	if r.phases != nil {
		s.Phases = r.phases.summary()
	}
	var frames uint64
	for i, e := range eps {
		es := EndpointSummary{Name: e.Name(), Kind: e.kind, Device: e.device, Error: r.failures[i]}
		if c, ok := e.Endpoint.(drivers.Counter); ok {
			n := c.Counts()
			es.FramesIn, es.FramesOut, es.BytesIn, es.BytesOut, es.BadFrames, es.WriteErrors = n.FramesIn, n.FramesOut, n.BytesIn, n.BytesOut, n.BadFrames, n.WriteErrors
			frames += n.FramesIn
		}
		for _, g := range r.gaps[i] {
			if g[1] < 0 {
				g[1] = r.net.Now() // never came back
			}
			es.Gaps = append(es.Gaps, [2]float64{g[0].Seconds(), g[1].Seconds()})
		}
		s.Endpoints = append(s.Endpoints, es)
	}
	for _, m := range r.models {
		s.Models = append(s.Models, m.summary())
	}
	timing.Wakeups = r.wakeups
	timing.WakeLateness = r.wakeLate.Summarize()
	timing.ReleaseLateness = r.releaseLate.Summarize()
	timing.IngressDropped = r.in.dropped.Load()
	if r.trace != nil {
		timing.TraceDropped = r.trace.dropped.Load()
	}
	if frames > 0 {
		timing.AllocsPerFrame = float64(after.Mallocs-before.Mallocs) / float64(frames)
	}
	timing.MaxRSSKiB = maxRSS()
	s.Timing = timing
	return s, failure
}

// threadsFor is the GOMAXPROCS a run needs. The executor and every reader
// and bridge run on locked threads that block in system calls. A thread
// coming back from one needs a P (a Go processor); if none is idle it waits
// until the runtime's monitor takes one back from a thread in a system
// call, and the monitor, when idle, looks only every 10 ms: readers then
// stalled for milliseconds (measured: idle frames of a pty bench cut late).
// Idle Ps cost nothing, so there is one for each thread that may want one.
func threadsFor(endpoints int) int {
	return max(runtime.GOMAXPROCS(0), runtime.NumCPU()+1+2*endpoints)
}

// loop is the executor. Each turn it takes the device events and frames
// that arrived, lets the engine catch up with the clock (which hands the
// frames due to Finished), and sleeps until the engine's next event or
// until something arrives.
func (r *runner) loop(ctx context.Context, end time.Duration) (stopped string, failure error) {
	spare := make([]byte, 0, slotBytes)
	pending := func() bool { return r.in.pending() || ctx.Err() != nil }
	for {
		if ctx.Err() != nil {
			r.net.Advance(min(r.clock.Now(), end-1))
			return "interrupted", nil
		}
		for len(r.in.events) > 0 {
			if err := r.deviceEvent(<-r.in.events); err != nil {
				r.net.Advance(min(r.clock.Now(), end-1))
				return "failed: " + err.Error(), err
			}
		}
		var deadline time.Duration
		if spare, deadline = r.step(spare, end); deadline < 0 {
			return "duration", nil
		}
		if !r.wait.until(deadline, pending) {
			r.wakeups++
			r.wakeLate.Record(r.clock.Now() - deadline)
		}
	}
}

// step injects the frames that arrived, runs the engine up to now and
// returns the time of its next event (before end), or -1 once end is
// reached. spare is the buffer the ingress ring swaps frames into.
func (r *runner) step(spare []byte, end time.Duration) ([]byte, time.Duration) {
	for {
		f, ok := r.in.pop(spare)
		if !ok {
			break
		}
		if flow := r.flowOf[f.endpoint]; flow >= 0 && f.at < end {
			r.net.Advance(f.at) // what was due before the frame arrived
			r.net.Inject(flow, f.payload)
		}
		spare = f.payload
	}
	now := r.clock.Now()
	if now >= end {
		r.net.Advance(end - 1)
		return spare, -1
	}
	r.net.Advance(now)
	next := end
	for _, m := range r.models {
		m.exchange(r.net, now)
		next = min(next, m.next)
	}
	if r.monitor != nil {
		r.monitor.publish(r, now, r.flowNames)
		next = min(next, r.monitor.last+publishEvery)
	}
	if e, ok := r.net.NextEvent(); ok {
		next = min(next, e)
	}
	return spare, next
}

// deviceEvent records an endpoint going away or coming back; a device
// that goes away without reconnecting fails the run.
func (r *runner) deviceEvent(ev deviceEvent) error {
	e := r.endpoints[ev.endpoint]
	if !ev.gone {
		if g := r.gaps[ev.endpoint]; len(g) > 0 {
			g[len(g)-1][1] = ev.at
		}
		return nil
	}
	r.failures[ev.endpoint] = ev.err.Error()
	if !e.reconnects {
		return ev.err
	}
	r.gaps[ev.endpoint] = append(r.gaps[ev.endpoint], [2]time.Duration{ev.at, -1})
	return nil
}

func (r *runner) stopEndpoints(eps []endpoint, logf func(string, ...any)) {
	for i := len(eps) - 1; i >= 0; i-- {
		if err := eps[i].Stop(); err != nil && !errors.Is(err, drivers.ErrDisconnected) {
			logf("%s: stopping: %v", eps[i].Name(), err)
		}
	}
}
