package drivers

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
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
//
// A Pty only ever talks to the pseudo-terminals it created. The device
// side's master is held for the whole run, so its number cannot pass to
// another terminal. The rig's side is reopened through the Pty's own open
// file on its slave (rigPeer), never by its /dev/pts number: a number goes
// back to the kernel once its pair is gone, and the next terminal opened
// on the machine gets it (the virtual bench used to adopt such a terminal
// and exchange the plant's frames with it).
type Pty struct {
	*Serial
	link     string      // a stable path to the device side, if wanted
	linkLock *deviceLock // held while the link is ours
	linkID   fileID      // the link made here, which alone cleanup removes
	mu       sync.Mutex
	rigSide  int // master of the rig's pair, -1 while unplugged
	// rigPeer holds the slave of the rig's current pair open, at one
	// descriptor number for the whole run: the serial driver reopens
	// /proc/self/fd/rigPeer, which reaches that pair or, once it is
	// unplugged, fails with EIO until the next pair replaces it there.
	// A second open file on the rig's tty, it is never read or polled,
	// and costs a frame nothing (unlike the second open a lock once took,
	// lock.go): BenchmarkRunForwarding, 5 × 2000 frames interleaved, gave
	// 45.5 µs in the rig at the median with it and 56.2 µs without, and
	// a byte crossing a pair 29.5–34.0 µs with it, 31.5–36.7 µs without.
	rigPeer int
	devSide int // master of the device's pair
	devPath string
	wake    [2]int // a pipe that wakes the bridge to stop
	// forwarded counts the bytes the bridge gave the rig's side, to tell
	// when the rig's reader has taken them all.
	forwarded uint64
	done      chan struct{}
}

// fileID tells one file from another made later at the same path. The
// inode number alone does not: a link removed and made again gets the same
// one back at once on ext4 and tmpfs. The change time does.
type fileID struct {
	dev, ino uint64
	ctime    unix.Timespec
}

// idOf is the identity of the file at path itself, not of what it links to.
func idOf(path string) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{st.Dev, st.Ino, st.Ctim}, nil
}

var _ Announcer = (*Pty)(nil)

// NewPty returns a pty endpoint with the serial settings of cfg (its
// Device is ignored). link, if not empty, is made a symlink to the device
// side, so that programs find it at a fixed path.
func NewPty(cfg SerialConfig, link string) *Pty {
	cfg.Virtual = true
	p := &Pty{Serial: NewSerial(cfg), link: link, rigSide: -1, rigPeer: -1, devSide: -1}
	p.pluggedIn, p.quietReopen = p.rigPlugged, true
	return p
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

// plugRigSide creates the rig's pair and puts the rig's hold on its slave
// at rigPeer, in place of the unplugged pair's: the serial driver's next
// open reaches the new pair, and the old pair's number is released only
// now that nothing can open it.
func (p *Pty) plugRigSide() error {
	m, _, err := openPty()
	if err != nil {
		return err
	}
	peer, err := openSlave(m)
	if err != nil {
		unix.Close(m)
		return err
	}
	if p.rigPeer < 0 {
		p.rigPeer = peer
	} else {
		err = unix.Dup3(peer, p.rigPeer, unix.O_CLOEXEC) // atomic: the number is never free for another file
		unix.Close(peer)
		if err != nil {
			unix.Close(m)
			return fmt.Errorf("holding the pseudo-terminal: %w", err)
		}
	}
	p.mu.Lock()
	p.rigSide = m
	p.mu.Unlock()
	return nil
}

// openSlave opens the slave of the pair whose master is m through the
// master itself (TIOCGPTPEER, Linux 4.13), not by its path: the open can
// only reach that pair.
func openSlave(m int) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		return -1, fmt.Errorf("opening the pseudo-terminal's slave (TIOCGPTPEER, Linux 4.13 or later): %w", errno)
	}
	return int(fd), nil
}

// rigPlugged reports whether the rig's side has a pair.
func (p *Pty) rigPlugged() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rigSide >= 0
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
	if err := p.plugRigSide(); err != nil {
		return fail(err)
	}
	p.cfg.Device = fmt.Sprintf("/proc/self/fd/%d", p.rigPeer)
	var err error
	if p.devSide, p.devPath, err = openPty(); err != nil {
		return fail(err)
	}
	if p.link != "" {
		if p.linkLock, err = lockLink(p.link); err != nil {
			return fail(err)
		}
		if err := p.makeLink(); err != nil {
			return fail(err)
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

// makeLink points the link at the device side. A symbolic link already
// there was left by a run that died (a running one would hold its lock)
// and is replaced; anything else is somebody's file, kept as it is.
func (p *Pty) makeLink() error {
	err := os.Symlink(p.devPath, p.link)
	if errors.Is(err, fs.ErrExist) {
		if fi, lerr := os.Lstat(p.link); lerr == nil && fi.Mode()&fs.ModeSymlink == 0 {
			return fmt.Errorf("%s exists and is %s, not a symbolic link; the link would replace it", p.link, kindOf(fi.Mode()))
		}
		os.Remove(p.link)
		err = os.Symlink(p.devPath, p.link)
	}
	if err == nil {
		p.linkID, err = idOf(p.link)
	}
	if err != nil {
		return fmt.Errorf("linking %s: %w", p.link, err)
	}
	return nil
}

// kindOf names a kind of file for a message.
func kindOf(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "a regular file"
	case fs.ModeDir:
		return "a directory"
	case fs.ModeNamedPipe:
		return "a named pipe"
	case fs.ModeSocket:
		return "a socket"
	case fs.ModeDevice | fs.ModeCharDevice:
		return "a character device"
	case fs.ModeDevice:
		return "a block device"
	}
	return "a file of mode " + m.Type().String()
}

// removeLink removes the link if it is still the one makeLink made: what
// somebody put in its place since is theirs.
func (p *Pty) removeLink() {
	if id, err := idOf(p.link); err != nil || id != p.linkID {
		return
	}
	if target, err := os.Readlink(p.link); err != nil || target != p.devPath {
		return
	}
	os.Remove(p.link)
}

// bridge copies bytes between the two masters, on its own locked thread.
// It never waits on a side that is full: what it read and could not yet
// write is held, and it reads nothing more in that direction until that
// is written. So a program that does not read the device side fills the
// rig's side, and the rig's writes are refused and counted as a slow line
// refuses them, rather than the bridge blocking (and with it the device's
// bytes to the rig, and the end of the run). It notices the device side
// being closed (POLLHUP on its master) and reopened (the hang-up clears).
func (p *Pty) bridge() {
	defer close(p.done)
	checkIn := lockReaderThread(p.cfg.ReaderThread)
	toDevice, toRig := newHeld(), newHeld()
	detached := false // the device side is closed
	// unplugged: the device side is open again and the rig's pair is
	// still to be made; tried every reconnect interval from next on, the
	// first failure said.
	unplugged, told := false, false
	var next time.Time
	fds := make([]unix.PollFd, 0, 3)
	for {
		p.mu.Lock()
		rig := p.rigSide
		p.mu.Unlock()
		fds = append(fds[:0], unix.PollFd{Fd: int32(p.wake[0]), Events: unix.POLLIN})
		rigAt, devAt := -1, -1
		if rig >= 0 {
			rigAt = len(fds)
			fds = append(fds, unix.PollFd{Fd: int32(rig), Events: toDevice.events(toRig)})
		}
		timeout := -1
		switch {
		case detached:
			timeout = 5 // ms: look for the device side being reopened
		default:
			devAt = len(fds)
			fds = append(fds, unix.PollFd{Fd: int32(p.devSide), Events: toRig.events(toDevice)})
			if unplugged {
				timeout = max(1, int(time.Until(next).Milliseconds()))
			}
		}
		checkIn.Pass()
		if _, err := unix.Poll(fds, timeout); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		if fds[0].Revents != 0 {
			return // stopping
		}
		if rigAt >= 0 && fds[rigAt].Revents != 0 {
			if fds[rigAt].Revents&unix.POLLOUT != 0 {
				p.forwarded += uint64(toRig.writeTo(rig))
			}
			if toDevice.empty() && fds[rigAt].Revents&(unix.POLLIN|unix.POLLERR|unix.POLLHUP) != 0 {
				n, err := toDevice.readFrom(rig)
				switch {
				case n > 0 && detached:
					toDevice.clear() // no device to deliver to: lost, as from an unplugged cable
				case n > 0:
					toDevice.writeTo(p.devSide)
				case err != nil && !errors.Is(err, unix.EAGAIN):
					p.unplugRigSide()
					toRig.clear()
					rig = -1
				}
			}
		}
		if devAt >= 0 && fds[devAt].Revents != 0 {
			revents := fds[devAt].Revents
			if revents&unix.POLLHUP != 0 {
				// The program closed the device: unplugged. What it
				// wrote before closing was on the line, as a real
				// port's close waits for its output to drain.
				p.drainToRig(rig, toRig)
				detached, unplugged = true, false
				toDevice.clear()
				p.unplugRigSide()
				continue
			}
			if revents&unix.POLLOUT != 0 {
				toDevice.writeTo(p.devSide)
			}
			if toRig.empty() && revents&unix.POLLIN != 0 {
				if n, _ := toRig.readFrom(p.devSide); n > 0 && rig >= 0 {
					p.forwarded += uint64(toRig.writeTo(rig))
				} else {
					toRig.clear() // the rig's side is unplugged: lost
				}
			}
		}
		if detached && p.deviceReopened() {
			detached = false
			p.mu.Lock()
			unplugged = p.rigSide < 0 && p.cfg.Reconnect > 0
			p.mu.Unlock()
			next = time.Now()
		}
		if unplugged && !time.Now().Before(next) {
			err := p.plugRigSide()
			if err == nil {
				unplugged, told = false, false
				continue
			}
			// No pair can be made (no pseudo-terminals or descriptors
			// left): the serial driver's reopening keeps failing, and
			// the gap lasts until one can. Said once a gap.
			if !told {
				told = true
				p.out.notices.tellNow(NoticeReopenFailed, p.out.notices.deviceError(
					fmt.Errorf("cannot plug the cable back in: %w; trying again every %v", err, p.cfg.Reconnect)))
			}
			next = time.Now().Add(p.cfg.Reconnect)
		}
	}
}

// held is what the bridge read from one side and has not yet written to
// the other.
type held struct {
	buf  []byte // its own
	data []byte // what of buf is still to write
}

func newHeld() *held { return &held{buf: make([]byte, 4096)} }

func (h *held) empty() bool { return len(h.data) == 0 }

func (h *held) clear() { h.data = h.data[:0] }

// events is what to poll the side h is read from for, other being what
// is written to it: more to read only once h is written out, room to
// write while other holds something.
func (h *held) events(other *held) int16 {
	var ev int16
	if h.empty() {
		ev |= unix.POLLIN
	}
	if !other.empty() {
		ev |= unix.POLLOUT
	}
	return ev
}

// readFrom reads fd into h, which must be empty.
func (h *held) readFrom(fd int) (int, error) {
	n, err := unix.Read(fd, h.buf)
	h.data = h.buf[:max(n, 0)]
	return n, err
}

// writeTo writes what it can of h to fd in one attempt and returns how
// many bytes went.
func (h *held) writeTo(fd int) int {
	n, _ := unix.Write(fd, h.data)
	n = max(n, 0)
	h.data = h.data[n:]
	return n
}

// drainToRig forwards what is held for the rig and what is left to read
// on the device side, and waits, a little, for the rig's reader to take
// it: the rig's side is always read, so this is short.
func (p *Pty) drainToRig(rig int, toRig *held) {
	defer toRig.clear()
	if rig < 0 {
		return
	}
	deadline := time.Now().Add(100 * time.Millisecond)
	for time.Now().Before(deadline) {
		if toRig.empty() {
			if n, _ := toRig.readFrom(p.devSide); n <= 0 {
				break
			}
		}
		if n := toRig.writeTo(rig); n > 0 {
			p.forwarded += uint64(n)
		} else {
			time.Sleep(50 * time.Microsecond) // the rig's reader is behind
		}
	}
	for p.counts.bytesIn.Load() < p.forwarded && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// deviceReopened reports whether a program has the device side open again.
func (p *Pty) deviceReopened() bool {
	fds := []unix.PollFd{{Fd: int32(p.devSide), Events: unix.POLLIN}}
	unix.Poll(fds, 0)
	return fds[0].Revents&unix.POLLHUP == 0
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
	if p.rigPeer >= 0 {
		unix.Close(p.rigPeer) // the serial driver is closed: nothing reopens it now
		p.rigPeer = -1
	}
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
		p.removeLink()
		p.linkLock.release()
		p.linkLock = nil
	}
}
