package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
)

// residentPeak runs cmd (whose Stdout and Stderr must be files or unset)
// to its end and returns its exit code and the peak of its own resident
// memory, in bytes: the VmHWM of its memory, read as it exits.
//
// Not the rusage's Maxrss: Linux counts in it the memory of the process
// that started it, since os/exec's vfork shares the test's memory until
// the exec and the exec records that memory's peak. A child of a test
// binary built with -race read 86 MB that way, where it used 7.
func residentPeak(t testing.TB, cmd *exec.Cmd) (peak int64, code int) {
	t.Helper()
	memory, code := residentAtExit(t, cmd, "VmHWM")
	return memory[0], code
}

// residentAtExit runs cmd as residentPeak does and returns the fields of
// /proc/PID/status named (VmHWM, RssAnon, ...), in bytes, read as it
// exits.
func residentAtExit(t testing.TB, cmd *exec.Cmd, fields ...string) (memory []int64, code int) {
	t.Helper()
	// ptrace's requests come from the thread that traces.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Release()
	var status syscall.WaitStatus
	// It stops at its exec; from there, it stops once more as it exits,
	// its memory still there to read.
	if _, err := syscall.Wait4(pid, &status, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
		t.Fatal(err)
	}
	signal := 0
	for {
		if err := syscall.PtraceCont(pid, signal); err != nil {
			t.Fatal(err)
		}
		if _, err := syscall.Wait4(pid, &status, 0, nil); err != nil {
			t.Fatal(err)
		}
		switch {
		case status.Exited():
			if memory == nil {
				t.Fatalf("%s exited, its memory unread", cmd.Path)
			}
			return memory, status.ExitStatus()
		case status.Signaled():
			t.Fatalf("%s: killed by %v", cmd.Path, status.Signal())
		case status.Stopped() && status.StopSignal() == syscall.SIGTRAP && status.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			memory, signal = statusBytes(t, pid, fields), 0
		case status.Stopped():
			// A signal for it (the Go runtime's preemption, SIGURG):
			// passed on.
			signal = int(status.StopSignal())
		}
	}
}

// statusBytes reads fields of a process's /proc/PID/status that are
// amounts of memory, in bytes.
func statusBytes(t testing.TB, pid int, fields []string) []int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	memory := make([]int64, len(fields))
	for i, field := range fields {
		found := false
		for line := range bytes.Lines(status) {
			var kib int64
			if _, err := fmt.Sscanf(string(line), field+": %d kB", &kib); err == nil {
				memory[i], found = kib<<10, true
				break
			}
		}
		if !found {
			t.Fatalf("no %s in /proc/%d/status: %s", field, pid, status)
		}
	}
	return memory
}
