package executor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/executor"
)

// peerBench is another rig on endpoint 0 ("peer", codec wire), its frames
// feeding flow 0 through a 3 ms hop to endpoint 1, on a clock the test
// turns a millisecond at a time. The peer's clock is 5 s ahead of this
// rig's.
type peerBench struct {
	x      *executor.Executor
	clock  *stepClock
	peer   *driverstest.Endpoint
	plant  *driverstest.Endpoint
	link   *executor.WireLink
	sender wire.Sender
	body   []byte
}

const peerAhead = 5 * time.Second

func newPeerBench(t *testing.T, setUp func(*executor.WireLink)) *peerBench {
	p := parse(t, `duration: 1h
hops:
  in: {delay: 3ms}
flows:
  from-peer: {route: [in]}
`)
	b := &peerBench{clock: &stepClock{}, peer: driverstest.NewEndpoint("peer", 8), plant: driverstest.NewEndpoint("plant", 8), body: make([]byte, 0, 64)}
	b.link = executor.NewWireLink("peer", b.peer)
	setUp(b.link)
	in := executor.NewIngress(64, func() {})
	var err error
	b.x, err = executor.New(executor.Config{
		Network: p.Config, Clock: b.clock, End: time.Hour,
		Egress:  []executor.Egress{executor.ToDevice(1, b.plant)},
		Ingress: in, FlowOf: []int{0, -1}, DeviceWire: []*executor.WireLink{b.link, nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.peer.Start(b.clock, in, 0)
	b.plant.Start(b.clock, in, 1)
	return b
}

// turn moves the clock a millisecond; the peer sends msg (if any), then
// the executor steps.
func (b *peerBench) turn(msg func(now time.Duration) []byte) {
	b.clock.Add(time.Millisecond)
	if msg != nil {
		if m := msg(b.clock.Now()); m != nil {
			b.peer.Send(m)
		}
	}
	b.x.Step()
}

// TestWireLinkAnswersAPeersTimeRequests: a link told to answer (its
// endpoint is another rig, whose frames go to a model) answers the
// peer's time request at once and directly, echoing its stamp, with the
// request's arrival and the answer's time on this rig's clock, and
// forwards nothing of it; one not told to forwards the request as before.
func TestWireLinkAnswersAPeersTimeRequests(t *testing.T) {
	for _, answers := range []bool{true, false} {
		t.Run(map[bool]string{true: "answers", false: "forwards"}[answers], func(t *testing.T) {
			b := newPeerBench(t, func(l *executor.WireLink) {
				if answers {
					l.AnswerTimeRequests()
				}
			})
			request := func(now time.Duration) []byte {
				if now == 10*time.Millisecond {
					return b.sender.TimeRequest(b.body[:0], now+peerAhead)
				}
				return nil
			}
			for range 20 {
				b.turn(request)
			}
			// The rig asked the peer's time at 0; its answer, at 10 ms, is
			// the last thing written to the peer.
			var answer *wire.Message
			if m, err := wire.Parse(b.peer.Last()); err == nil && m.Type == wire.TimeResponse {
				answer = &m
			}
			forwarded := b.plant.Written()
			if !answers {
				if answer != nil || forwarded != 1 {
					t.Fatalf("not answering: %v answered, %d frames forwarded; want none answered and the request forwarded", answer != nil, forwarded)
				}
				return
			}
			if answer == nil || forwarded != 0 {
				t.Fatalf("answering: answered %v, %d frames forwarded; want an answer and nothing forwarded", answer != nil, forwarded)
			}
			r := answer.TimeReply()
			if r.Requested != 10*time.Millisecond+peerAhead || r.Received != 10*time.Millisecond || answer.Time != 10*time.Millisecond {
				t.Errorf("the answer echoes %v, received %v, answered %v; want %v, 10ms, 10ms (answered at once, on this rig's clock)", r.Requested, r.Received, answer.Time, 10*time.Millisecond+peerAhead)
			}
			if got := b.link.Summary(b.clock.Now()).TimeRequestsAnswered; got != 1 {
				t.Errorf("summary: %d time requests answered; want 1", got)
			}
		})
	}
}

// TestWireLinkWatchesItsPeer: a peer that sends every 2 ms to 500 ms and
// is silent until 800 ms is lost at the instant its timeout ran out after
// its last message (598 ms), an event and a trace row; stop makes that a
// failure that ends the run; continue goes on and says it is back at its
// next message. Before the peer is first heard nothing is lost (the
// other site may start later).
func TestWireLinkWatchesItsPeer(t *testing.T) {
	for _, stop := range []bool{true, false} {
		t.Run(map[bool]string{true: "stop", false: "continue"}[stop], func(t *testing.T) {
			b := newPeerBench(t, func(l *executor.WireLink) { l.WatchPeer(100*time.Millisecond, stop) })
			one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
			sample := func(now time.Duration) []byte {
				if now < 300*time.Millisecond || now > 498*time.Millisecond && now < 800*time.Millisecond || now%(2*time.Millisecond) != 0 {
					return nil
				}
				return b.sender.Values(b.body[:0], wire.Sample, now+peerAhead, one, []float64{1})
			}
			for range 1000 {
				b.turn(sample)
			}
			var kinds []string
			for _, e := range b.x.Events() {
				kinds = append(kinds, e.Kind)
			}
			want := "peer_lost peer_back"
			if got := strings.Join(kinds, " "); got != want {
				t.Fatalf("events %q; want %q (nothing lost before the peer was first heard at 300 ms)", got, want)
			}
			lost, back := b.x.Events()[0], b.x.Events()[1]
			if lost.AtS != 0.598 || !strings.Contains(lost.Detail, "since its last message at 0.498000 s") {
				t.Errorf("lost at %v (%s); want 0.598: 100 ms after its last message at 498 ms", lost.AtS, lost.Detail)
			}
			if back.AtS != 0.8 {
				t.Errorf("back at %v; want 0.8, its next message", back.AtS)
			}
			if got := b.link.Summary(b.clock.Now()).PeerLost; got != 1 {
				t.Errorf("summary: peer lost %d times; want 1", got)
			}
			if !stop {
				return // the run goes on: nothing stops it
			}
			b.clock.jump = true
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // a run the loss did not stop ends "interrupted"
			defer cancel()
			stopped, err := b.x.Run(ctx)
			if err == nil || !strings.Contains(stopped, "the peer was lost at 0.598000 s") {
				t.Errorf("on_peer_lost: stop: the run stopped %q (%v); want the peer's loss", stopped, err)
			}
		})
	}
}
