package drivers

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/firmware/wire"
)

// SerialConfig describes a serial port endpoint.
type SerialConfig struct {
	Name     string
	Device   string // e.g. /dev/ttyUSB0
	Baud     int    // any rate the driver accepts, standard or not
	DataBits int    // 5 to 8
	Parity   serial.Parity
	StopBits serial.StopBits
	Framing  wire.Framing
	MaxFrame int // bytes; longer frames are dropped
	// Reconnect, when positive, makes a vanished device be reopened at
	// this interval instead of stopping the run.
	Reconnect time.Duration
	// Virtual marks a pseudo-terminal, which moves bytes at once whatever
	// its baud rate: writes are not led by a line time. NewSerial sets it
	// for a Device that is one, however the bench named it.
	Virtual bool
	// ReaderThread, when set, is called on the reader goroutine's locked OS
	// thread before it starts reading (the rig raises its priority there).
	ReaderThread func()
	// Label names the device in messages, when Device is not what the
	// user knows it by.
	Label string
}

// label is how messages name the device.
func (c SerialConfig) label() string {
	if c.Label != "" {
		return c.Label
	}
	return c.Device
}

// CharBits is the length of one character on the line in half bits: start
// bit, data bits, parity bit, stop bits (1.5 stop bits is 3 half bits).
func (c SerialConfig) charHalfBits() int {
	half := 2 * (1 + c.DataBits)
	if c.Parity != serial.NoParity {
		half += 2
	}
	switch c.StopBits {
	case serial.OnePointFiveStopBits:
		half += 3
	case serial.TwoStopBits:
		half += 4
	default:
		half += 2
	}
	return half
}

// CharTime is how long one character takes on the line.
func (c SerialConfig) CharTime() time.Duration {
	return time.Duration(int64(c.charHalfBits()) * int64(time.Second) / (2 * int64(c.Baud)))
}

// Serial is a serial port, read and written through go.bug.st/serial. A
// pseudo-terminal endpoint runs exactly this code on its device.
type Serial struct {
	cfg   SerialConfig
	clock Clock
	sink  Sink
	index int
	// mu guards port, its opening number and lock against reconnection;
	// Write holds it for its one attempt, so that a port is never closed
	// under a write (its descriptor's number could be another file's by
	// the time the write is made).
	mu       sync.Mutex
	port     serial.Port
	opening  uint64      // how many times a port was opened
	lock     *deviceLock // held while the port is open
	out      streamOut   // the executor's
	stopping atomic.Bool
	stopped  chan struct{} // closed when the reader returns
	counts   atomicCounts
	// A Pty's rig side: pluggedIn says whether there is a pair to open
	// (until there is, trying makes and removes a lock file for nothing),
	// and a failed reopening is left unsaid (the Pty says why it cannot
	// plug a pair in).
	pluggedIn   func() bool
	quietReopen bool
}

var (
	_ Endpoint = (*Serial)(nil)
	_ Leader   = (*Serial)(nil)
	_ Counter  = (*Serial)(nil)
)

// NewSerial returns a serial endpoint; Start opens it.
func NewSerial(cfg SerialConfig) *Serial {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = 4096
	}
	cfg.Virtual = cfg.Virtual || isPseudoTerminal(cfg.Device)
	s := &Serial{cfg: cfg}
	s.out = newStreamOut(cfg.Framing, cfg.MaxFrame, &s.counts)
	return s
}

func (s *Serial) Name() string { return s.cfg.Name }

func (s *Serial) mode() *serial.Mode {
	return &serial.Mode{BaudRate: s.cfg.Baud, DataBits: s.cfg.DataBits, Parity: s.cfg.Parity, StopBits: s.cfg.StopBits}
}

// open locks the device and opens it. Its error is as the system or the
// library gave it: explainOpen lists the serial ports, which Start does
// once and a reconnecting endpoint once a gap, not at every attempt.
func (s *Serial) open() (serial.Port, error) {
	lock, err := lockDevice(s.cfg.Device)
	if err != nil {
		return nil, err
	}
	port, err := openPort(s.cfg.Device, s.mode())
	if err != nil {
		lock.release()
		return nil, err
	}
	if _, idle := s.cfg.Framing.(wire.Idle); idle {
		err = port.SetReadTimeout(s.silence())
	} else {
		err = port.SetReadTimeout(serial.NoTimeout)
	}
	if err != nil {
		port.Close()
		lock.release()
		return nil, err
	}
	s.mu.Lock()
	s.lock = lock
	s.mu.Unlock()
	return port, nil
}

// openPort opens a serial port whose descriptors are closed on exec (the
// rig starts processes of its own: a child must never hold a device) and
// whose writes never wait. go.bug.st/serial (v1.8.0) opens the device and
// the pipe that ends its blocking reads without O_CLOEXEC, and leaves the
// device blocking; it has no way to reach them but its unexported fields.
// syscall.ForkLock, held from the open to the flags being set, keeps a
// fork from taking the descriptors in between.
func openPort(device string, mode *serial.Mode) (serial.Port, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	port, err := serial.Open(device, mode)
	if err != nil {
		return nil, err
	}
	fds, err := portDescriptors(port)
	if err == nil {
		for _, fd := range fds {
			unix.CloseOnExec(fd)
		}
		err = unix.SetNonblock(fds[0], true) // the library's reads wait in select, never in read
	}
	if err != nil {
		port.Close()
		return nil, err
	}
	return port, nil
}

// portDescriptors are the descriptors of a port go.bug.st/serial opened
// on Unix: the device's first, then its close-signal pipe's. They are in
// its unexported fields (unixPort.handle, closeSignal.rd and .wr), read
// here through reflect; TestPortDescriptors fails on a version of the
// library that moves them.
func portDescriptors(port serial.Port) ([]int, error) {
	errLibrary := fmt.Errorf("go.bug.st/serial's %T keeps its descriptors where the rig does not know to find them", port)
	v := reflect.ValueOf(port)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, errLibrary
	}
	handle, pipe := v.Elem().FieldByName("handle"), v.Elem().FieldByName("closeSignal")
	if handle.Kind() != reflect.Int || pipe.Kind() != reflect.Pointer || pipe.IsNil() || pipe.Elem().Kind() != reflect.Struct {
		return nil, errLibrary
	}
	rd, wr := pipe.Elem().FieldByName("rd"), pipe.Elem().FieldByName("wr")
	if rd.Kind() != reflect.Int || wr.Kind() != reflect.Int {
		return nil, errLibrary
	}
	return []int{int(handle.Int()), int(rd.Int()), int(wr.Int())}, nil
}

// deviceError names the endpoint and its device in err.
func (s *Serial) deviceError(err error) error {
	return &DeviceError{Endpoint: s.cfg.Name, Device: s.cfg.label(), Err: err}
}

// use makes port the one Write writes to: a new opening of the device.
func (s *Serial) use(port serial.Port) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.port = port
	s.opening++
}

// unlock releases the device's lock once its port is closed.
func (s *Serial) unlock() {
	s.mu.Lock()
	lock := s.lock
	s.lock = nil
	s.mu.Unlock()
	lock.release()
}

// silence is the idle framing's gap: its own, or 3.5 character times.
func (s *Serial) silence() time.Duration {
	if idle := s.cfg.Framing.(wire.Idle); idle.Silence > 0 {
		return idle.Silence
	}
	return 7 * s.cfg.CharTime() / 2
}

// explainOpen turns the library's errors into what a user can act on.
func explainOpen(err error) error {
	var pe *serial.PortError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("no such device (serial ports here: %s)", portList())
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied (add yourself to the dialout group, or run as root)")
	case errors.As(err, &pe) && pe.Code() == serial.PermissionDenied:
		return errors.New("permission denied (add yourself to the dialout group, or run as root)")
	case errors.As(err, &pe) && pe.Code() == serial.PortBusy:
		return errors.New("busy: another program has it open")
	}
	return err
}

// portList names the serial ports there are. It is costly (the library
// reads sysfs and opens each ttyS placeholder): never once an attempt.
func portList() string {
	ports, err := SerialPorts()
	if err != nil || len(ports) == 0 {
		return "none"
	}
	names := make([]string, len(ports))
	for i, p := range ports {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func (s *Serial) Start(clock Clock, sink Sink, index int) error {
	if s.cfg.Baud <= 0 {
		return s.deviceError(errors.New("no baud rate"))
	}
	port, err := s.open()
	if err != nil {
		return s.deviceError(explainOpen(err))
	}
	s.clock, s.sink, s.index = clock, sink, index
	s.out.notices = newNotices(clock, sink, index, s.cfg.Name, s.cfg.label())
	s.use(port)
	s.stopped = make(chan struct{})
	go s.read(port)
	return nil
}

// read runs on its own locked OS thread: blocking reads wake it straight
// from the kernel.
func (s *Serial) read(port serial.Port) {
	defer close(s.stopped)
	checkIn := lockReaderThread(s.cfg.ReaderThread)
	buf := make([]byte, 4096)
	var meter ReaderMeter
	var decoder decoderSum
	decoder.replace(s.cfg.Framing, s.cfg.MaxFrame)
	emit := func(frame []byte, at time.Duration) {
		s.counts.framesIn.Add(1)
		s.sink.Frame(s.index, frame, at)
	}
	for {
		checkIn.Pass()
		n, err := port.Read(buf)
		at := s.clock.Now()
		switch {
		case s.stopping.Load():
			return
		case errors.Is(err, unix.EAGAIN):
			// The descriptor is non-blocking for the executor's
			// writes; the library's select said readable, but
			// nothing was: read again.
		case err != nil:
			if port = s.reconnect(port, at, err); port == nil {
				return
			}
			decoder.replace(s.cfg.Framing, s.cfg.MaxFrame)
		case n == 0:
			decoder.Gap(emit) // the read timed out: the line fell silent
		default:
			decoder.Feed(buf[:n], at, emit)
		}
		s.counts.decoded(decoder.stats())
		s.sink.Read(s.index, &meter, at)
	}
}

// reconnect reports the device gone and, if reconnecting is configured,
// reopens it; it returns nil when the reader should end.
func (s *Serial) reconnect(port serial.Port, at time.Duration, err error) serial.Port {
	s.mu.Lock()
	s.port = nil
	s.mu.Unlock()
	port.Close()
	s.unlock()
	s.sink.Gone(s.index, at, s.deviceError(describeReadError(err)))
	if s.cfg.Reconnect <= 0 {
		return nil
	}
	explained := s.quietReopen
	for !s.stopping.Load() {
		time.Sleep(s.cfg.Reconnect)
		if s.stopping.Load() {
			return nil
		}
		if s.pluggedIn != nil && !s.pluggedIn() {
			continue
		}
		p, err := s.open()
		if err == nil {
			s.use(p)
			s.sink.Back(s.index, s.clock.Now())
			return p
		}
		if !explained {
			explained = true
			s.out.notices.tellNow(NoticeReopenFailed, s.deviceError(fmt.Errorf("cannot open it again: %w; trying again every %v", explainOpen(err), s.cfg.Reconnect)))
		}
	}
	return nil
}

// describeReadError says what a failed read means. A device that went away
// reads as a closed port, or (a tty whose other side hung up, a USB adapter
// pulled out mid-read) as EIO.
func describeReadError(err error) error {
	var pe *serial.PortError
	if errors.As(err, &pe) && pe.Code() == serial.PortClosed || errors.Is(err, unix.EIO) {
		return errors.New("device vanished (unplugged?)")
	}
	return fmt.Errorf("read failed: %w", err)
}

// Write encodes payload with the framing and writes it, in one attempt on
// the port's non-blocking descriptor. It allocates nothing: the encoding
// buffer is the endpoint's own.
func (s *Serial) Write(payload []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.port == nil {
		return s.out.write(nil, s.opening, payload)
	}
	return s.out.write(s.port, s.opening, payload)
}

// isPseudoTerminal reports whether path, after its symbolic links, is the
// device side of a Unix 98 pseudo-terminal (character major 136 to 143, as
// /dev/pts/N and the links socat makes to them are).
func isPseudoTerminal(path string) bool {
	var st unix.Stat_t
	if path == "" || unix.Stat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		return false
	}
	major := unix.Major(uint64(st.Rdev))
	return major >= 136 && major <= 143
}

// LineMode says how writes are timed, for the summary: led by the line
// time of a UART, or not at all on a pseudo-terminal.
func (s *Serial) LineMode() string {
	if s.cfg.Virtual {
		return "pseudo-terminal: bytes move at once, writes are not led"
	}
	return fmt.Sprintf("uart at %d baud: writes start a line time early", s.cfg.Baud)
}

// LineTime is how long the frame's bytes take on the line: its payload
// plus the framing's fixed overhead (escapes are not counted), at
// CharTime each. A pseudo-terminal takes no time.
func (s *Serial) LineTime(payloadBytes int) time.Duration {
	if s.cfg.Virtual {
		return 0
	}
	n := payloadBytes
	switch f := s.cfg.Framing.(type) {
	case wire.Line:
		n += len(f.Delimiter)
	case wire.AnyLine:
		n += len(f.Delimiter)
	case wire.SLIP:
		n += 2
	case wire.COBS:
		n += 3 + payloadBytes/254 // the leading and the ending zero, the first code byte, a code byte per 254 more
	}
	return time.Duration(int64(n) * int64(s.cfg.charHalfBits()) * int64(time.Second) / (2 * int64(s.cfg.Baud)))
}

func (s *Serial) Stop() error {
	if s.stopping.Swap(true) {
		return nil
	}
	s.mu.Lock()
	port := s.port
	s.port = nil // no write reaches it once it is closed
	s.mu.Unlock()
	var err error
	if port != nil {
		err = port.Close() // wakes the reader's blocking read
	}
	if s.stopped != nil {
		<-s.stopped
	}
	s.unlock()
	s.counts.cutRest()
	return err
}

func (s *Serial) Counts() Counts { return s.counts.snapshot() }
