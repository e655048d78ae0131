package record

import (
	"errors"
	"fmt"

	"github.com/hilrig/hilrig/emulator"
)

// Summary is what a run reports, in virtual or real time: the network's
// flows and hops, the named phases, the endpoints, the models, and in real
// time how well the executor kept time.
type Summary struct {
	Profile string `json:"profile"`
	Bench   string `json:"bench,omitempty"`
	// Clock is virtual (as fast as the CPU allows, reproducible) or real.
	Clock string `json:"clock"`
	// Stopped says why the run ended: duration, interrupted, or what
	// failed.
	Stopped string `json:"stopped"`
	// Failures are what went wrong with the run, each once: the failure
	// that stopped it (a device, a model), every output that lost rows or
	// frames (Outputs counts them), a recording that could not be
	// replayed to its end. A run with any is not the run asked for, even
	// one that ran its duration (hilrig exits 1).
	Failures []string `json:"failures,omitempty"`
	emulator.Summary
	Phases    []PhaseSummary    `json:"phases,omitempty"`
	Endpoints []EndpointSummary `json:"endpoints,omitempty"`
	Models    []ModelSummary    `json:"models,omitempty"`
	// Events are what happened to the run at an instant: changes made by
	// hand through the live API, the supervisor's alarms.
	Events []Event `json:"events,omitempty"`
	// Outputs account for the files the run wrote as it went.
	Outputs []OutputSummary `json:"outputs,omitempty"`
	Timing  *TimingSummary  `json:"timing,omitempty"`
}

// The outputs a run writes as it goes, as Summary.Outputs names them, in
// its order.
const (
	OutputTrace     = "trace"
	OutputSignals   = "signals"
	OutputQueues    = "queues"
	OutputRecording = "recording"
)

// OutputNames are the outputs' names.
var OutputNames = []string{OutputTrace, OutputSignals, OutputQueues, OutputRecording}

// OutputSummary accounts for a file the run wrote as it went (trace,
// signals, queues, recording): every row it was given (every frame, for
// the recording) is in exactly one of written, dropped and unwritten once
// the run has ended.
type OutputSummary struct {
	Output  string `json:"output"`
	Written uint64 `json:"written"`
	// Lost is what the file does not have: dropped + unwritten.
	Lost uint64 `json:"lost"`
	// Dropped were lost to a full ring in real time, where the file is
	// written from a goroutine of its own and the disk fell behind by
	// more than the ring holds.
	Dropped uint64 `json:"dropped"`
	// Unwritten were lost to the file failing (a full disk): those not
	// yet in it when it failed, and every one after, for a file that
	// failed is not written again: it holds what came before its failure,
	// without a hole, perhaps followed by part of the row it failed in.
	Unwritten uint64 `json:"unwritten"`
	Error     string `json:"error,omitempty"`
}

// Summary is the account of the output named output.
func (c Account) Summary(output string) OutputSummary {
	s := OutputSummary{Output: output, Written: c.Written, Lost: c.Lost(), Dropped: c.Dropped, Unwritten: c.Unwritten}
	if c.Err != nil {
		s.Error = c.Err.Error()
	}
	return s
}

// ErrOutputLost is what the failure of an output that lost records
// wraps: the run's result is not all that was asked for, through no
// fault of what was tested (hilrig then exits 2, not 1).
var ErrOutputLost = errors.New("an output lost records")

// Failure says what the output named output lost, its records being
// units ("rows", "frames"); nil if it lost nothing. It wraps the file's
// write error, and ErrOutputLost.
func (c Account) Failure(output, units string) error {
	total := c.Written + c.Lost()
	lost := fmt.Sprintf("%d of its %d %s lost", c.Lost(), total, units)
	switch {
	case total == 0:
		lost = fmt.Sprintf("it had no %s to write, only its header", units)
	case c.Written == 0:
		lost = fmt.Sprintf("all its %d %s lost", total, units)
	}
	switch {
	case c.Err == nil && c.Dropped == 0:
		return nil
	case c.Err == nil:
		return lostError{fmt.Errorf("the %s is incomplete: %s to a full ring: the disk fell behind by more than the ring holds", output, lost)}
	case c.Dropped > 0:
		lost += fmt.Sprintf(" (%d to a full ring before: the disk fell behind)", c.Dropped)
	}
	if c.Written > 0 {
		lost += fmt.Sprintf("; the file has the %d before it failed", c.Written)
	}
	return lostError{fmt.Errorf("writing the %s failed: %w: %s", output, c.Err, lost)}
}

// lostError is an output's failure: its message, its cause, and
// ErrOutputLost.
type lostError struct{ error }

func (e lostError) Unwrap() []error { return []error{e.error, ErrOutputLost} }

// Event is something that happened to a run at an instant of its clock.
type Event struct {
	AtS float64 `json:"at_s"`
	// Wall is the wall-clock time of a real-time (or paced) run's event,
	// RFC 3339 with nanoseconds; absent in virtual time.
	Wall   string `json:"wall,omitempty"`
	Kind   string `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// EndpointSummary is what one endpoint saw.
type EndpointSummary struct {
	Name      string `json:"name"`
	Kind      string `json:"kind"`
	Device    string `json:"device"`
	FramesIn  uint64 `json:"frames_in"`
	FramesOut uint64 `json:"frames_out"`
	BytesIn   uint64 `json:"bytes_in"`
	BytesOut  uint64 `json:"bytes_out"`
	// Every byte in is in exactly one of: the frames read (their framing
	// included), the bad frames dropped (too long, undecodable), idle
	// delimiters that ended no frame, and a frame begun but not ended when
	// the run stopped: bytes_in = frame_bytes + bad_bytes + idle_bytes +
	// partial_frame_bytes.
	FrameBytes   uint64 `json:"frame_bytes"`
	BadFrames    uint64 `json:"bad_frames"`
	BadBytes     uint64 `json:"bad_bytes"`
	IdleBytes    uint64 `json:"idle_bytes"`
	PendingBytes uint64 `json:"partial_frame_bytes"`
	// WriteErrors are the frames the device was written and did not
	// take, whatever the reason; of them, NotTaken because it was not
	// reading (its side full). CutFrames are frames whose head it took
	// and whose rest could not follow before it went away or the run
	// stopped.
	WriteErrors uint64 `json:"write_errors"`
	NotTaken    uint64 `json:"frames_not_taken"`
	CutFrames   uint64 `json:"frames_cut"`
	// LineTime says how writes to a serial line are timed: led by the
	// UART's line time, or not at all on a pseudo-terminal.
	LineTime string       `json:"line_time,omitempty"`
	Gaps     [][2]float64 `json:"gaps_s,omitempty"` // [from, to) while the device was away
	// ReaderRestS is how long the endpoint's reader thread rested, having
	// used its share of the CPU (executor.ReaderBudget) on a flood of
	// frames, which waited in the kernel meanwhile.
	ReaderRestS float64 `json:"reader_rest_s,omitempty"`
	Error       string  `json:"error,omitempty"`
	// Wire is, for an endpoint with codec wire, the protocol's account of
	// what the device sent (counted as the frames were read, before the
	// emulated network), and of the device's clock.
	Wire *WireSummary `json:"wire,omitempty"`
}

// WireSummary is what one sender's rig wire protocol messages showed the
// rig (firmware/README.md): the messages and what was wrong with them, the
// one-way delay from the sender, its clock against the rig's, and its
// heartbeat.
type WireSummary struct {
	// Messages are the well-formed messages. A frame that is no message
	// failed its CRC or is malformed (too short, an unknown version or
	// type, a payload that does not fit its type). Of the messages, by
	// their numbers: gaps are the times numbers were skipped, missed the
	// numbers skipped and not received since, duplicates and late ones
	// (out of order) are stale, and restarts are the sender starting its
	// numbers again.
	Messages   uint64 `json:"messages"`
	CRCErrors  uint64 `json:"crc_errors"`
	Malformed  uint64 `json:"malformed"`
	Gaps       uint64 `json:"gaps"`
	Missed     uint64 `json:"missed"`
	Duplicates uint64 `json:"duplicates"`
	Late       uint64 `json:"late"`
	Restarts   uint64 `json:"restarts"`
	// OneWayDelay is each message's arrival less the time the sender
	// stamped it with, mapped to the rig's clock: from the sender's clock
	// through its line, the rig's reader and, for a model, the emulated
	// network. A device's messages are measured once its clock is known
	// (after the first time exchange); a negative delay (the estimate's
	// error) counts as zero.
	OneWayDelay *emulator.DelaySummary `json:"one_way_delay_s,omitempty"`
	// TimeExchanges are the time requests the rig sent the device (once a
	// second, every 100 ms to another rig, directly, not through the
	// emulated network) that were answered. ClockOffsetS is the device's clock less the rig's at the
	// end, and ClockDrift its rate less the rig's (50e-6: it gains 50 µs
	// a second), fitted to the last 32 answers (leaving out those that took 1 ms
	// longer than the quickest: they waited somewhere); absent without
	// answers.
	TimeExchanges uint64   `json:"time_exchanges,omitempty"`
	ClockOffsetS  *float64 `json:"clock_offset_s,omitempty"`
	ClockDrift    *float64 `json:"clock_drift,omitempty"`
	// TimeRequestsAnswered are the peer's time requests the rig answered
	// itself (the peer is another rig); PeerLost how often the peer went
	// silent past its timeout (peer_lost events).
	TimeRequestsAnswered uint64 `json:"time_requests_answered,omitempty"`
	PeerLost             uint64 `json:"peer_lost,omitempty"`
	// Heartbeats counts the sender's heartbeats; Status is the last one's:
	// ok, fault (a controller's measurements stopped), safe (a plant
	// node's watchdog holds its outputs safe), or both. Each change is an
	// event of the run and a row of the trace.
	Heartbeats uint64 `json:"heartbeats,omitempty"`
	Status     string `json:"status,omitempty"`
}

// ModelSummary is what a model endpoint did.
type ModelSummary struct {
	Endpoint    string  `json:"endpoint"`
	Model       string  `json:"model"`
	Cut         string  `json:"cut"`
	Solver      string  `json:"solver"`
	ExchangeS   float64 `json:"exchange_s"`
	StepS       float64 `json:"step_s"`
	Exchanges   uint64  `json:"exchanges"`
	FramesOut   uint64  `json:"frames_out"`
	FramesIn    uint64  `json:"frames_in"`
	BadFrames   uint64  `json:"bad_frames"`
	Unconverged uint64  `json:"unconverged_steps"`
	// Hardware is the hardware part's side, when a virtual-time run
	// stands in for it.
	Hardware *ModelEndSummary `json:"hardware,omitempty"`
	// Output compares the model's output of interest with the uncut
	// model run alongside: in virtual time with the stand-in for the
	// hardware, in real time when the rig simulates the output (its
	// hardware part then being the model's, not the bench's).
	Output *OutputError `json:"output,omitempty"`
	// StepLateness is how late exchanges started after their time, and
	// Overruns how many started after the next one was due (real time
	// only).
	StepLateness *emulator.DelaySummary `json:"step_lateness_s,omitempty"`
	Overruns     uint64                 `json:"overruns,omitempty"`
	// Stepping is hold (the part steps at every exchange on the input it
	// last received) or wait (it steps when an input valid for the step
	// has arrived); absent for a plain hold without supervisor.
	Stepping string `json:"stepping,omitempty"`
	// SimTimeS is, stepping on data, the part's simulated time at the end.
	SimTimeS float64 `json:"sim_time_s,omitempty"`
	// GapSteps are the steps taken through a gap in the data: once a
	// message newer than a step's target has arrived, none valid for it
	// will (messages arrive in order), and the part steps on the data it
	// last took up instead of waiting for ever.
	GapSteps uint64 `json:"gap_steps,omitempty"`
	// Timestamps says what the messages the part steps on are stamped
	// with: the sender's clock (codec wire: mapped to the rig's), or the
	// rig's ingress less a nominal delay (for a device that stamps
	// nothing, and for a wire device's first messages, before its clock
	// is known: then both are said, with how many each).
	Timestamps string `json:"timestamps,omitempty"`
	// Messages counts what the part sends across the cut, one message per
	// step, as paper 004's Tables 3 and 4 do.
	Messages *MessageCounts `json:"messages,omitempty"`
	// Sync is the supervisor's account.
	Sync *SyncSummary `json:"sync,omitempty"`
	// Wire is, for a model whose codec is wire, the protocol's account of
	// the messages its part received, after the emulated network; its
	// one-way delay is from the sender's stamp (the stand-in's, on the
	// rig's clock, in virtual time; a device's, mapped through its
	// endpoint's clock estimate, in real time).
	Wire *WireSummary `json:"wire,omitempty"`
	// FMU is, for an FMU endpoint, what its FMU did.
	FMU *FMUSummary `json:"fmu,omitempty"`
}

// FMUSummary is what an FMU endpoint's FMU did.
type FMUSummary struct {
	File      string `json:"file"`
	Interface string `json:"interface"` // Co-Simulation or Model Exchange
	Isolated  bool   `json:"isolated"`
	Steps     uint64 `json:"steps"` // communication steps taken
	// SolverSteps, Rejected and Events are hilrig's integrator's, for
	// Model Exchange.
	SolverSteps uint64 `json:"solver_steps,omitempty"`
	Rejected    uint64 `json:"rejected_steps,omitempty"`
	Events      uint64 `json:"events,omitempty"`
	// Error is why it failed, if it did.
	Error string `json:"error,omitempty"`
}

// MessageCounts are the messages a supervised part generated, one per
// step: Generated = Sent + Skipped + SkippedDisruption, and of those sent,
// Received arrived at the device, Lost were dropped on the way and
// InFlight were still on their way at the end.
type MessageCounts struct {
	Generated uint64 `json:"generated"`
	// Sent is the frames the part sent (its flow's, in the trace),
	// SafeSent included.
	Sent     uint64 `json:"sent"`
	Received uint64 `json:"received"`
	Lost     uint64 `json:"lost"`
	InFlight uint64 `json:"in_flight"`
	// Skipped were not sent while out of sync; SkippedDisruption while out
	// of sync in an episode that overlapped a disruption of the network (a
	// named phase of the profile's schedule). Each has a suppressed row in
	// the trace.
	Skipped           uint64 `json:"skipped"`
	SkippedDisruption uint64 `json:"skipped_disruption"`
	// SafeSent, of those sent, carried the supervisor's safe values
	// instead of the model's while out of sync (shadow with safe values:
	// then nothing is skipped).
	SafeSent uint64 `json:"safe_sent"`
}

// SyncSummary is a supervisor's account of a run.
type SyncSummary struct {
	ThetaSafeS  float64 `json:"theta_safe_s"`
	CheckS      float64 `json:"check_s"`
	Jump        int     `json:"jump"`
	OnOutOfSync string  `json:"on_out_of_sync"`
	OutOfSync   bool    `json:"out_of_sync"` // at the end
	// PeakTDiffS is the largest discrepancy the supervisor computed: after
	// each step and at each check between steps, where a stalled model's
	// grows (so it is at least every episode's).
	PeakTDiffS float64          `json:"peak_t_diff_s"`
	Episodes   []EpisodeSummary `json:"episodes,omitempty"`
	// ViolatingRuns counts the stretches of consecutive steps with t_diff >
	// θ_safe by their length (paper 004's Figure 9).
	ViolatingRuns []RunCount `json:"violating_runs,omitempty"`
}

// EpisodeSummary is one stretch out of sync.
type EpisodeSummary struct {
	StartS float64  `json:"start_s"`
	EndS   *float64 `json:"end_s,omitempty"` // absent: it lasted to the end
	// PeakTDiffS is the largest discrepancy the supervisor computed in
	// the episode, after steps and at the checks between them.
	PeakTDiffS float64 `json:"peak_t_diff_s"`
	// Steps taken while out of sync (to resync), and their sizes.
	Steps     int         `json:"steps"`
	StepSizes []StepCount `json:"step_sizes,omitempty"`
	Disrupted bool        `json:"disrupted"`
}

// StepCount is how many steps had a size.
type StepCount struct {
	StepS float64 `json:"step_s"`
	Count uint64  `json:"count"`
}

// RunCount is how many stretches of Steps consecutive violating steps
// there were.
type RunCount struct {
	Steps int    `json:"steps"`
	Count uint64 `json:"count"`
}

// ModelEndSummary is the frames of the hardware part's stand-in.
type ModelEndSummary struct {
	FramesOut uint64 `json:"frames_out"`
	FramesIn  uint64 `json:"frames_in"`
	BadFrames uint64 `json:"bad_frames"`
}

// OutputError is how far the cut model strays from the uncut one.
type OutputError struct {
	Signal   string  `json:"signal"`
	Peak     float64 `json:"peak"`      // largest |value| of the uncut model
	MaxError float64 `json:"max_error"` // largest |cut − uncut|
	RMSError float64 `json:"rms_error"`
	// OfPeak is MaxError/Peak; absent when the uncut output stays at
	// zero (a regulation error, say), where only MaxError means anything.
	OfPeak float64 `json:"max_error_of_peak,omitempty"`
	// DivergedS is the run time at which the cut model's output stopped
	// being a finite number (the loop went unstable); the errors are those
	// up to then.
	DivergedS *float64 `json:"diverged_at_s,omitempty"`
}

// TimingSummary says how well a real-time executor kept time.
type TimingSummary struct {
	// Started is the wall-clock time (RFC 3339, nanoseconds) at which the
	// run's clock read zero: what puts two sites' runs on one time line
	// (hilrig join), beside the offset their time exchanges measured.
	Started      string `json:"started,omitempty"`
	Scheduler    string `json:"scheduler"`
	MemoryLocked bool   `json:"memory_locked"`
	// IdlePolling is whether idle CPUs were asked to poll rather than
	// halt for the run (/dev/cpu_dma_latency at 0).
	IdlePolling bool `json:"idle_polling"`
	// KernelPreemption is the kernel's preemption model
	// (realtime.KernelPreemption): under "none" and "voluntary" the
	// executor waits, runnable, for whatever system call another process
	// is in on its CPU.
	KernelPreemption string `json:"kernel_preemption,omitempty"`
	// SpinS is the longest the executor spins before a deadline (--spin);
	// SpinUsedS what it spun at the end of the run, when it spun (see
	// SpinShedS): what covered 99 % of its last 1024 sleeps' lateness, at
	// most SpinS.
	SpinS     float64 `json:"spin_s"`
	SpinUsedS float64 `json:"spin_used_s"`
	Wakeups   uint64  `json:"wakeups"`
	// WakeLateness is how late the executor woke for its deadlines;
	// ReleaseLateness how late frames were handed to their egress device
	// after the engine released them.
	WakeLateness    *emulator.DelaySummary `json:"wake_lateness_s,omitempty"`
	ReleaseLateness *emulator.DelaySummary `json:"release_lateness_s,omitempty"`
	IngressDropped  uint64                 `json:"ingress_dropped"`
	// Busy is the fraction of the run the executor's thread was working or
	// spinning rather than asleep. Overloads counts the stretches in which
	// it ran out of its share of the CPU and rested (executor.LoadBudget),
	// OverloadS how long they lasted in all, and SpinShedS how long it
	// slept all the way to its deadlines rather than spin, to leave the
	// CPU to others.
	Busy      float64 `json:"busy"`
	Overloads uint64  `json:"overloads"`
	OverloadS float64 `json:"overload_s"`
	SpinShedS float64 `json:"spin_shed_s"`
	// TraceDropped, SignalsDropped and RecordingDropped count the rows
	// (frames) each of those files lost, to a full ring or to the file
	// failing (Summary.Outputs says which).
	TraceDropped     uint64 `json:"trace_dropped"`
	SignalsDropped   uint64 `json:"signals_dropped,omitempty"`
	RecordingDropped uint64 `json:"recording_dropped,omitempty"`
	// ProcessAllocs counts what the whole process allocated while the
	// executor ran: not per frame (the executor's thread allocates
	// nothing per frame, which tests check) but the housekeeping beside
	// it, a few allocations a second (the status line, a live server,
	// a reconnecting device polled), so that a leak would show.
	ProcessAllocs uint64 `json:"process_allocs"`
	MaxRSSKiB     int64  `json:"max_rss_kib"`
}

// Handed is what became of a flow's frames that the engine delivered to an
// egress of the rig (a device, an endpoint played in software, a model):
// the executor keeps one per flow. A frame the egress would not take
// (disconnected, or a write error) is an egress_drop: the flow's summary,
// the live snapshots and the metrics count it as dropped, not delivered.
type Handed struct {
	// Dropped counts the egress_drop frames, Corrupted those of them the
	// engine had corrupted, Copies the duplicates that were egress_drop.
	Dropped, Corrupted, Copies uint64
	// Delay is the one-way delay (the engine's, from entering the first
	// hop to leaving the last) of the frames handed over: the flow's delay
	// without its egress_drop frames.
	Delay emulator.DelayHistogram
}

// Add counts a frame the engine delivered: taken is whether its egress
// took it. It allocates nothing once the histogram has grown.
func (h *Handed) Add(f *emulator.Frame, taken bool) {
	switch {
	case taken:
		if !f.Copy {
			h.Delay.Record(f.Done - f.Sent)
		}
	case f.Copy:
		h.Copies++
	default:
		h.Dropped++
		if f.Status == emulator.Corrupted {
			h.Corrupted++
		}
	}
}

// Apply moves a flow summary's egress_drop frames from delivered to
// dropped, with the loss rate and the delay to match. always adds
// dropped.egress_drop even when it is zero (a real-time run, where a
// device may refuse frames); a virtual-time run's summary has it only if
// a frame was refused.
func (h *Handed) Apply(fs *emulator.FlowSummary, always bool) {
	if h.Copies > 0 {
		fs.Duplicates -= h.Copies
		fs.DuplicatesLost += h.Copies
	}
	if h.Dropped == 0 && !always {
		return
	}
	if fs.Dropped == nil {
		fs.Dropped = map[string]uint64{}
	}
	fs.Dropped[StatusName(EgressDrop)] = h.Dropped
	if h.Dropped == 0 {
		return
	}
	fs.Delivered -= h.Dropped
	fs.Corrupted -= h.Corrupted
	var total uint64
	for _, n := range fs.Dropped {
		total += n
	}
	if fs.Sent > 0 {
		fs.LossRate = float64(total) / float64(fs.Sent)
	}
	fs.Delay = h.Delay.Summarize()
}
