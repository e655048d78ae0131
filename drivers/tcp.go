package drivers

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

// TCPConfig describes a TCP endpoint: a byte stream cut into frames by a
// framing, as on a serial line.
type TCPConfig struct {
	Name         string
	Listen, Dial string
	Framing      wire.Framing
	MaxFrame     int
	Reconnect    time.Duration // dial again after a disconnection
	ReaderThread func()
}

// TCP is a TCP endpoint. Listening, it serves one connection at a time and
// waits for the next when a client leaves; dialing, it reconnects when
// Reconnect is set.
type TCP struct {
	cfg      TCPConfig
	listener net.Listener
	// mu guards the connection, its writer and its number; Write holds it
	// for its one attempt.
	mu       sync.Mutex
	conn     net.Conn
	raw      *rawWriter // conn's
	opening  uint64     // how many connections there were
	out      streamOut  // the executor's
	stopping atomic.Bool
	stop     context.Context // done once Stop is called: ends a dial or a wait to dial again
	cancel   context.CancelFunc
	stopped  chan struct{}
	counts   atomicCounts
}

var _ Endpoint = (*TCP)(nil)

// dialTimeout bounds each attempt to dial a TCP endpoint's peer.
const dialTimeout = 5 * time.Second

// NewTCP returns a TCP endpoint; Start opens it.
func NewTCP(cfg TCPConfig) *TCP {
	if cfg.MaxFrame <= 0 {
		cfg.MaxFrame = 4096
	}
	c := &TCP{cfg: cfg}
	c.out = newStreamOut(cfg.Framing, cfg.MaxFrame, &c.counts)
	c.stop, c.cancel = context.WithCancel(context.Background())
	return c
}

func (c *TCP) Name() string { return c.cfg.Name }

func (c *TCP) where() string {
	if c.cfg.Dial != "" {
		return "tcp " + c.cfg.Dial
	}
	return "tcp " + c.cfg.Listen
}

func (c *TCP) Start(clock Clock, sink Sink, index int) error {
	fail := func(err error) error { return &DeviceError{Endpoint: c.cfg.Name, Device: c.where(), Err: err} }
	c.out.notices = newNotices(clock, sink, index, c.cfg.Name, c.where())
	if c.cfg.Dial != "" {
		conn, err := c.dial()
		if err != nil {
			return fail(err)
		}
		if err := c.connected(conn); err != nil {
			conn.Close()
			return fail(err)
		}
	} else {
		l, err := net.Listen("tcp", c.cfg.Listen)
		if err != nil {
			return fail(err)
		}
		c.listener = l
	}
	c.stopped = make(chan struct{})
	go c.serve(clock, sink, index, clock.Now())
	return nil
}

// connected makes conn the endpoint's connection, with the writer that
// writes it in one attempt; the caller closes a conn it refuses. Once Stop
// has begun it refuses them all (told under mu: else Stop would not close
// it).
func (c *TCP) connected(conn net.Conn) error {
	raw, err := newRawWriter(conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && c.stopping.Load() {
		err = net.ErrClosed
	}
	if err != nil {
		return err
	}
	c.conn, c.raw = conn, raw
	c.opening++
	return nil
}

// dial dials the peer once, giving up after dialTimeout or on Stop.
func (c *TCP) dial() (net.Conn, error) {
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(c.stop, "tcp", c.cfg.Dial)
}

// Addr is the listening address (useful with port 0), or the dialed one.
func (c *TCP) Addr() net.Addr {
	if c.listener != nil {
		return c.listener.Addr()
	}
	return c.conn.RemoteAddr()
}

// serve reads the connections one after the other. A listening endpoint
// has no peer until the first connects: it is reported gone from started
// until then, as it is between connections, so that a run nobody connected
// to shows it.
func (c *TCP) serve(clock Clock, sink Sink, index int, started time.Duration) {
	defer close(c.stopped)
	lockReaderThread(c.cfg.ReaderThread) // its reads wait in the scheduler (net's poller): no check-in needed
	buf := make([]byte, 4096)
	var meter ReaderMeter
	emit := func(frame []byte, at time.Duration) {
		c.counts.framesIn.Add(1)
		sink.Frame(index, frame, at)
	}
	gone := func(at time.Duration, why string) {
		sink.Gone(index, at, &DeviceError{Endpoint: c.cfg.Name, Device: c.where(), Err: errors.New(why)})
	}
	if c.listener != nil {
		gone(started, "no client has connected yet")
	}
	var decoder decoderSum
	decoder.replace(c.cfg.Framing, c.cfg.MaxFrame)
	for {
		c.mu.Lock()
		conn := c.conn
		c.mu.Unlock()
		if conn == nil {
			var err error
			if conn, err = c.connect(); err != nil {
				if c.stopping.Load() {
					return
				}
				sink.Gone(index, clock.Now(), &DeviceError{Endpoint: c.cfg.Name, Device: c.where(), Err: err})
				return
			}
			if err := c.connected(conn); err != nil {
				conn.Close()
				if !c.stopping.Load() {
					sink.Gone(index, clock.Now(), &DeviceError{Endpoint: c.cfg.Name, Device: c.where(), Err: err})
				}
				return
			}
			sink.Back(index, clock.Now())
		}
		for {
			n, err := conn.Read(buf)
			at := clock.Now()
			sink.Read(index, &meter, at)
			if n > 0 {
				decoder.Feed(buf[:n], at, emit)
				c.counts.decoded(decoder.stats())
			}
			if err != nil {
				break
			}
		}
		c.mu.Lock()
		c.conn, c.raw = nil, nil
		c.mu.Unlock()
		conn.Close()
		if c.stopping.Load() {
			return
		}
		at := clock.Now()
		// The stream ended: a frame it cut is bad now, not when (if
		// ever) the next connection comes, and the next starts afresh.
		decoder.replace(c.cfg.Framing, c.cfg.MaxFrame)
		c.counts.decoded(decoder.stats())
		gone(at, "connection closed")
		if c.listener == nil && c.cfg.Reconnect <= 0 {
			return
		}
	}
}

// connect waits for the next client, or dials again.
func (c *TCP) connect() (net.Conn, error) {
	if c.listener != nil {
		return c.listener.Accept()
	}
	wait := time.NewTimer(c.cfg.Reconnect)
	defer wait.Stop()
	for {
		select {
		case <-c.stop.Done():
			return nil, net.ErrClosed
		case <-wait.C:
		}
		if conn, err := c.dial(); err == nil {
			return conn, nil
		}
		wait.Reset(c.cfg.Reconnect)
	}
}

// Write encodes payload with the framing and writes it, in one attempt on
// the socket: a peer that stopped reading (its window and the socket's
// buffer full) does not take it.
func (c *TCP) Write(payload []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw == nil {
		return c.out.write(nil, c.opening, payload)
	}
	return c.out.write(c.raw, c.opening, payload)
}

func (c *TCP) Stop() error {
	if c.stopping.Swap(true) {
		return nil
	}
	c.cancel()
	if c.listener != nil {
		c.listener.Close()
	}
	c.mu.Lock()
	if c.conn != nil {
		c.conn.Close()
	}
	c.mu.Unlock()
	if c.stopped != nil {
		<-c.stopped
	}
	c.mu.Lock()
	c.conn, c.raw = nil, nil
	c.mu.Unlock()
	c.counts.cutRest()
	return nil
}

func (c *TCP) Counts() Counts { return c.counts.snapshot() }
