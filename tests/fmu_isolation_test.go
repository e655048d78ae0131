package tests

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/rig/fmu/fmutest"
)

// simulateIn runs hilrig simulate with $TMPDIR set to a directory of the
// test's, where the FMU is unpacked, and returns the run and what that
// directory holds after it.
func simulateIn(t *testing.T, args ...string) (result, []os.DirEntry) {
	t.Helper()
	tmp := t.TempDir()
	cmd := exec.Command(hilrig, append([]string{"simulate"}, args...)...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(tmp)
	return result{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}, left
}

// TestSimulateIsolatedCrash: an FMU that dereferences NULL at 0.05 s, run
// by hilrig simulate (isolated, the default): hilrig reports the crash
// at the step it happened in, with the signal and the FMU's last message,
// writes the rows before it, exits 1, and leaves nothing in $TMPDIR. The
// same FMU in-process ends hilrig with the Go runtime's crash (exit 2),
// its rows unwritten and the FMU's files left behind: what README says
// isolate: false does.
func TestSimulateIsolatedCrash(t *testing.T) {
	bad := buildFMU(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2})
	r, left := simulateIn(t, bad, "--param", "mode=1", "--param", "at=0.05")
	want := "the FMU's process crashed with SIGSEGV (segmentation fault) in the step from 0.05 to 0.06; the FMU logged: fmi2Warning logAll: dereferencing NULL at t = 0.05 in doStep"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	if _, rows := readSimulation(t, r.stdout); len(rows) != 6 || rows[5][0] != 0.05 {
		t.Errorf("%d rows; want the 6 from 0 to 0.05", len(rows))
	}
	if len(left) != 0 {
		t.Errorf("$TMPDIR holds %s after the run", left[0].Name())
	}

	r, left = simulateIn(t, bad, "--param", "mode=1", "--param", "at=0.05", "--in-process")
	if r.code != 2 || !strings.Contains(r.stderr, "SIGSEGV: segmentation violation") || r.stdout != "" || len(left) != 1 {
		t.Errorf("in-process: exit %d, %d bytes of CSV, %d left in $TMPDIR; want hilrig's crash (exit 2), no CSV, the FMU left behind\n%.300s", r.code, len(r.stdout), len(left), r.stderr)
	}
}

// TestSimulateIsolatedStopped: an FMU whose step never returns is stopped
// with the run, at Ctrl-C (SIGINT to hilrig, which the FMU's process, in
// a process group of its own, does not get): hilrig kills it, says where
// the run stopped, exits 1 and leaves nothing in $TMPDIR.
func TestSimulateIsolatedStopped(t *testing.T) {
	bad := buildFMU(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI3})
	tmp := t.TempDir()
	cmd := exec.Command(hilrig, "simulate", bad, "--param", "mode=3", "--param", "at=0.05")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The row at 0.05 s is the last before the hanging step: the CSV is
	// buffered, so it is not seen before the end; hilrig is left a second
	// to get there.
	time.Sleep(time.Second)
	cmd.Process.Signal(syscall.SIGINT)
	sent := time.Now()
	watchdog := time.AfterFunc(20*time.Second, func() { cmd.Process.Kill() }) // a hilrig that does not stop fails the test
	defer watchdog.Stop()
	var rows []string
	for sc := bufio.NewScanner(stdout); sc.Scan(); {
		rows = append(rows, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(errOut.String(), "hilrig: stopped at t = 0.05 s") {
		t.Fatalf("%v, %q; want exit 1 and where it stopped", err, errOut.String())
	}
	if took := time.Since(sent); took > 10*time.Second {
		t.Errorf("hilrig took %v to stop", took)
	}
	if len(rows) != 7 {
		t.Errorf("%d lines; want the header and the rows from 0 to 0.05", len(rows))
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("$TMPDIR holds %s after the run", left[0].Name())
	}
}
