//go:build linux

// Package ptytest opens pseudo-terminal pairs for the firmware's tests:
// real kernel ttys, so that bytes cross the same path as on a serial
// port opened by path, without hardware.
package ptytest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Pair is a pseudo-terminal: the master, which a test reads and writes,
// and the slave, a tty at Path, set raw (no echo, no line editing, no
// translation of CR and LF), as a serial port opened for binary data is.
// The test holds the slave open too, so the master keeps working while a
// program opens and closes the path.
type Pair struct {
	Master *FD
	Slave  *FD
	Path   string
}

// Open opens a pair, closed when the test ends.
func Open(t testing.TB) *Pair {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatalf("opening /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		unix.Close(m)
		t.Fatalf("naming the pseudo-terminal: %v", err)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	s, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		unix.Close(m)
		t.Fatalf("opening %s: %v", path, err)
	}
	tio, err := unix.IoctlGetTermios(s, unix.TCGETS)
	if err == nil {
		// cfmakeraw
		tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		tio.Oflag &^= unix.OPOST
		tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		tio.Cflag &^= unix.CSIZE | unix.PARENB
		tio.Cflag |= unix.CS8
		tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
		err = unix.IoctlSetTermios(s, unix.TCSETS, tio)
	}
	if err != nil {
		unix.Close(m)
		unix.Close(s)
		t.Fatalf("setting %s raw: %v", path, err)
	}
	p := &Pair{Master: &FD{fd: m}, Slave: &FD{fd: s}, Path: path}
	t.Cleanup(p.Close)
	return p
}

// Close closes both ends: a program on the path sees its device vanish.
func (p *Pair) Close() {
	if p.Master.fd >= 0 {
		unix.Close(p.Master.fd)
		unix.Close(p.Slave.fd)
		p.Master.fd, p.Slave.fd = -1, -1
	}
}

// FD is one end of a pair, non-blocking: Read returns what has arrived,
// possibly nothing, as a device.UART's does. It counts what passed.
type FD struct {
	fd      int
	In, Out uint64 // bytes read and written
}

// Read returns what has arrived without waiting.
func (f *FD) Read(p []byte) (int, error) {
	n, err := unix.Read(f.fd, p)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return 0, nil
	case err != nil:
		return 0, err
	}
	f.In += uint64(n)
	return n, nil
}

// Write writes all of p, waiting while the tty's buffer is full.
func (f *FD) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := unix.Write(f.fd, p[done:])
		if err == unix.EAGAIN || err == unix.EINTR {
			f.wait(unix.POLLOUT, time.Second)
			continue
		}
		if err != nil {
			return done, err
		}
		done += n
		f.Out += uint64(n)
	}
	return done, nil
}

// Wait waits until there is something to read, up to timeout.
func (f *FD) Wait(timeout time.Duration) bool { return f.wait(unix.POLLIN, timeout) }

func (f *FD) wait(events int16, timeout time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(f.fd), Events: events}}
	for {
		n, err := unix.Poll(fds, int(timeout/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}

// ReadFull reads until it has n bytes, handing each read to sink; it
// fails after timeout without one.
func (f *FD) ReadFull(n uint64, timeout time.Duration, sink func([]byte)) error {
	buf := make([]byte, 4096)
	for got := uint64(0); got < n; {
		if !f.Wait(timeout) {
			return errors.New("nothing arrived in time")
		}
		k, err := f.Read(buf[:min(uint64(len(buf)), n-got)])
		if err != nil {
			return err
		}
		got += uint64(k)
		sink(buf[:k])
	}
	return nil
}
