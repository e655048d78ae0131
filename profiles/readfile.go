package profiles

import (
	"fmt"
	"io"
	"os"
)

// MaxFileBytes is the largest file a profile, bench, suite or model file
// is, or refers to (a base it extends, a delay distribution, a trace to
// replay): 64 MiB, some fifty times the largest trace a run of the
// shipped library writes a minute, and far below what the machine's
// memory holds while it is decoded.
const MaxFileBytes = 64 << 20

// ReadFile reads a file that the languages take in: a regular file (not a
// device, a FIFO or a directory, which could block or never end) of at
// most limit bytes. Its errors name the file and say what is wrong with it.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, info, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: is %d bytes, more than the %d a file may have here", path, info.Size(), limit)
	}
	// The size may change while it is read: never take more than limit.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past the %d bytes a file may have here while it was read", path, limit)
	}
	return data, nil
}

// OpenFile opens a file to read that must be a regular file (not a
// device, a FIFO or a directory, which could block or never end), as
// ReadFile does, for a reader that streams it rather than read it whole
// (a recording to replay). info is the file opened's.
func OpenFile(path string) (f *os.File, info os.FileInfo, err error) {
	// Looked at before it is opened: opening a named pipe blocks until
	// someone writes to it.
	if err := regular(path, os.Stat); err != nil {
		return nil, nil, err
	}
	if f, err = os.Open(path); err != nil {
		return nil, nil, err
	}
	info, err = f.Stat() // what was opened, should the path have changed since
	if err == nil {
		err = regular(path, func(string) (os.FileInfo, error) { return info, nil })
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// regular says what is wrong with path if stat finds it is not a regular
// file.
func regular(path string, stat func(string) (os.FileInfo, error)) error {
	info, err := stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: is not a regular file (%s)", path, fileKind(info.Mode()))
	}
	return nil
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
