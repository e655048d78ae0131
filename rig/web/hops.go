package web

import (
	"bytes"
	"encoding/json"
	"errors"
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
	"github.com/hilrig/hilrig/rig/record"
)

// hopIndex finds a hop by name, or answers 404 naming the hops there are.
func (s *Server) hopIndex(w http.ResponseWriter, name string) (int, bool) {
	hops := s.session.Profile().Hops.Names
	for i, h := range hops {
		if h == name {
			return i, true
		}
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no hop named %q%s; the hops are %s", name, suggest.DidYouMean(name, hops), strings.Join(hops, ", ")), "hop")
	return 0, false
}

// getHops answers the hops as they are now: their settings and what they
// hold, as of the latest snapshot.
func (s *Server) getHops(w http.ResponseWriter, r *http.Request) {
	var snap record.Snapshot
	s.mon.Read(&snap)
	writeJSON(w, http.StatusOK, message(&snap, "").Hops)
}

func (s *Server) getHop(w http.ResponseWriter, r *http.Request) {
	i, ok := s.hopIndex(w, r.PathValue("hop"))
	if !ok {
		return
	}
	var snap record.Snapshot
	if !s.mon.Read(&snap) || i >= len(snap.Hops) {
		writeError(w, http.StatusServiceUnavailable, "the run has published nothing yet", "")
		return
	}
	writeJSON(w, http.StatusOK, message(&snap, "").Hops[i])
}

// patchHop changes a hop's parameters now, as a profile writes them
// (`{"rate": "2Mbit", "loss": {"random": "5%"}}`), with "for" to undo the
// change after a while; it answers the hop as it is then.
func (s *Server) patchHop(w http.ResponseWriter, r *http.Request) {
	s.changeHop(w, r, "PATCH /api/v1/hops/{hop}", patchChange)
}

// postOutage takes a hop's output down now: `{"for": "2s", "mode":
// "hold"}` (mode drop or hold; without for, until the end).
func (s *Server) postOutage(w http.ResponseWriter, r *http.Request) {
	s.changeHop(w, r, "POST /api/v1/hops/{hop}/outage", outageChange)
}

// emptyPatch answers a PATCH without a body.
const emptyPatch = `the body is empty: give the hop's parameters to change, e.g. {"delay": "50ms"}`

// patchChange is a PATCH's body as the change it is, but for the keys of
// an outage, which has its own endpoint; keys are its keys in order.
func patchChange(body []byte) (change []byte, keys []string, problems []problem, err *errChange) {
	if keys, err = jsonObject(body, emptyPatch); err != nil {
		return nil, nil, nil, err
	}
	for _, k := range keys {
		if k == "outage" || k == "hold_limit" {
			problems = append(problems, problem{Error: k + ": an outage is POST /api/v1/hops/{hop}/outage", Path: k})
		}
	}
	return body, keys, problems, nil
}

// outageKeys are the keys of an outage's body.
var outageKeys = []string{"for", "mode", "hold_limit"}

// outageChange turns an outage's body into the same change in the profile
// language, which its own code then reads; keys are the body's keys in
// order. When the body has problems, the change still holds the rest of
// it (with a mode), for the profile language to find more.
func outageChange(body []byte) (change []byte, keys []string, problems []problem, err *errChange) {
	if keys, err = jsonObject(body, ""); err != nil {
		return nil, nil, nil, err
	}
	var fields map[string]json.RawMessage
	if len(keys) > 0 {
		json.Unmarshal(body, &fields) // jsonObject found it an object
	}
	out := map[string]string{"outage": "drop"}
	for _, k := range keys {
		var v string
		switch {
		case !slices.Contains(outageKeys, k):
			hint := ""
			if k == "outage" {
				hint = ` (the outage's mode is "mode")`
			} else if _, ok := reflect.TypeFor[profiles.HopSettings]().FieldByNameFunc(func(n string) bool { return strings.EqualFold(strings.ReplaceAll(k, "_", ""), n) }); ok {
				hint = "; a hop's parameters are changed with PATCH /api/v1/hops/{hop}"
			}
			problems = append(problems, problem{Error: fmt.Sprintf("unknown key %q: an outage takes %s%s", k, strings.Join(outageKeys, ", "), hint), Path: k})
		case json.Unmarshal(fields[k], &v) != nil:
			problems = append(problems, problem{Error: fmt.Sprintf("%s: want a string such as %s, not %s", k, outageExample[k], jsonKind(bytes.TrimSpace(fields[k])[0])), Path: k})
		case k == "mode":
			out["outage"] = v
		default:
			out[k] = v
		}
	}
	if !slices.Contains(keys, "mode") {
		problems = append(problems, problem{Error: `mode is required: drop or hold (e.g. {"mode": "hold", "for": "2s"})`, Path: "mode"})
	}
	change, _ = json.Marshal(out)
	return change, keys, problems, nil
}

var outageExample = map[string]string{"for": `"2s"`, "mode": `"drop" or "hold"`, "hold_limit": `"50 frames"`}

// changeHop reads the change the request's body makes to its hop (toChange
// turns the body into the change in the profile language), checks it as
// the profile language does and applies it on the executor, all of it or,
// when the engine refuses a part, none. A body with problems is refused
// with every one found, in the order of its keys.
func (s *Server) changeHop(w http.ResponseWriter, r *http.Request, source string, toChange func([]byte) ([]byte, []string, []problem, *errChange)) {
	name := r.PathValue("hop")
	i, ok := s.hopIndex(w, name)
	if !ok {
		return
	}
	body, cerr := s.readChange(w, r)
	var keys []string
	var problems []problem
	if cerr == nil {
		body, keys, problems, cerr = toChange(body)
	}
	if cerr != nil {
		writeRefusal(w, cerr)
		return
	}
	changes, entry, err := s.session.Profile().ParseChange(strings.Replace(source, "{hop}", name, 1), body, name)
	if err != nil {
		var list profiles.ErrorList
		if !errors.As(err, &list) {
			list = profiles.ErrorList{{Msg: err.Error()}}
		}
		for _, e := range list {
			p := problem{Error: strings.TrimPrefix(e.Msg, "change: "), Path: e.Path}
			if p.Path == "outage" {
				p.Path = "mode"
			}
			if p.Path != "" && !strings.HasPrefix(p.Error, p.Path+":") {
				p.Error = p.Path + ": " + p.Error
			}
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		writeRefusal(w, refuseAll(keys, problems))
		return
	}
	c := change{entry: entry, hop: i}
	for _, ch := range changes {
		if set, ok := ch.Change.(emulator.SetHop); ok {
			c.set, c.params = set.Set, set.Params
		}
	}
	s.apply(w, r, "hop "+name+": "+strings.TrimSpace(string(body)), func(x *executor.Executor, now time.Duration) (change, any, *errChange) {
		if err := x.Network().ApplyNow(changes...); err != nil {
			return change{}, nil, refuse(http.StatusConflict, "", "hop %s: %v", name, err)
		}
		c.entry.At = profiles.Duration(now)
		return c, hopSettings(x.Network().HopNow(i)), nil
	})
}

// HopSettingsJSON is a hop as a change leaves it: its parameters and what
// it holds.
type HopSettingsJSON struct {
	Name        string  `json:"name"`
	RateBps     int64   `json:"rate_bps"` // 0: no rate
	DelayS      float64 `json:"delay_s"`
	DelayTrace  bool    `json:"delay_trace,omitempty"` // the delay replays a recorded series
	PerFrameS   float64 `json:"per_frame_s,omitempty"`
	Queue       string  `json:"queue"` // unlimited, 30000B, 50 frames
	OverheadB   int     `json:"overhead_bytes"`
	Loss        string  `json:"loss"` // none, random, gilbert, markov4, trace
	LossRate    float64 `json:"loss_rate"`
	Jitter      bool    `json:"jitter"`
	Duplicate   float64 `json:"duplicate"`
	Outage      string  `json:"outage,omitempty"` // drop or hold while down
	QueueBytes  int64   `json:"queue_bytes"`
	QueueFrames int     `json:"queue_frames"`
	HeldFrames  int     `json:"held_frames"`
}

var lossNames = map[reflect.Type]string{
	reflect.TypeFor[emulator.Bernoulli]():      "random",
	reflect.TypeFor[emulator.GilbertElliott](): "gilbert",
	reflect.TypeFor[emulator.Markov4]():        "markov4",
	reflect.TypeFor[emulator.LossTrace]():      "trace",
}

func hopSettings(h emulator.HopState) HopSettingsJSON {
	p := h.Params
	out := HopSettingsJSON{
		Name: h.Name, RateBps: int64(p.Rate), DelayS: p.Delay.Seconds(), DelayTrace: p.DelayTrace != nil, PerFrameS: p.PerFrame.Seconds(),
		Queue: profiles.Limit(p.Queue).String(), OverheadB: p.Overhead, Loss: "none", Jitter: p.Jitter.Dist != nil, Duplicate: p.Duplicate,
		Outage: outageNames[h.Outage], QueueBytes: h.QueueBytes, QueueFrames: h.QueueFrames, HeldFrames: h.HeldFrames,
	}
	if p.Loss != nil {
		out.Loss, out.LossRate = lossNames[reflect.TypeOf(p.Loss)], p.Loss.LossRate()
	}
	return out
}
