package drivers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// UDPConfig describes a UDP endpoint: each datagram is a frame.
type UDPConfig struct {
	Name string
	// Listen is the local address to receive on; frames are sent back to
	// Peer, or to whoever sent the last datagram. Dial is a remote address
	// to exchange datagrams with instead.
	Listen, Dial, Peer string
	MaxFrame           int
	ReaderThread       func()
}

// UDP is a UDP socket endpoint.
//
// Its socket is its own descriptor, kept out of Go's netpoller: a socket
// in the netpoller's epoll set raises EPOLLOUT each time the kernel frees
// a datagram it sent, and each wakes the netpoller's thread, once per
// frame the executor writes (at 10 kHz that was most of the executor's
// CPU, BENCHMARKS.md). So the reader blocks in recvfrom on its own locked
// thread (a blocked receive is woken by data, not by EPOLLOUT), and the
// executor sends with MSG_DONTWAIT, in one attempt that never waits.
type UDP struct {
	cfg    UDPConfig
	local  net.Addr
	dialed bool
	// sock is the descriptor; open is false before Start and after Stop,
	// which closes it only once no Write is using it.
	sockMu sync.RWMutex
	sock   int
	open   bool
	// peer is where Write sends when listening: Peer, or whoever sent
	// the last datagram (hasPeer false: nobody yet).
	mu       sync.Mutex
	peer     sockaddr
	hasPeer  bool
	fixed    bool // Peer was given: do not follow the senders
	stopping atomic.Bool
	stopped  chan struct{}
	counts   atomicCounts
	// The executor's: the destination it sends to, and the account.
	to  sockaddr
	out deviceOut
}

var _ Endpoint = (*UDP)(nil)

// NewUDP returns a UDP endpoint; Start opens it.
func NewUDP(cfg UDPConfig) *UDP {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = 65507
	}
	return &UDP{cfg: cfg}
}

func (u *UDP) Name() string { return u.cfg.Name }

func (u *UDP) where() string {
	if u.cfg.Dial != "" {
		return "udp " + u.cfg.Dial
	}
	return "udp " + u.cfg.Listen
}

func (u *UDP) Start(clock Clock, sink Sink, index int) error {
	fail := func(err error) error { return &DeviceError{Endpoint: u.cfg.Name, Device: u.where(), Err: err} }
	var (
		conn *net.UDPConn
		err  error
	)
	switch {
	case u.cfg.Dial != "":
		var raddr *net.UDPAddr
		if raddr, err = net.ResolveUDPAddr("udp", u.cfg.Dial); err != nil {
			return fail(err)
		}
		conn, err = net.DialUDP("udp", nil, raddr)
		u.dialed = true
	default:
		var laddr *net.UDPAddr
		if laddr, err = net.ResolveUDPAddr("udp", u.cfg.Listen); err != nil {
			return fail(err)
		}
		conn, err = net.ListenUDP("udp", laddr)
	}
	if err != nil {
		return fail(err)
	}
	u.local = conn.LocalAddr()
	sock, err := ownSocket(conn)
	if err != nil {
		return fail(err)
	}
	if u.cfg.Peer != "" && !u.dialed {
		var peer netip.AddrPort
		var family int
		if peer, err = netip.ParseAddrPort(u.cfg.Peer); err == nil {
			family, err = unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
		}
		if err == nil {
			u.peer, err = sockaddrOf(family, peer)
		}
		if err != nil {
			unix.Close(sock)
			return fail(err)
		}
		u.hasPeer, u.fixed = true, true
	}
	u.sock, u.open = sock, true
	u.out = deviceOut{counts: &u.counts, notices: newNotices(clock, sink, index, u.cfg.Name, u.where())}
	u.stopped = make(chan struct{})
	go u.read(clock, sink, index)
	return nil
}

// ownSocket takes conn's socket out of the netpoller: a duplicate of its
// descriptor, in blocking mode, outlives conn, whose Close removes the
// socket from the netpoller's epoll set. The net package has bound (and
// connected) it as it does any UDP socket (dual-stack on an unspecified
// address, the address families, the lookups).
func ownSocket(conn *net.UDPConn) (int, error) {
	defer conn.Close()
	raw, err := conn.SyscallConn()
	if err != nil {
		return -1, err
	}
	sock := -1
	ctlErr := raw.Control(func(fd uintptr) {
		sock, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if err = errors.Join(ctlErr, err); err != nil {
		return -1, err
	}
	if err = unix.SetNonblock(sock, false); err != nil {
		unix.Close(sock)
		return -1, err
	}
	return sock, nil
}

func (u *UDP) read(clock Clock, sink Sink, index int) {
	defer close(u.stopped)
	checkIn := lockReaderThread(u.cfg.ReaderThread)
	buf := make([]byte, 1<<16) // any datagram, whole: an oversize one is counted with all its bytes
	var meter ReaderMeter
	var from sockaddr
	for {
		checkIn.Pass()
		n, err := recvFrom(u.sock, buf, &from)
		at := clock.Now()
		sink.Read(index, &meter, at)
		if u.stopping.Load() {
			return // Stop shut the socket down, which ended the receive
		}
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECONNREFUSED):
			// UDP has no connection to lose: the kernel reports, on
			// the next read or write, that a datagram sent earlier
			// found no one listening (an ICMP port unreachable). That
			// datagram was lost, the socket still works.
			u.counts.writeErrors.Add(1)
			continue
		case err != nil:
			sink.Gone(index, at, &DeviceError{Endpoint: u.cfg.Name, Device: u.where(), Err: err})
			return
		}
		u.counts.bytesIn.Add(uint64(n))
		if n > u.cfg.MaxFrame {
			u.counts.badFrames.Add(1)
			u.counts.badBytes.Add(uint64(n))
			continue
		}
		if !u.dialed && !u.fixed {
			u.mu.Lock()
			u.peer, u.hasPeer = from, true
			u.mu.Unlock()
		}
		u.counts.framesIn.Add(1)
		u.counts.frameBytes.Add(uint64(n))
		sink.Frame(index, buf[:n], at)
	}
}

// Write sends payload as one datagram, in one attempt on the socket: a
// socket whose send buffer is full (a slow interface's queue) does not
// take it.
func (u *UDP) Write(payload []byte) error {
	u.sockMu.RLock()
	defer u.sockMu.RUnlock()
	if !u.open {
		return u.out.refuse(net.ErrClosed)
	}
	var to *sockaddr // a dialed socket's peer is the one it is connected to
	if !u.dialed {
		u.mu.Lock()
		u.to, to = u.peer, &u.to
		ok := u.hasPeer
		u.mu.Unlock()
		if !ok {
			return u.out.away() // nobody has sent anything yet: no one to answer
		}
	}
	if err := sendTo(u.sock, payload, to); err != nil {
		return u.out.refuse(err)
	}
	u.counts.bytesOut.Add(uint64(len(payload)))
	u.out.taken()
	return nil
}

// A sockaddr is a socket address as the kernel reads and writes it, so
// that a datagram's sender becomes the next one's destination without a
// conversion (or an allocation) on the way.
type sockaddr struct {
	any  unix.RawSockaddrAny
	size uint32 // of the address in any; 0: none
}

// recvFrom receives one datagram into p and its sender into from, waiting
// for it.
func recvFrom(sock int, p []byte, from *sockaddr) (int, error) {
	from.size = unix.SizeofSockaddrAny
	n, _, errno := unix.Syscall6(unix.SYS_RECVFROM, uintptr(sock), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)),
		0, uintptr(unsafe.Pointer(&from.any)), uintptr(unsafe.Pointer(&from.size)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// sendTo sends p as one datagram to to (nil: the socket's connected
// peer), without waiting for room.
func sendTo(sock int, p []byte, to *sockaddr) error {
	var addr unsafe.Pointer
	var size uint32
	if to != nil {
		addr, size = unsafe.Pointer(&to.any), to.size
	}
	_, _, errno := unix.Syscall6(unix.SYS_SENDTO, uintptr(sock), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)),
		unix.MSG_DONTWAIT, uintptr(addr), uintptr(size))
	if errno != 0 {
		return errno
	}
	return nil
}

// sockaddrOf is peer as a socket of family addresses it.
func sockaddrOf(family int, peer netip.AddrPort) (sockaddr, error) {
	var s sockaddr
	a := peer.Addr()
	switch {
	case family == unix.AF_INET && a.Unmap().Is4():
		in := (*unix.RawSockaddrInet4)(unsafe.Pointer(&s.any))
		in.Family, in.Addr = unix.AF_INET, a.Unmap().As4()
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&in.Port))[:], peer.Port())
		s.size = unix.SizeofSockaddrInet4
	case family == unix.AF_INET6 && a.IsValid():
		in := (*unix.RawSockaddrInet6)(unsafe.Pointer(&s.any))
		in.Family, in.Addr = unix.AF_INET6, a.As16()
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&in.Port))[:], peer.Port())
		if zone := a.Zone(); zone != "" {
			ifi, err := net.InterfaceByName(zone)
			if err != nil {
				return s, err
			}
			in.Scope_id = uint32(ifi.Index)
		}
		s.size = unix.SizeofSockaddrInet6
	default:
		return s, fmt.Errorf("cannot send to %v from a socket of address family %d", peer, family)
	}
	return s, nil
}

func (u *UDP) Stop() error {
	if u.stopping.Swap(true) || u.stopped == nil {
		return nil
	}
	// A receive in progress returns once the socket is shut down for
	// reading (closing the descriptor would not end it), and so does
	// every one after.
	unix.Shutdown(u.sock, unix.SHUT_RD) // ENOTCONN on a socket not connected, which shuts it down all the same
	<-u.stopped
	u.sockMu.Lock()
	defer u.sockMu.Unlock()
	u.open = false
	return unix.Close(u.sock)
}

func (u *UDP) Counts() Counts { return u.counts.snapshot() }

// LocalAddr is the address the endpoint is bound to (useful with port 0).
func (u *UDP) LocalAddr() net.Addr { return u.local }
