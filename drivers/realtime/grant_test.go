package realtime

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{unix.EPERM, true},
		{fmt.Errorf("mlockall: %w", unix.ENOMEM), true},
		{&os.PathError{Op: "open", Path: "/dev/cpu_dma_latency", Err: unix.EACCES}, true},
		{&os.PathError{Op: "open", Path: "/dev/cpu_dma_latency", Err: unix.ENOENT}, false},
		{errors.New("something else"), false},
	} {
		if got := Refused(tc.err); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestGrantNamesThisBinary(t *testing.T) {
	if os.Geteuid() == 0 {
		if g := Grant(); !strings.Contains(g, "CAP_SYS_NICE") {
			t.Errorf("as root: %q", g)
		}
		return
	}
	exe, _ := os.Executable()
	if g := Grant(); !strings.Contains(g, "setcap cap_sys_nice,cap_ipc_lock+ep ") || !strings.Contains(g, exe[strings.LastIndexByte(exe, '/')+1:]) {
		t.Errorf("%q does not name %s", g, exe)
	}
}
