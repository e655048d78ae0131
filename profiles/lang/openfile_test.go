package lang

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenFile checks that a stream is opened only on a regular file, and
// that a named pipe is refused without blocking in the open.
func TestOpenFile(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(plain, []byte("flow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, err string }{
		{plain, ""},
		{fifo, "fifo.csv: is not a regular file (a named pipe)"},
		{zero, "zero.csv: is not a regular file (a character device)"},
		{dir, ": is not a regular file (a directory)"},
		{filepath.Join(dir, "none.csv"), "no such file"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			f, _, err := OpenFile(tc.path)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if data, _ := io.ReadAll(f); string(data) != "flow\n" {
					t.Errorf("read %q", data)
				}
				return
			}
			if err == nil {
				f.Close()
				t.Fatalf("opened; want an error with %q", tc.err)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("error %q, want one with %q", err, tc.err)
			}
		})
	}
}
