//go:build linux

package e2e

import (
	"math"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/device/virtual"
	"github.com/hilrig/hilrig/firmware/internal/ptytest"
	"github.com/hilrig/hilrig/firmware/pid"
	"github.com/hilrig/hilrig/firmware/plantnode"
	"github.com/hilrig/hilrig/firmware/wire"
)

const ms = time.Millisecond

// The loop: a first-order plant 2/(0.1 s + 1) on the plant node's pins,
// a PI controller 1 + 10/s (its zero cancels the plant's pole, so the
// continuous loop is 20/s and closes to 20/(s + 20); sampled at 100 Hz
// its slower pole is 0.894 a period, a time constant of 89 ms).
const (
	period   = 10 * ms
	tau      = 100 * ms
	gain     = 2.0
	kp, ki   = 1.0, 10.0
	setpoint = 1.0
	timeout  = 50 * ms  // the PID's
	watchdog = 100 * ms // the node's
	safe     = -0.5
)

// The run: closed from 0, the link cut at 2 s, back at 3 s, to 4 s.
const (
	cutAt, backAt, end = 2000 * ms, 3000 * ms, 4000 * ms
)

func layout(t testing.TB, ft wire.FieldType) *wire.Struct {
	s, err := wire.NewStruct([]wire.Field{{Type: ft}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type loop struct {
	clock *virtual.Clock
	lag   *virtual.Lag
	pid   *pid.Controller
	node  *plantnode.Node
}

func newLoop(t testing.TB, pidUART, nodeUART device.UART) *loop {
	l := &loop{clock: &virtual.Clock{}}
	l.lag = &virtual.Lag{Tau: tau, Gain: gain, Clock: l.clock}
	f64 := layout(t, wire.F64LE)
	var err error
	l.pid, err = pid.New(pid.Config{
		Law:         pid.Law{Gains: pid.Gains{Kp: kp, Ki: ki}, Period: period, Min: -5, Max: 5},
		Measurement: f64, SetpointField: -1, Setpoint: setpoint, Command: f64,
		Timeout: timeout, Heartbeat: 100 * ms,
	}, pidUART, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.node, err = plantnode.New(plantnode.Config{
		Period: period, Samples: f64, Commands: f64, Safe: []float64{safe},
		Watchdog: watchdog, Heartbeat: 100 * ms,
	}, nodeUART, []device.AnalogIn{l.lag}, []device.AnalogOut{l.lag})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// step is the state after one period.
type step struct {
	at         time.Duration
	y, u       float64 // the plant's output sampled, and its drive after the period's command
	fault      bool
	safe       bool
	pidHasSent bool
}

// medium carries what one firmware wrote to the other and has it take
// it in, or drops it while cut.
type medium interface {
	cut(bool)
	toPID(l *loop) error
	toNode(l *loop) error
}

// run steps the loop: each period the node samples and sends, the PID
// takes the sample in and sends its command, the node applies it, and
// the plant moves on.
func (l *loop) run(t testing.TB, m medium) []step {
	var steps []step
	for now := time.Duration(0); now < end; now += period {
		l.clock.T = now
		m.cut(now >= cutAt && now < backAt)
		l.node.Tick(now)
		if err := m.toPID(l); err != nil {
			t.Fatalf("%v: to the PID: %v", now, err)
		}
		l.pid.Tick(now)
		if err := m.toNode(l); err != nil {
			t.Fatalf("%v: to the node: %v", now, err)
		}
		y, _ := l.lag.Read()
		_, sent := l.pid.Command()
		steps = append(steps, step{at: now, y: y, u: l.lag.Drive(), fault: l.pid.Fault(), safe: l.node.Safe(), pidHasSent: sent})
	}
	return steps
}

// cable is the loop without a tty: a virtual cable.
type cable struct{ c *virtual.Cable }

func (c cable) cut(on bool) { c.c.Cut = on }
func (c cable) toPID(l *loop) error {
	return l.pid.Poll(l.clock.T)
}
func (c cable) toNode(l *loop) error {
	return l.node.Poll(l.clock.T)
}

// ptys is the loop through two pseudo-terminals, the test relaying
// between their masters as the rig would: each firmware on a tty, the
// bytes it writes read at the master, written to the other master
// (unless cut), read by the other firmware at its tty. Every byte written
// in a period is carried in that period, so the run is as deterministic
// as on the cable.
type ptys struct {
	pidSide, nodeSide *ptytest.Pair
	isCut             bool
}

const patience = 10 * time.Second // for bytes to cross a tty; a failure, never a timing

func (p *ptys) cut(on bool) { p.isCut = on }

func (p *ptys) carry(from, to *ptytest.Pair, fw device.Firmware, now time.Duration) error {
	pending := from.Slave.Out - from.Master.In
	var err error
	if rerr := from.Master.ReadFull(pending, patience, func(b []byte) {
		if !p.isCut && err == nil {
			_, err = to.Master.Write(b)
		}
	}); rerr != nil {
		return rerr
	}
	if err != nil || p.isCut {
		return err
	}
	for to.Slave.In < to.Master.Out {
		if !to.Slave.Wait(patience) {
			return errTimeout
		}
		if err := fw.Poll(now); err != nil {
			return err
		}
	}
	return nil
}

type timeoutError struct{}

func (timeoutError) Error() string { return "bytes did not arrive" }

var errTimeout = timeoutError{}

func (p *ptys) toPID(l *loop) error  { return p.carry(p.nodeSide, p.pidSide, l.pid, l.clock.T) }
func (p *ptys) toNode(l *loop) error { return p.carry(p.pidSide, p.nodeSide, l.node, l.clock.T) }

// TestLoopThroughPseudoTerminals closes the loop through two real
// pseudo-terminals in virtual time and checks it against the same
// firmware on a virtual cable (bit for bit), and before the cut against
// the loop's own difference equations. Then the cut: the PID raises its
// fault flag the first period more than its 50 ms timeout after the last
// sample (taken at 1990 ms: at 2050 ms) and holds its command, the node's
// watchdog drives the plant safe the first period more than 100 ms after
// the last command (at 2100 ms); when the link is back the flag drops,
// the node leaves safe, and the loop settles again.
func TestLoopThroughPseudoTerminals(t *testing.T) {
	p := &ptys{pidSide: ptytest.Open(t), nodeSide: ptytest.Open(t)}
	viaPTY := newLoop(t, p.pidSide.Slave, p.nodeSide.Slave).run(t, p)

	c := virtual.NewCable()
	onCable := newLoop(t, &c.A, &c.B)
	viaCable := onCable.run(t, cable{c})
	for i := range viaCable {
		if viaPTY[i] != viaCable[i] {
			t.Fatalf("at %v: through the ptys %+v, on the cable %+v", viaCable[i].at, viaPTY[i], viaCable[i])
		}
	}

	// The loop's difference equations, written out with the firmware's
	// rules: the PI law (no saturation: u starts at Kp·1 = 1 and stays
	// within ±5) on the latest measurement while it is at most the
	// timeout old, nothing sent after; the node holding the last command
	// until its watchdog, then the safe level; the plant sampled exactly
	// under a held drive.
	h := period.Seconds()
	a := math.Exp(-h / tau.Seconds())
	var y, integral, measured float64
	var measuredAt, commandedAt time.Duration
	drive, nodeSafe, fault := safe, true, false
	for _, s := range viaPTY {
		cut := s.at >= cutAt && s.at < backAt
		if !nodeSafe && s.at-commandedAt > watchdog {
			drive, nodeSafe = safe, true
		}
		fresh := !cut
		if fresh {
			measured, measuredAt = y, s.at
		}
		fault = s.at-measuredAt > timeout || fault && !fresh
		if !fault {
			e := setpoint - measured
			u := kp*e + integral
			integral += ki * h * e
			if !cut {
				drive, nodeSafe, commandedAt = u, false, s.at
			}
		}
		if math.Abs(s.u-drive) > 1e-12 || math.Abs(s.y-y) > 1e-12 || s.fault != fault || s.safe != nodeSafe {
			t.Fatalf("at %v: %+v; the equations give y %v, u %v, fault %v, safe %v", s.at, s, y, drive, fault, nodeSafe)
		}
		y = gain*drive + (y-gain*drive)*a
	}

	// And the events, by the clock: the loop settled before the cut
	// (the discrete loop's slower pole, a root of z² − (1 + a − b)z + a −
	// b + b·Ki·h with b = K(1 − a), is 0.894 a period, so the error after
	// 1.99 s is about 0.894^199 ≈ 2e-10 of the first); the flag up from
	// 2050 ms to 3000 ms; the node holding the last command for 100 ms,
	// then safe until 3000 ms; and the loop settling again (from y ≈
	// −1, 0.894^100 ≈ 1.4e-5, times the transient's constant).
	at := func(when time.Duration) step { return viaPTY[when/period] }
	if s := at(cutAt - period); math.Abs(s.y-setpoint) > 1e-8 || s.fault || s.safe {
		t.Errorf("before the cut: %+v", s)
	}
	held := at(cutAt - period).u
	for _, s := range viaPTY {
		if want := s.at >= cutAt+timeout && s.at < backAt; s.fault != want {
			t.Errorf("%v: fault flag %v", s.at, s.fault)
		}
		switch {
		case s.at >= cutAt && s.at < cutAt+watchdog:
			if s.safe || s.u != held {
				t.Errorf("%v: the node did not hold the last command %v: %+v", s.at, held, s)
			}
		case s.at >= cutAt+watchdog && s.at < backAt:
			if !s.safe || s.u != safe {
				t.Errorf("%v: the node's outputs are not safe: %+v", s.at, s)
			}
		case s.at >= backAt:
			if s.safe {
				t.Errorf("%v: not back: %+v", s.at, s)
			}
		}
	}
	if s := at(end - period); math.Abs(s.y-setpoint) > 1e-4 {
		t.Errorf("settled again: y %v", s.y)
	}

	pidStats, nodeStats := onCable.pid.Stats(), onCable.node.Stats()
	if pidStats.Faults != 1 || nodeStats.Trips != 1 {
		t.Errorf("%d faults, %d trips", pidStats.Faults, nodeStats.Trips)
	}
	// Every message sent while cut is missed, seen as gaps: the node's
	// 100 samples and its heartbeats at 2000 to 2900 ms; the PID sent
	// commands for 5 periods (2000 to 2040 ms), its heartbeats, and the
	// one it sent at once when its fault flag went up.
	rx := onCable.pid.Link().Stats().Received
	if rx.CRCErrors != 0 || rx.Gaps != 1 || rx.Missed != 100+10 {
		t.Errorf("the PID received %+v", rx)
	}
	rx = onCable.node.Link().Stats().Received
	if rx.CRCErrors != 0 || rx.Gaps != 1 || rx.Missed != 5+10+1 {
		t.Errorf("the node received %+v", rx)
	}
}
