//go:build race

package tests

// raceDetector says the tests were built with -race, whose instrumented
// code runs several times slower: a real-time thread that cannot keep up
// then never sleeps, and at SCHED_FIFO it holds its CPU until the
// kernel's real-time throttling stops it for the rest of each second.
const raceDetector = true
