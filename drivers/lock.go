package drivers

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// deviceLock is an advisory lock (flock) held for as long as an endpoint
// uses a device or a link, so that two programs (or two runs) never drive
// one device. The kernel's own exclusive mode (TIOCEXCL, which the serial
// library sets) does not stop root.
//
// A device is locked through a lock file named by its device number
// (/run/lock/hilrig-tty-MAJOR-MINOR.lock), not by opening the device a
// second time: a second open file on a tty made every frame's way through
// it 15 µs slower at the median (BenchmarkRunForwarding), and the number
// makes two paths to one device (/dev/ttyUSB0, /dev/serial/by-id/…) the
// same lock.
type deviceLock struct {
	f      *os.File
	remove string // the lock file, removed on release
}

// errInUse says who holds a device.
type errInUse struct{ path, holder string }

func (e errInUse) Error() string {
	return fmt.Sprintf("%s is in use by %s; one device serves one run", e.path, e.holder)
}

// lockDevice locks the device at path.
func lockDevice(path string) (*deviceLock, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	name := fmt.Sprintf("hilrig-tty-%d-%d.lock", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
	return lockFile(filepath.Join(lockDir(), name), path)
}

// lockLink locks the lock file of a link the endpoint will make (the
// link's path with .lock added), creating it.
func lockLink(link string) (*deviceLock, error) {
	return lockFile(link+".lock", link)
}

// lockDir is where device lock files go: /run/lock, as for serial tools'
// lock files, or the temporary directory where that is not writable.
func lockDir() string {
	if unix.Access("/run/lock", unix.W_OK) == nil {
		return "/run/lock"
	}
	return os.TempDir()
}

// lockFile locks name, creating it, on behalf of path, and writes the
// process's number into it for anyone who looks.
func lockFile(name, path string) (*deviceLock, error) {
	// A holder removes its lock file as it releases it, so a file opened
	// just before that is no longer the lock once locked: another program
	// creates a new file at name and locks that too, and two drive one
	// device. So the file locked must still be the one at name, or it is
	// opened again. Each try that fails follows another holder's whole
	// release; ten in a row is a lock taken and released in a loop, told
	// as in use.
	for range 10 {
		f, writable, err := openLockFile(name)
		if err != nil {
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		l, err := flock(f, path, name)
		if err != nil {
			return nil, err
		}
		if !l.stillAt(name) {
			l.f.Close()
			continue
		}
		if writable {
			f.Truncate(0)
			fmt.Fprintf(f, "%d\n", os.Getpid())
		}
		return l, nil
	}
	return nil, errInUse{path, "another process"}
}

// openLockFile opens name, creating it, and says whether it may be written.
func openLockFile(name string) (*os.File, bool, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, fs.ErrPermission) {
		// Another user's lock file, left by a run that was killed before
		// it could remove it (pseudo-terminal numbers come round again):
		// a flock taken through reading it locks it just as well.
		f, err = os.Open(name)
		return f, false, err
	}
	return f, err == nil, err
}

// stillAt reports whether the locked file is still the one at name.
func (l *deviceLock) stillAt(name string) bool {
	var held, now unix.Stat_t
	return unix.Fstat(int(l.f.Fd()), &held) == nil && unix.Stat(name, &now) == nil && held.Dev == now.Dev && held.Ino == now.Ino
}

func flock(f *os.File, path, remove string) (*deviceLock, error) {
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errInUse{path, holderOf(f)}
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return &deviceLock{f: f, remove: remove}, nil
}

// release unlocks; a nil lock is none.
func (l *deviceLock) release() {
	if l == nil {
		return
	}
	if l.remove != "" {
		os.Remove(l.remove) // while still holding it: nobody else has it
	}
	l.f.Close()
}

// holderOf finds the process holding a flock on f's file in /proc/locks,
// e.g. "process 1234 (hilrig run --bench b.yaml lte)".
func holderOf(f *os.File) string {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return "another process"
	}
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)), st.Ino)
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return "another process"
	}
	defer locks.Close()
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 00:1a:5 0 EOF
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != id {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil {
			continue
		}
		return describeProcess(pid)
	}
	return "another process"
}

func describeProcess(pid int) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		return fmt.Sprintf("process %d", pid)
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) > 0 {
		args[0] = args[0][strings.LastIndexByte(args[0], '/')+1:]
	}
	return fmt.Sprintf("process %d (%s)", pid, strings.Join(args, " "))
}
