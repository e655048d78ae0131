package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/rig"
)

// TestIsolatedFMULetsItsMonitorRest runs an isolated FMU in real time (20
// steps of 100 µs an exchange of 2 ms, each a round trip to the FMU's
// process) and counts, over a second of the run, how often the FMU
// process's runtime monitor (sysmon) woke. Its server waits on a futex on a
// locked thread and so never passed through Go's scheduler: the monitor
// took its P at its waits and looked again every 20 µs, 2 600 times a
// second, at the FMU's SCHED_FIFO priority, one below the executor's. It
// checks in with the scheduler every 5 ms now (realtime.CheckIn): idle,
// the monitor sleeps up to 10 ms at a time, some 100 wake-ups a second,
// and 60 more each time something starts it again. The bound, 400, leaves
// room for five such starts.
func TestIsolatedFMULetsItsMonitorRest(t *testing.T) {
	dir := t.TempDir()
	bench, profile, b := realTimeCarBench(t, dir)
	cmd := exec.Command(hilrig, "run", "--bench", bench, profile, "--duration", "4s")
	out := &lockedBuffer{}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var runErr error
	exited := make(chan struct{})
	go func() {
		runErr = cmd.Wait()
		close(exited)
	}()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop, err := rig.StartPlantNode(ctx, filepath.Join(dir, "seat"), b.Models["car"], 0)
	if err != nil {
		t.Fatalf("the seat: %v; the rig said %s", err, out.String())
	}
	defer stop()
	time.Sleep(1500 * time.Millisecond) // the run well under way
	host := fmuHost(t, cmd.Process.Pid)
	before := driverstest.MonitorWakeUps(t, host)
	time.Sleep(time.Second)
	woke := driverstest.MonitorWakeUps(t, host) - before
	t.Logf("the FMU process's monitor woke %d times in a second", woke)
	if woke > 400 {
		t.Errorf("the FMU process's monitor woke %d times in a second: it is taking the server's P at its waits", woke)
	}
	select {
	case <-exited:
		if runErr != nil {
			t.Fatalf("hilrig run: %v: %s", runErr, out.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the run did not end: %s", out.String())
	}
}

// fmuHost is the pid of the isolated FMU's process the rig (pid) started.
func fmuHost(t *testing.T, pid int) int {
	t.Helper()
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		children, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, child := range strings.Fields(string(children)) {
			cmdline, _ := os.ReadFile("/proc/" + child + "/cmdline")
			if args := strings.Split(string(cmdline), "\x00"); len(args) > 1 && args[1] == "fmu-host" {
				n, _ := strconv.Atoi(child)
				return n
			}
		}
	}
	t.Fatalf("no FMU process among the rig's children")
	return 0
}
