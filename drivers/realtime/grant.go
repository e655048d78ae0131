package realtime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Refused reports whether the kernel refused a facility for want of
// privilege: SCHED_FIFO and mlockall answer EPERM (mlockall ENOMEM beyond
// RLIMIT_MEMLOCK), and /dev/cpu_dma_latency EACCES.
func Refused(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.ENOMEM)
}

// Grant says how to let this binary have the facilities for good: the
// exact setcap command for it, and what /dev/cpu_dma_latency needs.
func Grant() string {
	if os.Geteuid() == 0 {
		return "root without CAP_SYS_NICE and CAP_IPC_LOCK (in a container?): give them to the container, and /dev/cpu_dma_latency with them"
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
	fix := "to run with real-time priority and locked memory without root: sudo setcap cap_sys_nice,cap_ipc_lock+ep " + exe
	if strings.Contains(exe, "go-build") {
		fix += " (this is go run's temporary binary: go build hilrig and setcap what you built)"
	}
	return fix + `; /dev/cpu_dma_latency needs root, or a udev rule such as KERNEL=="cpu_dma_latency", GROUP="<your group>", MODE="0660" in /etc/udev/rules.d/`
}
