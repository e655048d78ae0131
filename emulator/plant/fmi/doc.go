// Package fmi reads Functional Mock-up Units (FMI 2.0 and 3.0, the
// Modelica Association's standard for exchanging plant models) and steps
// them, without touching a file, a library or the clock: the rig's side of
// loading one (unpacking, the shared library, its C calls) is rig/fmu, behind
// the Instance interfaces declared here.
//
// Parse reads a model description (modelDescription.xml): the interfaces the
// FMU offers with their capability flags, its default experiment, units and
// types, every variable and the model structure. Every problem is reported
// with its line and column. ReadArchive reads the .fmu (a zip) from bytes:
// the description, which binaries it carries for which platforms, its
// resources, and refuses what could harm the machine it is unpacked on
// (names that leave the directory, links, zip bombs), within documented
// Limits.
//
// An Instance is one instantiated FMU, in Go types: values are set and got
// by value reference as float64 whatever the variable's type (hilrig's
// signals are float64), split by capability as periph's conn is:
// CoSimulation adds DoStep, ModelExchange the continuous-time calls. A
// Stepper drives one through FMI's state machine at a communication step:
// Co-Simulation by the FMU's own solver, Model Exchange by this package's
// adaptive Dormand–Prince integrator with the FMU's state events located by
// bisection on the integrator's dense output, its time events and step
// events, and event iteration. It neither allocates nor reads the clock per
// step. Package fmitest has FMUs written in Go, so that all of this is
// tested without native code.
//
// Time is float64 seconds here, as it is in FMI: an FMU's next event time
// comes as a float64 and would be rounded by a conversion to nanoseconds.
package fmi
