// Package rig is a hilrig session: it opens a profile and, when given, a
// bench; binds the profile's flows to the bench's endpoints and models;
// and runs the executor on a clock, virtual (`hilrig sim`: the profile's
// generators and the models, with stand-ins for the hardware, as fast as
// the CPU allows) or real (`hilrig run`: the bench's devices, on a
// real-time thread). Whatever the clock, a run ends in one kind of
// summary, trace and signals file (package record).
//
// The loop itself is package executor; the devices are package drivers;
// the demo is a session on a bench of pseudo-terminals with the reference
// firmware on their device side; Firmware plays any device firmware as a
// bench endpoint in software.
package rig
