// Package plant runs plant models for the rig: ordinary differential
// equations made of subsystems joined by named signals, cut at a coupling
// point into the part the rig simulates and the part that is hardware.
//
// A Model is data: its subsystems are linear state-space blocks or Go
// functions, continuous or sampled (a discrete-time controller that acts
// every period and holds its outputs in between). New checks it (every
// signal produced once, every input produced or stimulated, no algebraic
// loop) and orders its outputs. A Cut splits it in two Parts; the signals
// that cross are the coupling variables, which travel through the emulated
// network as frames (encoded by firmware/wire's codecs).
// An Integrator steps a Part with a fixed-step solver (RK4, or the implicit
// trapezoidal rule for stiff models), takes its sampled blocks' hits at
// step boundaries, and advances by one step or by a longer span in whole
// steps (AdvanceBy), exchanging its coupling variables at a slower
// communication step. Analyse computes paper 001's distortion and
// sensitivity of a cut of a continuous model in the frequency domain.
//
// The built-in models (Builtins) include paper 001's quarter car and paper
// 002's parallel pick-and-place robot with its 1 kHz PID. Each parameter
// of a built-in declares its Domain (a mass > 0, a damping ≥ 0, a gain of
// either sign; always finite, and zero or a normal float64), which
// Builtin.Model checks, whoever gives the values. New refuses a model
// whose numbers (matrix entries, initial states, stimuli) are not finite,
// and Integrator.NonFinite says when a running part's are no longer: the
// part has diverged.
//
// Inside the package time is float64 seconds, as in the equations; at its
// edges it is time.Duration, as everywhere else in the rig.
package plant
