package tests

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// TestRealTimeOnOneCPU runs the rig at SCHED_FIFO with the whole process
// confined to one CPU (as `taskset -c 3 hilrig run` confines it, or a
// machine or container with one CPU does) and carries a frame each way
// every 250 µs through 20 ms hops for 4 s.
//
// Go's runtime monitor (sysmon) holds a goroutine's scan bit for a moment
// whenever it looks at a thread in a system call, and a thread coming back
// from the call spins until the bit is released, yielding only to threads
// of its own priority. With the executor and the readers above the
// monitor's priority on the monitor's only CPU, a thread that woke while
// the monitor held its bit preempted the monitor and spun for good: the
// rig stopped forwarding within 1 to 3 s and answered no signal but
// SIGKILL (main at 283e972: 4 of 4 runs of this test; 3 of 4 of
// tests/perf/delay-error.sh's bench under taskset, by hand).
func TestRealTimeOnOneCPU(t *testing.T) {
	if !canRaise() {
		t.Skip("needs SCHED_FIFO (root or CAP_SYS_NICE): without it no thread outranks the runtime's")
	}
	var r *rigProcess
	onOneCPU(t, func() { r = startRig(t, link20ms, ptyBenchText("line", ""), "--priority", "80") })
	ctrl, plant := r.attach("controller"), r.attach("plant")
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	const n, every = 16000, 250 * time.Microsecond
	start := time.Now()
	got := make([][]received, 2)
	during := make(chan map[string]int, 1) // the rig's threads by policy, a second into the run
	var reading sync.WaitGroup
	for i, device := range []serial.Port{plant, ctrl} {
		reading.Go(func() {
			harnessThread()
			got[i], _ = receive(device, line, start)
		})
	}
	// One thread writes both ways at each period's start, as
	// tests/perf/probe does: the releases of frames 20 periods old fall
	// at the instants new frames arrive.
	sent := make(chan struct{})
	look := time.AfterFunc(time.Second, func() { during <- schedulingOf(r.cmd.Process.Pid) })
	defer look.Stop()
	go func() {
		defer close(sent)
		harnessThread()
		var buf []byte
		for i := range n {
			ts := unix.NsecToTimespec(time.Until(start.Add(time.Duration(i) * every)).Nanoseconds())
			if ts.Nano() > 0 {
				unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
			}
			buf = line.Append(buf[:0], payload(i, time.Since(start)))
			ctrl.Write(buf)
			plant.Write(buf)
		}
	}()
	select {
	case <-sent:
	case <-time.After(n*every + 10*time.Second):
		// A stuck rig reads nothing, the ptys fill, and the writes block.
		r.cmd.Process.Kill()
		<-r.exited
		t.Fatalf("the rig stopped forwarding: %d and %d frames arrived of %d each way in %v: %s",
			len(got[0]), len(got[1]), n, time.Since(start).Round(time.Millisecond), r.stderr.String())
	}
	time.Sleep(200 * time.Millisecond) // the last frames' 20 ms, and then some
	if code := r.stop(os.Interrupt); code != 0 {
		t.Fatalf("hilrig exited %d: %s", code, r.stderr.String())
	}
	ctrl.Close()
	plant.Close()
	reading.Wait()
	// One CPU carries the kernel's pty work (at normal priority, below
	// every thread of the rig) and the machine's other load: a device
	// side's pty may fill, and the rig drops what it does not take, and
	// counts it. What must hold is that it kept forwarding to the end: a
	// rig that stopped reading would have blocked the writes above, and
	// one that stopped writing would leave frames neither delivered nor
	// counted.
	s := r.readSummary()
	for i, way := range []struct{ name, flow string }{{"controller to plant", "m2s"}, {"plant to controller", "s2m"}} {
		name, dropped := way.name, uint64(0)
		for _, f := range s.Flows {
			if f.Name == way.flow {
				dropped = f.Dropped["egress_drop"]
			}
		}
		if uint64(len(got[i]))+dropped != n {
			t.Errorf("%s: %d frames arrived of %d, %d counted as not taken; the rig's account: %+v %+v",
				name, len(got[i]), n, dropped, s.Flows, s.Endpoints)
		}
		t.Logf("%s: %d frames of %d arrived, %d not taken by the device's side", name, len(got[i]), n, dropped)
	}
	checkOneCPUThreads(t, "the rig's", <-during)
	if !strings.Contains(s.Timing.Scheduler, "SCHED_FIFO") {
		t.Errorf("scheduler %q: the run was not at real-time priority", s.Timing.Scheduler)
	}
	t.Logf("scheduler: %s; release lateness p99 %.1f µs, max %.1f µs", s.Timing.Scheduler,
		s.Timing.ReleaseLateness["p99"]*1e6, s.Timing.ReleaseLateness["max"]*1e6)
}

// TestDemoOnOneCPU runs `hilrig demo` confined to one CPU: every thread
// of the process but the executor's must run at one priority. Its
// firmware's thread ran below the others, took a reader's scan bit or the
// executor's (see TestRealTimeOnOneCPU) and was preempted: the demo hung
// in 1 of 4 runs of 10 s by hand (main at 283e972 with the run's own
// threads made alike, the firmware's not).
func TestDemoOnOneCPU(t *testing.T) {
	if !canRaise() {
		t.Skip("needs SCHED_FIFO (root or CAP_SYS_NICE): without it no thread outranks the runtime's")
	}
	var cmd *exec.Cmd
	out := &lockedBuffer{}
	onOneCPU(t, func() {
		cmd = exec.Command(hilrig, "demo", "--duration", "3s")
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
	})
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Its status lines say how far the run is ("  1.2/3s"), a second apart.
	progress := regexp.MustCompile(`(?m)^ +([0-9]+\.[0-9])/3s `)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if m := progress.FindAllStringSubmatch(out.String(), -1); m != nil {
			if at, _ := strconv.ParseFloat(m[len(m)-1][1], 64); at >= 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the demo never reached 1 s: %s", out.String())
		}
	}
	checkOneCPUThreads(t, "the demo's", schedulingOf(cmd.Process.Pid))
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("hilrig demo: %v: %s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the demo did not end: %s", out.String())
	}
}

// checkOneCPUThreads checks whose threads (counted by schedulingOf a
// second into a run at --priority 80 on one CPU): the executor's at
// SCHED_FIFO 80, every other at 79.
func checkOneCPUThreads(t *testing.T, whose string, counts map[string]int) {
	t.Helper()
	if len(counts) != 2 || counts["SCHED_FIFO 80"] != 1 || counts["SCHED_FIFO 79"] == 0 {
		t.Errorf("%s threads a second into the run: %v, want the executor's at SCHED_FIFO 80 and every other at 79", whose, counts)
	}
}

// schedulingOf counts the threads of process pid by policy and priority
// ("SCHED_FIFO 80", "SCHED_OTHER").
func schedulingOf(pid int) map[string]int {
	counts := map[string]int{}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		switch {
		case err != nil: // the thread has ended
		case attr.Policy == unix.SCHED_FIFO:
			counts[fmt.Sprintf("SCHED_FIFO %d", attr.Priority)]++
		default:
			counts["SCHED_OTHER"]++
		}
	}
	return counts
}

// onOneCPU runs start, which starts a process, from a thread allowed the
// CPU it is on and no other: the process inherits the thread's affinity.
func onOneCPU(t *testing.T, start func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was, one unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatal(err)
	}
	for cpu := range 1024 { // the last CPU it may use
		if was.IsSet(cpu) {
			one.Zero()
			one.Set(cpu)
		}
	}
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &was)
	start()
}
