package realtime

import (
	"compress/gzip"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// KernelPreemption is the running kernel's preemption model, as
// Preemption reads it from the kernel's version, the scheduler's debugfs
// file, the boot command line and the kernel's configuration; "" where
// none of them says.
func KernelPreemption() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	release := unix.ByteSliceToString(u.Release[:])
	return Preemption(unix.ByteSliceToString(u.Version[:]),
		readSmall("/sys/kernel/debug/sched/preempt"),
		readSmall("/proc/cmdline"),
		kernelConfig(release))
}

// kernelConfig is the running kernel's build configuration, from
// /proc/config.gz or, as Debian installs it, /boot/config-RELEASE; "" if
// neither can be read.
func kernelConfig(release string) string {
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			const most = 1 << 20 // some 250 KB decompressed
			if b, err := io.ReadAll(io.LimitReader(z, most)); err == nil {
				return string(b)
			}
		}
	}
	return readSmall("/boot/config-" + release)
}

// readSmall is a file of the kernel's, at most 1 MB of it; "" if it cannot
// be read.
func readSmall(name string) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return string(b)
}
