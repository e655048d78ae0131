package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
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

// patchChange is a PATCH's body as the change it is, but for the keys of
// an outage, which has its own endpoint.
func patchChange(body []byte) ([]byte, *errChange) {
	if key, err := unknownKeys(body, "outage", "hold_limit"); err != nil {
		return nil, refuse(http.StatusBadRequest, key, "%v", err)
	}
	return body, nil
}

// outageChange turns an outage's body into the same change in the profile
// language, which its own code then reads.
func outageChange(body []byte) ([]byte, *errChange) {
	var req struct {
		For       *string `json:"for"`
		Mode      *string `json:"mode"`
		HoldLimit *string `json:"hold_limit"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if req.Mode == nil {
		return nil, refuse(http.StatusBadRequest, "mode", "mode: drop or hold, the outage's")
	}
	change := map[string]string{"outage": *req.Mode}
	if req.For != nil {
		change["for"] = *req.For
	}
	if req.HoldLimit != nil {
		change["hold_limit"] = *req.HoldLimit
	}
	out, _ := json.Marshal(change)
	return out, nil
}

// changeHop reads the change the request's body makes to its hop (toChange
// turns the body into the change in the profile language), checks it as
// the profile language does and applies it on the executor, all of it or,
// when the engine refuses a part, none.
func (s *Server) changeHop(w http.ResponseWriter, r *http.Request, source string, toChange func([]byte) ([]byte, *errChange)) {
	name := r.PathValue("hop")
	i, ok := s.hopIndex(w, name)
	if !ok {
		return
	}
	body, cerr := s.readChange(w, r)
	if cerr == nil {
		body, cerr = toChange(body)
	}
	if cerr != nil {
		writeError(w, cerr.code, cerr.msg, cerr.path)
		return
	}
	changes, entry, err := s.session.Profile().ParseChange(strings.Replace(source, "{hop}", name, 1), body, name)
	if err != nil {
		var list profiles.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			path := list[0].Path
			if path == "outage" {
				path = "mode"
			}
			writeError(w, http.StatusBadRequest, strings.TrimPrefix(list[0].Msg, "change: "), path)
			return
		}
		writeError(w, http.StatusBadRequest, err.Error(), "")
		return
	}
	s.apply(w, r, "hop "+name+": "+strings.TrimSpace(string(body)), func(x *executor.Executor, now time.Duration) (profiles.ScheduleEntry, any, *errChange) {
		if err := x.Network().ApplyNow(changes...); err != nil {
			return profiles.ScheduleEntry{}, nil, refuse(http.StatusConflict, "", "hop %s: %v", name, err)
		}
		entry.At = profiles.Duration(now)
		return entry, hopSettings(x.Network().HopNow(i)), nil
	})
}

// unknownKeys refuses a body's top-level keys that belong to another
// endpoint (the outage's); the profile language reads the rest.
func unknownKeys(body []byte, refused ...string) (string, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return "", nil // not an object: the profile language says so
	}
	for _, k := range refused {
		if _, ok := m[k]; ok {
			return k, fmt.Errorf("%s: an outage is POST /api/v1/hops/{hop}/outage", k)
		}
	}
	return "", nil
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
