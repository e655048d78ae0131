package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
)

// Options control a server.
type Options struct {
	// Token, when set, must come with every request (Authorization:
	// Bearer TOKEN, or ?token=TOKEN); CheckListen says when it is needed.
	Token string
	// ReadOnly refuses every change: the run can be watched, not steered.
	ReadOnly bool

	// How a stream client that falls behind is dropped; zero: the
	// defaults. StreamQueue is how many messages may wait for a client,
	// WriteWait how long one write may take, PongWait how long a client
	// may leave a ping unanswered.
	StreamQueue int
	WriteWait   time.Duration
	PongWait    time.Duration

	Log io.Writer // nil: discarded
}

// Defaults of Options.
const (
	DefaultStreamQueue = 8
	DefaultWriteWait   = 2 * time.Second
	DefaultPongWait    = 10 * time.Second
	// MaxBody bounds a request's body: a change is a few hundred bytes.
	MaxBody = 64 << 10
	// MaxClients bounds the stream clients served at once.
	MaxClients = 64
)

// Server serves one session, linked to it (see Host): in this process
// (New) or in another (Dial).
type Server struct {
	run     *remote
	host    *Host // in this process, the session's side of the link
	mon     *record.Monitor
	history *history // the run's plots from its start (history.go)
	opt     Options
	handler http.Handler
	metrics *prometheus.Registry
	limits  limits

	ended   chan struct{} // closed when the run has ended and clients were told
	endOnce sync.Once
	done    chan struct{} // closed when the link to the session is closed

	mu     sync.Mutex
	events []record.Event // the run's events, as far as fetched
	asRun  asRunRecord    // the changes made by hand; it has a lock of its own
	params paramsCache    // the hops' parameters as written; a lock of its own

	clients     atomic.Int64
	dropped     atomic.Uint64
	conns       sync.Map // *client → struct{}, closed at shutdown
	fetchEvents chan int // a stream saw this many events in a snapshot
}

// New serves session s, whose executor publishes into mon, from this
// process: the server and the session are linked as they are across two
// processes. s has not started running (Server.Run runs it).
func New(s *rig.Session, mon *record.Monitor, opt Options) *Server {
	hostSide, serverSide := pipe()
	hosted := make(chan *Host, 1)
	go func() {
		h, err := NewHost(s, mon, hostSide, opt.Log)
		if err != nil {
			panic("web: linking a session in this process: " + err.Error()) // a pipe in memory does not fail
		}
		hosted <- h
	}()
	srv, err := Dial(serverSide, opt)
	if err != nil {
		panic("web: linking a session in this process: " + err.Error())
	}
	srv.host = <-hosted
	return srv
}

// Dial serves the session at the other end of conn (its Host): it reads
// the run's description, follows the run, and is ready to serve.
func Dial(conn net.Conn, opt Options) (*Server, error) {
	if opt.StreamQueue <= 0 {
		opt.StreamQueue = DefaultStreamQueue
	}
	if opt.WriteWait <= 0 {
		opt.WriteWait = DefaultWriteWait
	}
	if opt.PongWait <= 0 {
		opt.PongWait = DefaultPongWait
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	hist := newHistory()
	run, err := dial(conn, hist)
	if err != nil {
		return nil, err
	}
	srv := &Server{run: run, mon: run.mon, history: hist, opt: opt, ended: make(chan struct{}), done: make(chan struct{}), fetchEvents: make(chan int, 1)}
	srv.limits = newLimits()
	srv.metrics = newMetrics(srv)
	mux := http.NewServeMux()
	mux.Handle("/api/", methods{"": notFound})
	mux.Handle("/api/v1/run", methods{http.MethodGet: srv.getRun})
	mux.Handle("/api/v1/profile", methods{http.MethodGet: srv.getProfile})
	mux.Handle("/api/v1/hops", methods{http.MethodGet: srv.getHops, http.MethodDelete: srv.deleteHops})
	mux.Handle("/api/v1/hops/{hop}", methods{http.MethodGet: srv.getHop, http.MethodPatch: srv.patchHop, http.MethodDelete: srv.deleteHop})
	mux.Handle("/api/v1/hops/{hop}/{key}", methods{http.MethodDelete: srv.deleteHopKey})
	mux.Handle("/api/v1/hops/{hop}/outage", methods{http.MethodPost: srv.postOutage})
	mux.Handle("/api/v1/phases/{name}", methods{http.MethodPost: srv.postPhase})
	mux.Handle("/api/v1/events", methods{http.MethodGet: srv.getEvents})
	mux.Handle("/api/v1/history", methods{http.MethodGet: srv.getHistory})
	mux.Handle("/api/v1/stream", methods{http.MethodGet: srv.stream})
	mux.Handle("/metrics", srv.metricsHandler())
	mux.Handle("/", dashboard())
	srv.handler = srv.limits.admit(srv.guard(mux))
	go srv.follow()
	return srv, nil
}

// ServeHTTP serves the API, the stream, the metrics and the dashboard.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Run runs the session of a server made by New, and returns once the
// server has told its clients that the run has ended.
func (s *Server) Run(ctx context.Context) (record.Summary, error) {
	if s.host == nil {
		return record.Summary{}, errors.New("web: the session runs in another process")
	}
	sum, err := s.host.Run(ctx)
	<-s.done
	return sum, err
}

// Monitor is the run's snapshots as the server has them from the rig: a
// few milliseconds (linkPoll) after the executor published them.
func (s *Server) Monitor() *record.Monitor { return s.mon }

// Done is closed when the session's side has closed the link: the run
// has ended and its clients were told, or the rig is gone.
func (s *Server) Done() <-chan struct{} { return s.done }

// follow follows the run: its events while it runs, and its end, which
// it tells the stream clients before it closes the link.
func (s *Server) follow() {
	defer close(s.done)
	follow, stop := context.WithCancel(context.Background())
	defer stop()
	go s.followEvents(follow)
	<-s.run.ended
	if e := s.run.ending(); e != nil {
		s.mu.Lock()
		if len(e.Summary.Events) > len(s.events) {
			s.events = e.Summary.Events
		}
		s.mu.Unlock()
	} else if s.run.lost != nil {
		fmt.Fprintf(s.opt.Log, "hilrig: the link to the rig: %v\n", s.run.lost)
	}
	s.end()
	s.sendLast()
	s.run.conn.Close()
	<-s.run.closed
}

// state is the run's: waiting, running or ended.
func (s *Server) state() string {
	select {
	case <-s.ended:
		return "ended"
	default:
	}
	select {
	case <-s.run.started:
		return "running"
	default:
		return "waiting"
	}
}

// sendLast waits, for a second at most, until every stream client has
// been sent the message that says the run has ended: a server stops with
// its run (hilrig exits), and its clients then keep what they last got.
func (s *Server) sendLast() {
	wait := time.NewTimer(min(s.opt.WriteWait, time.Second))
	defer wait.Stop()
	var clients []*client
	s.conns.Range(func(c, _ any) bool { clients = append(clients, c.(*client)); return true })
	for _, c := range clients {
		select {
		case <-c.sentLast:
		case <-c.done:
		case <-wait.C:
			return
		}
	}
}

func (s *Server) end() {
	s.endOnce.Do(func() { close(s.ended) })
}

// Start listens on addr (Listen) and serves in the background until ctx
// is done. It returns the dashboard's URL.
func (s *Server) Start(ctx context.Context, addr string) (string, error) {
	ln, u, err := Listen(addr, s.opt.Token, s.opt.Log)
	if err != nil {
		return "", err
	}
	go func() {
		if err := s.Serve(ctx, ln); err != nil {
			fmt.Fprintf(s.opt.Log, "hilrig: serving %s: %v\n", addr, err)
		}
	}()
	return u, nil
}

// Listen checks that addr (ResolveAddr fills it in) may be served with
// token (CheckListen) and listens on it. It returns the listener and the
// dashboard's URL (with the token, for the one who started it); on all
// interfaces (0.0.0.0, [::]) the URL names this machine as another may
// reach it (its first external address, else its host name), and log
// says it listens on all.
func Listen(addr, token string, log io.Writer) (net.Listener, string, error) {
	addr = ResolveAddr(addr)
	if err := CheckListen(addr, token); err != nil {
		return nil, "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--listen %s: %w", addr, err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	u := url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/"}
	if host, _, _ := net.SplitHostPort(addr); host != "" && !isUnspecified(host) {
		u.Host = net.JoinHostPort(strings.Trim(host, "[]"), port)
	} else {
		// Every interface: a URL another machine can use.
		name, _ := os.Hostname()
		reach := externalAddr()
		if reach == "" {
			reach = cmp.Or(name, "localhost")
		}
		u.Host = net.JoinHostPort(reach, port)
		if log != nil {
			fmt.Fprintf(log, "hilrig: --listen %s listens on all interfaces, port %s (this machine: %s)\n", addr, port, strings.Join(slices.Compact([]string{cmp.Or(name, "no host name"), reach}), ", "))
		}
	}
	if token != "" {
		u.RawQuery = url.Values{"token": {token}}.Encode()
	}
	return ln, u.String(), nil
}

// externalAddr returns the first address of this machine's interfaces
// that another machine may reach it at: up, not the loopback, IPv4 before
// IPv6, not link-local; "" if there is none.
func externalAddr() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return ""
	}
	var v6 string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
			if v6 == "" {
				v6 = ipn.IP.String()
			}
		}
	}
	return v6
}

func isUnspecified(host string) bool {
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsUnspecified()
}

// Serve serves on ln until ctx is done, then closes every connection.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second, IdleTimeout: time.Minute}
	stop := context.AfterFunc(ctx, func() {
		hs.Close()
		s.conns.Range(func(c, _ any) bool { c.(*client).close(websocket.CloseGoingAway, "the server stopped"); return true })
	})
	defer stop()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// followEvents fetches the run's events from the executor while it runs,
// when a stream sees there are more than fetched, so that streams can send
// them.
func (s *Server) followEvents(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-s.fetchEvents:
			s.mu.Lock()
			have := len(s.events)
			s.mu.Unlock()
			if n > have {
				s.refreshEvents(ctx)
			}
		}
	}
}

// refreshEvents fetches the run's events that it has not yet from the
// rig, or from the final summary once the run has ended.
func (s *Server) refreshEvents(ctx context.Context) {
	s.mu.Lock()
	have := len(s.events)
	s.mu.Unlock()
	var evs []record.Event
	if e := s.run.ending(); e != nil {
		evs = e.Summary.Events
	} else if a, err := s.run.ask(ctx, linkRequest{Op: "events", Since: have}); err == nil {
		evs = append(s.eventsSince(0), a.Events...)
		if a.Ended {
			<-s.run.ended
			if e := s.run.ending(); e != nil {
				evs = e.Summary.Events
			}
		}
	}
	s.mu.Lock()
	if len(evs) > len(s.events) {
		s.events = evs
	}
	s.mu.Unlock()
}

// eventsSince returns the events after the first n.
func (s *Server) eventsSince(n int) []record.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.events) {
		return nil
	}
	return slices.Clone(s.events[n:])
}

// apiError is the body of every error the API answers.
type apiError struct {
	Error string `json:"error"`
	// Path is where in the request the problem is: a key of the body
	// (rate, loss.random), or empty for the request as a whole.
	Path string `json:"path,omitempty"`
	// Errors lists every problem of the body when it has several, in the
	// order of its keys; Error and Path are the first.
	Errors []problem `json:"errors,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg, path string) {
	writeJSON(w, code, apiError{Error: msg, Path: path})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// methods routes a path's requests by method, and answers others with a
// JSON 405; the method "" serves any.
type methods map[string]http.HandlerFunc

func (m methods) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, ok := m[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = m[http.MethodGet]
	}
	if !ok {
		h, ok = m[""]
	}
	if !ok {
		allowed := make([]string, 0, len(m))
		for k := range m {
			allowed = append(allowed, k)
		}
		slices.Sort(allowed)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here (allowed: "+strings.Join(allowed, ", ")+")", "")
		return
	}
	h(w, r)
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path+" (see the README's live API section)", "")
}

// runInfo is the answer of GET /api/v1/run.
type runInfo struct {
	Profile  string `json:"profile"`
	Bench    string `json:"bench,omitempty"`
	RunID    string `json:"run_id"` // as the metrics' hilrig_run_info labels it
	Clock    string `json:"clock"`
	State    string `json:"state"` // waiting, running or ended
	ReadOnly bool   `json:"read_only"`
	// ElapsedS is the run's clock; StartedAt when the server started.
	ElapsedS  float64   `json:"elapsed_s"`
	StartedAt time.Time `json:"started_at"`
	Hops      []string  `json:"hops"`
	Flows     []string  `json:"flows"`
	Phases    []string  `json:"phases,omitempty"`
	// Summary is the summary so far (absent before the run starts).
	Summary *record.Summary `json:"summary,omitempty"`
}

// getRun answers the run as it is: its summary so far is computed on the
// executor, between two events.
func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	info := s.info()
	if info.State != "waiting" {
		sum, err := s.summaryNow(ctx)
		if err != nil {
			writeRefusal(w, err)
			return
		}
		info.Summary = sum
		if info.State == "ended" {
			info.ElapsedS = sum.Duration
		} else {
			info.ElapsedS = s.mon.Snapshot().Time.Seconds()
		}
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) info() runInfo {
	p := s.run.profile
	info := runInfo{
		Profile: p.Name, Clock: s.run.hello.Clock, State: s.state(), ReadOnly: s.opt.ReadOnly,
		StartedAt: s.run.hello.Started, Hops: p.Hops.Names, Flows: p.Flows.Names, Bench: s.run.hello.Bench, RunID: s.run.hello.RunID,
	}
	for _, ph := range p.Phases() {
		info.Phases = append(info.Phases, ph.Name)
	}
	return info
}

func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if s.state() != "waiting" {
		s.refreshEvents(ctx)
	}
	evs := s.eventsSince(0)
	if evs == nil {
		evs = []record.Event{}
	}
	writeJSON(w, http.StatusOK, evs)
}
