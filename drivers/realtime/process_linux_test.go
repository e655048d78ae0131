package realtime

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// policies counts the process's threads by scheduling policy and
// priority.
func policies(t *testing.T) map[[2]uint32]int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	n := map[[2]uint32]int{}
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		if attr, err := unix.SchedGetAttr(tid, 0); err == nil {
			n[[2]uint32{attr.Policy, attr.Priority}]++
		}
	}
	return n
}

// TestRaiseProcess: every thread at normal priority goes to SCHED_FIFO 1,
// a thread at a real-time priority of its own keeps it, a thread made
// afterwards inherits the raise, and restoring puts back to normal
// exactly the threads at 1.
func TestRaiseProcess(t *testing.T) {
	ready, done := make(chan error), make(chan struct{})
	go func() { // a thread of its own, at 5
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := RaiseThread(5)
		ready <- err
		<-done
		LowerThread()
	}()
	if err := <-ready; err != nil {
		close(done)
		t.Skipf("no SCHED_FIFO here: %v", err)
	}
	defer close(done)
	restore, err := RaiseProcess(1)
	if err != nil {
		restore()
		t.Fatal(err)
	}
	// Threads made now: each goroutine locked to a thread while others
	// are, so that the runtime starts new ones.
	hold := make(chan struct{})
	for range 4 {
		go func() {
			runtime.LockOSThread()
			<-hold
			runtime.UnlockOSThread()
		}()
	}
	raised := policies(t)
	close(hold)
	restore()
	after := policies(t)
	t.Logf("raised: %v; restored: %v", raised, after)
	if raised[[2]uint32{unix.SCHED_NORMAL, 0}] != 0 || raised[[2]uint32{unix.SCHED_FIFO, 5}] != 1 || raised[[2]uint32{unix.SCHED_FIFO, 1}] == 0 {
		t.Errorf("raised: %v, want every thread at SCHED_FIFO 1 but the one at 5", raised)
	}
	if after[[2]uint32{unix.SCHED_FIFO, 1}] != 0 || after[[2]uint32{unix.SCHED_FIFO, 5}] != 1 {
		t.Errorf("restored: %v, want none at 1 and the one at 5 as it was", after)
	}
}

// TestMaxRSSIsItsOwn: a process started by one that holds 128 MB (go run,
// a test harness, os/exec's vfork) reports its own peak, not its
// parent's: getrusage's Maxrss said at least 128 MB.
func TestMaxRSSIsItsOwn(t *testing.T) {
	if os.Getenv("REALTIME_MAXRSS_CHILD") != "" {
		fmt.Println("maxrss", MaxRSS())
		return
	}
	held := make([]byte, 128<<20)
	for i := range held {
		held[i] = 1
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMaxRSSIsItsOwn$")
	cmd.Env = append(os.Environ(), "REALTIME_MAXRSS_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var kib int64
	if _, err := fmt.Sscanf(string(out), "maxrss %d", &kib); err != nil {
		t.Fatalf("the child said %q: %v", out, err)
	}
	t.Logf("the child's peak: %d KiB, beside a parent of %d MB", kib, len(held)>>20)
	if kib<<10 >= int64(len(held))/2 {
		t.Errorf("the child's peak is %d MiB: its parent's", kib>>10)
	}
	runtime.KeepAlive(held)
}
