package rig

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles"
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

// ReadRecording reads a recording of an earlier run (run --record FILE).
func ReadRecording(file string) (*record.Recorded, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rec, err := record.ReadRecording(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return rec, nil
}

// withBenchReplays adds to players one for every bench endpoint that
// replays a recording (replay: in the bench), unless players plays it
// already; players itself is not changed.
func withBenchReplays(b *profiles.LoadedBench, players map[string]Player) (map[string]Player, error) {
	var out map[string]Player
	read := map[string]*record.Recorded{}
	for i, name := range b.Endpoints.Names {
		r := b.Endpoints.Values[i].Replay
		if r == nil || players[name] != nil {
			continue
		}
		rec := read[r.Path()]
		if rec == nil {
			var err error
			if rec, err = ReadRecording(r.Path()); err != nil {
				return nil, fmt.Errorf("endpoint %s: %w", name, err)
			}
			read[r.Path()] = rec
		}
		p, err := Replay(rec, r.Recorded())
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %s: %w", name, r.Path(), err)
		}
		if out == nil {
			out = make(map[string]Player, len(players)+1)
			for k, v := range players {
				out[k] = v
			}
		}
		out[name] = p
	}
	if out == nil {
		return players, nil
	}
	return out, nil
}

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
