package web

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// A server and the session it serves are joined by a link: a stream
// connection between the rig's process, where the session runs (its
// Host), and the process that serves HTTP (its Server). Nothing a client
// does can then move a release: the server's garbage, its goroutines and
// its locks are another process's, which the kernel schedules below the
// executor's real-time thread. Over the link go the session's snapshots,
// in their binary form (record.Snapshot.AppendBinary), from a buffer the
// host keeps; and the few things only the session knows, asked one at a
// time: its summary so far, its events, a change to apply, the profile as
// it runs now. hilrig runs the server as a child process of the rig
// (Dial); tests join both in one process (New).

// frame kinds, the first byte of each frame; a 4-byte little-endian
// length and the payload follow.
const (
	kindHello    = 'H' // host → server: the run's description (hello, JSON)
	kindStarted  = 'B' // host → server: the run has begun
	kindSnapshot = 'S' // host → server: a snapshot's binary form
	kindRequest  = 'Q' // server → host: a question (linkRequest, JSON)
	kindAnswer   = 'A' // host → server: its answer (linkAnswer, JSON)
	kindEnd      = 'E' // host → server: the run has ended (ending, JSON)
)

// maxLinkFrame bounds a frame: a snapshot of 10 000 flows is some 2 MB.
const maxLinkFrame = 64 << 20

// hello describes the run to its server.
type hello struct {
	Source  string    `json:"source"`  // where the profile lives, for its relative files
	Profile []byte    `json:"profile"` // the resolved profile (profiles.Loaded.YAML)
	Bench   string    `json:"bench,omitempty"`
	Clock   string    `json:"clock"`
	Seed    uint64    `json:"seed"`
	End     int64     `json:"end_ns"`
	Started time.Time `json:"started"` // when the host was made
	// RunID tells this run from every other: 64 random bits, in hex.
	RunID string `json:"run_id"`
}

// linkRequest is a server's question to its host.
type linkRequest struct {
	ID uint64 `json:"id"`
	Op string `json:"op"` // summary, events, change, phase, profile
	// A change: the hop, its body in the profile language, where it came
	// from (for messages), and its event.
	Hop    string          `json:"hop,omitempty"`
	Change json.RawMessage `json:"change,omitempty"`
	Source string          `json:"source,omitempty"`
	Event  string          `json:"event,omitempty"`
	// A phase: its name and length (0: until the end).
	Phase string `json:"phase,omitempty"`
	For   int64  `json:"for_ns,omitempty"`
	// Events: those after the first Since.
	Since int `json:"since,omitempty"`
	// A reset: the keys to return to the profile's values (all: none) of
	// Hop (all: empty).
	Keys []string `json:"keys,omitempty"`
}

// linkAnswer is a host's answer.
type linkAnswer struct {
	ID    uint64     `json:"id"`
	Error *linkError `json:"error,omitempty"`
	Ended bool       `json:"ended,omitempty"` // the run ended before it could be done
	// A change applied: its number in the order applied, when it took
	// effect, how long it waited for the executor, the wall clock then,
	// and the hop as it is after it.
	Seq    uint64          `json:"seq,omitempty"`
	At     int64           `json:"at_ns,omitempty"`
	Queued int64           `json:"queued_ns,omitempty"`
	Wall   time.Time       `json:"wall,omitzero"`
	Hop    json.RawMessage `json:"hop,omitempty"`
	// The hops as they are now ([]HopJSON).
	Hops json.RawMessage `json:"hops,omitempty"`
	// A reset: each hop's part, in the order applied.
	Resets []resetDone `json:"resets,omitempty"`
	// The summary so far, the events, or the profile as it runs now.
	Summary *record.Summary `json:"summary,omitempty"`
	Events  []record.Event  `json:"events,omitempty"`
	Profile string          `json:"profile,omitempty"`
}

// linkError is a refusal that crosses the link.
type linkError struct {
	Code int       `json:"code"`
	Msg  string    `json:"msg"`
	Path string    `json:"path,omitempty"`
	All  []problem `json:"all,omitempty"`
}

func (e *linkError) change() *errChange {
	return &errChange{code: e.Code, msg: e.Msg, path: e.Path, all: e.All}
}

func linkErr(e *errChange) *linkError {
	return &linkError{Code: e.code, Msg: e.msg, Path: e.path, All: e.all}
}

// ending is the run's end, as the host tells it.
type ending struct {
	Summary record.Summary `json:"summary"`
	Profile string         `json:"profile"` // the profile as the run left it
}

// writeFrame writes a frame whose payload follows a header's room at the
// start of buf (frameHeader bytes), in one write.
func writeFrame(w io.Writer, kind byte, buf []byte) error {
	buf[0] = kind
	binary.LittleEndian.PutUint32(buf[1:frameHeader], uint32(len(buf)-frameHeader))
	_, err := w.Write(buf)
	return err
}

const frameHeader = 5

// readFrame reads a frame into buf (grown as needed) and returns its
// kind and payload.
func readFrame(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	var hdr [frameHeader]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, buf, err
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if n > maxLinkFrame {
		return 0, buf, fmt.Errorf("a frame of %d bytes on the link, more than %d", n, maxLinkFrame)
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err := io.ReadFull(r, buf)
	return hdr[0], buf, err
}

// writeJSONFrame writes v as a frame of kind.
func writeJSONFrame(w io.Writer, kind byte, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFrame(w, kind, append(make([]byte, frameHeader, frameHeader+len(body)), body...))
}

// Host is a session's side of the link to its server: it sends the
// session's snapshots and answers the server's questions, and runs the
// session.
type Host struct {
	s    *rig.Session
	mon  *record.Monitor
	conn net.Conn

	wmu sync.Mutex // over writes to conn

	ended     chan struct{} // closed when the run has ended
	published chan struct{} // closed when the last snapshot was sent
	served    chan struct{} // closed when the server has closed the link
	started   atomic.Bool

	// On the executor only: the changes applied so far, and the latest
	// that set each parameter of each hop (for the profile as it runs).
	applied uint64
	latest  map[hopParam]*change

	logf func(format string, args ...any)
}

// NewHost links session s, whose executor publishes into mon and which has
// not started running, to the server at the other end of conn: it tells
// the server the run and begins to send snapshots and answer questions.
// Host.Run runs the session.
func NewHost(s *rig.Session, mon *record.Monitor, conn net.Conn, log io.Writer) (*Host, error) {
	if log == nil {
		log = io.Discard
	}
	h := &Host{s: s, mon: mon, conn: conn, ended: make(chan struct{}), published: make(chan struct{}), served: make(chan struct{}), latest: map[hopParam]*change{},
		logf: func(format string, args ...any) { fmt.Fprintf(log, "hilrig: "+format+"\n", args...) }}
	p := s.Profile()
	hi := hello{Source: p.Source, Profile: p.YAML(), Clock: s.Mode().String(), Seed: s.Executor().Network().Summary().Seed, End: int64(s.Executor().End()), Started: time.Now(), RunID: newRunID()}
	if b := s.Bench(); b != nil {
		hi.Bench = b.Name
	}
	if err := h.write(kindHello, hi); err != nil {
		return nil, fmt.Errorf("telling the live server the run: %w", err)
	}
	go h.answer()
	go h.publish()
	return h, nil
}

// newRunID returns 64 random bits in hex: unique enough to tell runs
// apart in a Prometheus server's years of series.
func newRunID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (h *Host) write(kind byte, v any) error {
	h.wmu.Lock()
	defer h.wmu.Unlock()
	return writeJSONFrame(h.conn, kind, v)
}

// Run runs the session, tells the server how it ended, and closes the
// link once the server has told its clients (or after a second): a server
// stops with its run.
func (h *Host) Run(ctx context.Context) (record.Summary, error) {
	h.started.Store(true)
	h.wmu.Lock()
	writeFrame(h.conn, kindStarted, make([]byte, frameHeader))
	h.wmu.Unlock()
	sum, err := h.s.Run(ctx)
	close(h.ended)
	<-h.published // the run's last snapshot before its end, which the server tells as it
	end := ending{Summary: sum}
	end.Profile, _ = h.profileNow(context.Background())
	if werr := h.write(kindEnd, end); werr == nil {
		select {
		case <-h.served:
		case <-time.After(time.Second + DefaultWriteWait):
		}
	}
	h.conn.Close()
	return sum, err
}

// linkPoll is how often a host looks for a new snapshot to send: how
// much later than in the rig's process a server has it, at most.
const linkPoll = 10 * time.Millisecond

// publish sends each new snapshot, from a buffer it keeps: it allocates
// nothing once the buffer has grown, so that the rig's process makes no
// garbage for the server. A server slow to read holds up this goroutine
// only; the snapshots meanwhile are skipped, as a slow reader skips them.
func (h *Host) publish() {
	defer close(h.published)
	tick := time.NewTicker(linkPoll)
	defer tick.Stop()
	var snap record.Snapshot
	var last uint64
	buf := make([]byte, frameHeader, 4096)
	for {
		select {
		case <-h.ended:
			// The last snapshot, which the run's end published.
		case <-h.served:
			return
		case <-tick.C:
		}
		if h.mon.Seq() != last && h.mon.Read(&snap) {
			last = snap.Seq
			h.s.CountEndpoints(&snap)
			buf, _ = snap.AppendBinary(buf[:frameHeader])
			h.wmu.Lock()
			err := writeFrame(h.conn, kindSnapshot, buf)
			h.wmu.Unlock()
			if err != nil {
				return
			}
		}
		select {
		case <-h.ended:
			return
		default:
		}
	}
}

// answer answers the server's questions, one at a time, until it closes
// the link.
func (h *Host) answer() {
	defer close(h.served)
	r := bufio.NewReader(h.conn)
	var buf []byte
	for {
		kind, payload, err := readFrame(r, buf)
		buf = payload
		if err != nil {
			select {
			case <-h.ended:
			default:
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					h.logf("the live server's link: %v", err)
				} else {
					h.logf("the live server stopped; the run goes on")
				}
			}
			return
		}
		if kind != kindRequest {
			continue
		}
		var q linkRequest
		if err := json.Unmarshal(payload, &q); err != nil {
			h.logf("the live server's link: %v", err)
			return
		}
		a := h.do(q)
		a.ID = q.ID
		if err := h.write(kindAnswer, a); err != nil {
			return
		}
	}
}

// hostWait bounds how long a question waits for the executor.
const hostWait = 5 * time.Second

// do answers a question.
func (h *Host) do(q linkRequest) linkAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), hostWait)
	defer cancel()
	switch q.Op {
	case "summary":
		sum, err := h.s.SummaryNow(ctx)
		if err != nil {
			return linkAnswer{Error: &linkError{Code: http.StatusServiceUnavailable, Msg: "the run's summary is not available: " + err.Error()}}
		}
		return linkAnswer{Summary: &sum}
	case "events":
		var evs []record.Event
		ok := h.onExecutor(ctx, func(x *executor.Executor, _ time.Duration) {
			if all := x.Events(); q.Since < len(all) {
				evs = slices.Clone(all[max(q.Since, 0):])
			}
		})
		if !ok {
			return linkAnswer{Ended: true}
		}
		return linkAnswer{Events: evs}
	case "profile":
		text, err := h.profileNow(ctx)
		if err != nil {
			return linkAnswer{Error: &linkError{Code: http.StatusServiceUnavailable, Msg: err.Error()}}
		}
		return linkAnswer{Profile: text}
	case "change":
		return h.change(ctx, q)
	case "reset":
		return h.reset(ctx, q)
	case "hops":
		hops, err := h.hopsNow(ctx)
		if err != nil {
			return linkAnswer{Error: &linkError{Code: http.StatusServiceUnavailable, Msg: err.Error()}}
		}
		out := make([]HopJSON, len(hops))
		for i, hs := range hops {
			out[i] = hopJSON(hs)
		}
		a := linkAnswer{}
		a.Hops, _ = json.Marshal(out)
		return a
	case "phase":
		return h.phase(ctx, q)
	}
	return linkAnswer{Error: &linkError{Code: http.StatusInternalServerError, Msg: "the rig does not know the question " + strconv.Quote(q.Op)}}
}

// onExecutor runs f on the executor between two of its events, and waits
// for it; false if the run ended first (or ctx did).
func (h *Host) onExecutor(ctx context.Context, f func(x *executor.Executor, now time.Duration)) bool {
	if !h.started.Load() {
		return false
	}
	done := make(chan struct{})
	h.s.Executor().Post(func(x *executor.Executor, now time.Duration) {
		f(x, now)
		close(done)
	})
	select {
	case <-done:
		return true
	case <-h.ended:
		select {
		case <-done:
			return true
		default:
			return false
		}
	case <-ctx.Done():
		return false
	}
}

// change applies a change to a hop: the server has checked it with the
// same profile, so a refusal here is the engine's.
func (h *Host) change(ctx context.Context, q linkRequest) linkAnswer {
	p := h.s.Profile()
	i := slices.Index(p.Hops.Names, q.Hop)
	changes, entry, err := p.ParseChange(q.Source, q.Change, q.Hop)
	if i < 0 || err != nil {
		return linkAnswer{Error: &linkError{Code: http.StatusBadRequest, Msg: fmt.Sprintf("hop %s: %v", q.Hop, err)}}
	}
	c := &change{entry: entry, hop: i}
	for _, ch := range changes {
		if set, ok := ch.Change.(emulator.SetHop); ok {
			c.set, c.params = set.Set, set.Params
		}
	}
	var a linkAnswer
	posted := time.Now()
	ok := h.onExecutor(ctx, func(x *executor.Executor, now time.Duration) {
		if err := x.Network().ApplyNow(changes...); err != nil {
			a.Error = linkErr(refuse(http.StatusConflict, "", "hop %s: %v", q.Hop, err))
			return
		}
		h.note(x, now, q.Event, posted, &a)
		for _, k := range emulator.HopKeys() {
			if c.set&k.Field != 0 {
				h.latest[hopParam{i, k.Field}] = c
			}
		}
		a.Hop, _ = json.Marshal(hopJSON(x.Network().HopNow(i)))
	})
	if !ok {
		return linkAnswer{Ended: true}
	}
	return a
}

// phase marks a phase from now.
func (h *Host) phase(ctx context.Context, q linkRequest) linkAnswer {
	var a linkAnswer
	posted := time.Now()
	ok := h.onExecutor(ctx, func(x *executor.Executor, now time.Duration) {
		ph := x.Phases()
		if ph == nil {
			a.Error = linkErr(refuse(http.StatusConflict, "", "this run counts no phases (it has no monitor)"))
			return
		}
		to := x.End()
		if q.For > 0 {
			to = min(to, now+time.Duration(q.For))
		}
		ph.Mark(q.Phase, now, to)
		h.note(x, now, q.Event, posted, &a)
	})
	if !ok {
		return linkAnswer{Ended: true}
	}
	return a
}

// note records a change applied now on the executor: its event, its
// number in the order applied, and the answer's times.
func (h *Host) note(x *executor.Executor, now time.Duration, event string, posted time.Time, a *linkAnswer) {
	x.Event(now, "change", event)
	a.Seq, a.At, a.Queued, a.Wall = h.applied, int64(now), int64(time.Since(posted)), eventWall(x.Events())
	h.applied++
}

// hopsNow reads the hops as they are now on the executor, or as the run
// left them.
func (h *Host) hopsNow(ctx context.Context) ([]emulator.HopState, error) {
	var hops []emulator.HopState
	if !h.started.Load() { // as the profile sets them
		for _, hc := range h.s.Profile().Config.Hops {
			hops = append(hops, emulator.HopState{Name: hc.Name, Params: hc.HopParams})
		}
		return hops, nil
	}
	read := func(x *executor.Executor, _ time.Duration) { hops = networkHops(x.Network()) }
	select {
	case <-h.ended: // the executor has stopped: its network may be read here
		read(h.s.Executor(), 0)
	default:
		if !h.onExecutor(ctx, read) {
			select {
			case <-h.ended:
				read(h.s.Executor(), 0)
			default:
				return nil, errors.New("the executor did not answer in time, or the run has not started")
			}
		}
	}
	return hops, nil
}

// profileNow writes the resolved profile as it runs now (see getProfile):
// the hops' parameters as they are at this instant, read on the executor
// (or as the run left them); written here, off the executor.
func (h *Host) profileNow(ctx context.Context) (string, error) {
	p := *h.s.Profile()
	prof := *p.Profile
	end := h.s.Executor().End()
	prof.Seed, prof.Duration, prof.Schedule = h.s.Executor().Network().Seed(), lang.Duration(end), within(prof.Schedule, end)
	var now time.Duration
	var hops []emulator.HopState
	var latest map[hopParam]*change
	read := func(x *executor.Executor, at time.Duration) {
		now, hops, latest = at, networkHops(x.Network()), maps.Clone(h.latest)
	}
	var head string
	select {
	case <-h.ended: // the executor has stopped: its network may be read here
		read(h.s.Executor(), h.s.Executor().Network().Now())
	default:
		if !h.onExecutor(ctx, read) {
			select {
			case <-h.ended:
				read(h.s.Executor(), h.s.Executor().Network().Now())
			default:
				if !h.started.Load() {
					head = fmt.Sprintf("# %s as it will run: the run has not started.\n", p.Name)
				} else {
					return "", errors.New("the executor did not answer in time")
				}
			}
		}
	}
	if hops != nil {
		unshown := hopsAsTheyAre(&p, &prof, hops, latest)
		head = fmt.Sprintf("# %s as it runs at %s s of the run: the hops' parameters as they are then. GET /api/v1/profile?as-run for the profile that replays the run.\n", p.Name, strconv.FormatFloat(now.Seconds(), 'f', -1, 64))
		if len(unshown) > 0 {
			head += "# Changed, but not shown as they are then: " + strings.Join(unshown, ", ") + ".\n"
		}
	}
	p.Profile = &prof
	return head + string(p.YAML()), nil
}

// remote is a server's side of the link: the run as its host tells it.
type remote struct {
	conn    net.Conn
	hello   hello
	profile *profiles.Loaded
	mon     *record.Monitor // fed with the host's snapshots
	history *history        // and so is this

	wmu     sync.Mutex
	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan linkAnswer

	started chan struct{} // closed when the run has begun
	ended   chan struct{} // closed when the run has ended (or the link is lost)
	closed  chan struct{} // closed when the link is
	final   *ending       // set before ended is closed, if the host told it
	lost    error         // why the link was lost, if it was
}

// dial reads the host's hello from conn and begins to follow the run,
// keeping its history in hist.
func dial(conn net.Conn, hist *history) (*remote, error) {
	r := bufio.NewReader(conn)
	kind, payload, err := readFrame(r, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the run's description: %w", err)
	}
	if kind != kindHello {
		return nil, fmt.Errorf("the link began with a frame of kind %q, not the run's description", kind)
	}
	rm := &remote{conn: conn, mon: &record.Monitor{}, history: hist, pending: map[uint64]chan linkAnswer{},
		started: make(chan struct{}), ended: make(chan struct{}), closed: make(chan struct{})}
	if err := json.Unmarshal(payload, &rm.hello); err != nil {
		return nil, fmt.Errorf("the run's description: %w", err)
	}
	if rm.profile, err = profiles.Parse(rm.hello.Source, rm.hello.Profile); err != nil {
		return nil, fmt.Errorf("the run's profile: %w", err)
	}
	go rm.follow(r)
	return rm, nil
}

// follow reads what the host sends until the link closes.
func (rm *remote) follow(r *bufio.Reader) {
	var once sync.Once
	end := func() { once.Do(func() { close(rm.ended) }) }
	var startOnce sync.Once
	defer func() {
		rm.mu.Lock()
		for id, ch := range rm.pending {
			close(ch)
			delete(rm.pending, id)
		}
		rm.mu.Unlock()
		end()
		close(rm.closed)
	}()
	var buf []byte
	var snap record.Snapshot // the latest, for the history
	for {
		kind, payload, err := readFrame(r, buf)
		buf = payload
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				rm.lost = err
			}
			return
		}
		switch kind {
		case kindStarted:
			startOnce.Do(func() { close(rm.started) })
		case kindSnapshot:
			// Decoded once for the history, which takes every snapshot,
			// and once into the monitor, which skips one while readers
			// hold its slots.
			if err := snap.UnmarshalBinary(payload); err != nil {
				rm.lost = err
				return
			}
			rm.history.add(&snap)
			rm.mon.Publish(func(s *record.Snapshot) { s.UnmarshalBinary(payload) })
		case kindAnswer:
			var a linkAnswer
			if err := json.Unmarshal(payload, &a); err != nil {
				rm.lost = err
				return
			}
			rm.mu.Lock()
			ch := rm.pending[a.ID]
			delete(rm.pending, a.ID)
			rm.mu.Unlock()
			if ch != nil {
				ch <- a
			}
		case kindEnd:
			var e ending
			if err := json.Unmarshal(payload, &e); err != nil {
				rm.lost = err
				return
			}
			startOnce.Do(func() { close(rm.started) })
			rm.mu.Lock()
			rm.final = &e
			rm.mu.Unlock()
			end()
		}
	}
}

// ask sends a question to the host and waits for its answer, until ctx
// is done.
func (rm *remote) ask(ctx context.Context, q linkRequest) (linkAnswer, error) {
	ch := make(chan linkAnswer, 1)
	rm.mu.Lock()
	rm.nextID++
	q.ID = rm.nextID
	rm.pending[q.ID] = ch
	rm.mu.Unlock()
	forget := func() {
		rm.mu.Lock()
		delete(rm.pending, q.ID)
		rm.mu.Unlock()
	}
	body, _ := json.Marshal(q)
	rm.wmu.Lock()
	err := writeFrame(rm.conn, kindRequest, append(make([]byte, frameHeader, frameHeader+len(body)), body...))
	rm.wmu.Unlock()
	if err != nil {
		forget()
		return linkAnswer{}, errors.New("the rig is not answering: the link to it is closed")
	}
	select {
	case a, ok := <-ch:
		if !ok {
			return linkAnswer{}, errors.New("the link to the rig closed before it answered")
		}
		return a, nil
	case <-ctx.Done():
		forget()
		return linkAnswer{}, ctx.Err()
	}
}

// ending returns how the run ended, once it has (nil otherwise, or if
// the host could not tell).
func (rm *remote) ending() *ending {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.final
}

// pipe joins a host and its server in this process.
func pipe() (host, server net.Conn) { return net.Pipe() }
