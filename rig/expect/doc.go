// Package expect is hilrig's expectation language: a limit on one value
// that a run measured, checked when the run is over, as OpenHTF checks a
// measurement against its limits.
//
//	flows.cmd.delay.p95 < 60ms
//	flows.m2s.lost == 0
//	models.car.deflection.error_pct < 1
//	timing.release_lateness.p99 < 300us
//
// The grammar:
//
//	expectation = path op value
//	path        = name { "." name }      name = [A-Za-z0-9_-]+
//	op          = "<" | "<=" | ">" | ">=" | "==" | "!="
//	value       = number [unit] | "true" | "false" | word | quoted string
//
// A path names a value of the run's summary (record.Summary) by its JSON
// keys; lists of named things (flows, hops, phases, endpoints, models) are
// indexed by name. The paths are derived from the summary's types, not
// listed by hand (see paths.go for the rules and Paths for the whole
// tree), and a path is checked when the expectation is parsed, before the
// run starts, against the names the profile and bench define (Names), so
// that a misspelt flow is an error with a suggestion, not a failed run.
//
// Besides the summary's values, models.ENDPOINT.SIGNAL.STAT is a statistic
// of a model signal as the signals file recorded it (Signals): min, max,
// mean, rms, peak, final, and against the uncut model run alongside,
// max_error, rms_error and error_pct. The signals it may name are those
// the file has a column of, from the one list the executor records
// (executor.ModelSignals): what each part computes, receives across the
// cut and reads as model inputs, the hardware's stand-in's only in
// virtual time and without a player across the cut, and a part's own
// sim_time and t_diff, which are times (600ms) and have no uncut
// counterpart. A model's signals carry no unit: they are plain numbers.
//
// A limit the value can never be compared with meaningfully is refused
// too: a share outside 0..1 (loss_rate < 5: 5%?), a negative delay or
// size, a count == 1.5, error_pct < 1% (it is in percent already), a
// clock or a way to stop that is not one (clock == vritual); when
// Names says the run's clock, what that clock never measures (timing and
// a model's step_lateness in virtual time, a hardware stand-in in real
// time) or never is; and when Names knows the bench, what it never
// gives the run to measure: release lateness when no flow is written to
// a device (a script or a recording plays every endpoint a flow goes
// to), a device's account of an endpoint that is played or, in virtual
// time, not opened, the wire protocol's of one that does not speak it.
//
// Values carry units as profiles write them: a time is written with its
// unit (60ms, 2s, 300us), a size too (1500B, 30kB), a ratio as 1% or
// 0.01; a count is a plain number. A measured value is reported in the
// unit its limit was written in.
package expect
