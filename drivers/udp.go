package drivers

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"

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
type UDP struct {
	cfg      UDPConfig
	conn     *net.UDPConn
	dialed   bool
	mu       sync.Mutex
	peer     netip.AddrPort // where Write sends, when listening
	hasPeer  bool
	fixed    bool // Peer was given: do not follow the senders
	stopping atomic.Bool
	stopped  chan struct{}
	counts   atomicCounts
	// The executor's: the socket written in one attempt, its address
	// family, the peer its destination was made for, and the account.
	raw    *rawWriter
	family int
	sentTo netip.AddrPort
	out    deviceOut
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
	var err error
	switch {
	case u.cfg.Dial != "":
		var raddr *net.UDPAddr
		if raddr, err = net.ResolveUDPAddr("udp", u.cfg.Dial); err != nil {
			return fail(err)
		}
		u.conn, err = net.DialUDP("udp", nil, raddr)
		u.dialed = true
	default:
		var laddr *net.UDPAddr
		if laddr, err = net.ResolveUDPAddr("udp", u.cfg.Listen); err != nil {
			return fail(err)
		}
		u.conn, err = net.ListenUDP("udp", laddr)
		if err == nil && u.cfg.Peer != "" {
			var peer netip.AddrPort
			if peer, err = netip.ParseAddrPort(u.cfg.Peer); err == nil {
				u.peer, u.hasPeer, u.fixed = peer, true, true
			}
		}
	}
	if err == nil {
		u.raw, err = newRawWriter(u.conn)
	}
	if err == nil {
		ctlErr := u.raw.raw.Control(func(fd uintptr) { u.family, err = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN) })
		err = cmp.Or(ctlErr, err)
	}
	if err != nil {
		if u.conn != nil {
			u.conn.Close()
		}
		return fail(err)
	}
	u.out = deviceOut{counts: &u.counts, notices: newNotices(clock, sink, index, u.cfg.Name, u.where())}
	u.stopped = make(chan struct{})
	go u.read(clock, sink, index)
	return nil
}

func (u *UDP) read(clock Clock, sink Sink, index int) {
	defer close(u.stopped)
	lockReaderThread(u.cfg.ReaderThread)
	buf := make([]byte, 1<<16) // any datagram, whole: an oversize one is counted with all its bytes
	var meter ReaderMeter
	for {
		n, from, err := u.conn.ReadFromUDPAddrPort(buf)
		at := clock.Now()
		sink.Read(index, &meter, at)
		if u.stopping.Load() {
			return
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			// UDP has no connection to lose: the kernel reports, on
			// the next read or write, that a datagram sent earlier
			// found no one listening (an ICMP port unreachable). That
			// datagram was lost, the socket still works.
			u.counts.writeErrors.Add(1)
			continue
		}
		if err != nil {
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
	if u.raw == nil {
		return u.out.away()
	}
	if !u.dialed {
		u.mu.Lock()
		peer, ok := u.peer, u.hasPeer
		u.mu.Unlock()
		if !ok {
			return u.out.away() // nobody has sent anything yet: no one to answer
		}
		if peer != u.sentTo || u.raw.to == nil {
			to, err := sockaddrOf(u.family, peer) // allocates, once a peer
			if err != nil {
				return u.out.refuse(err)
			}
			u.raw.to, u.sentTo = to, peer
		}
	}
	n, err := u.raw.Write(payload)
	if err != nil {
		return u.out.refuse(err)
	}
	u.counts.bytesOut.Add(uint64(n))
	u.out.taken()
	return nil
}

// sockaddrOf is peer as a socket of family addresses it.
func sockaddrOf(family int, peer netip.AddrPort) (unix.Sockaddr, error) {
	a := peer.Addr()
	switch {
	case family == unix.AF_INET && a.Unmap().Is4():
		return &unix.SockaddrInet4{Port: int(peer.Port()), Addr: a.Unmap().As4()}, nil
	case family == unix.AF_INET6 && a.IsValid():
		sa := &unix.SockaddrInet6{Port: int(peer.Port()), Addr: a.As16()}
		if zone := a.Zone(); zone != "" {
			ifi, err := net.InterfaceByName(zone)
			if err != nil {
				return nil, err
			}
			sa.ZoneId = uint32(ifi.Index)
		}
		return sa, nil
	}
	return nil, fmt.Errorf("cannot send to %v from a socket of address family %d", peer, family)
}

func (u *UDP) Stop() error {
	if u.stopping.Swap(true) || u.conn == nil {
		return nil
	}
	err := u.conn.Close()
	<-u.stopped
	return err
}

func (u *UDP) Counts() Counts { return u.counts.snapshot() }

// LocalAddr is the address the endpoint is bound to (useful with port 0).
func (u *UDP) LocalAddr() net.Addr { return u.conn.LocalAddr() }
