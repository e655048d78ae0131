package expect

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
)

// names and summary are a run as the tests see it: two flows, a hop, a
// phase, a model with two signals and its own time, and a real-time
// timing section.
var names = &Names{
	Clock: Real,
	Flows: []string{"m2s", "s2m"}, Hops: []string{"core"}, Phases: []string{"outage"},
	Endpoints: []string{"controller"}, Models: []string{"car"},
	Signals: map[string][]Signal{"car": {{Name: "deflection", Ideal: true}, {Name: "v2", Ideal: true},
		{Name: "sim_time", Unit: Seconds}, {Name: "t_diff", Unit: Seconds}}},
}

func summary() *record.Summary {
	f := func(name string, sent, delivered, queue uint64, p95 float64) emulator.FlowSummary {
		return emulator.FlowSummary{Name: name, Sent: sent, Delivered: delivered, LossRate: float64(queue) / float64(sent),
			Dropped: map[string]uint64{"queue_drop": queue, "loss_drop": 0, "outage_drop": 0},
			Delay:   &emulator.DelaySummary{P50: p95 / 2, P95: p95, P99: p95 * 1.1, Max: p95 * 2}}
	}
	s := &record.Summary{Profile: "test", Clock: "real", Stopped: "duration"}
	s.Duration = 10
	s.Flows = []emulator.FlowSummary{f("m2s", 1000, 990, 10, 0.0724), f("s2m", 1000, 1000, 0, 0.021)}
	s.Hops = []emulator.HopSummary{{Name: "core", PeakQueueBytes: 30000, Dropped: map[string]uint64{"queue_drop": 10}}}
	s.Phases = []record.PhaseSummary{{Name: "outage", Windows: [][2]float64{{1, 2}, {5, 6}}, Flows: []emulator.FlowSummary{f("m2s", 100, 50, 50, 0.5)}}}
	s.Models = []record.ModelSummary{{Endpoint: "car", Model: "quarter-car", Exchanges: 5000,
		Output: &record.OutputError{Signal: "deflection", Peak: 0.02, MaxError: 0.0003, OfPeak: 0.015}}}
	s.Timing = &record.TimingSummary{MemoryLocked: true, Scheduler: "SCHED_FIFO priority 80", MaxRSSKiB: 20000,
		ReleaseLateness: &emulator.DelaySummary{P99: 250e-6}}
	return s
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"", `"": column 1: want PATH OP VALUE, e.g. flows.m2s.delay.p95 < 60ms`},
		{"< 3", `"< 3": column 1: want PATH OP VALUE, e.g. flows.m2s.delay.p95 < 60ms`},
		{"flows.m2s.lost", `"flows.m2s.lost": column 15: want a comparison (<, <=, >, >=, ==, !=) after flows.m2s.lost`},
		{"flows.m2s.lost = 0", `"flows.m2s.lost = 0": column 16: write == to compare`},
		{"flows.m2s.lost ~ 0", `"flows.m2s.lost ~ 0": column 16: "~" is not a comparison (want <, <=, >, >=, == or !=)`},
		{"flows.m2s.lost ==", `"flows.m2s.lost ==": column 18: want a value after ==`},
		{"flows.cmd.delay.p95 < 60ms", `"flows.cmd.delay.p95 < 60ms": column 7: flows has no "cmd" (it has m2s, s2m)`},
		{"flows.m2z.lost == 0", `"flows.m2z.lost == 0": column 7: flows has no "m2z"; did you mean m2s? (it has m2s, s2m)`},
		{"flow.m2s.lost == 0", `"flow.m2s.lost == 0": column 1: a summary has no "flow"; did you mean flows? (it has profile, bench, clock, stopped, failures, seed, duration, flows, hops, phases, endpoints, models, …)`},
		{"flows.m2s.dely.p95 < 60ms", `"flows.m2s.dely.p95 < 60ms": column 11: flows.m2s has no "dely"; did you mean delay? (it has name, sent, delivered, corrupted, dropped, in_flight, loss_rate, duplicates, duplicates_lost, loss_bursts, delay, lost)`},
		{"flows.m2s.delay < 60ms", `"flows.m2s.delay < 60ms": column 1: flows.m2s.delay is not a value: name one of its min, mean, p50, p95, p99, p99_9, max`},
		{"flows.m2s.delay.p95 < 60", `"flows.m2s.delay.p95 < 60": column 23: "60" needs a unit: the value is a time (e.g. 60ms, 2s, 300us)`},
		{"flows.m2s.delay.p95 < 60m", `"flows.m2s.delay.p95 < 60m": column 23: "60m" is ambiguous (write min for minutes or ms for milliseconds)`},
		{"flows.m2s.delay.p95 < 60kB", `"flows.m2s.delay.p95 < 60kB": column 23: "60kB" is not a time (want e.g. 1.5ms, 2s, 250us)`},
		{"flows.m2s.delay.p95 < fast", `"flows.m2s.delay.p95 < fast": column 23: "fast" is not a time (e.g. 60ms, 2s, 300us)`},
		{"flows.m2s.lost == 3ms", `"flows.m2s.lost == 3ms": column 19: "3ms": the value is a plain number, without a unit`},
		{"flows.m2s.lost.x == 3", `"flows.m2s.lost.x == 3": column 16: flows.m2s.lost is a value: it has no "x"`},
		{"flows.m2s.sent.x == 3", `"flows.m2s.sent.x == 3": column 16: flows.m2s.sent is a value: it has no "x"`},
		{"flows.m2s.loss_rate < 1kB", `"flows.m2s.loss_rate < 1kB": column 23: "1kB" is not a ratio (want e.g. 1% or 0.01)`},
		{"hops.core.peak_queue_bytes < 30", `"hops.core.peak_queue_bytes < 30": column 30: "30" needs a unit: the value is a size (e.g. 1500B, 30kB, 64KiB)`},
		{"hops.core.peak_queue_bytes < 30KB", `"hops.core.peak_queue_bytes < 30KB": column 30: "30KB" is ambiguous (1000 or 1024 bytes? write kB or KiB)`},
		{"hops.core.dropped.queue < 3", `"hops.core.dropped.queue < 3": column 19: hops.core.dropped has no "queue"; did you mean queue_drop? (it has collision_drop, loss_drop, outage_drop, queue_drop)`},
		{"phases.outage.windows.first < 3", `"phases.outage.windows.first < 3": column 23: phases.outage.windows is a list without names: it ends the path (and means how many it holds)`},
		{"phases.storm.windows == 2", `"phases.storm.windows == 2": column 8: phases has no "storm" (it has outage)`},
		{"models.car.deflectoin.error_pct < 1", `"models.car.deflectoin.error_pct < 1": column 12: models.car has no "deflectoin"; did you mean deflection? (it has deflection, v2, t_diff, endpoint, model, cut, solver, exchange, step, exchanges, frames_out, frames_in, …)`},
		{"models.car.deflection < 1", `"models.car.deflection < 1": column 12: models.car.deflection is a signal: name one of its min, max, mean, rms, peak, final, max_error, rms_error, error_pct`},
		{"models.car.deflection.err < 1", `"models.car.deflection.err < 1": column 23: models.car.deflection has no "err"; did you mean error_pct? (it has min, max, mean, rms, peak, final, max_error, rms_error, error_pct)`},
		{"models.car.deflection.max.x < 1", `"models.car.deflection.max.x < 1": column 27: models.car.deflection.max is a value: it has no "x"`},
		{"models.car.hardware.frames_in > 0", `"models.car.hardware.frames_in > 0": column 12: models.car.hardware is the hardware's stand-in, which only a run in virtual time has: in real time the hardware is the device`},
		{"models.seat.exchanges > 1", `"models.seat.exchanges > 1": column 8: models has no "seat" (it has car)`},
		{"timing.memory_locked < true", `"timing.memory_locked < true": column 22: timing.memory_locked is true or false: compare it with == or !=`},
		{"timing.memory_locked == yes", `"timing.memory_locked == yes": column 25: "yes" is not true or false`},
		{"stopped == by hand", `"stopped == by hand": column 12: "by hand": quote text with spaces`},
		{"stopped == \"dur", `"stopped == \"dur": column 12: "dur is not a quoted string`},
		{"flows < 3", `"flows < 3": column 1: flows is not a value: name one of them (it has m2s, s2m)`},
		{"flows..lost == 0", `"flows..lost == 0": column 7: empty name in the path`},
		{"flows.m2s.delay.p95 =< 60ms", `"flows.m2s.delay.p95 =< 60ms": column 21: write <= to compare`},
		{"flows.m2s.sent => 1", `"flows.m2s.sent => 1": column 16: write >= to compare`},
		{"flows.m2s.loss_rate < 5", `"flows.m2s.loss_rate < 5": column 23: "5" is out of range: flows.m2s.loss_rate is a fraction, from 0 to 1 (or 0% to 100%); did you mean 5%?`},
		{"flows.m2s.loss_rate < 500", `"flows.m2s.loss_rate < 500": column 23: "500" is out of range: flows.m2s.loss_rate is a fraction, from 0 to 1 (or 0% to 100%)`},
		{"flows.m2s.loss_rate <= 101%", `"flows.m2s.loss_rate <= 101%": column 24: "101%" is out of range: flows.m2s.loss_rate is a fraction, from 0% to 100%`},
		{"flows.m2s.loss_rate > -1%", `"flows.m2s.loss_rate > -1%": column 23: "-1%" is out of range: flows.m2s.loss_rate is a fraction, from 0% to 100%`},
		{"flows.m2s.delay.p95 < -1ms", `"flows.m2s.delay.p95 < -1ms": column 23: "-1ms" is out of range: flows.m2s.delay.p95 is never negative`},
		{"hops.core.peak_queue_bytes < -1kB", `"hops.core.peak_queue_bytes < -1kB": column 30: "-1kB" is out of range: hops.core.peak_queue_bytes is never negative`},
		{"flows.m2s.sent == 1.5", `"flows.m2s.sent == 1.5": column 19: "1.5": flows.m2s.sent is a whole number, so == never holds`},
		{"flows.m2s.lost != 0.5", `"flows.m2s.lost != 0.5": column 19: "0.5": flows.m2s.lost is a whole number, so != always holds`},
		{"flows.m2s.dropped > -1", `"flows.m2s.dropped > -1": column 21: "-1" is out of range: flows.m2s.dropped is never negative`},
		{"models.car.output.error_pct < 1%", `"models.car.output.error_pct < 1%": column 31: "1%": models.car.output.error_pct is already in percent: write 1`},
		{"models.car.deflection.error_pct < 1 %", `"models.car.deflection.error_pct < 1 %": column 35: "1 %": models.car.deflection.error_pct is already in percent: write 1`},
		{"models.car.deflection.rms_error < -1", `"models.car.deflection.rms_error < -1": column 35: "-1" is out of range: models.car.deflection.rms_error is never negative`},
		{"clock == vritual", `"clock == vritual": column 10: "vritual" is not a clock (want virtual, real); did you mean virtual?`},
		{"stopped == duraton", `"stopped == duraton": column 12: "duraton" is not how a run stops (want duration, interrupted, "did not start", "failed: WHY"); did you mean duration?`},
		{"clock == virtual", `"clock == virtual": column 10: the run is in real time: clock == virtual never holds`},
	} {
		_, err := Parse(tc.text, names)
		if err == nil {
			t.Errorf("Parse(%q) = nil error, want %s", tc.text, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.text, err, tc.want)
		}
	}
}

// TestParseInVirtualTime: what a run in virtual time cannot measure is
// an error when the expectation is parsed, not "nothing measured" after
// the run; with the clock unknown, the run decides.
func TestParseInVirtualTime(t *testing.T) {
	virtual := *names
	virtual.Clock = Virtual
	for _, tc := range []struct{ text, want string }{
		{"timing.release_lateness.p99 < 300us", `"timing.release_lateness.p99 < 300us": column 1: timing is measured in real time only: the summary of a run in virtual time has none`},
		{"timing.memory_locked == true", `"timing.memory_locked == true": column 1: timing is measured in real time only: the summary of a run in virtual time has none`},
		{"clock == real", `"clock == real": column 10: the run is in virtual time: clock == real never holds`},
		{"clock != virtual", `"clock != virtual": column 10: the run is in virtual time: clock != virtual never holds`},
		{"models.car.step_lateness.p99 < 1ms", `"models.car.step_lateness.p99 < 1ms": column 12: models.car.step_lateness is measured in real time only: in virtual time a model's exchanges are never late`},
		{"models.car.hardware.frames_in > 0", ""},
		{"clock == virtual", ""},
		{"clock != real", ""},
		{"flows.m2s.lost == 0", ""},
	} {
		_, err := Parse(tc.text, &virtual)
		if got := fmt.Sprint(err); got != tc.want && !(err == nil && tc.want == "") {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.text, got, tc.want)
		}
		if _, err := Parse(tc.text, &Names{}); err != nil {
			t.Errorf("Parse(%q) with the clock unknown: %v", tc.text, err)
		}
	}
}

func TestEvaluate(t *testing.T) {
	sig := &Signals{}
	io.WriteString(sig, "t,car.deflection,car.v2,car.hardware.v3,car.ideal.deflection,car.ideal.v2,car.ideal.v3\n")
	// deflection strays by at most 0.002 from an uncut peak of 0.02: 10 %.
	io.WriteString(sig, "0.000000000,0,1,5,0,1,5\n0.002000000,0.012,2,6,0.010,2,6\n0.004")
	io.WriteString(sig, "000000,0.018,3,7,0.020,3,7\n")
	sum := summary()
	for _, tc := range []struct {
		text string
		ok   bool
		want string
	}{
		{"flows.m2s.delay.p95 < 60ms", false, "flows.m2s.delay.p95 < 60ms failed: measured 72.4ms, limit 60ms"},
		{"flows.m2s.delay.p95 < 0.1s", true, "flows.m2s.delay.p95 < 0.1s: measured 0.0724s"},
		{"flows.s2m.delay.p95<=21ms", true, "flows.s2m.delay.p95 <= 21ms: measured 21ms"},
		{"flows.m2s.delay.p95 > 0", true, "flows.m2s.delay.p95 > 0: measured 72.4ms"},
		{"flows.m2s.lost == 0", false, "flows.m2s.lost == 0 failed: measured 10, limit 0"},
		{"flows.s2m.lost == 0", true, "flows.s2m.lost == 0: measured 0"},
		{"flows.m2s.dropped.queue_drop <= 10", true, "flows.m2s.dropped.queue_drop <= 10: measured 10"},
		{"flows.m2s.dropped != 10", false, "flows.m2s.dropped != 10 failed: measured 10, limit 10"},
		{"flows.m2s.loss_rate <= 1%", true, "flows.m2s.loss_rate <= 1%: measured 1%"},
		{"flows.m2s.loss_rate < 0.5%", false, "flows.m2s.loss_rate < 0.5% failed: measured 1%, limit 0.5%"},
		{"flows.m2s.loss_rate < 0.02", true, "flows.m2s.loss_rate < 0.02: measured 0.01"},
		{"hops.core.peak_queue_bytes <= 30kB", true, "hops.core.peak_queue_bytes <= 30kB: measured 30kB"},
		{"hops.core.peak_queue_bytes < 29KiB", false, "hops.core.peak_queue_bytes < 29KiB failed: measured 29.2969KiB, limit 29KiB"},
		{"phases.outage.windows == 2", true, "phases.outage.windows == 2: measured 2"},
		{"phases.outage.flows.m2s.lost >= 50", true, "phases.outage.flows.m2s.lost >= 50: measured 50"},
		{"phases.outage.flows.s2m.lost == 0", false, "phases.outage.flows.s2m.lost == 0: nothing measured (the summary has no phases.outage.flows.s2m)"},
		{"models.car.output.error_pct < 2", true, "models.car.output.error_pct < 2: measured 1.5"},
		{"models.car.output.max_error_of_peak < 1%", false, "models.car.output.max_error_of_peak < 1% failed: measured 1.5%, limit 1%"},
		{"models.car.deflection.error_pct < 1", false, "models.car.deflection.error_pct < 1 failed: measured 10, limit 1"},
		{"models.car.deflection.max_error < 0.0021", true, "models.car.deflection.max_error < 0.0021: measured 0.002"},
		{"models.car.deflection.max == 0.018", true, "models.car.deflection.max == 0.018: measured 0.018"},
		{"models.car.v2.mean == 2", true, "models.car.v2.mean == 2: measured 2"},
		{"models.car.v2.error_pct == 0", true, "models.car.v2.error_pct == 0: measured 0"},
		{"models.car.v2.final == 3", true, "models.car.v2.final == 3: measured 3"},
		{"models.car.v2.rms > 2.16", true, "models.car.v2.rms > 2.16: measured 2.16025"},
		{"models.car.exchanges == 5000", true, "models.car.exchanges == 5000: measured 5000"},
		{"models.car.step_lateness.p99 < 1ms", false, "models.car.step_lateness.p99 < 1ms: nothing measured (the summary has no models.car.step_lateness)"},
		{"timing.release_lateness.p99 < 300us", true, "timing.release_lateness.p99 < 300us: measured 250us"},
		{"timing.release_lateness.p99 < 200µs", false, "timing.release_lateness.p99 < 200µs failed: measured 250us, limit 200µs"},
		{"timing.memory_locked == true", true, "timing.memory_locked == true: measured true"},
		{"timing.idle_polling == true", false, "timing.idle_polling == true failed: measured false, limit true"},
		{"timing.release_lateness.p99 < 10s", true, "timing.release_lateness.p99 < 10s: measured 250us"},
		{"timing.max_rss < 20MB", false, "timing.max_rss < 20MB failed: measured 20.48MB, limit 20MB"},
		{"timing.max_rss < 20MiB", true, "timing.max_rss < 20MiB: measured 19.5312MiB"},
		{"timing.wake_lateness.p99 < 1ms", false, "timing.wake_lateness.p99 < 1ms: nothing measured (the summary has no timing.wake_lateness)"},
		{"stopped == duration", true, `stopped == duration: measured duration`},
		{"stopped != duration", false, `stopped != duration failed: measured duration, limit duration`},
		{`stopped != "failed: the plant went away"`, true, `stopped != "failed: the plant went away": measured "duration"`},
		{"models.car.deflection.min > -1", true, "models.car.deflection.min > -1: measured 0"},
		{"timing.release_lateness.min > -1ms", true, "timing.release_lateness.min > -1ms: measured 0ms"},
		{"flows.m2s.sent < 1000.5", true, "flows.m2s.sent < 1000.5: measured 1000"},
		{"clock == real", true, "clock == real: measured real"},
		{`stopped != "duration"`, false, `stopped != "duration" failed: measured "duration", limit "duration"`},
		{"duration >= 10s", true, "duration >= 10s: measured 10s"},
		{"events == 0", true, "events == 0: measured 0"},
		{"  flows.m2s.sent   >=   1e3  ", true, "flows.m2s.sent >= 1e3: measured 1000"},
	} {
		x, err := Parse(tc.text, names)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.text, err)
			continue
		}
		r := x.Eval(sum, sig)
		if r.OK != tc.ok || r.String() != tc.want {
			t.Errorf("%q: ok %v, %s\nwant ok %v, %s", tc.text, r.OK, r, tc.ok, tc.want)
		}
	}
}

// TestEvaluateWithoutNames: with no names known, any name parses and the
// summary decides.
func TestEvaluateWithoutNames(t *testing.T) {
	sum := summary()
	for _, tc := range []struct{ text, want string }{
		{"flows.cmd.lost == 0", "flows.cmd.lost == 0: nothing measured (the summary has no flows.cmd)"},
		{"models.car.deflection.max < 1", "models.car.deflection.max < 1: nothing measured (the run recorded no signals)"},
		{"models.car.exchanges == 5000", "models.car.exchanges == 5000: measured 5000"},
	} {
		x, err := Parse(tc.text, nil)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.text, err)
		}
		if got := x.Eval(sum, nil).String(); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.text, got, tc.want)
		}
	}
}

// TestParseUnmeasured: what the bench says a run will never measure is
// an error when the expectation is parsed, not "nothing measured" after
// the run: release lateness when no flow is written to a device (the
// script or a recording plays every endpoint a flow goes to), the
// account of a device where none is opened (virtual time, or the
// endpoint played), the wire protocol's of an endpoint that does not
// speak it. Where the bench is not known, the run decides.
func TestParseUnmeasured(t *testing.T) {
	bench := func(clock string, played ...string) *Names {
		n := &Names{Clock: clock, Flows: []string{"m2s", "s2m"}, Endpoints: []string{"controller", "plant", "sensor"}, Played: played,
			devices: map[string]device{"controller": {receives: true}, "plant": {receives: true, wire: true}, "sensor": {}}}
		return n
	}
	const (
		release     = "timing.release_lateness.p99 < 1ms"
		neverLate   = `"timing.release_lateness.p99 < 1ms": column 8: timing.release_lateness is never measured in this run: it is how late frames were written to a device, and `
		playedBoth  = neverLate + "the flows go to controller and plant, played in software (by a script or a recording); timing.wake_lateness is measured"
		framesIn    = "endpoints.controller.frames_in > 0"
		plantFrames = "endpoints.plant.frames_in > 0"
	)
	for _, tc := range []struct {
		names      *Names
		text, want string
	}{
		{bench(Real), release, ""},
		{bench(Real, "controller"), release, ""}, // plant is a device, and written to
		{bench(Real, "controller", "plant"), release, playedBoth},
		{bench("", "controller", "plant"), release, playedBoth}, // in no clock
		{&Names{Clock: Real, devices: map[string]device{}}, release, neverLate + "no flow of the bench goes to a device; timing.wake_lateness is measured"},
		{bench(Real, "controller", "plant"), "timing.wake_lateness.p99 < 1ms", ""},
		{&Names{Clock: Real}, release, ""}, // the bench not known
		{bench(Real), framesIn, ""},
		{bench(Real, "controller"), framesIn, `"endpoints.controller.frames_in > 0": column 11: endpoints.controller would be what the rig read from and wrote to a device, and controller is played in software (a script or a recording): the summary has no device of that name`},
		{bench(Virtual), framesIn, `"endpoints.controller.frames_in > 0": column 11: endpoints.controller would be what the rig read from and wrote to a device, which a run in virtual time opens none of: the summary has it in real time only`},
		{bench(""), framesIn, ""},
		{bench(Real, "plant"), plantFrames, `"endpoints.plant.frames_in > 0": column 17: endpoints.plant.frames_in is counted at a device, and plant is played in software: the summary has only its wire protocol's account (wire)`},
		{bench(Real, "plant"), "endpoints.plant.wire.messages > 0", ""},
		{bench(Virtual, "plant"), "endpoints.plant.wire.messages > 0", ""},
		{bench(Real), "endpoints.plant.wire.messages > 0", ""},
		{bench(Real), "endpoints.controller.wire.messages > 0", `"endpoints.controller.wire.messages > 0": column 22: endpoints.controller.wire is the account of the rig wire protocol, and controller does not speak it (codec: wire)`},
	} {
		_, err := Parse(tc.text, tc.names)
		if got := fmt.Sprint(err); got != tc.want && !(err == nil && tc.want == "") {
			t.Errorf("Parse(%q) with %s time, %v played:\n got %s\nwant %s", tc.text, tc.names.Clock, tc.names.Played, got, tc.want)
		}
	}
}

// TestEveryPathParses: every path the summary's types give parses (with
// its placeholders named) in a run of one clock or the other, and
// evaluates on a summary without failing to
// find its way.
func TestEveryPathParses(t *testing.T) {
	fill := strings.NewReplacer("FLOW", "m2s", "HOP", "core", "PHASE", "outage", "ENDPOINT", "controller", "MODEL", "car", "SIGNAL", "deflection", "REASON", "queue_drop", "OUTPUT", "trace")
	values := map[Unit]string{Count: "0", Seconds: "1ms", Bytes: "1kB", Ratio: "1%", Flag: "true", Text: "x"}
	words := map[string]string{"clock": "real", "stopped": "duration"} // texts of known words
	paths := Paths()
	if len(paths) < 100 {
		t.Fatalf("only %d paths", len(paths))
	}
	for _, p := range paths {
		text := fmt.Sprintf("%s >= %s", fill.Replace(p.Path), values[p.Unit])
		if p.Unit == Flag || p.Unit == Text {
			text = fmt.Sprintf("%s == %s", fill.Replace(p.Path), cmp.Or(words[p.Path], values[p.Unit]))
		}
		// Each path in a run of one clock at least, and in a run of
		// either.
		virtual, either := *names, *names
		virtual.Clock, either.Clock = Virtual, ""
		if _, err := Parse(text, &either); err != nil {
			t.Errorf("%s, the clock unknown: %v", p.Path, err)
		}
		x, err := Parse(text, names)
		if err != nil {
			x, err = Parse(text, &virtual)
		}
		if err != nil {
			t.Errorf("%s: %v", p.Path, err)
			continue
		}
		if x.Unit != p.Unit {
			t.Errorf("%s: unit %v, Paths says %v", p.Path, x.Unit, p.Unit)
		}
		x.Eval(summary(), nil) // must not panic
	}
}

func TestSignalsErrors(t *testing.T) {
	x, _ := Parse("models.car.v2.max < 1", names)
	for _, tc := range []struct{ csv, want string }{
		{"time,car.v2\n", `the signals file starts with "time", not t`},
		{"t,car.v2\n0.0,abc\n", `signals row 1: "abc" is not a number`},
		{"t,car.v2\n0.0,1,2\n", `signals row 1: "2" is not a number`},
		{"t,car.v2\n", "the run recorded no exchange"},
		{"t,car.v3\n0,1\n", "the signals have no column car.v2"},
	} {
		s := &Signals{}
		io.WriteString(s, tc.csv)
		r := x.Eval(summary(), s)
		if r.Missing != tc.want {
			t.Errorf("%q: missing %q, want %q", tc.csv, r.Missing, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"flows.m2s.delay.p95 < 60ms", "flows.m2s.lost == 0", "models.car.deflection.error_pct < 1",
		"timing.release_lateness.p99 < 300us", `stopped == "duration"`, "hops.core.peak_queue_bytes < 30kB", "flows.m2s.loss_rate <= 1%",
		"timing.memory_locked == true", "phases.outage.windows == 2", "flows.m2s.dropped != 1e-3"} {
		f.Add(s)
	}
	sum := summary()
	played := *names // and a bench whose endpoints are known, one played
	played.Endpoints = []string{"controller", "plant"}
	played.Played = []string{"plant"}
	played.devices = map[string]device{"controller": {receives: true}, "plant": {receives: true, wire: true}}
	f.Fuzz(func(t *testing.T, text string) {
		for _, n := range []*Names{names, nil, &played} {
			x, err := Parse(text, n)
			if err != nil {
				e, ok := err.(*Error)
				if !ok || e.Col < 1 || e.Col > len(text)+1 || e.Msg == "" {
					t.Fatalf("Parse(%q): %#v", text, err)
				}
				continue
			}
			r := x.Eval(sum, nil)
			if r.Measured == "" && r.Missing == "" {
				t.Fatalf("%q: neither measured nor missing", text)
			}
			// The canonical form parses to the same expectation.
			y, err := Parse(x.Canonical(), n)
			if err != nil || y.Canonical() != x.Canonical() || y.limit.num != x.limit.num && !(y.limit.num != y.limit.num) {
				t.Fatalf("%q: canonical %q reparses as %v, %v", text, x.Canonical(), y, err)
			}
		}
	})
}

// TestSignalsOfParts: a signal only the hardware's stand-in computes is
// refused where there is no stand-in (real time, its peer played); a
// time (sim_time, t_diff) takes time units; one without an uncut
// counterpart takes no error statistic.
func TestSignalsOfParts(t *testing.T) {
	n := &Names{Models: []string{"car", "twin"}, Signals: map[string][]Signal{
		"car":  {{Name: "deflection", Ideal: true}, {Name: "v3", StandIn: true, Ideal: true}},
		"twin": {{Name: "y", Ideal: true}, {Name: "sim_time", Unit: Seconds}, {Name: "t_diff", Unit: Seconds}},
	}, peers: map[string][]string{"car": {"seat"}}}
	virtual, real, played := *n, *n, *n
	virtual.Clock, real.Clock, played.Clock, played.Played = Virtual, Real, Virtual, []string{"seat"}
	for _, tc := range []struct {
		names      *Names
		text, want string
	}{
		{&virtual, "models.car.v3.max < 1", ""},
		{n, "models.car.v3.max < 1", ""},
		{&real, "models.car.v3.max < 1", `"models.car.v3.max < 1": column 12: models.car.v3 is computed by the hardware's part alone, which in real time is the device: the rig records it in virtual time only, where the hardware's part stands in for the device`},
		{&played, "models.car.v3.max < 1", `"models.car.v3.max < 1": column 12: models.car.v3 is computed by the hardware's part alone, and seat is played: without a stand-in for the hardware, the rig does not record it`},
		{&real, "models.car.v4.max < 1", `"models.car.v4.max < 1": column 12: models.car has no "v4" (it has deflection, endpoint, model, cut, solver, exchange, step, exchanges, frames_out, frames_in, bad_frames, unconverged_steps, …)`},
		{&real, "models.twin.t_diff.max < 600ms", ""},
		{&real, "models.twin.sim_time.final >= 19.9s", ""},
		{&real, "models.twin.t_diff.max < 600", `"models.twin.t_diff.max < 600": column 26: "600" needs a unit: the value is a time (e.g. 60ms, 2s, 300us)`},
		{&real, "models.twin.t_diff.peak < -1s", `"models.twin.t_diff.peak < -1s": column 27: "-1s" is out of range: models.twin.t_diff.peak is never negative`},
		{&real, "models.twin.t_diff.max_error < 1ms", `"models.twin.t_diff.max_error < 1ms": column 20: models.twin.t_diff has no counterpart in the uncut model: max_error compares with one (models.twin.t_diff has min, max, mean, rms, peak, final)`},
		{&real, "models.twin.y.max < 1", ""},
		{&real, "models.twin.sim_time < 20s", ""}, // the summary's
		{nil, "models.twin.sim_time.max < 20s", ""},
		{nil, "models.twin.t_diff.max < 600ms", ""},
		{nil, "models.twin.y.max < 600ms", `"models.twin.y.max < 600ms": column 21: "600ms": the value is a plain number, without a unit`},
	} {
		_, err := Parse(tc.text, tc.names)
		if got := fmt.Sprint(err); got != tc.want && !(err == nil && tc.want == "") {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.text, got, tc.want)
		}
	}
	sig := &Signals{}
	io.WriteString(sig, "t,twin.y,twin.ideal.y,twin.sim_time,twin.t_diff\n0.1,1,1,0,0.1\n0.2,1,1,0,0.2\n0.3,1,1,0.2,0.1\n")
	for text, want := range map[string]string{
		"models.twin.t_diff.max < 150ms":     "models.twin.t_diff.max < 150ms failed: measured 200ms, limit 150ms",
		"models.twin.sim_time.final == 0.2s": "models.twin.sim_time.final == 0.2s: measured 0.2s",
	} {
		x, err := Parse(text, &real)
		if err != nil {
			t.Fatal(err)
		}
		if got := x.Eval(summary(), sig).String(); got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}

// TestRounded: a figure for a person has three significant digits in the
// unit that reads best, and a whole number where it has more digits.
func TestRounded(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		u    Unit
		want string
	}{
		{0.0657654, Seconds, "65.8ms"}, {0.00402, Seconds, "4.02ms"}, {13.2e-6, Seconds, "13.2us"}, {2, Seconds, "2s"},
		{3600, Seconds, "3600s"}, {0, Seconds, "0s"}, {650e-9, Seconds, "650ns"}, {30000, Bytes, "30kB"},
		{0.0123, Ratio, "1.23%"}, {1234567, Count, "1234567"}, {0.5, Count, "0.5"},
	} {
		if got := Rounded(tc.v, tc.u); got != tc.want {
			t.Errorf("Rounded(%v, %v) = %q, want %q", tc.v, tc.u, got, tc.want)
		}
	}
	if got := Format(1234567, Count); got != "1234567" {
		t.Errorf("Format(1234567) = %q: a count is written whole", got)
	}
}
