// Package record is what a run leaves behind and shows while it runs: the
// per-frame trace, the model signals, the counters of named phases, the
// live snapshot, and the summary types every run (virtual or real time)
// reports in.
//
// Files are written by one Writer, synchronously in virtual time (where a
// run may take as long as it needs and must lose nothing) or from a
// goroutine of its own in real time (where the executor's thread must
// never wait for a disk). A file that fails is not written again and does
// not stop the run; the Writer's Account says what it lost.
package record
