// Package emulator is hilrig's impairment engine: a deterministic,
// packet-level model of an emulated network that runs in virtual time.
//
// A Network is built from a Config of hops (unidirectional stages with a
// serialisation rate, a finite queue and a propagation delay), flows (routes
// through hops, optionally fed by a synthetic traffic source) and a schedule
// of timed changes. Frames enter a flow at a time t; the engine decides when
// each frame leaves the last hop, or that it is dropped and why.
//
// A hop is an ordered list of parts (serialiser.go): the Stages that act
// as a frame enters it, its Serialiser, the Stages that decide its delay,
// and its exit. A hop's impairments (loss, duplication, corruption,
// reordering, a recorded delay, jitter) are Stages: each is one file with
// its parameters' type, its behaviour and its registration under its hop
// key, and a hop runs those its parameters turn on, in order. Its
// Serialiser is a point-to-point link (rate, flap, overhead, time per
// frame, queue) or a shared bus.
//
// The engine is pure: it never reads the wall clock and never does I/O. Time
// is a time.Duration measured from the start of the run. The same code is
// driven in two ways:
//
//   - virtual time: Run processes the event queue as fast as the CPU allows;
//   - real time: an executor calls Inject when hardware produces a frame and
//     Advance when the wall clock reaches NextEvent, and writes every
//     delivered frame the Observer receives.
//
// Every random decision draws from a Stream derived from (seed, owner,
// purpose), so one seed reproduces a run bit for bit and adding a flow does
// not change the random choices of the others, on every architecture: the
// arithmetic follows emulator/plant's rules for the same bits everywhere
// (no fused multiply-add, detmath's functions, no float outside the range
// of the integer it becomes).
package emulator
