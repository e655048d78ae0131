package suitefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/modelfile"
)

// TestReadFile: ReadFile takes a regular file of at most the limit, and
// refuses anything else at once, saying what it is, without reading it
// (a device never ends, a FIFO blocks until someone writes).
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("duration: 1s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       string // the error, or "" to read the file
	}{
		{"a small file", small, 100, ""},
		{"exactly the limit", small, 13, ""},
		{"a byte over the limit", small, 12, small + ": is 13 bytes, more than the 12 a file may have here"},
		{"a device that never ends", "/dev/zero", lang.MaxFileBytes, "/dev/zero: is not a regular file (a character device)"},
		{"a named pipe", fifo, lang.MaxFileBytes, fifo + ": is not a regular file (a named pipe)"},
		{"a directory", dir, lang.MaxFileBytes, dir + ": is not a regular file (a directory)"},
		// The kernel's files say they have no size; reading stops at the limit.
		{"a file larger than it says", "/proc/self/status", 10, "/proc/self/status: has more than the 10 bytes a file may have here"},
		{"no file", filepath.Join(dir, "nothing"), lang.MaxFileBytes, "open " + filepath.Join(dir, "nothing") + ": no such file or directory"},
	}
	for _, tc := range tests {
		start := time.Now()
		data, err := lang.ReadFile(tc.path, tc.limit)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "" && string(data) != "duration: 1s\n":
			t.Errorf("%s: read %q", tc.name, data)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", tc.name, d)
		}
	}
	if _, err := lang.ReadFile(filepath.Join(dir, "nothing"), 1); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestFilesTheLanguagesRead: every file a profile, bench, suite or model
// file names, and each of those files, is read as ReadFile reads, its
// problem reported at the key that names it.
func TestFilesTheLanguagesRead(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(big, make([]byte, lang.MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := func(hop string) string {
		return "duration: 1s\nhops:\n  a: " + hop + "\nflows:\n  f: {route: [a], role: to-plant}\n  g: {route: [a], role: to-controller}\n"
	}
	tests := []struct {
		name, text, want string
	}{
		{"extends a device", "extends: /dev/zero\n", "p.yaml:1:10: extends: /dev/zero: is not a regular file (a character device)"},
		{"extends a named pipe", "extends: " + fifo + "\n", "p.yaml:1:10: extends: fifo: is not a regular file (a named pipe)"},
		{"extends a file too large", "extends: " + big + "\n", "p.yaml:1:10: extends: big.txt: is 67108865 bytes, more than the 67108864 a file may have here"},
		{"empirical jitter from a device", profile("{delay: 1ms, jitter: {dist: empirical, file: /dev/zero}}"),
			"p.yaml:3:51: hops.a.jitter.file: cannot read /dev/zero: is not a regular file (a character device)"},
		{"a delay series from a device", profile("{delay: {trace: /dev/zero}}"),
			"p.yaml:3:22: hops.a.delay.trace.file: cannot read /dev/zero: is not a regular file (a character device)"},
		{"a loss series from a device", profile("{loss: {trace: /dev/urandom}}"),
			"p.yaml:3:21: hops.a.loss.trace.file: cannot read /dev/urandom: is not a regular file (a character device)"},
		{"a delay series too large", profile("{delay: {trace: " + big + "}}"),
			"p.yaml:3:22: hops.a.delay.trace.file: cannot read big.txt: is 67108865 bytes, more than the 67108864 a file may have here"},
	}
	for _, tc := range tests {
		start := time.Now()
		_, err := profiles.Parse(filepath.Join(dir, "p.yaml"), []byte(tc.text))
		if got := strings.ReplaceAll(errText(err), dir+"/", ""); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: took %v", tc.name, d)
		}
	}

	// A bench, a suite and a model file, and the recording a bench replays.
	p, err := profiles.Parse(filepath.Join(dir, "p.yaml"), []byte(profile("{delay: 1ms}")))
	if err != nil {
		t.Fatal(err)
	}
	for _, load := range []struct {
		name string
		err  func() error
		want string
	}{
		{"a bench", func() error { _, err := benchfile.LoadBench("/dev/zero", p); return err }, "/dev/zero: is not a regular file (a character device)"},
		{"a suite", func() error { _, err := LoadSuite(fifo); return err }, "fifo: is not a regular file (a named pipe)"},
		{"a model file", func() error { _, err := modelfile.LoadModel("/dev/zero", nil); return err }, "/dev/zero: is not a regular file (a character device)"},
		{"a profile", func() error { _, err := profiles.Load(big); return err }, "big.txt: is 67108865 bytes, more than the 67108864 a file may have here"},
		{"a model a bench names", func() error {
			_, err := benchfile.ParseBench(filepath.Join(dir, "b.yaml"), []byte("endpoints:\n  m: {model: {name: /dev/zero, cut: x}}\n  c: {udp: {listen: 127.0.0.1:0}}\nbind:\n  f: {from: c, to: m}\n  g: {from: m, to: c}\n"), p)
			return err
		}, "b.yaml:2:21: endpoints.m.model.name: /dev/zero: is not a regular file (a character device)"},
		{"a recording a bench replays", func() error {
			_, err := benchfile.ParseBench(filepath.Join(dir, "b.yaml"), []byte("endpoints:\n  r: {replay: {file: /dev/zero}}\n  c: {udp: {listen: 127.0.0.1:0}}\nbind:\n  f: {from: r, to: c}\n"), p)
			return err
		}, "b.yaml:2:22: endpoints.r.replay.file: cannot read the recording: /dev/zero: is not a regular file (a character device)"},
	} {
		err := load.err()
		if err == nil || !strings.Contains(strings.ReplaceAll(err.Error(), dir+"/", ""), load.want) {
			t.Errorf("%s: %v, want %q", load.name, err, load.want)
		}
	}
}

// errText is an error's text, or "" for none.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
