package emulator

import (
	"slices"
	"testing"
	"time"
)

// TestLinkSerialises drives a link on its own, as the network does through
// the Serialiser interface: when each frame's last bit is sent, which are
// dropped, and what a change of its parameters does. At 8 000 bit/s a byte
// takes exactly 1 ms, so every instant is a whole number of milliseconds.
func TestLinkSerialises(t *testing.T) {
	const ms = time.Millisecond
	type arrival struct {
		at   time.Duration
		size int
	}
	for _, tc := range []struct {
		name     string
		params   HopParams
		frames   []arrival
		change   func(p *HopParams, l *link) // at 5 ms, if set
		sentAt   []time.Duration
		dropped  int
		peakWait int
	}{
		{name: "no rate passes at once", frames: []arrival{{0, 10}, {0, 10}, {3 * ms, 10}},
			sentAt: []time.Duration{0, 0, 3 * ms}},
		{name: "back to back at the rate", params: HopParams{Rate: 8000}, frames: []arrival{{0, 10}, {0, 10}, {0, 10}},
			sentAt: []time.Duration{10 * ms, 20 * ms, 30 * ms}, peakWait: 2},
		{name: "idle between frames", params: HopParams{Rate: 8000}, frames: []arrival{{0, 10}, {50 * ms, 10}},
			sentAt: []time.Duration{10 * ms, 60 * ms}},
		{name: "overhead and time per frame", params: HopParams{Rate: 8000, Overhead: 5, PerFrame: ms},
			frames: []arrival{{0, 10}, {0, 10}}, sentAt: []time.Duration{16 * ms, 32 * ms}, peakWait: 1},
		{name: "time per frame alone queues", params: HopParams{PerFrame: 2 * ms},
			frames: []arrival{{0, 10}, {0, 10}}, sentAt: []time.Duration{2 * ms, 4 * ms}, peakWait: 1},
		{name: "a full queue drops the tail", params: HopParams{Rate: 8000, Queue: Limit{N: 1, Unit: Frames}},
			frames: []arrival{{0, 10}, {0, 10}, {0, 10}}, sentAt: []time.Duration{10 * ms, 20 * ms}, dropped: 1, peakWait: 1},
		{name: "rate removed while sending: the queue goes with the frame sent", params: HopParams{Rate: 8000},
			frames: []arrival{{0, 10}, {0, 10}, {0, 10}},
			change: func(p *HopParams, l *link) { p.Rate = 0; l.Changed(FieldRate, 5*ms) },
			sentAt: []time.Duration{10 * ms, 10 * ms, 10 * ms}, peakWait: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := tc.params
			r := &serialiserRig{}
			l := &link{params: &params, host: r}
			r.s = l
			for _, a := range tc.frames {
				if tc.change != nil && a.at >= 5*ms && r.now < 5*ms {
					r.until(5 * ms)
					tc.change(&params, l)
				}
				r.frame(0, a.size, a.at)
			}
			if tc.change != nil && r.now < 5*ms {
				r.until(5 * ms)
				tc.change(&params, l)
			}
			r.until(time.Second)
			if !slices.Equal(r.sentAt, tc.sentAt) || len(r.dropped) != tc.dropped {
				t.Errorf("sent at %v, %d dropped; want %v, %d", r.sentAt, len(r.dropped), tc.sentAt, tc.dropped)
			}
			if _, frames := l.Peak(); frames != tc.peakWait {
				t.Errorf("peak wait %d frames, want %d", frames, tc.peakWait)
			}
			if bytes, frames, sending := l.Holding(); bytes != 0 || frames != 0 || sending {
				t.Errorf("holds %d B, %d frames, sending %v at the end", bytes, frames, sending)
			}
		})
	}
}
