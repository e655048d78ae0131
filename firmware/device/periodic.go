package device

import (
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

// Periodic is the loop a reference firmware is built on: its Link to the
// rig, the Schedule of its periodic work and that of its heartbeat. Each
// firmware does its own work when Due says so and says its own status in
// Heartbeat; Poll, Receive and Next, which the Firmware interface asks
// of each, are the same for all and written here once. A firmware holds
// a Periodic as a named field and forwards to it, so that its own API
// stays what it says, not whatever Periodic has.
//
// Like the Link, it allocates nothing after NewPeriodic.
type Periodic struct {
	link      *Link
	work      Schedule
	heartbeat Schedule
	said      bool        // a heartbeat has been sent
	status    wire.Status // the last one's
}

// NewPeriodic returns a loop on link doing its work every period and
// sending a heartbeat every heartbeat (0: never).
func NewPeriodic(link *Link, period, heartbeat time.Duration) Periodic {
	return Periodic{link: link, work: Schedule{Period: period}, heartbeat: Schedule{Period: heartbeat}}
}

// Poll takes in what the UART has.
func (p *Periodic) Poll(now time.Duration) error { return p.link.Poll(now) }

// Receive takes in bytes that arrived at at.
func (p *Periodic) Receive(b []byte, at time.Duration) { p.link.Receive(b, at) }

// Next is when the next tick is due: the work's or the heartbeat's,
// whichever comes first.
func (p *Periodic) Next() time.Duration {
	if p.heartbeat.Period > 0 && p.heartbeat.Next() < p.work.Next() {
		return p.heartbeat.Next()
	}
	return p.work.Next()
}

// Due reports whether the periodic work is due at now, and if so takes
// the tick: the caller does the work.
func (p *Periodic) Due(now time.Duration) bool { return p.work.Due(now) }

// Heartbeat sends a heartbeat with status if one is due at now, or at
// once if status is not what the last one said (the periodic ones keep
// their schedule): a fault or a watchdog trip shorter than the heartbeat
// period is still told. The status is the caller's to say (a fault flag,
// outputs safe); a heartbeat the UART refuses is counted by the link, and
// the next periodic one says the status again.
func (p *Periodic) Heartbeat(now time.Duration, status wire.Status) {
	if p.heartbeat.Period <= 0 {
		return
	}
	due := p.heartbeat.Due(now)
	if !due && p.said && status == p.status {
		return
	}
	p.link.SendHeartbeat(now, status)
	p.said, p.status = true, status
}

// Link is the link to the rig.
func (p *Periodic) Link() *Link { return p.link }

// Ticks and Skipped count the periodic work's ticks taken and periods
// missed (heartbeats are not counted).
func (p *Periodic) Ticks() uint64   { return p.work.Ticks() }
func (p *Periodic) Skipped() uint64 { return p.work.Skipped() }
