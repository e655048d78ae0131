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
//
// # The same bits on every architecture
//
// A virtual-time run gives the same trace from the same seed on a lab's
// x86 CI and on the ARM board its rig runs on. Every basic operation of
// IEEE 754 (+, −, ×, ÷, sqrt, conversions between float64 and float32
// or an integer in range) is exact or correctly rounded on all of them,
// so the same Go gives the same bits, but for these, which this package,
// the emulator, the firmware and the rig keep to:
//
//   - No fused multiply-add. The compiler may compute x*y + z with one
//     rounding (it does on arm64, ppc64, s390x, riscv64, loong64, and
//     amd64 at GOAMD64=v3), across statements and after inlining, and x/2
//     is x*0.5 to it. Write float64(x*y) + z: an explicit conversion
//     rounds, and the compiler may not fuse it. math.FMA, which rounds
//     once everywhere, is the way to ask for one.
//   - No math function but the exact ones (Sqrt, Abs, Floor, Ceil,
//     Trunc, Round, Mod, Min, Max, Frexp, Ldexp, Modf, Copysign, FMA):
//     emulator/detmath has Exp, Log, Pow, Sin, Atan2, Hypot and the rest,
//     and complex Mul, Div, Abs and Cis for complex128's * and /, which
//     the compiler fuses too. No gonum routine that computes (its BLAS is
//     assembly on amd64 and fused elsewhere): lu.go is the solvers' LU.
//     The one exception is the RK4 stability check's eigenvalues (gonum's
//     Eigen), which decide whether a step is refused and are printed to
//     four digits in the refusal: a step within a few units in the last
//     place of the limit may be refused on one architecture and not on
//     another.
//   - No float converted to an integer out of the integer's range (or
//     NaN): amd64 gives the most negative integer, arm64 saturates. Clamp
//     first.
//   - No int where 32 bits may not do: int is 32 bits on arm and 386.
//     Counts of bytes, frames and nanoseconds are int64 (or
//     time.Duration), as are a profile's repetitions.
//   - No iteration over a map where the order reaches a result (Go
//     randomises it on every run, everywhere).
//   - A NaN's sign and payload are the processor's; hilrig writes every
//     NaN as NaN.
//
// An FMU's own code is outside these rules: it is a binary of its own on
// each platform, compiled as its author chose (C compilers contract
// x*y + z on arm64 by default). hilrig's side of it (package fmi's
// integrator, rig/fmu) keeps them, so a co-simulation with an FMU is
// reproducible bit for bit on one architecture, and across architectures
// as far as the FMU's binaries agree.
//
// tests/hardening_arch_test.go compiles hilrig for arm64 and fails on
// any fused multiply-add or call of an inexact math function in it, and
// .ci/run runs the golden tests (TestSimTracesUnchanged, the papers') and
// this package's TestSameBitsEverywhere under qemu-user for arm64 and
// arm, against the hashes recorded on amd64.
package plant
