package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// privilegeHint passes a real-time session's log to w and, after the first
// warning that the kernel refused a real-time privilege, says once how to
// grant them for good.
func privilegeHint(w io.Writer) io.Writer { return &hintWriter{w: w} }

type hintWriter struct {
	mu   sync.Mutex // the session logs from more than one goroutine
	w    io.Writer
	said bool
}

func (h *hintWriter) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n, err := h.w.Write(p)
	if !h.said && refusedPrivilege(string(p)) {
		h.said = true
		fmt.Fprintln(h.w, privilegeFix(os.Geteuid() == 0))
	}
	return n, err
}

// refusedPrivilege tells a session's warning (a line per write) that the
// kernel refused something for want of privilege: SCHED_FIFO and
// mlockall answer EPERM (mlockall ENOMEM beyond RLIMIT_MEMLOCK), and
// /dev/cpu_dma_latency EACCES. A warning that already says the fix is
// left alone.
func refusedPrivilege(line string) bool {
	if !strings.HasPrefix(line, "hilrig: cannot ") || strings.Contains(line, "setcap") {
		return false
	}
	for _, refused := range []error{unix.EPERM, unix.EACCES, unix.ENOMEM} {
		if strings.Contains(line, refused.Error()) {
			return true
		}
	}
	return false
}

// privilegeFix says how to let this binary run the executor at real-time
// priority with its memory locked, and keep idle CPUs awake.
func privilegeFix(root bool) string {
	if root {
		return "hilrig: root without CAP_SYS_NICE and CAP_IPC_LOCK (in a container?): give them to the container, and /dev/cpu_dma_latency with them"
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "hilrig"
	} else if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	if strings.ContainsAny(exe, " \t'\"\\$`!*?[]{}()<>|&;#~") {
		exe = "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
	}
	fix := "hilrig: to run with real-time priority and locked memory without root: sudo setcap cap_sys_nice,cap_ipc_lock+ep " + exe
	if strings.Contains(exe, "go-build") {
		fix += " (this is go run's temporary binary: go build hilrig and setcap what you built)"
	}
	return fix + `; /dev/cpu_dma_latency needs root, or a udev rule such as KERNEL=="cpu_dma_latency", GROUP="<your group>", MODE="0660" in /etc/udev/rules.d/`
}
