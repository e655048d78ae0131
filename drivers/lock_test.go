package drivers

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestLockFileLeftByAnotherUser: a run killed before it removed its lock
// file leaves it behind, owned by its user and readable by all; a later
// run as another user that gets the same device number (pseudo-terminal
// numbers come round again) locks it through reading it, rather than fail
// with "permission denied" (as the demo run by nobody did, now and then,
// after root's tests). The lock still excludes: root cannot take it then.
func TestLockFileLeftByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
	dir, err := os.MkdirTemp("", "hilrig-lock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o1777) // as /run/lock is
	name := filepath.Join(dir, "hilrig-tty-136-7.lock")
	if err := os.WriteFile(name, []byte("1234\n"), 0o644); err != nil { // root's, left behind
		t.Fatal(err)
	}
	// The effective user of every thread changes (Go applies it to all);
	// the saved one stays root, to come back.
	if err := syscall.Setresuid(-1, 65534, -1); err != nil {
		t.Skip(err)
	}
	l, err := lockFile(name, "/dev/pts/7")
	if back := syscall.Setresuid(-1, 0, -1); back != nil {
		panic(back) // the rest of the tests would run as nobody
	}
	if err != nil {
		t.Fatalf("as nobody: %v", err)
	}
	defer l.release()
	if _, err := lockFile(name, "/dev/pts/7"); !errors.As(err, new(errInUse)) {
		t.Errorf("root took a lock nobody holds: %v", err)
	}
}

// TestLockExcludesAcrossItsRemoval: a holder removes its lock file as it
// releases it; a program that opened the file just before must not then
// hold a lock on the removed file while another creates and locks a new
// one. Holders take and release one lock file as fast as they can, and
// never two hold it at once.
func TestLockExcludesAcrossItsRemoval(t *testing.T) {
	name := filepath.Join(t.TempDir(), "hilrig-tty-136-7.lock")
	const holders, rounds = 4, 2000
	var held, overlaps, taken atomic.Int64
	var wg sync.WaitGroup
	for range holders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := lockFile(name, "/dev/pts/7")
				if err != nil {
					if !errors.As(err, new(errInUse)) {
						t.Error(err)
						return
					}
					continue
				}
				taken.Add(1)
				if held.Add(1) > 1 {
					overlaps.Add(1)
				}
				runtime.Gosched()
				held.Add(-1)
				l.release()
			}
		}()
	}
	wg.Wait()
	t.Logf("the lock was taken %d times in %d tries", taken.Load(), holders*rounds)
	if n := overlaps.Load(); n > 0 {
		t.Errorf("two held the lock at once %d times", n)
	}
}
