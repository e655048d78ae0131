package suite

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/suitefile"
	"github.com/hilrig/hilrig/rig"
)

// Script plays the endpoints a case's script names: its sends enter the
// flows those endpoints feed, at the instants the script says, and its
// expects match the frames the flows deliver to them, each within its
// timeout. It runs in virtual and real time alike, on the executor's
// goroutine; times are the engine's (Clock), so that in virtual time a
// script's outcome is as reproducible as the rest of the run.
//
// The steps run in order, each from the end of the one before: the
// instant its last frame was sent, or the instant the expected frame
// arrived. The first step that fails ends the script.
type Script struct {
	steps   []scriptStep
	players []*player
	engine  Engine
	end     time.Duration // of the run, for steps cut short

	cur   int           // the step running
	start time.Duration // when it began
	sent  int           // frames of the current send step sent so far
}

type scriptStep struct {
	send     bool
	endpoint int // in players
	// send
	payloads [][]byte
	at       time.Duration // the first frame's time, absolute; -1: start + after
	after    time.Duration
	every    time.Duration
	// expect
	line, raw []byte
	pattern   *regexp.Regexp
	within    time.Duration

	text string // the step, in words

	// The outcome.
	ran, done, ok bool
	began         time.Duration
	ended         time.Duration
	arrived       int    // frames that arrived at the endpoint while it waited
	last          []byte // the last of them, its first bytes
	lastSize      int
	matched       []byte
}

// player is one endpoint the script plays.
type player struct {
	s     *Script
	name  string
	index int // in the script's players
	flow  int
}

var _ rig.Player = (*player)(nil)

// lastKept is how many bytes of an unmatched frame a step keeps to show.
const lastKept = 64

// NewScript compiles a case's script.
func NewScript(steps []suitefile.ScriptStep) *Script {
	s := &Script{cur: 0}
	endpoint := func(name string) int {
		for i, p := range s.players {
			if p.name == name {
				return i
			}
		}
		s.players = append(s.players, &player{s: s, name: name, index: len(s.players), flow: -1})
		return len(s.players) - 1
	}
	for _, st := range steps {
		var c scriptStep
		switch {
		case st.Send != nil:
			snd := st.Send
			c = scriptStep{send: true, endpoint: endpoint(string(snd.Endpoint)), at: -1}
			count := 1
			if snd.Count != nil {
				count = *snd.Count
			}
			if snd.Every != nil {
				c.every = time.Duration(*snd.Every)
			}
			if snd.At != nil {
				c.at = time.Duration(*snd.At)
			}
			if snd.After != nil {
				c.after = time.Duration(*snd.After)
			}
			for n := range count {
				if snd.Line != nil {
					c.payloads = append(c.payloads, []byte(strings.ReplaceAll(*snd.Line, "{n}", strconv.Itoa(n))))
				} else {
					c.payloads = append(c.payloads, []byte(*snd.Bytes))
				}
			}
			what := describePayload(snd.Line, snd.Bytes)
			if count > 1 {
				what = fmt.Sprintf("%d frames %s, one every %v,", count, what, lang.Duration(c.every))
			}
			c.text = fmt.Sprintf("send %s from %s", what, snd.Endpoint)
			if snd.At != nil {
				c.text += " at " + snd.At.String()
			} else if snd.After != nil {
				c.text += " after " + snd.After.String()
			}
		case st.Expect != nil:
			e := st.Expect
			c = scriptStep{endpoint: endpoint(string(e.Endpoint)), within: time.Duration(e.Within), last: make([]byte, 0, lastKept), matched: make([]byte, 0, lastKept)}
			var what string
			switch {
			case e.Line != nil:
				c.line, what = []byte(*e.Line), "line "+strconv.Quote(*e.Line)
			case e.Bytes != nil:
				c.raw, what = []byte(*e.Bytes), "bytes "+fmt.Sprintf("% x", []byte(*e.Bytes))
			default:
				c.pattern, what = e.Pattern.Regexp, "a frame matching "+strconv.Quote(e.Pattern.String())
			}
			c.text = fmt.Sprintf("expect %s at %s within %v", what, e.Endpoint, e.Within)
		}
		s.steps = append(s.steps, c)
	}
	return s
}

func describePayload(line *string, raw *suitefile.HexBytes) string {
	if line != nil {
		return "line " + strconv.Quote(*line)
	}
	return fmt.Sprintf("bytes % x", []byte(*raw))
}

// Players are the endpoints the script plays, for rig.Options.Players.
func (s *Script) Players() map[string]rig.Player {
	out := map[string]rig.Player{}
	for _, p := range s.players {
		out[p.name] = p
	}
	return out
}

// Engine is what the script needs of the network engine: its time (the
// instant a frame is delivered, while it is delivered) and its next event.
// *emulator.Network is one.
type Engine interface {
	Now() time.Duration
	NextEvent() (time.Duration, bool)
}

// Start gives the script the session's engine (Executor().Network()) and
// the run's end, once the session is open and before it runs.
func (s *Script) Start(e Engine, end time.Duration) {
	s.engine, s.end = e, end
	s.begin(0)
}

// begin starts the current step at t.
func (s *Script) begin(t time.Duration) {
	s.start, s.sent = t, 0
	if s.cur < len(s.steps) {
		st := &s.steps[s.cur]
		st.ran, st.began = true, t
	}
}

// finish ends the current step at t and starts the next, unless it failed.
func (s *Script) finish(t time.Duration, ok bool) {
	st := &s.steps[s.cur]
	st.done, st.ok, st.ended = true, ok, t
	if !ok {
		s.cur = len(s.steps)
		return
	}
	s.cur++
	s.begin(t)
}

// firstSend is when the current send step's first frame goes.
func (st *scriptStep) firstSend(start time.Duration) time.Duration {
	if st.at >= 0 {
		return max(st.at, start)
	}
	return start + st.after
}

func (p *player) Feed(flow int) { p.flow = flow }

// Next is when the script next has something to do, whichever endpoint
// does it: the next frame of a send, or while an expect waits, the
// engine's next event (so that a frame's arrival, and what the script does
// next, happen at its instant, also in virtual time) or the timeout. Every
// player answers for the whole script: the executor asks each player once
// a turn, and a step ended by one player's frame may be another's to
// follow.
func (p *player) Next() time.Duration { return p.s.next() }

func (s *Script) next() time.Duration {
	if s.engine == nil || s.cur >= len(s.steps) {
		return math.MaxInt64
	}
	st := &s.steps[s.cur]
	if st.send {
		return st.firstSend(s.start) + time.Duration(s.sent)*st.every
	}
	next := s.start + st.within
	if e, ok := s.engine.NextEvent(); ok {
		next = min(next, e)
	}
	return next
}

// Emit sends what is due, and times out an expect whose time is up.
func (p *player) Emit(now time.Duration, inject func(flow int, payload []byte)) {
	s := p.s
	me := p.index
	for s.cur < len(s.steps) {
		st := &s.steps[s.cur]
		if st.endpoint != me {
			return
		}
		if !st.send {
			if deadline := s.start + st.within; now >= deadline {
				s.finish(deadline, false)
			}
			return
		}
		for s.sent < len(st.payloads) {
			at := st.firstSend(s.start) + time.Duration(s.sent)*st.every
			if at > now {
				return
			}
			if p.flow >= 0 {
				inject(p.flow, st.payloads[s.sent])
			}
			s.sent++
		}
		s.finish(now, true)
	}
}

// Write takes a frame delivered to the endpoint: it may be the one the
// current step expects.
func (p *player) Write(payload []byte) error {
	s := p.s
	if s.engine == nil || s.cur >= len(s.steps) {
		return nil
	}
	st := &s.steps[s.cur]
	if st.send || st.endpoint != p.index {
		return nil
	}
	now := s.engine.Now()
	if now > s.start+st.within {
		return nil // late: the timeout decides
	}
	var hit bool
	switch {
	case st.line != nil:
		hit = bytes.Equal(payload, st.line)
	case st.raw != nil:
		hit = bytes.Equal(payload, st.raw)
	default:
		hit = st.pattern.Match(payload)
	}
	if !hit {
		st.arrived++
		st.lastSize = len(payload)
		st.last = append(st.last[:0], payload[:min(len(payload), lastKept)]...)
		return nil
	}
	st.matched = append(st.matched[:0], payload[:min(len(payload), lastKept)]...)
	s.finish(now, true)
	return nil
}

// StepResult is what became of a step of the script.
type StepResult struct {
	Step   string // the step, in words
	OK     bool
	Detail string // what happened
}

func (r StepResult) String() string {
	if r.OK {
		return r.Step + ": " + r.Detail
	}
	return r.Step + " failed: " + r.Detail
}

// Results says what became of each step, once the run is over.
func (s *Script) Results() []StepResult {
	out := make([]StepResult, len(s.steps))
	for i := range s.steps {
		st := &s.steps[i]
		r := StepResult{Step: st.text}
		switch {
		case !st.ran:
			r.Detail = "not reached"
		case !st.done:
			// Still running when the run ended.
			r.Detail = fmt.Sprintf("the run ended at %s, before it was done", seconds(s.end))
			if !st.send {
				r.Detail += "; " + st.nothing()
			}
		case st.ok && st.send:
			r.OK, r.Detail = true, fmt.Sprintf("sent at %s", seconds(st.ended))
		case st.ok:
			r.OK, r.Detail = true, fmt.Sprintf("%s arrived at %s, %s after the step began", showFrame(st.matched, len(st.matched)), seconds(st.ended), lang.Duration(st.ended-st.began))
		case !st.send:
			r.Detail = fmt.Sprintf("nothing matched from %s to %s: %s", seconds(st.began), seconds(st.began+st.within), st.nothing())
		default:
			r.Detail = "not sent"
		}
		out[i] = r
	}
	return out
}

// nothing says what arrived instead.
func (st *scriptStep) nothing() string {
	if st.arrived == 0 {
		return "no frame arrived"
	}
	return fmt.Sprintf("%d other frames arrived, the last %s", st.arrived, showFrame(st.last, st.lastSize))
}

// showFrame writes a frame's kept bytes as text, or hex when they are not
// printable.
func showFrame(b []byte, size int) string {
	more := ""
	if size > len(b) {
		more = fmt.Sprintf("… (%d bytes)", size)
	}
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return fmt.Sprintf("[% x]%s", b, more)
		}
	}
	return strconv.Quote(string(b)) + more
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) + " s" }

// Passed reports whether every step ran and passed.
func (s *Script) Passed() bool {
	for i := range s.steps {
		if !s.steps[i].ok {
			return false
		}
	}
	return true
}
