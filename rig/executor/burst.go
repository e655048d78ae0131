package executor

import (
	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
)

// A burst is the frames the engine released to byte-stream devices in
// one pass (its Advance to now), written at the end of the pass with one
// write a device rather than one a frame. Frames that reach the rig
// together (a device's read that returned several, after the kernel's pty
// worker or the line was held up) leave together; written one by one, at
// about 2 µs a pty write on the VM of BENCHMARKS.md, the 30th of a burst
// left 60 µs after the first, and such bursts were two thirds of the
// slowest 1 % of releases on a loaded machine. Real time only: in virtual
// time no device is written.
type burst struct {
	frames []emulator.Frame // copies, their payloads in arena from off
	to     []drivers.BatchWriter
	iface  []int // in the recording, per frame
	off    []int // where each frame's payload starts in arena, and one past the last
	arena  []byte
	taken  []bool
	// One device's part of the burst, reused.
	batch [][]byte
	of    []int
}

// maxBurst is the most frames a burst holds before it is written: a
// bound on the buffers, far above a pass's usual one or two.
const maxBurst = 256

// stage keeps f, which arrived at its egress e, for the end of the pass,
// and reports whether it did; a frame for any other egress is handed over
// at once.
func (b *burst) stage(x *Executor, e Egress, f *emulator.Frame) bool {
	ee, ok := e.(endpointEgress)
	if !ok || !ee.device || !x.real {
		return false
	}
	w, ok := ee.w.(drivers.BatchWriter)
	if !ok {
		return false
	}
	if len(b.frames) == 0 {
		b.off = append(b.off[:0], 0)
	}
	b.frames = append(b.frames, *f)
	b.to = append(b.to, w)
	b.iface = append(b.iface, ee.iface)
	b.arena = append(b.arena, f.Payload...)
	b.off = append(b.off, len(b.arena))
	if len(b.frames) >= maxBurst {
		x.flush()
	}
	return true
}

// flush writes the burst, one write a device, and hands its frames over
// as Finished would have: their release lateness, the recording, the
// flows' counts and the trace.
func (x *Executor) flush() {
	b := &x.burst
	if len(b.frames) == 0 {
		return
	}
	now := x.clock.Now()
	b.taken = b.taken[:0]
	for i := range b.frames {
		f := &b.frames[i]
		f.Payload = b.arena[b.off[i]:b.off[i+1]]
		late := now - f.Done
		x.releaseLate.Record(late)
		x.load.late(late)
		b.taken = append(b.taken, false)
	}
	for i, w := range b.to {
		if w == nil {
			continue // written with an earlier frame's device
		}
		b.batch, b.of = b.batch[:0], b.of[:0]
		for j := i; j < len(b.to); j++ {
			if b.to[j] == w {
				b.batch = append(b.batch, b.frames[j].Payload)
				b.of = append(b.of, j)
				b.to[j] = nil
			}
		}
		taken, _ := w.WriteBatch(b.batch)
		for k, j := range b.of {
			b.taken[j] = k < taken
		}
	}
	at := x.clock.Now()
	for i := range b.frames {
		f := &b.frames[i]
		if b.taken[i] && x.recording != nil && b.iface[i] >= 0 {
			x.recording.Frame(b.iface[i], true, at, f.Flow, f.Seq, f.Payload)
		}
		x.settle(f, true, b.taken[i])
	}
	clear(b.batch) // no payload kept past the burst
	b.frames, b.to, b.iface, b.arena = b.frames[:0], b.to[:0], b.iface[:0], b.arena[:0]
}
