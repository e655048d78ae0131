package tests

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	dto "github.com/prometheus/client_model/go"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/web"
)

// twoWay is the virtual bench's network: 20 ms each way.
const twoWay = `duration: 60s
hops:
  down: {delay: 20ms}
  up:   {delay: 20ms, rate: 10Mbit, queue: 100 frames}
flows:
  m2s: {route: [down], role: to-plant}
  s2m: {route: [up], role: to-controller}
schedule:
  - {at: 50s, for: 1s, phase: handover}
`

// pinger plays an endpoint of the virtual bench: it sends a frame every
// period stamped with the wall clock, and keeps how long each frame it
// receives took.
type pinger struct {
	mu     sync.Mutex
	flow   int
	next   time.Duration
	period time.Duration
	got    []arrival
	sent   []time.Duration // the run's clock as each frame went
}

type arrival struct {
	at, delay time.Duration // since the Unix epoch; one-way
}

func (p *pinger) Feed(flow int)       { p.flow = flow }
func (p *pinger) Next() time.Duration { return p.next }
func (p *pinger) Emit(now time.Duration, inject func(int, []byte)) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(time.Now().UnixNano()))
	inject(p.flow, b[:])
	p.mu.Lock()
	p.sent = append(p.sent, now)
	p.mu.Unlock()
	// On a grid from 0: a turn that came late does not put off the
	// frames after it (it made TestMarkPhase count 97 frames in 500 ms
	// every 5 ms on a loaded machine).
	p.next += p.period
}

func (p *pinger) Write(payload []byte) error {
	now := time.Now().UnixNano()
	sent := int64(binary.BigEndian.Uint64(payload))
	p.mu.Lock()
	p.got = append(p.got, arrival{time.Duration(now), time.Duration(now - sent)})
	p.mu.Unlock()
	return nil
}

// sentWithin counts the frames sent in [from, to) of the run's clock.
func (p *pinger) sentWithin(from, to time.Duration) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n uint64
	for _, t := range p.sent {
		if t >= from && t < to {
			n++
		}
	}
	return n
}

// since returns the frames received after t (Unix time).
func (p *pinger) since(t time.Duration) []arrival {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []arrival
	for _, r := range p.got {
		if r.at > t {
			out = append(out, r)
		}
	}
	return out
}

// live is a real-time run of the virtual bench, played by two pingers,
// served by a web.Server.
type live struct {
	t                 testing.TB
	srv               *web.Server
	http              *httptest.Server
	url               string
	mon               *record.Monitor
	controller, plant *pinger
	cancel            context.CancelFunc
	done              chan error
	stopOnce          sync.Once
	err               error // the run's, once stopped
}

// liveRun is what startLive runs: a profile for the virtual bench, how
// often each pinger sends (default 5 ms), where the trace goes (a file:
// empty for none), the executor's priority, and the server's options.
type liveRun struct {
	profile  string
	period   time.Duration
	trace    string
	priority int
	web      web.Options
}

func startLive(t testing.TB, profile string, opt web.Options) *live {
	t.Helper()
	return liveRun{profile: profile, web: opt}.start(t)
}

func (lr liveRun) start(t testing.TB) *live {
	t.Helper()
	p, err := profiles.Parse("live.yaml", []byte(lr.profile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../profiles/benches/virtual.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	if lr.period == 0 {
		lr.period = 5 * time.Millisecond
	}
	l := &live{t: t, mon: &record.Monitor{}, controller: &pinger{period: lr.period}, plant: &pinger{period: lr.period}, done: make(chan error, 1)}
	opt := rig.Options{Monitor: l.mon, Priority: lr.priority, Players: map[string]rig.Player{"controller": l.controller, "plant": l.plant}}
	if lr.trace != "" {
		f, err := os.Create(lr.trace)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		opt.Trace = f
	}
	s, err := rig.Open(p, b, rig.RealTime, opt)
	if err != nil {
		t.Fatal(err)
	}
	l.srv = web.New(s, l.mon, lr.web)
	l.http = httptest.NewServer(l.srv)
	l.url = l.http.URL
	var ctx context.Context
	ctx, l.cancel = context.WithCancel(context.Background())
	go func() {
		_, err := l.srv.Run(ctx)
		l.done <- err
	}()
	t.Cleanup(l.stop)
	l.waitFor("the first snapshots", func(s *record.Snapshot) bool { return s.Time > 200*time.Millisecond })
	return l
}

// stop ends the run (once) and the server.
func (l *live) stop() {
	l.stopOnce.Do(func() {
		l.cancel()
		l.err = <-l.done
		l.http.Close()
	})
}

// waitFor waits for a snapshot in which cond holds, for at most 10 s (a
// bound that only keeps a broken test from hanging).
func (l *live) waitFor(what string, cond func(*record.Snapshot) bool) record.Snapshot {
	l.t.Helper()
	var s record.Snapshot
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if l.srv.Monitor().Read(&s) && cond(&s) { // as the server has it
			return s
		}
	}
	var evs string
	if l.srv != nil {
		_, evs = l.request("GET", "/api/v1/events", "")
	}
	l.t.Fatalf("timed out waiting for %s; the last snapshot: %+v; the run's events: %s", what, s, evs)
	return s
}

// request sends a request and returns the status and body.
func (l *live) request(method, path, body string, header ...string) (int, string) {
	l.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, l.url+path, rd)
	if err != nil {
		l.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// dial opens the stream.
func (l *live) dial(query string, header http.Header) (*websocket.Conn, *http.Response, error) {
	return websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(l.url, "http")+"/api/v1/stream"+query, header)
}

func TestGetRun(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	code, body := l.request("GET", "/api/v1/run", "")
	var info struct {
		Profile, Bench, Clock, State string
		ElapsedS                     float64 `json:"elapsed_s"`
		Hops, Flows, Phases          []string
		Summary                      record.Summary
	}
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil {
		t.Fatalf("%d %v: %s", code, err, body)
	}
	if info.Profile != "live" || info.Bench != "virtual" || info.Clock != "real" || info.State != "running" || info.ElapsedS < 0.2 ||
		strings.Join(info.Hops, ",") != "down,up" || strings.Join(info.Phases, ",") != "handover" {
		t.Errorf("%+v", info)
	}
	if s := info.Summary; s.Stopped != "running" || len(s.Flows) != 2 || s.Flows[0].Sent == 0 || s.Timing == nil {
		t.Errorf("summary so far: %+v", s)
	}
}

// TestStream reads the telemetry: a message per snapshot at the rate
// asked for, each flow's delay that of its hop (20 ms, and 20 ms plus
// 8 bytes at 10 Mbit/s up), the hops and the executor's lateness.
func TestStream(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	conn, _, err := l.dial("?rate=20", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var last web.Message
	for i := range 5 {
		var m web.Message
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		if i > 0 && (m.Seq <= last.Seq || m.TimeS <= last.TimeS) {
			t.Errorf("message %d went back: %d at %v after %d at %v", i, m.Seq, m.TimeS, last.Seq, last.TimeS)
		}
		last = m
	}
	if len(last.Flows) != 2 || len(last.Hops) != 2 || last.State != "running" || last.Timing == nil {
		t.Fatalf("%+v", last)
	}
	for _, f := range last.Flows {
		if f.DelayS == nil || f.DelayS.P50 < 0.0199 || f.DelayS.P50 > 0.0201 || f.Sent == 0 || f.Lost != 0 {
			t.Errorf("%s: %+v, delay %+v", f.Name, f, f.DelayS)
		}
	}
	if h := last.Hops[1]; h.Name != "up" || h.RateBps != 10_000_000 || h.DelayS != 0.02 || h.Outage != "" {
		t.Errorf("hop %+v", h)
	}
	// A client may change its rate; a rate out of range closes it.
	if err := conn.WriteJSON(map[string]float64{"rate": 1000}); err != nil {
		t.Fatal(err)
	}
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			if !websocket.IsCloseError(err, websocket.CloseUnsupportedData) {
				t.Errorf("a rate of 1000 Hz: %v", err)
			}
			break
		}
	}
}

// TestStreamTellsTheEnd: a client that asked for a message every 10 s
// is sent one when the run ends, at once, that says so and holds the
// run's events and its summary; Run returns once it is sent, so that a server stopped
// right after (as hilrig exits) has told its clients, and then closes them
// saying why.
func TestStreamTellsTheEnd(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	mon := &record.Monitor{}
	s, err := rig.Open(p, nil, rig.Virtual, rig.Options{Duration: 1500 * time.Millisecond, Paced: true, Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	srv := web.New(s, mon, web.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := srv.Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := srv.Run(ctx); done <- err }()
	l := &live{t: t, url: strings.TrimSuffix(u, "/"), mon: mon, srv: srv}
	conn, _, err := l.dial("?rate=0.1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	l.waitFor("the run to go", func(s *record.Snapshot) bool { return s.Time > 300*time.Millisecond })
	l.change("POST", "/api/v1/phases/by-hand", `{"for": "200ms"}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	cancel() // the server stops with the run
	var got []web.Message
	for {
		var m web.Message
		if err := conn.ReadJSON(&m); err != nil {
			if !websocket.IsCloseError(err, websocket.CloseGoingAway) || !strings.Contains(err.Error(), "the server stopped") {
				t.Errorf("the stream ended with %v", err)
			}
			break
		}
		got = append(got, m)
	}
	if len(got) == 0 {
		t.Fatal("no message")
	}
	last := got[len(got)-1]
	var events []record.Event
	for _, m := range got {
		events = append(events, m.Events...)
	}
	if len(got) > 2 || last.State != "ended" || last.TimeS != 1.5 || len(last.Flows) != 3 || last.Flows[0].Sent < 70 || len(events) != 1 || events[0].Detail != "phase by-hand for 200ms" {
		t.Errorf("%d messages, the last at %v s in state %q, %d flows, events %+v", len(got), last.TimeS, last.State, len(last.Flows), events)
	}
	if sum := last.Summary; sum == nil || sum.Duration != 1.5 || sum.Stopped != "duration" || sum.Flows[0].Sent != 75 || len(sum.Phases) != 1 {
		t.Errorf("the last message's summary: %+v", sum)
	}
}

// TestMetrics scrapes /metrics: the flows' frames by fate and their delay
// histogram (every frame of the 20 ms hops falls between the 10 ms and
// the 25 ms bounds), the hops' queues and settings.
func TestMetrics(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	l.waitFor("delivered frames", func(s *record.Snapshot) bool { return s.Flows[0].Delivered > 20 })
	code, body := l.request("GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("%d: %s", code, body)
	}
	families := parseMetrics(t, body)
	value := func(name string, labels ...string) *dto.Metric {
		t.Helper()
		m := findMetric(families, name, labels...)
		if m == nil {
			t.Fatalf("no %s%v", name, labels)
		}
		return m
	}
	sent := value("hilrig_flow_sent_frames_total", "flow", "m2s").GetCounter().GetValue()
	delivered := value("hilrig_flow_frames_total", "flow", "m2s", "status", "delivered").GetCounter().GetValue()
	lost := value("hilrig_flow_frames_total", "flow", "m2s", "status", "loss_drop").GetCounter().GetValue()
	if sent < delivered || delivered < 20 || lost != 0 {
		t.Errorf("m2s: %v sent, %v delivered, %v lost", sent, delivered, lost)
	}
	h := value("hilrig_flow_delay_seconds", "flow", "m2s").GetHistogram()
	if h.GetSampleCount() != uint64(delivered) {
		t.Errorf("delay histogram of %d frames, %v delivered", h.GetSampleCount(), delivered)
	}
	if mean := h.GetSampleSum() / float64(h.GetSampleCount()); mean < 0.0199 || mean > 0.0201 {
		t.Errorf("mean delay %v", mean)
	}
	for _, b := range h.Bucket {
		want := uint64(0)
		if b.GetUpperBound() >= 0.025 {
			want = h.GetSampleCount()
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
	if r := value("hilrig_hop_rate_bits_per_second", "hop", "up").GetGauge().GetValue(); r != 10e6 {
		t.Errorf("up's rate %v", r)
	}
	if d := value("hilrig_hop_delay_seconds", "hop", "down").GetGauge().GetValue(); d != 0.02 {
		t.Errorf("down's delay %v", d)
	}
	value("hilrig_hop_queue_bytes", "hop", "up")
	value("hilrig_executor_release_lateness_seconds")
	if v := value("hilrig_run_running").GetGauge().GetValue(); v != 1 {
		t.Errorf("running %v", v)
	}
}

// TestRequestsRefused sends what the API must refuse, changing nothing:
// unknown endpoints, wrong methods, bad stream rates, other origins and
// other names of the server.
func TestRequestsRefused(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	for _, tc := range []struct {
		method, path string
		header       []string
		code         int
		want         string
	}{
		{"GET", "/api/v1/nothing", nil, 404, "no such endpoint"},
		{"GET", "/api/v2/run", nil, 404, "no such endpoint"},
		{"DELETE", "/api/v1/run", nil, 405, "DELETE is not allowed here (allowed: GET)"},
		{"POST", "/api/v1/stream", nil, 405, "not allowed"},
		{"GET", "/api/v1/stream?rate=abc", nil, 400, `rate \"abc\" is not a number`},
		{"GET", "/api/v1/stream?rate=0", nil, 400, "from 0.1 to 50"},
		{"GET", "/api/v1/stream?rate=NaN", nil, 400, "is not a number"},
		{"GET", "/api/v1/run", []string{"Origin", "http://evil.example"}, 403, "only from the dashboard's own origin"},
		{"GET", "/api/v1/run", []string{"Origin", "null"}, 403, "only from the dashboard's own origin"},
		{"GET", "/api/v1/run", []string{"Host", "evil.example:8470"}, 403, "answers only to loopback names"},
		{"GET", "/metrics", []string{"Host", "rebound.example"}, 403, "answers only to loopback names"},
		{"GET", "/", []string{"Host", "rebound.example"}, 403, "answers only to loopback names"},
	} {
		code, body := l.request(tc.method, tc.path, "", tc.header...)
		if code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s %s %v: %d %s", tc.method, tc.path, tc.header, code, body)
		}
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error == "" {
			t.Errorf("%s %s: not a JSON error: %s", tc.method, tc.path, body)
		}
	}
	// The page's own origin is welcome, over HTTP and WebSocket alike.
	if code, body := l.request("GET", "/api/v1/run", "", "Origin", l.url); code != 200 {
		t.Errorf("own origin: %d %s", code, body)
	}
	conn, _, err := l.dial("", http.Header{"Origin": {l.url}})
	if err != nil {
		t.Errorf("stream from the own origin: %v", err)
	} else {
		conn.Close()
	}
	if _, resp, err := l.dial("", http.Header{"Origin": {"http://evil.example"}}); err == nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("stream from another origin: %v %v", resp, err)
	}
}

// TestToken checks the token on every request: HTTP and WebSocket, as a
// bearer token or in the query.
func TestToken(t *testing.T) {
	const token = "s3cret-token-0123"
	l := startLive(t, twoWay, web.Options{Token: token})
	for _, tc := range []struct {
		path   string
		header []string
		code   int
	}{
		{"/api/v1/run", nil, 401},
		{"/api/v1/run", []string{"Authorization", "Bearer wrong"}, 401},
		{"/api/v1/run", []string{"Authorization", "Basic " + token}, 401},
		{"/api/v1/run?token=wrong", nil, 401},
		{"/metrics", nil, 401},
		{"/", nil, 401},
		{"/api/v1/run", []string{"Authorization", "Bearer " + token}, 200},
		{"/api/v1/run?token=" + token, nil, 200},
		{"/metrics", []string{"Authorization", "bearer " + token}, 200},
		// With a token, other names of the server are served.
		{"/api/v1/run", []string{"Authorization", "Bearer " + token, "Host", "rig.lab:8470"}, 200},
	} {
		if code, body := l.request("GET", tc.path, "", tc.header...); code != tc.code {
			t.Errorf("GET %s %v: %d %s", tc.path, tc.header, code, body)
		}
	}
	if _, resp, err := l.dial("", nil); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("stream without the token: %v %v", resp, err)
	}
	if conn, _, err := l.dial("?token="+token, nil); err != nil {
		t.Errorf("stream with the token: %v", err)
	} else {
		conn.Close()
	}
	if conn, _, err := l.dial("", http.Header{"Authorization": {"Bearer " + token}}); err != nil {
		t.Errorf("stream with a bearer token: %v", err)
	} else {
		conn.Close()
	}
}

func TestCheckListen(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{web.DefaultAddr, "", true},
		{"localhost:8470", "", true},
		{"[::1]:8470", "", true},
		{"127.0.0.2:1", "", true},
		{"0.0.0.0:8470", "", false},
		{":8470", "", false},
		{"[::]:8470", "", false},
		{"192.168.1.5:8470", "", false},
		{"rig.lab:8470", "", false},
		{"0.0.0.0:8470", "0123456789abcdef", true},
		{"8470", "", false},
	} {
		if err := web.CheckListen(tc.addr, tc.token); (err == nil) != tc.ok {
			t.Errorf("%q with token %q: %v", tc.addr, tc.token, err)
		}
	}
	for _, tc := range []struct{ addr, want string }{
		{"", "127.0.0.1:8470"},
		{":9000", "127.0.0.1:9000"},
		{"9000", "127.0.0.1:9000"},
		{"localhost", "localhost:8470"},
		{"0.0.0.0:8470", "0.0.0.0:8470"},
		{"[::]:1", "[::]:1"},
		{"::1", "[::1]:8470"},
		{"rig.lab:80", "rig.lab:80"},
	} {
		if got := web.ResolveAddr(tc.addr); got != tc.want {
			t.Errorf("ResolveAddr(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// stuckDialer opens streams whose receive buffer is small, so that a
// client that never reads fills it after a few messages.
var stuckDialer = websocket.Dialer{NetDialContext: (&net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
	var err error
	c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	return err
}}).DialContext}

// reader is a stream client that reads everything, until closed.
func (l *live) reader(rate string) (stop func()) {
	conn, _, err := l.dial("?rate="+rate, nil)
	if err != nil {
		l.t.Fatal(err)
	}
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	return func() { conn.Close() }
}

// TestStuckClientDoesNotDelayReleases runs the virtual bench in real time
// with a frame each way every millisecond, and alternates, every half
// second of the run, between no stream client and five: one that never
// reads (its receive buffer 4 KiB, at 50 Hz) and four that read at 10 Hz.
// Alternating often spreads whatever else the machine does (other test
// packages run beside this one) evenly over both sides.
// The executor only ever copies a snapshot into a slot nobody reads, so
// the release lateness must not change. How late each frame was released
// is in the trace (t_recv − t_due).
//
// The bound is derived from the releases without clients: if the clients
// change nothing, a release with clients exceeds q, the p99 of those
// without, with probability 0.01, so that the fraction of releases with
// clients above q has mean 0.01. Its spread is not binomial: the
// machine's own hiccups (other test packages run beside this one) come
// in bursts that hold many releases, so the releases of one half second
// are not independent. The half seconds are: the test takes the fraction
// above q in each, f_j, and compares the mean over those with clients
// with the mean over those without, allowing 4 standard errors of the
// difference, SE = √(s₁²/m₁ + s₀²/m₀) from the m₁ and m₀ half seconds'
// own variances s², and no less than the binomial
// σ = √(0.01·0.99·(1/n₀ + 1/n₁)) of the n₀ and n₁ releases. The 100 ms
// after each switch belong to neither side.
func TestStuckClientDoesNotDelayReleases(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "trace.csv")
	l := liveRun{profile: twoWay, period: time.Millisecond, trace: trace, priority: 80,
		web: web.Options{StreamQueue: 2, WriteWait: 200 * time.Millisecond, PongWait: 30 * time.Second}}.start(t)
	const phase, phases, settle = 500 * time.Millisecond, 17, 100 * time.Millisecond
	var switches []time.Duration // run time of each switch
	var stopClients []func()
	for k := 1; k <= phases; k++ {
		s := l.waitFor(fmt.Sprintf("%v of the run", time.Duration(k)*phase), func(s *record.Snapshot) bool { return s.Time >= time.Duration(k)*phase })
		switches = append(switches, s.Time)
		for _, stop := range stopClients {
			stop()
		}
		stopClients = nil
		if k%2 == 1 && k < phases { // clients in the odd phases
			stuck, _, err := stuckDialer.Dial("ws"+strings.TrimPrefix(l.url, "http")+"/api/v1/stream?rate=50", nil)
			if err != nil {
				t.Fatal(err)
			}
			stopClients = append(stopClients, func() { stuck.NetConn().Close() })
			for range 4 {
				stopClients = append(stopClients, l.reader("10"))
			}
		}
	}
	l.stop()
	if l.err != nil {
		t.Fatal(l.err)
	}
	rows, due := readRunTrace(t, trace)
	var without, with []time.Duration
	byWindow := map[int][]time.Duration{} // by half second: k
	for i, r := range rows {
		if r.recv < 0 || due[i] < 0 {
			continue
		}
		k := 0
		for k < len(switches) && switches[k] <= r.recv {
			k++
		}
		if k == 0 || r.recv-switches[k-1] < settle {
			continue // before the first switch, or just after one
		}
		if k%2 == 1 && k < len(switches) {
			with = append(with, r.recv-due[i])
		} else if k%2 == 0 {
			without = append(without, r.recv-due[i])
		}
		byWindow[k] = append(byWindow[k], r.recv-due[i])
	}
	slices.Sort(without)
	slices.Sort(with)
	n0, n1 := float64(len(without)), float64(len(with))
	if n0 < 2000 || n1 < 2000 {
		t.Fatalf("%v releases without clients, %v with", n0, n1)
	}
	q := without[int(0.99*n0)]
	var fWith, fWithout []float64 // per half second, the fraction above q
	for k, ds := range byWindow {
		late := 0
		for _, d := range ds {
			if d > q {
				late++
			}
		}
		if k%2 == 1 {
			fWith = append(fWith, float64(late)/float64(len(ds)))
		} else {
			fWithout = append(fWithout, float64(late)/float64(len(ds)))
		}
	}
	meanVar := func(f []float64) (mean, variance float64) {
		for _, x := range f {
			mean += x / float64(len(f))
		}
		for _, x := range f {
			variance += (x - mean) * (x - mean) / float64(len(f)-1)
		}
		return mean, variance
	}
	m1, v1 := meanVar(fWith)
	m0, v0 := meanVar(fWithout)
	se := max(math.Sqrt(v1/float64(len(fWith))+v0/float64(len(fWithout))), math.Sqrt(0.01*0.99*(1/n0+1/n1)))
	t.Logf("release lateness p50/p99/max without clients %v/%v/%v (%v releases), with five %v/%v/%v (%v); above the p99 without: %.2f %% of the releases with clients, %.2f %% of those without, in %d and %d half seconds (allowed difference %.2f %%)",
		without[int(0.5*n0)], q, without[len(without)-1], n0, with[int(0.5*n1)], with[int(0.99*n1)], with[len(with)-1], n1, 100*m1, 100*m0, len(fWith), len(fWithout), 100*4*se)
	if m1-m0 > 4*se {
		t.Errorf("with clients, %.2f %% of releases were later than the p99 without (%v), against %.2f %% without; allowed %.2f %% more", 100*m1, q, 100*m0, 100*4*se)
	}
}

// syncBuffer is a log several goroutines write.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSlowClientDropped has a client that never reads next to one that
// does: once the kernel's buffers and the server's queue of two messages
// are full, the stuck one is dropped, and the other goes on.
func TestSlowClientDropped(t *testing.T) {
	var log syncBuffer
	l := startLive(t, twoWay, web.Options{StreamQueue: 2, WriteWait: 100 * time.Millisecond, PongWait: time.Minute, Log: &log})
	stuck, _, err := stuckDialer.Dial("ws"+strings.TrimPrefix(l.url, "http")+"/api/v1/stream?rate=50", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	good, _, err := l.dial("?rate=50", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer good.Close()
	var messages atomic.Int64
	go func() {
		for {
			if _, _, err := good.ReadMessage(); err != nil {
				return
			}
			messages.Add(1)
		}
	}()
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(log.String(), "dropped: too slow"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stuck client was not dropped; log: %s", log.String())
		}
	}
	before := messages.Load()
	l.waitFor("another second", func(s *record.Snapshot) bool { return true })
	time.Sleep(500 * time.Millisecond)
	if messages.Load() <= before {
		t.Errorf("the reading client got nothing after the stuck one was dropped (%d messages)", before)
	}
	code, body := l.request("GET", "/metrics", "")
	if code != 200 || !strings.Contains(body, "hilrig_stream_dropped_clients_total 1\n") || !strings.Contains(body, "hilrig_stream_clients 1\n") {
		t.Errorf("metrics: %d\n%s", code, body)
	}
	t.Log(strings.TrimSpace(log.String()))
}

// TestPacedSimIsTheVirtualRun runs paper 000's bottleneck (a bursty
// cross-traffic source, a finite queue) paced to the wall clock, as `sim
// --realtime-view` does, and as fast as the CPU allows: the engine's
// events keep their times, so the traces are the same, byte for byte.
func TestPacedSimIsTheVirtualRun(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	var virtual, paced strings.Builder
	if _, err := rig.Sim(p, nil, rig.Options{Trace: &virtual, Duration: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	mon := &record.Monitor{}
	s, err := rig.Open(p, nil, rig.Virtual, rig.Options{Trace: &paced, Duration: 1500 * time.Millisecond, Paced: true, Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	// What happens between Open and Run (a server starting) is not part
	// of the run: its clock starts as it runs, and it lasts its duration.
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	sum, err := s.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 1500*time.Millisecond {
		t.Errorf("a paced run of 1.5 s took %v", took)
	}
	if virtual.String() != paced.String() || sum.Stopped != "duration" || strings.Count(paced.String(), "\n") < 100 {
		t.Errorf("the paced trace (%d bytes, stopped by %s) differs from the virtual one (%d bytes)", paced.Len(), sum.Stopped, virtual.Len())
	}
	if snap := mon.Snapshot(); snap.Seq < 14 || snap.Time < 1400*time.Millisecond {
		t.Errorf("the paced run published %d snapshots, the last at %v", snap.Seq, snap.Time)
	}
}

// BenchmarkReleaseLateness runs the virtual bench in real time for 2 s,
// a frame each way every millisecond, the executor at SCHED_FIFO 80, with
// no stream client and with four reading at 10 Hz, and reports how late
// frames were released (the summary's release lateness). BENCHMARKS.md
// quotes it.
func BenchmarkReleaseLateness(b *testing.B) {
	for _, clients := range []int{0, 4} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			for range b.N {
				l := liveRun{profile: twoWay, period: time.Millisecond, priority: 80}.start(b)
				for range clients {
					defer l.reader("10")()
				}
				l.waitFor("2 s of the run", func(s *record.Snapshot) bool { return s.Time >= 2200*time.Millisecond })
				code, body := l.request("GET", "/api/v1/run", "")
				l.stop()
				var info struct{ Summary record.Summary }
				if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil || info.Summary.Timing == nil || info.Summary.Timing.ReleaseLateness == nil {
					b.Fatalf("%d %v: %s", code, err, body)
				}
				late := info.Summary.Timing.ReleaseLateness
				b.ReportMetric(late.P50*1e6, "p50-µs")
				b.ReportMetric(late.P99*1e6, "p99-µs")
				b.ReportMetric(late.Max*1e6, "max-µs")
			}
		})
	}
}

// TestMarkPhase marks phases by hand: the frames sent meanwhile are
// counted under them in the summary, each mark is an event of the run,
// and the as-run profile replays them as schedule entries.
func TestMarkPhase(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	conn, _, err := l.dial("?rate=20", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	code, body := l.request("POST", "/api/v1/phases/handover", `{"for": "500ms"}`)
	var got, byHand struct {
		AtS      float64 `json:"at_s"`
		WallTime string  `json:"wall_time"`
		Entry    string
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.AtS <= 0 {
		t.Fatalf("%d %v: %s", code, err, body)
	}
	at := time.Duration(got.AtS * float64(time.Second)).Round(time.Nanosecond)
	if want := "{at: " + lang.Duration(at).String() + ", for: 500ms, phase: handover}"; got.Entry != want {
		t.Errorf("entry %q, want %q", got.Entry, want)
	}
	if code, body := l.request("POST", "/api/v1/phases/by-hand", ""); code != 200 || json.Unmarshal([]byte(body), &byHand) != nil {
		t.Errorf("a phase until the end: %d %s", code, body)
	}
	l.waitFor("the phase to end", func(s *record.Snapshot) bool { return s.Time > at+600*time.Millisecond })

	code, body = l.request("GET", "/api/v1/run", "")
	var info struct{ Summary record.Summary }
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil {
		t.Fatalf("%d %v", code, err)
	}
	phases := map[string]record.PhaseSummary{}
	for _, p := range info.Summary.Phases {
		phases[p.Name] = p
	}
	// The summary so far is the run as it went until now: the window
	// marked by hand, 500 ms of frames every 5 ms each way, 100 of them
	// (the profile's own window, at 50 s, is still to come) if the
	// machine let the executor be on time, and exactly those the
	// controller sent in it; and the phase marked until the end as far as
	// it has got.
	h := phases["handover"]
	inWindow := l.controller.sentWithin(at, at+500*time.Millisecond)
	if len(h.Windows) != 1 || h.Windows[0][0] != got.AtS || math.Abs(h.Windows[0][1]-got.AtS-0.5) > 1e-9 || h.Flows[0].Sent != inWindow || inWindow < 90 || inWindow > 101 {
		t.Errorf("handover: %+v; the controller sent %d in its window", h, inWindow)
	}
	if b := phases["by-hand"]; len(b.Windows) != 1 || b.Windows[0][1] < got.AtS+0.6 || b.Windows[0][1] >= 60 || b.Flows[0].Sent == 0 {
		t.Errorf("by-hand: %+v", b)
	}
	// Each change is an event at the instant it took effect, whose wall
	// clock is the answer's (once, not again in its detail).
	if evs := info.Summary.Events; len(evs) != 2 || evs[0] != (record.Event{AtS: got.AtS, Wall: got.WallTime, Kind: "change", Detail: "phase handover for 500ms"}) ||
		evs[1].Kind != "change" || evs[1].Detail != "phase by-hand" || evs[1].Wall != byHand.WallTime {
		t.Errorf("events: %+v; the changes were answered %+v, %+v", evs, got, byHand)
	}

	// The stream sends each event once, in the message after it.
	var streamed []record.Event
	for len(streamed) < 2 {
		var m web.Message
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		streamed = append(streamed, m.Events...)
	}
	code, body = l.request("GET", "/api/v1/events", "")
	var evs []record.Event
	if err := json.Unmarshal([]byte(body), &evs); code != 200 || err != nil || len(evs) != 2 || len(streamed) != 2 || evs[0] != streamed[0] || evs[1] != streamed[1] || evs[0].AtS != got.AtS {
		t.Errorf("GET /events: %d %s; streamed %+v", code, body, streamed)
	}

	code, body = l.request("GET", "/api/v1/profile?as-run", "")
	if code != 200 || !strings.Contains(body, got.Entry) {
		t.Fatalf("as-run profile: %d\n%s", code, body)
	}
	p, err := profiles.Parse("as-run.yaml", []byte(body))
	if err != nil {
		t.Fatalf("the as-run profile does not load: %v\n%s", err, body)
	}
	// In time order (issue 22.5): the window marked by hand, then the
	// profile's own at 50 s.
	if n := len(p.Phases()); n != 2 || len(p.Phases()[0].Windows) != 2 || p.Phases()[1].Name != "by-hand" || p.Phases()[0].Windows[0].From != at {
		t.Errorf("as-run phases: %+v", p.Phases())
	}
	if _, body := l.request("GET", "/api/v1/profile", ""); strings.Contains(body, "by-hand") {
		t.Errorf("the profile without as-run has the changes:\n%s", body)
	}
}

// TestChangesRefused sends changes that must be refused, each with a
// clear error naming what is wrong, and changing nothing.
func TestChangesRefused(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	for _, tc := range []struct {
		path, body, contentType string
		code                    int
		want, at                string
	}{
		{"/api/v1/phases/handover", `{"for": "-1s"}`, "", 400, "must not be negative", "for"},
		{"/api/v1/phases/handover", `{"for": "0s"}`, "", 400, "for: must be positive", "for"},
		{"/api/v1/phases/handover", `{"for": "soon"}`, "", 400, `for: "soon" is not a duration`, "for"},
		{"/api/v1/phases/handover", `{"for": 5}`, "", 400, "for: want a string, not a JSON number", "for"},
		{"/api/v1/phases/handover", `{"fr": "1s"}`, "", 400, `unknown key "fr"`, "fr"},
		{"/api/v1/phases/handover", `{"for": "1s"`, "", 400, "the body is not valid JSON: unexpected end of JSON input (at byte 12)", ""},
		{"/api/v1/phases/handover", `[1, 2]`, "", 400, "the body is a JSON array, not a JSON object", ""},
		{"/api/v1/phases/handover", `{} {}`, "", 400, "more than one JSON value (the second at byte 3)", ""},
		{"/api/v1/phases/handover", `{"for": "1s"}`, "text/plain", 415, "Content-Type: application/json", ""},
		{"/api/v1/phases/handover", `{"for": "1s"}`, "application/x-www-form-urlencoded", 415, "sent as JSON", ""},
		{"/api/v1/phases/handover", `{"for": "` + strings.Repeat("9", 70000) + `s"}`, "", 413, "over 65536 bytes", ""},
		{"/api/v1/phases/no%20spaces", `{}`, "", 400, "is not a phase name", "name"},
		{"/api/v1/phases/" + strings.Repeat("p", 65), `{}`, "", 400, "is not a phase name", "name"},
	} {
		header := []string{}
		if tc.contentType != "" {
			header = []string{"Content-Type", tc.contentType}
		}
		code, body := l.request("POST", tc.path, tc.body, header...)
		var e struct{ Error, Path string }
		json.Unmarshal([]byte(body), &e)
		if code != tc.code || !strings.Contains(e.Error, tc.want) || e.Path != tc.at {
			t.Errorf("POST %s %.40q: %d %s", tc.path, tc.body, code, body)
		}
	}
	if _, body := l.request("GET", "/api/v1/profile?as-run", ""); strings.Contains(body, "phase: handover}\n") && strings.Count(body, "handover") > 1 {
		t.Errorf("a refused change is in the as-run profile:\n%s", body)
	}
	code, body := l.request("GET", "/api/v1/run", "")
	if code != 200 || strings.Contains(body, `"kind": "change"`) {
		t.Errorf("refused changes were recorded: %s", body)
	}
}

// TestReadOnly watches a run without the right to change it.
func TestReadOnly(t *testing.T) {
	l := startLive(t, twoWay, web.Options{ReadOnly: true})
	if code, body := l.request("POST", "/api/v1/phases/handover", `{}`); code != 403 || !strings.Contains(body, "read-only") {
		t.Errorf("%d %s", code, body)
	}
	if code, _ := l.request("GET", "/api/v1/run", ""); code != 200 {
		t.Errorf("reading a read-only server: %d", code)
	}
}

// TestChangeAfterTheEnd is refused: the run is over.
func TestChangeAfterTheEnd(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	l.stop()
	req := httptest.NewRequest("POST", "http://127.0.0.1/api/v1/phases/late", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	l.srv.ServeHTTP(rec, req)
	if rec.Code != 409 || !strings.Contains(rec.Body.String(), "the run has ended") {
		t.Errorf("%d %s", rec.Code, rec.Body.String())
	}
}

// TestSnapshotSyncState watches paper 004's drop (the state path held
// from 10 s to 11 s, θ_safe 299 ms): stopped at 10.8 s, the last snapshot
// (10.7 s) has the twin out of sync, t_diff past θ_safe, in its first
// episode; at 13 s it is back in sync.
func TestSnapshotSyncState(t *testing.T) {
	p, err := profiles.Load("twin-dropout")
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../profiles/benches/digital-twin.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	sync := func(d time.Duration) record.SyncProgress {
		mon := &record.Monitor{}
		if _, err := rig.Sim(p, b, rig.Options{Duration: d, Monitor: mon}); err != nil {
			t.Fatal(err)
		}
		s := mon.Snapshot()
		if len(s.Models) != 1 {
			t.Fatalf("%+v", s)
		}
		return s.Models[0].Sync
	}
	if s := sync(10800 * time.Millisecond); !s.Supervised || !s.OutOfSync || s.TDiff <= 299*time.Millisecond || s.Episodes != 1 {
		t.Errorf("at 10.7 s: %+v", s)
	}
	if s := sync(13 * time.Second); !s.Supervised || s.OutOfSync || s.TDiff > 299*time.Millisecond || s.Episodes != 1 {
		t.Errorf("at 12.9 s: %+v", s)
	}
}

// TestStart listens as `--listen` does: a loopback address without a
// token, any other only with one, and the URL printed works.
func TestStart(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := l.srv.Start(ctx, "127.0.0.1:0")
	if err != nil || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("%q %v", u, err)
	}
	resp, err := http.Get(u + "api/v1/run")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := l.srv.Start(ctx, "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "--token or HILRIG_TOKEN") {
		t.Errorf("all interfaces without a token: %v", err)
	}
	if _, err := l.srv.Start(ctx, strings.TrimPrefix(u, "http://")[:len(u)-len("http://")-1]); err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("an address in use: %v", err)
	}
}

// TestStartOnAllInterfaces: the URL printed for 0.0.0.0 names this
// machine (0.0.0.0 or [::] is no use from another), and works.
func TestStartOnAllInterfaces(t *testing.T) {
	var log syncBuffer
	l := startLive(t, twoWay, web.Options{Token: "secret-of-16-chars", Log: &log})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, addr := range []string{"0.0.0.0:0", "[::]:0"} {
		loopback := "127.0.0.1"
		if strings.HasPrefix(addr, "[") {
			probe, err := net.Listen("tcp", "[::1]:0")
			if err != nil {
				t.Logf("no IPv6 here (%v): %s not tried", err, addr)
				continue
			}
			probe.Close()
			loopback = "[::1]"
		}
		u, err := l.srv.Start(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := url.Parse(u)
		if err != nil || parsed.Port() == "" || parsed.Port() == "0" || parsed.Query().Get("token") != "secret-of-16-chars" {
			t.Fatalf("%s: %q %v", addr, u, err)
		}
		ip := net.ParseIP(parsed.Hostname())
		if host := parsed.Hostname(); host == "" || ip != nil && (ip.IsUnspecified() || ip.IsLoopback()) && host != "localhost" {
			t.Errorf("%s: the URL %s names no machine", addr, u)
		}
		if want := "hilrig: --listen " + addr + " listens on all interfaces, port " + parsed.Port(); !strings.Contains(log.String(), want) {
			t.Errorf("%s: the log says %q, want %q", addr, log.String(), want)
		}
		// Served on every interface: asked through the loopback (the
		// machine's own address may be firewalled), with the URL's token.
		resp, err := http.Get("http://" + loopback + ":" + parsed.Port() + "/api/v1/run?" + parsed.RawQuery)
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%s: %v %v", u, resp, err)
		} else {
			resp.Body.Close()
		}
	}
}

func TestGetHops(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	code, body := l.request("GET", "/api/v1/hops", "")
	var hops []web.HopJSON
	if err := json.Unmarshal([]byte(body), &hops); code != 200 || err != nil || len(hops) != 2 || hops[0].Name != "down" || hops[1].RateBps != 10e6 {
		t.Errorf("%d %v: %s", code, err, body)
	}
	code, body = l.request("GET", "/api/v1/hops/up", "")
	var up web.HopJSON
	if err := json.Unmarshal([]byte(body), &up); code != 200 || err != nil || up.Name != "up" || up.DelayS != 0.02 {
		t.Errorf("%d %v: %s", code, err, body)
	}
	code, body = l.request("GET", "/api/v1/hops/dwon", "")
	if code != 404 || !strings.Contains(body, `no hop named \"dwon\"; did you mean down?; the hops are down, up`) || !strings.Contains(body, `"path": "hop"`) {
		t.Errorf("an unknown hop: %d %s", code, body)
	}
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// getWhenUp polls url until it answers, for at most 10 s.
func getWhenUp(t *testing.T, url string) (int, string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(url)
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return resp.StatusCode, string(data)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", url, err)
		}
	}
}

// TestListenFlags runs the binary: `run --listen` serves the run, `sim
// --realtime-view --listen` a paced sim; flags that cannot work are usage
// errors before anything runs.
func TestListenFlags(t *testing.T) {
	addr := freeAddr(t)
	r := startRig(t, plainLink, ptyBenchText("line", ""), "--listen", addr, "--priority", "0")
	code, body := getWhenUp(t, "http://"+addr+"/api/v1/run")
	if code != 200 || !strings.Contains(body, `"clock": "real"`) || !strings.Contains(body, `"state": "running"`) {
		t.Errorf("run --listen: %d %s", code, body)
	}
	if code := r.stop(os.Interrupt); code != 0 {
		t.Errorf("exit %d: %s", code, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "hilrig: the run is live at http://"+addr+"/") {
		t.Errorf("stderr:\n%s", r.stderr.String())
	}

	addr = freeAddr(t)
	cmd := exec.Command(hilrig, "sim", "bottleneck", "--duration", "2s", "--realtime-view", "--listen", addr)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	code, body = getWhenUp(t, "http://"+addr+"/api/v1/run")
	if code != 200 || !strings.Contains(body, `"clock": "virtual"`) || !strings.Contains(body, `"profile": "bottleneck"`) {
		t.Errorf("sim --realtime-view --listen: %d %s", code, body)
	}
	if err := cmd.Wait(); err != nil || time.Since(start) < 2*time.Second || !strings.Contains(stdout.String(), `"stopped": "duration"`) {
		t.Errorf("%v after %v: %s\n%s", err, time.Since(start), stdout.String(), stderr.String())
	}
	// Not a terminal: a plain status line a second of the run.
	if n := strings.Count(stderr.String(), "/2s  "); n < 2 {
		t.Errorf("%d status lines:\n%s", n, stderr.String())
	}

	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"sim", "bottleneck", "--listen", "127.0.0.1:0"}, "", "give --realtime-view too"},
		{[]string{"sim", "bottleneck", "--realtime-view", "--read-only"}, "", "--read-only is for --listen"},
		{[]string{"sim", "bottleneck", "--realtime-view", "--listen", "0.0.0.0:0"}, "", "give a token with --token or HILRIG_TOKEN"},
		{[]string{"run", "--bench", "../profiles/benches/virtual.yaml", "bottleneck", "--listen", ":0:0"}, "", "--listen"},
	} {
		cmd := exec.Command(hilrig, tc.args...)
		cmd.Env = append(os.Environ(), "HILRIG_TOKEN="+tc.env)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: %v: %s", tc.args, err, stderr.String())
		}
	}
}
