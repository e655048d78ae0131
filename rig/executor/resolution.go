package executor

import "github.com/hilrig/hilrig/drivers/realtime"

// Resolution is the shortest period at which a real-time run can act on a
// recurring change of the schedule. The executor wakes for every change of
// the engine and, to be on time, stops sleeping up to realtime.DefaultSpin
// before each wakeup and spins (the VM wakes a sleeping thread tens of
// microseconds late, BENCHMARKS.md). A change recurring more often would
// keep its real-time thread spinning without a pause, which the kernel
// throttles (sched_rt_runtime_us: it stops the thread for 50 ms of every
// second), so the changes would come late by milliseconds. Virtual time
// has no such limit.
const Resolution = realtime.DefaultSpin
