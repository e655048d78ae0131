package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
)

// Stream rates a client may ask for, in messages a second. The executor
// publishes every record.PublishEvery (10 times a second): a faster
// client sees each snapshot once, when it is new.
const (
	DefaultRate = 10.0
	MaxRate     = 50.0
	MinRate     = 0.1
)

// streamSendBuffer bounds what the kernel holds for a client, so that one
// that stops reading is noticed after a bounded amount of telemetry.
const streamSendBuffer = 16 << 10

// Message is one telemetry message of the stream, a snapshot of the run.
// Times are in seconds.
type Message struct {
	Seq    uint64      `json:"seq"` // the snapshot's publication
	TimeS  float64     `json:"t_s"` // the run's clock
	State  string      `json:"state"`
	Flows  []FlowJSON  `json:"flows"`
	Hops   []HopJSON   `json:"hops"`
	Models []ModelJSON `json:"models,omitempty"`
	// Endpoints are the devices (none in virtual time); Wire the endpoints
	// speaking the rig wire protocol, devices or played in software.
	Endpoints []EndpointJSON `json:"endpoints,omitempty"`
	Wire      []WireJSON     `json:"wire,omitempty"`
	Timing    *TimingJSON    `json:"timing,omitempty"`
	Events    []record.Event `json:"events,omitempty"` // new since the previous message
	// Series are the plots' points since the previous message (in the
	// first, from the run's start: the history); Reset says the client is
	// sent the history again, having fallen too far behind, and must
	// forget the points it had.
	Series []SeriesJSON `json:"series,omitempty"`
	Reset  bool         `json:"reset,omitempty"`
	// Summary is the run's, in the last message, once it has ended (the
	// snapshot may be up to a publication older than its end).
	Summary *record.Summary `json:"summary,omitempty"`
}

// FlowJSON is a flow so far; DelayS describes the frames delivered since
// the previous snapshot.
type FlowJSON struct {
	Name        string     `json:"name"`
	Sent        uint64     `json:"sent"`
	Delivered   uint64     `json:"delivered"` // including corrupted
	Corrupted   uint64     `json:"corrupted"`
	Lost        uint64     `json:"lost"`
	QueueDrops  uint64     `json:"queue_drop"`
	LossDrops   uint64     `json:"loss_drop"`
	OutageDrops uint64     `json:"outage_drop"`
	EgressDrops uint64     `json:"egress_drop"`  // delivered by the engine, not taken by the device
	MeanDelayS  float64    `json:"mean_delay_s"` // of every delivered frame
	DelayS      *DelayJSON `json:"delay_s,omitempty"`
}

// DelayJSON describes the durations of an interval.
type DelayJSON struct {
	Count uint64  `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// ModelJSON is a model endpoint's output against the uncut reference,
// and its supervisor's state.
type ModelJSON struct {
	Endpoint  string    `json:"endpoint"`
	Output    string    `json:"output,omitempty"`
	Value     float64   `json:"value"`
	Ideal     float64   `json:"ideal"`
	Peak      float64   `json:"peak"`
	MaxError  float64   `json:"max_error"`
	Exchanges uint64    `json:"exchanges"`
	Overruns  uint64    `json:"overruns"`
	Sync      *SyncJSON `json:"sync,omitempty"`
}

// EndpointJSON is a device endpoint so far: whether its device is there
// (away since when), how often it went, and what its driver counted (in:
// read from the device; bytes in include the framing).
type EndpointJSON struct {
	Name        string   `json:"name"`
	Connected   bool     `json:"connected"`
	AwaySinceS  *float64 `json:"away_since_s,omitempty"`
	Gaps        uint64   `json:"gaps"`
	FramesIn    uint64   `json:"frames_in"`
	FramesOut   uint64   `json:"frames_out"`
	BytesIn     uint64   `json:"bytes_in"`
	BytesOut    uint64   `json:"bytes_out"`
	BadFrames   uint64   `json:"bad_frames"`
	WriteErrors uint64   `json:"write_errors"`
}

// WireJSON is an endpoint's rig wire protocol so far.
type WireJSON struct {
	Name      string   `json:"name"`
	Messages  uint64   `json:"messages"`
	CRCErrors uint64   `json:"crc_errors"`
	Malformed uint64   `json:"malformed"`
	Missed    uint64   `json:"missed"`
	Heard     bool     `json:"heard"`
	Fault     bool     `json:"fault"`
	Safe      bool     `json:"safe"`
	OneWayS   *float64 `json:"one_way_s,omitempty"` // once the sender's clock is known
}

// SyncJSON is a supervisor's state (paper 004).
type SyncJSON struct {
	OutOfSync bool    `json:"out_of_sync"`
	TDiffS    float64 `json:"t_diff_s"`
	SimTimeS  float64 `json:"sim_time_s"`
	Episodes  uint64  `json:"episodes"`
	Skipped   uint64  `json:"skipped"`
}

// TimingJSON is how well a real clock is kept: ReleaseS describes the
// frames released since the previous snapshot.
type TimingJSON struct {
	Wakeups        uint64     `json:"wakeups"`
	ReleaseS       *DelayJSON `json:"release_lateness_s,omitempty"`
	ReleaseMaxS    float64    `json:"release_lateness_max_s"` // over the run
	WakeMaxS       float64    `json:"wake_lateness_max_s"`
	IngressDropped uint64     `json:"ingress_dropped"`
}

func delayJSON(d record.DelayProgress) *DelayJSON {
	if d.Count == 0 {
		return nil
	}
	return &DelayJSON{Count: d.Count, P50: d.P50.Seconds(), P99: d.P99.Seconds(), Max: d.Max.Seconds(), Mean: d.Mean.Seconds()}
}

var outageNames = map[emulator.OutageMode]string{emulator.OutageDropMode: "drop", emulator.OutageHoldMode: "hold"}

// message turns a snapshot into a stream message.
func message(s *record.Snapshot, state string) Message {
	m := Message{Seq: s.Seq, TimeS: s.Time.Seconds(), State: state, Flows: []FlowJSON{}, Hops: []HopJSON{}}
	for _, f := range s.Flows {
		m.Flows = append(m.Flows, FlowJSON{
			Name: f.Name, Sent: f.Sent, Delivered: f.Delivered, Corrupted: f.Corrupted, Lost: f.Lost(),
			QueueDrops: f.QueueDrops, LossDrops: f.LossDrops, OutageDrops: f.OutageDrops, EgressDrops: f.EgressDrops,
			MeanDelayS: f.Delay.Mean.Seconds(), DelayS: delayJSON(f.Recent),
		})
	}
	for _, h := range s.Hops {
		// The parameters are the session's to write (Server.hopsOf).
		m.Hops = append(m.Hops, HopJSON{
			Name: h.Name, Changes: h.Changes, QueueBytes: h.QueueBytes, QueueFrames: h.QueueFrames, HeldFrames: h.HeldFrames,
			Outage: outageNames[h.Outage], RateBps: int64(h.Rate), DelayS: h.Delay.Seconds(),
		})
	}
	for _, md := range s.Models {
		mj := ModelJSON{Endpoint: md.Endpoint, Output: md.Output, Value: md.Value, Ideal: md.Ideal, Peak: md.Peak, MaxError: md.MaxError, Exchanges: md.Exchanges, Overruns: md.Overruns}
		if sy := md.Sync; sy.Supervised {
			mj.Sync = &SyncJSON{OutOfSync: sy.OutOfSync, TDiffS: sy.TDiff.Seconds(), SimTimeS: sy.SimTime.Seconds(), Episodes: sy.Episodes, Skipped: sy.Skipped}
		}
		m.Models = append(m.Models, mj)
	}
	for _, e := range s.Endpoints {
		ej := EndpointJSON{Name: e.Name, Connected: !e.Away, Gaps: e.Gaps, FramesIn: e.FramesIn, FramesOut: e.FramesOut,
			BytesIn: e.BytesIn, BytesOut: e.BytesOut, BadFrames: e.BadFrames, WriteErrors: e.WriteErrors}
		if e.Away {
			since := e.AwaySince.Seconds()
			ej.AwaySinceS = &since
		}
		m.Endpoints = append(m.Endpoints, ej)
	}
	for _, w := range s.Wire {
		wj := WireJSON{Name: w.Name, Messages: w.Messages, CRCErrors: w.CRCErrors, Malformed: w.Malformed, Missed: w.Missed, Heard: w.Heard, Fault: w.Fault, Safe: w.Safe}
		if w.ClockKnown {
			d := w.OneWay.Seconds()
			wj.OneWayS = &d
		}
		m.Wire = append(m.Wire, wj)
	}
	if t := s.Timing; t.Real {
		m.Timing = &TimingJSON{Wakeups: t.Wakeups, ReleaseS: delayJSON(t.RecentRelease), ReleaseMaxS: t.Release.Max.Seconds(), WakeMaxS: t.Wake.Max.Seconds(), IngressDropped: t.IngressDropped}
	}
	return m
}

// parseRate reads a rate in messages a second.
func parseRate(s string) (float64, error) {
	if s == "" {
		return DefaultRate, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(r) || r < MinRate || r > MaxRate {
		return 0, fmt.Errorf("rate %q is not a number of messages a second from %g to %g", s, MinRate, MaxRate)
	}
	return r, nil
}

// streamControl is what a client may send: a new rate.
type streamControl struct {
	Rate *float64 `json:"rate"`
}

// stream serves /api/v1/stream: a message per tick of the client's rate
// (?rate=HZ, default 10), while there is something new.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	rate, err := parseRate(r.URL.Query().Get("rate"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error(), "rate")
		return
	}
	if s.clients.Add(1) > MaxClients {
		s.clients.Add(-1)
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%d stream clients already", MaxClients), "")
		return
	}
	defer s.clients.Add(-1)
	up := websocket.Upgrader{
		// The guard has checked the Origin already; a browser from
		// another origin never gets here.
		CheckOrigin: func(r *http.Request) bool {
			origin := r.Header.Get("Origin")
			return origin == "" || sameOrigin(origin, r)
		},
	}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	if tc, ok := conn.NetConn().(*net.TCPConn); ok {
		tc.SetWriteBuffer(streamSendBuffer)
	}
	c := &client{srv: s, conn: conn, queue: make(chan outgoing, s.opt.StreamQueue), done: make(chan struct{}), sentLast: make(chan struct{})}
	s.conns.Store(c, struct{}{})
	defer s.conns.Delete(c)
	c.period.Store(int64(float64(time.Second) / rate))
	go c.read()
	go c.write()
	c.produce()
}

// client is one stream connection: produce reads snapshots at the
// client's rate and queues messages; write sends them; read takes
// control messages and pongs. A client whose queue is full is dropped.
// When the run ends, the client is sent at once a last message, which
// says so and holds the rest of the run's events.
type client struct {
	srv      *Server
	conn     *websocket.Conn
	queue    chan outgoing
	period   atomic.Int64 // between messages, ns
	done     chan struct{}
	sentLast chan struct{} // closed once the last message is sent
	closing  atomic.Bool
	events   int    // events sent so far
	points   uint64 // the history's snapshots sent so far
}

// outgoing is a message queued for a client, the last one or not.
type outgoing struct {
	data []byte
	last bool
}

// close closes the connection with a reason, once, and reports whether
// this call did.
func (c *client) close(code int, why string) bool {
	if !c.closing.CompareAndSwap(false, true) {
		return false
	}
	c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, why), time.Now().Add(c.srv.opt.WriteWait))
	c.conn.Close()
	close(c.done)
	return true
}

// drop closes a client that fell behind, and counts it.
func (c *client) drop(why string) {
	if c.close(websocket.ClosePolicyViolation, why) {
		c.srv.dropped.Add(1)
		fmt.Fprintf(c.srv.opt.Log, "hilrig: stream client %s dropped: %s\n", c.conn.RemoteAddr(), why)
	}
}

func (c *client) produce() {
	var snap record.Snapshot
	var lastSeq uint64
	lastState := ""
	period := time.Duration(c.period.Load())
	tick := time.NewTicker(period)
	defer tick.Stop()
	ended := c.srv.ended
	for {
		select {
		case <-c.done:
			return
		case <-tick.C:
		case <-ended: // at once, whatever the client's rate
			ended = nil
		}
		if p := time.Duration(c.period.Load()); p != period {
			period = p
			tick.Reset(p)
		}
		state := c.srv.state()
		last := state == "ended"
		published := c.srv.mon.Read(&snap)
		if !published && !last || snap.Seq == lastSeq && state == lastState {
			continue // nothing new
		}
		lastSeq, lastState = snap.Seq, state
		m := message(&snap, state)
		m.Series, c.points, m.Reset = c.srv.history.since(c.points)
		m.Hops = c.srv.hopsOf(&snap)
		if last {
			m.Events = c.srv.eventsSince(c.events) // the run's, from its summary
			c.events += len(m.Events)
			if e := c.srv.run.ending(); e != nil {
				m.Summary = &e.Summary
			}
			if !published && m.Summary != nil {
				// A run that ended before its first snapshot: its time is
				// the summary's, not a snapshot's zero.
				m.TimeS = m.Summary.Duration
			}
		} else if snap.Events > c.events {
			select {
			case c.srv.fetchEvents <- snap.Events:
			default:
			}
			m.Events = c.srv.eventsSince(c.events)
			c.events += len(m.Events)
		}
		data, err := json.Marshal(m)
		if err != nil {
			c.close(websocket.CloseInternalServerErr, "encoding")
			return
		}
		select {
		case c.queue <- outgoing{data, last}:
		default:
			c.drop(fmt.Sprintf("too slow: %d messages waiting", cap(c.queue)))
			return
		}
		if last {
			<-c.done // nothing more comes; the connection stays open until the server stops
			return
		}
	}
}

// write sends the queued messages and a ping every half of PongWait.
func (c *client) write() {
	ping := time.NewTicker(c.srv.opt.PongWait / 2)
	defer ping.Stop()
	for {
		var err error
		select {
		case <-c.done:
			return
		case o := <-c.queue:
			c.conn.SetWriteDeadline(time.Now().Add(c.srv.opt.WriteWait))
			if err = c.conn.WriteMessage(websocket.TextMessage, o.data); err == nil && o.last {
				close(c.sentLast)
			}
		case <-ping.C:
			err = c.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(c.srv.opt.WriteWait))
		}
		if err != nil {
			c.drop("too slow: " + err.Error())
			return
		}
	}
}

// read takes control messages until the client goes or stops answering
// pings.
func (c *client) read() {
	c.conn.SetReadLimit(4 << 10)
	c.conn.SetReadDeadline(time.Now().Add(c.srv.opt.PongWait))
	c.conn.SetPongHandler(func(string) error {
		return c.conn.SetReadDeadline(time.Now().Add(c.srv.opt.PongWait))
	})
	for {
		_, data, err := c.conn.ReadMessage()
		var closed *websocket.CloseError
		switch {
		case errors.As(err, &closed):
			c.close(websocket.CloseNormalClosure, "")
			return
		case err != nil:
			c.drop("no answer to pings: " + err.Error())
			return
		}
		var ctl streamControl
		if err := json.Unmarshal(data, &ctl); err != nil || ctl.Rate == nil {
			c.close(websocket.CloseUnsupportedData, `send {"rate": HZ} or nothing`)
			return
		}
		rate, err := parseRate(strconv.FormatFloat(*ctl.Rate, 'g', -1, 64))
		if err != nil {
			c.close(websocket.CloseUnsupportedData, err.Error())
			return
		}
		c.period.Store(int64(float64(time.Second) / rate))
	}
}
