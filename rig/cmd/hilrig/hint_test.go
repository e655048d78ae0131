package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRefusedPrivilege(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"hilrig: cannot lock memory (cannot allocate memory): page faults may delay frames\n", true},
		{"hilrig: cannot lock memory (operation not permitted): page faults may delay frames\n", true},
		{"hilrig: cannot run the executor at SCHED_FIFO priority 80 (operation not permitted): timing will be less precise\n", true},
		{"hilrig: cannot keep idle CPUs awake (open /dev/cpu_dma_latency: permission denied): waking for a frame may take longer\n", true},
		{"hilrig: cannot keep idle CPUs awake (open /dev/cpu_dma_latency: no such file or directory): waking for a frame may take longer\n", false},
		{"hilrig: cannot run the executor at SCHED_FIFO priority 80 (operation not permitted); sudo setcap cap_sys_nice+ep /bin/hilrig\n", false},
		{"hilrig: seat: pseudo-terminal /tmp/seat (/dev/pts/3)\n", false},
		{"hilrig: seat: stopping: permission denied\n", false},
	} {
		if got := refusedPrivilege(tc.line); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestPrivilegeHintSaidOnce: the fix follows the first refusal, once,
// and every line of the log passes through.
func TestPrivilegeHintSaidOnce(t *testing.T) {
	lines := []string{
		"hilrig: cannot lock memory (cannot allocate memory): page faults may delay frames\n",
		"hilrig: seat: pseudo-terminal /tmp/seat (/dev/pts/3)\n",
		"hilrig: cannot run the executor at SCHED_FIFO priority 80 (operation not permitted): timing will be less precise\n",
	}
	var log strings.Builder
	w := privilegeHint(&log)
	for _, line := range lines {
		if n, err := w.Write([]byte(line)); n != len(line) || err != nil {
			t.Fatalf("wrote %d of %d bytes: %v", n, len(line), err)
		}
	}
	want := lines[0] + privilegeFix(os.Geteuid() == 0) + "\n" + lines[1] + lines[2]
	if log.String() != want {
		t.Errorf("log:\n%s\nwant:\n%s", log.String(), want)
	}
}

func TestPrivilegeFix(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	if fix := privilegeFix(false); !strings.Contains(fix, "sudo setcap cap_sys_nice,cap_ipc_lock+ep "+exe) || !strings.Contains(fix, "/dev/cpu_dma_latency needs root") {
		t.Errorf("%s", fix)
	}
	if fix := privilegeFix(true); strings.Contains(fix, "setcap") {
		t.Errorf("as root: %s", fix)
	}
}
