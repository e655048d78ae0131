package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/executor"
)

// A reset undoes changes made by hand: it returns one parameter of a hop,
// a hop, or every hop to the profile's values as of now, its schedule
// included (emulator.Network.Planned). It is a change like any other: the
// keys that differ are set to those values, each hop's in one schedule
// entry of the as-run profile, all at one instant of the run. (toxiproxy
// has DELETE of one toxic and a reset of every proxy.)

// deleteHops resets every hop: DELETE /api/v1/hops.
func (s *Server) deleteHops(w http.ResponseWriter, r *http.Request) {
	s.reset(w, r, "", nil)
}

// deleteHop resets one hop: DELETE /api/v1/hops/{hop}.
func (s *Server) deleteHop(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.hopIndex(w, r.PathValue("hop")); ok {
		s.reset(w, r, r.PathValue("hop"), nil)
	}
}

// deleteHopKey resets one parameter: DELETE /api/v1/hops/{hop}/{key}.
func (s *Server) deleteHopKey(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.hopIndex(w, r.PathValue("hop")); !ok {
		return
	}
	key := r.PathValue("key")
	if _, ok := emulator.LookupHopKey(key); !ok {
		keys := emulator.HopField(^uint32(0)).Keys()
		writeError(w, http.StatusNotFound, fmt.Sprintf("no hop parameter %q%s; a hop's are %s", key, suggest.DidYouMean(key, keys), strings.Join(keys, ", ")), "key")
		return
	}
	s.reset(w, r, r.PathValue("hop"), []string{key})
}

// resetApplied is a reset's answer: when it took effect, the entries that
// replay it, and the hops as they are then.
type resetApplied struct {
	AtS      float64   `json:"at_s"`
	WallTime time.Time `json:"wall_time"`
	Entries  []string  `json:"entries"` // none: the hops had the profile's values already
	Hops     []HopJSON `json:"hops"`
}

// resetDone is one hop's part of a reset, as the host applied it.
type resetDone struct {
	Hop    string          `json:"hop"`
	Change json.RawMessage `json:"change"` // in the profile language
	Seq    uint64          `json:"seq"`
	State  json.RawMessage `json:"state"` // the hop then (HopJSON)
}

func (s *Server) reset(w http.ResponseWriter, r *http.Request, hop string, keys []string) {
	body, cerr := s.readChange(w, r)
	if cerr == nil && len(body) > 0 {
		cerr = refuse(http.StatusBadRequest, "", "DELETE takes no body: the path says what to return to the profile's values")
	}
	if cerr != nil {
		writeRefusal(w, cerr)
		return
	}
	// Each hop reset is an entry of the record: room for as many as may be.
	room := 1
	if hop == "" {
		room = len(s.run.profile.Hops.Names)
	}
	for i := range room {
		if err := s.asRun.reserve(); err != nil {
			for range i {
				s.asRun.release()
			}
			writeRefusal(w, err)
			return
		}
	}
	a, err := s.run.ask(r.Context(), linkRequest{Op: "reset", Hop: hop, Keys: keys, Source: r.Method + " " + r.URL.Path})
	if err != nil || a.Ended || a.Error != nil {
		for range room {
			s.asRun.release()
		}
		switch {
		case err != nil || a.Ended:
			writeError(w, http.StatusConflict, "the run ended before the reset could be applied", "")
		default:
			writeRefusal(w, a.Error.change())
		}
		return
	}
	out := resetApplied{AtS: time.Duration(a.At).Seconds(), WallTime: a.Wall, Entries: []string{}, Hops: []HopJSON{}}
	for _, done := range a.Resets {
		i := slices.Index(s.run.profile.Hops.Names, done.Hop)
		changes, entry, err := s.run.profile.ParseChange("reset", done.Change, done.Hop)
		c := change{entry: entry, hop: i}
		if err == nil {
			for _, ch := range changes {
				if set, ok := ch.Change.(emulator.SetHop); ok {
					c.set, c.params = set.Set, set.Params
				}
			}
		}
		out.Entries = append(out.Entries, s.settle(outcome{seq: done.Seq, at: time.Duration(a.At), wall: a.Wall}, c, s.renderEntry(entry)))
		var h HopJSON
		json.Unmarshal(done.State, &h)
		out.Hops = append(out.Hops, h)
	}
	for range room - len(a.Resets) {
		s.asRun.release()
	}
	writeJSON(w, http.StatusOK, out)
}

// reset returns the keys named in q (all: none named) of q's hop (all:
// none named) to the profile's values as of now. The values are read on
// the executor and written and parsed off it, then applied on it if the
// schedule has not moved them meanwhile (else read again).
func (h *Host) reset(ctx context.Context, q linkRequest) linkAnswer {
	p := h.s.Profile()
	var which emulator.HopField
	for _, k := range emulator.HopKeys() {
		if len(q.Keys) == 0 || slices.Contains(q.Keys, k.Key) {
			which |= k.Field
		}
	}
	for attempt := 0; ; attempt++ {
		var planned, now []emulator.HopParams
		if !h.onExecutor(ctx, func(x *executor.Executor, _ time.Duration) {
			n := x.Network()
			for i := range n.NumHops() {
				planned, now = append(planned, n.Planned(i)), append(now, n.HopNow(i).Params)
			}
		}) {
			return linkAnswer{Ended: true}
		}
		type hopReset struct {
			hop     int
			set     emulator.HopField
			raw     []byte
			changes []emulator.Scheduled
			c       *change
		}
		var resets []hopReset
		var problems []problem
		for i, name := range p.Hops.Names {
			if q.Hop != "" && name != q.Hop {
				continue
			}
			body := map[string]any{}
			var set emulator.HopField
			for _, k := range emulator.HopKeys() {
				if which&k.Field == 0 || reflect.DeepEqual(k.Value(&now[i]), k.Value(&planned[i])) {
					continue
				}
				v, ok := profiles.HopValue(k.Key, &planned[i])
				if !ok {
					problems = append(problems, problem{Error: fmt.Sprintf("hops.%s.%s: the profile's value now is read from a file (a recorded series, measured delays), which a change made live does not read; set it by hand as it was, or let the schedule do it", name, k.Key), Path: name + "." + k.Key})
					continue
				}
				body[k.Key], set = v, set|k.Field
			}
			if len(body) == 0 {
				continue
			}
			raw, _ := json.Marshal(body)
			changes, entry, err := p.ParseChange(q.Source, raw, name)
			if err != nil {
				problems = append(problems, problem{Error: fmt.Sprintf("hops.%s: writing the profile's values: %v", name, err), Path: name})
				continue
			}
			resets = append(resets, hopReset{i, set, raw, changes, &change{entry: entry, hop: i, set: set, params: planned[i]}})
		}
		if len(problems) > 0 {
			return linkAnswer{Error: linkErr(&errChange{code: http.StatusConflict, msg: problems[0].Error, path: problems[0].Path, all: problems})}
		}
		var a linkAnswer
		moved := false
		posted := time.Now()
		ok := h.onExecutor(ctx, func(x *executor.Executor, at time.Duration) {
			n := x.Network()
			for _, rs := range resets {
				if got := n.Planned(rs.hop); !reflect.DeepEqual(got, planned[rs.hop]) {
					moved = true // the schedule changed them since they were read
					return
				}
			}
			var all []emulator.Scheduled
			for _, rs := range resets {
				all = append(all, rs.changes...)
			}
			if err := n.ApplyNow(all...); err != nil {
				a.Error = linkErr(refuse(http.StatusConflict, "", "%v", err))
				return
			}
			a.At, a.Queued, a.Wall = int64(at), int64(time.Since(posted)), time.Now()
			for _, rs := range resets {
				x.Event(at, "change", fmt.Sprintf("hop %s reset to the profile's values: %s", p.Hops.Names[rs.hop], rs.raw))
				a.Wall = eventWall(x.Events())
				for _, k := range emulator.HopKeys() {
					if rs.set&k.Field != 0 {
						h.latest[hopParam{rs.hop, k.Field}] = rs.c
					}
				}
				state, _ := json.Marshal(hopJSON(n.HopNow(rs.hop)))
				a.Resets = append(a.Resets, resetDone{Hop: p.Hops.Names[rs.hop], Change: rs.raw, Seq: h.applied, State: state})
				h.applied++
			}
			if len(resets) == 0 {
				a.Wall = eventWall(x.Events())
			}
		})
		switch {
		case !ok:
			return linkAnswer{Ended: true}
		case moved && attempt < 3:
			continue
		case moved:
			return linkAnswer{Error: linkErr(refuse(http.StatusServiceUnavailable, "", "the schedule kept changing the hops while the reset was written; try again"))}
		}
		return a
	}
}
