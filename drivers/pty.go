package drivers

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Pty is a virtual serial endpoint: a null-modem cable made of two
// pseudo-terminal pairs joined by a bridge. The rig's side is a Serial
// endpoint on a real /dev/pts device, so it runs exactly the driver code of
// a USB adapter; the other side is a /dev/pts device that any program (a
// test, a demo's virtual device, minicom) opens as if it were the adapter.
//
// When the program attached to the device side closes it, the rig's side
// vanishes, as a USB adapter does when unplugged. With Reconnect the cable
// is plugged back in when a program opens the device side again.
type Pty struct {
	*Serial
	link     string      // a stable path to the device side, if wanted
	linkLock *deviceLock // held while the link is ours
	dir      string      // holds the stable path to the rig's side
	mu       sync.Mutex
	rigSide  int // master of the rig's pair, -1 while unplugged
	devSide  int // master of the device's pair
	devPath  string
	wake     [2]int // a pipe that wakes the bridge to stop
	// forwarded counts the bytes the bridge gave the rig's side, to tell
	// when the rig's reader has taken them all.
	forwarded uint64
	done      chan struct{}
}

var _ Announcer = (*Pty)(nil)

// NewPty returns a pty endpoint with the serial settings of cfg (its
// Device is ignored). link, if not empty, is made a symlink to the device
// side, so that programs find it at a fixed path.
func NewPty(cfg SerialConfig, link string) *Pty {
	cfg.Virtual = true
	return &Pty{Serial: NewSerial(cfg), link: link, rigSide: -1, devSide: -1}
}

// DevicePath is the device to attach to: the link, or the /dev/pts path.
func (p *Pty) DevicePath() string {
	if p.link != "" {
		return p.link
	}
	return p.devPath
}

func (p *Pty) Announce() string {
	if p.link != "" {
		return fmt.Sprintf("pseudo-terminal %s (%s)", p.link, p.devPath)
	}
	return "pseudo-terminal " + p.devPath
}

// openPty creates a pseudo-terminal pair in raw mode and returns its
// master and the slave's path.
func openPty() (int, string, error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", fmt.Errorf("opening /dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return -1, "", fmt.Errorf("unlocking the pseudo-terminal: %w", err)
	}
	n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
	if err != nil {
		unix.Close(m)
		return -1, "", fmt.Errorf("naming the pseudo-terminal: %w", err)
	}
	path := fmt.Sprintf("/dev/pts/%d", n)
	// Raw mode from the start, so that nothing is echoed or translated
	// before a program sets the modes it wants. Termios calls on a master
	// set its slave's modes; opening the slave here instead would leave the
	// master hung up once it is closed again.
	t, err := unix.IoctlGetTermios(m, unix.TCGETS)
	if err == nil {
		t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
		t.Oflag &^= unix.OPOST
		t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
		t.Cflag &^= unix.CSIZE | unix.PARENB
		t.Cflag |= unix.CS8
		err = unix.IoctlSetTermios(m, unix.TCSETS, t)
	}
	if err != nil {
		unix.Close(m)
		return -1, "", fmt.Errorf("setting raw mode: %w", err)
	}
	return m, path, nil
}

// plugRigSide creates the rig's pair and points the rig's device path at it.
func (p *Pty) plugRigSide() error {
	m, path, err := openPty()
	if err != nil {
		return err
	}
	tmp := p.cfg.Device + ".new"
	os.Remove(tmp)
	if err := os.Symlink(path, tmp); err != nil {
		unix.Close(m)
		return err
	}
	if err := os.Rename(tmp, p.cfg.Device); err != nil {
		unix.Close(m)
		return err
	}
	p.mu.Lock()
	p.rigSide = m
	p.mu.Unlock()
	return nil
}

func (p *Pty) unplugRigSide() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.rigSide >= 0 {
		unix.Close(p.rigSide) // the rig's device reads 0 bytes: vanished
		p.rigSide = -1
	}
}

func (p *Pty) Start(clock Clock, sink Sink, index int) error {
	fail := func(err error) error {
		p.cleanup()
		return &DeviceError{Endpoint: p.cfg.Name, Device: "pseudo-terminal", Err: err}
	}
	dir, err := os.MkdirTemp("", "hilrig-pty-")
	if err != nil {
		return fail(err)
	}
	p.dir = dir
	p.cfg.Device = filepath.Join(dir, p.cfg.Name)
	if err := p.plugRigSide(); err != nil {
		return fail(err)
	}
	if p.devSide, p.devPath, err = openPty(); err != nil {
		return fail(err)
	}
	if p.link != "" {
		if p.linkLock, err = lockLink(p.link); err != nil {
			return fail(err)
		}
		os.Remove(p.link) // left by a run that died: nobody holds its lock
		if err := os.Symlink(p.devPath, p.link); err != nil {
			return fail(fmt.Errorf("linking %s: %w", p.link, err))
		}
	}
	p.cfg.Label = "pseudo-terminal " + p.DevicePath()
	if err := unix.Pipe2(p.wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return fail(err)
	}
	if err := p.Serial.Start(clock, sink, index); err != nil {
		p.cleanup()
		return err
	}
	p.done = make(chan struct{})
	go p.bridge()
	return nil
}

// bridge copies bytes between the two masters, on its own locked thread.
// It notices the device side being closed (POLLHUP on its master) and
// reopened (the hang-up clears).
func (p *Pty) bridge() {
	defer close(p.done)
	lockReaderThread(p.cfg.ReaderThread)
	buf := make([]byte, 4096)
	detached := false
	fds := make([]unix.PollFd, 3)
	for {
		p.mu.Lock()
		rig := p.rigSide
		p.mu.Unlock()
		fds = fds[:1]
		fds[0] = unix.PollFd{Fd: int32(p.wake[0]), Events: unix.POLLIN}
		if rig >= 0 {
			fds = append(fds, unix.PollFd{Fd: int32(rig), Events: unix.POLLIN})
		}
		timeout := -1
		if detached {
			timeout = 5 // ms: look for the device side being reopened
		} else {
			fds = append(fds, unix.PollFd{Fd: int32(p.devSide), Events: unix.POLLIN})
		}
		if _, err := unix.Poll(fds, timeout); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if fds[0].Revents != 0 {
			return // stopping
		}
		for _, fd := range fds[1:] {
			if fd.Revents == 0 {
				continue
			}
			switch int(fd.Fd) {
			case rig:
				if n, err := unix.Read(rig, buf); n > 0 && !detached {
					writeAll(p.devSide, buf[:n])
				} else if err != nil && !errors.Is(err, unix.EAGAIN) {
					p.unplugRigSide()
				}
			case p.devSide:
				if fd.Revents&unix.POLLHUP != 0 {
					// The program closed the device: unplugged. What it
					// wrote before closing was on the line, as a real
					// port's close waits for its output to drain.
					p.drainToRig(rig, buf)
					detached = true
					p.unplugRigSide()
					continue
				}
				if n, _ := unix.Read(p.devSide, buf); n > 0 && rig >= 0 {
					p.forwarded += uint64(n)
					writeAll(rig, buf[:n])
				}
			}
		}
		if detached && p.deviceReopened() {
			detached = false
			p.mu.Lock()
			unplugged := p.rigSide < 0
			p.mu.Unlock()
			if unplugged && p.cfg.Reconnect > 0 {
				p.plugRigSide()
			}
		}
	}
}

// drainToRig forwards what is left to read on the device side and waits,
// a little, for the rig's reader to take it.
func (p *Pty) drainToRig(rig int, buf []byte) {
	if rig < 0 {
		return
	}
	for {
		n, _ := unix.Read(p.devSide, buf)
		if n <= 0 {
			break
		}
		p.forwarded += uint64(n)
		writeAll(rig, buf[:n])
	}
	for deadline := time.Now().Add(100 * time.Millisecond); p.counts.bytesIn.Load() < p.forwarded && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// deviceReopened reports whether a program has the device side open again.
func (p *Pty) deviceReopened() bool {
	fds := []unix.PollFd{{Fd: int32(p.devSide), Events: unix.POLLIN}}
	unix.Poll(fds, 0)
	return fds[0].Revents&unix.POLLHUP == 0
}

func writeAll(fd int, b []byte) {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if errors.Is(err, unix.EAGAIN) {
			time.Sleep(50 * time.Microsecond) // the other side is not reading
			continue
		}
		if err != nil {
			return
		}
		b = b[n:]
	}
}

func (p *Pty) Stop() error {
	err := p.Serial.Stop()
	if p.done != nil {
		unix.Write(p.wake[1], []byte{0})
		<-p.done
	}
	p.cleanup()
	return err
}

func (p *Pty) cleanup() {
	p.unplugRigSide()
	if p.devSide >= 0 {
		unix.Close(p.devSide)
		p.devSide = -1
	}
	for i, fd := range p.wake {
		if fd > 0 {
			unix.Close(fd)
			p.wake[i] = 0
		}
	}
	if p.linkLock != nil {
		// Remove the link only if it is still the one made here.
		if target, err := os.Readlink(p.link); err == nil && target == p.devPath {
			os.Remove(p.link)
		}
		p.linkLock.release()
		p.linkLock = nil
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
}
