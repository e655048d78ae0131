package rig

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// replay plays a bench endpoint from a recording: it sends the frames the
// endpoint's device sent in the recorded run, at the times they entered
// the rig then, and takes (and counts) what is written to it.
type replay struct {
	frames   []record.RecordedFrame
	next     int
	flow     int
	received uint64
}

var _ Player = (*replay)(nil)

// Replay is a Player of endpoint as rec recorded it.
func Replay(rec *record.Recorded, endpoint string) (Player, error) {
	iface := -1
	var names []string
	for i, in := range rec.Interfaces {
		names = append(names, in.Name)
		if in.Name == endpoint {
			iface = i
		}
	}
	if iface < 0 {
		return nil, fmt.Errorf("the recording has no endpoint %s (it has %s)", endpoint, strings.Join(names, ", "))
	}
	r := &replay{flow: -1}
	for _, f := range rec.Frames {
		if f.Interface == iface && !f.Outbound {
			r.frames = append(r.frames, f)
		}
	}
	return r, nil
}

func (r *replay) Feed(flow int) { r.flow = flow }

func (r *replay) Next() time.Duration {
	if r.next == len(r.frames) || r.flow < 0 {
		return math.MaxInt64
	}
	return r.frames[r.next].At
}

func (r *replay) Emit(now time.Duration, inject func(flow int, payload []byte)) {
	for r.next < len(r.frames) && r.frames[r.next].At <= now {
		inject(r.flow, r.frames[r.next].Payload)
		r.next++
	}
}

func (r *replay) Write([]byte) error {
	r.received++
	return nil
}

var _ executor.Source = (*replay)(nil)
