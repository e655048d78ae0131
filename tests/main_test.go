// Package tests holds hilrig's end-to-end suites: they build the real
// binary, run it as a user would, and check its outputs against the laws of
// the source papers.
package tests

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hilrig is the path of the binary built for this test run.
var hilrig string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hilrig-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // so that a test may run it as another user
	// For this machine, or for HILRIG_GOARCH's (hardening_arch_test.go).
	if hilrig, err = buildHilrig(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
}

// runHilrig runs the binary with args and returns its outputs and exit code.
func runHilrig(t testing.TB, args ...string) result {
	t.Helper()
	cmd := exec.Command(hilrig, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errOut.String(), code}
}

// row is one line of a trace.
type row struct {
	flow   string
	seq    uint64
	bytes  int
	sent   time.Duration
	recv   time.Duration // -1 when not delivered
	status string
}

// parseSeconds reads a trace time ("12.345678901") as exact nanoseconds.
func parseSeconds(s string) (time.Duration, error) {
	whole, frac, ok := strings.Cut(s, ".")
	if !ok || len(frac) != 9 {
		return 0, fmt.Errorf("time %q does not have nine decimals", s)
	}
	w, err1 := strconv.ParseInt(whole, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad time %q", s)
	}
	return time.Duration(w*1e9 + f), nil
}

// readTrace parses a sim trace, checking its header and every field.
func readTrace(t *testing.T, path string) []row {
	t.Helper()
	records := readCSV(t, path)
	if got := strings.Join(records[0], ","); got != "flow,seq,bytes,t_send,t_recv,status" {
		t.Fatalf("trace header %q", got)
	}
	rows := make([]row, 0, len(records)-1)
	for i, r := range records[1:] {
		if r[1] == "" && r[2] == "" { // a supervisor's row: flow is the model endpoint
			at, err := parseSeconds(r[3])
			if err != nil {
				t.Fatalf("trace line %d: %v", i+2, err)
			}
			rows = append(rows, row{r[0], 0, 0, at, -1, r[5]})
			continue
		}
		seq, err1 := strconv.ParseUint(r[1], 10, 64)
		size, err2 := strconv.Atoi(r[2])
		sent, err3 := parseSeconds(r[3])
		recv := time.Duration(-1)
		var err4 error
		if r[4] != "" {
			recv, err4 = parseSeconds(r[4])
		}
		if err := firstError(err1, err2, err3, err4); err != nil {
			t.Fatalf("trace line %d: %v", i+2, err)
		}
		rows = append(rows, row{r[0], seq, size, sent, recv, r[5]})
	}
	return rows
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
