package lang

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"
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

// TestReadAllocatesItsSize checks that a file is read into one buffer of
// its size (and room to see it end), not grown to it by doubling
// (io.ReadAll allocated 3.2 MB to read a profile of 1.5 MB), and that
// ReadText reads it into the string it returns, not into bytes copied into
// it (twice the size). The bound: the buffer, its size rounded up to the
// heap's 8 KB pages, and the file's handle and name, a few hundred bytes;
// ReadText's bytes also go through io.Copy's 32 KB. It refuses what
// ReadFile refuses, as ReadFile.
func TestReadAllocatesItsSize(t *testing.T) {
	readers := []struct {
		name    string
		read    func(path string) (string, error)
		through int64 // what the bytes go through on their way
	}{
		{"ReadFile", func(path string) (string, error) {
			data, err := ReadFile(path, MaxFileBytes)
			return unsafe.String(unsafe.SliceData(data), len(data)), err // no copy to measure
		}, 0},
		{"ReadText", func(path string) (string, error) { return ReadText(path, MaxFileBytes) }, 32 << 10},
	}
	for _, r := range readers {
		for _, size := range []int{0, 100, 1 << 20, 3<<20 + 7} {
			path := filepath.Join(t.TempDir(), "f.yaml")
			written := strings.Repeat("ab\n", size/3+1)[:size]
			if err := os.WriteFile(path, []byte(written), 0o644); err != nil {
				t.Fatal(err)
			}
			const reads = 5
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var text string
			for range reads {
				var err error
				if text, err = r.read(path); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&after)
			allocated := int64(after.TotalAlloc-before.TotalAlloc) / reads
			if text != written {
				t.Fatalf("%s: read %d bytes of %d, not as written", r.name, len(text), size)
			}
			if limit := int64(size) + bytes.MinRead + 8192 + r.through + 2048; allocated > limit {
				t.Errorf("%s: reading %d bytes allocated %d, want at most %d", r.name, size, allocated, limit)
			}
		}
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(dir, "none.yaml"), big} {
		_, textErr := ReadText(path, 9)
		_, fileErr := ReadFile(path, 9)
		if textErr == nil || fileErr == nil || textErr.Error() != fileErr.Error() {
			t.Errorf("%s: ReadText said %v, ReadFile %v", path, textErr, fileErr)
		}
	}
}
