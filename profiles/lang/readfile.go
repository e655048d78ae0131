package lang

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
)

// MaxFileBytes is the largest file a profile, bench, suite or model file
// is, or refers to (a base it extends, a delay distribution, a trace to
// replay): 64 MiB, some fifty times the largest trace a run of the
// shipped library writes a minute, and far below what the machine's
// memory holds while it is decoded.
const MaxFileBytes = 64 << 20

// ReadFile reads a file that the languages take in: a regular file (not a
// device, a FIFO or a directory, which could block or never end) of at
// most limit bytes. Its errors name the file and say what is wrong with it;
// a *FileError says it apart.
func ReadFile(path string, limit int64) ([]byte, error) {
	var data *bytes.Buffer
	err := readInto(path, limit, func(size int) buffer {
		data = bytes.NewBuffer(make([]byte, 0, size))
		return data
	})
	if err != nil {
		return nil, err
	}
	return data.Bytes(), nil
}

// ReadText is ReadFile of a file kept as text: read into the string
// itself, not into bytes and then copied into a string (a profile keeps
// its text, and a copy of 1.5 MB for 10 000 hops and flows was as much
// again in garbage).
func ReadText(path string, limit int64) (string, error) {
	var text strings.Builder
	err := readInto(path, limit, func(size int) buffer {
		text.Grow(size)
		return &text
	})
	if err != nil {
		return "", err
	}
	return text.String(), nil
}

// buffer is what a file is read into: a bytes.Buffer, a strings.Builder.
type buffer interface {
	io.Writer
	Len() int
}

// readInto is ReadFile into the buffer that sized makes of a capacity.
func readInto(path string, limit int64, sized func(capacity int) buffer) error {
	// Looked at before it is opened: opening a named pipe blocks until
	// someone writes to it.
	if err := CheckFile(path, limit, os.Stat); err != nil {
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			pe.Op = "open" // what it says: the file cannot be opened
		}
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// What was opened, should the path have changed since.
	info, err := f.Stat()
	if err == nil {
		err = CheckFile(path, limit, func(string) (os.FileInfo, error) { return info, nil })
	}
	if err != nil {
		return err
	}
	// Read into a buffer of the size the file says it has, and room to
	// see it end: grown from nothing by doubling (io.ReadAll), the
	// buffers were twice the file in garbage (3.2 MB for a profile of
	// 1.5 MB). The size may change while it is read, and a file of the
	// kernel's (/proc) says it has none: never take more than limit.
	buf := sized(int(info.Size()) + bytes.MinRead)
	if _, err := io.Copy(buf, io.LimitReader(f, limit+1)); err != nil {
		return err
	}
	if int64(buf.Len()) > limit {
		return &FileError{path, fmt.Sprintf("has more than the %d bytes a file may have here", limit)}
	}
	return nil
}

// OpenFile opens a file to read that must be a regular file (not a
// device, a FIFO or a directory, which could block or never end), as
// ReadFile does, for a reader that streams it rather than read it whole
// (a recording to replay, a trace to report on). info is the file
// opened's.
func OpenFile(path string) (f *os.File, info os.FileInfo, err error) {
	// Looked at before it is opened: opening a named pipe blocks until
	// someone writes to it.
	if err := CheckFile(path, math.MaxInt64, os.Stat); err != nil {
		return nil, nil, err
	}
	if f, err = os.Open(path); err != nil {
		return nil, nil, err
	}
	info, err = f.Stat() // what was opened, should the path have changed since
	if err == nil {
		err = CheckFile(path, math.MaxInt64, func(string) (os.FileInfo, error) { return info, nil })
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// A FileError is what is wrong with a file the languages were to read.
type FileError struct {
	Path    string
	Problem string // what is wrong with it, e.g. is not a regular file (a character device)
}

func (e *FileError) Error() string { return e.Path + ": " + e.Problem }

// CheckFile says what is wrong with path, found by stat, if it is not a
// regular file of at most limit bytes.
func CheckFile(path string, limit int64, stat func(string) (os.FileInfo, error)) error {
	info, err := stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return &FileError{path, fmt.Sprintf("is not a regular file (%s)", fileKind(info.Mode()))}
	}
	if info.Size() > limit {
		return &FileError{path, fmt.Sprintf("is %d bytes, more than the %d a file may have here", info.Size(), limit)}
	}
	return nil
}

// FileProblem is what is wrong with a file, from an error of ReadFile,
// without its name: for a message that names the file itself.
func FileProblem(err error) string {
	var fe *FileError
	var pe *fs.PathError
	switch {
	case errors.As(err, &fe):
		return fe.Problem
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// fileKind names what a file that is not regular is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}
