package main

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPipeOutputClosedOnExec: the copy of standard output hilrig writes
// to is not inherited by its children (serve-live, an FMU's host), which
// would otherwise hold a pipe hilrig writes into open after it has gone;
// syscall.Dup's copy was.
func TestPipeOutputClosedOnExec(t *testing.T) {
	w, ok := newPipeOutput(os.Stdout).(pipeOutput)
	if !ok {
		t.Fatal("no copy of standard output")
	}
	defer w.f.Close()
	flags, err := unix.FcntlInt(w.f.Fd(), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	if flags&unix.FD_CLOEXEC == 0 {
		t.Error("the copy of standard output is inherited by hilrig's children")
	}
}
