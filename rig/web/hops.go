package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig/record"
)

// hopIndex finds a hop by name, or answers 404 naming the hops there are.
func (s *Server) hopIndex(w http.ResponseWriter, name string) (int, bool) {
	hops := s.run.profile.Hops.Names
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
	writeJSON(w, http.StatusOK, s.hopsOf(&snap))
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
	writeJSON(w, http.StatusOK, s.hopsOf(&snap)[i])
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

// changeHop reads the change the request's body makes to its hop
// (parseHopChange) and applies it on the executor, all of it or, when the
// engine refuses a part, none.
func (s *Server) changeHop(w http.ResponseWriter, r *http.Request, source string, toChange func([]byte) ([]byte, []string, []problem, *errChange)) {
	name := r.PathValue("hop")
	i, ok := s.hopIndex(w, name)
	if !ok {
		return
	}
	body, cerr := s.readChange(w, r)
	var raw []byte
	var entry profiles.ScheduleEntry
	if cerr == nil {
		_, raw, entry, cerr = parseHopChange(s.run.profile, strings.Replace(source, "{hop}", name, 1), name, body, toChange)
	}
	if cerr != nil {
		writeRefusal(w, cerr)
		return
	}
	// The event says what changed as the entry does, without its at: the
	// profile language's words for it, however the body was written.
	pre := s.renderEntry(entry)
	s.apply(w, r, change{entry: entry, hop: i}, pre, linkRequest{Op: "change", Hop: name, Change: raw, Source: strings.Replace(source, "{hop}", name, 1), Event: strings.Replace(pre, "at: 0s, ", "", 1)})
}

// parseHopChange reads the change a body makes to hop: toChange turns the
// body into the change in the profile language, whose own code then
// checks it, with its messages. It returns the engine's changes, the
// change in the profile language (which the rig reads again to apply it)
// and the schedule entry that replays them, or a refusal with every problem
// found, in the order of the body's keys: among them a file named (a
// change made live reads none) and a duration longer than the engine
// takes.
func parseHopChange(p *profiles.Loaded, source, hop string, body []byte, toChange func([]byte) ([]byte, []string, []problem, *errChange)) ([]emulator.Scheduled, []byte, profiles.ScheduleEntry, *errChange) {
	change, keys, problems, cerr := toChange(body)
	if cerr != nil {
		return nil, nil, profiles.ScheduleEntry{}, cerr
	}
	var changes []emulator.Scheduled
	var entry profiles.ScheduleEntry
	if files := filesNamed(change); len(files) > 0 {
		// The profile language would read them, and quote them in its
		// errors.
		problems = append(problems, files...)
	} else {
		var err error
		changes, entry, err = p.ParseChange(source, change, hop)
		if err != nil {
			var list lang.ErrorList
			if !errors.As(err, &list) {
				list = lang.ErrorList{{Msg: err.Error()}}
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
	}
	if len(problems) > 0 {
		return nil, nil, profiles.ScheduleEntry{}, refuseAll(keys, problems)
	}
	return changes, change, entry, nil
}

// fileKeys are the keys of a change that name a file to read (a recorded
// series, measured delays), found in the profile language's own types.
var fileKeys = sync.OnceValue(func() map[string]bool {
	return keysNamingFiles(reflect.TypeFor[profiles.LiveChange](), "", map[string]bool{})
})

func keysNamingFiles(t reflect.Type, path string, keys map[string]bool) map[string]bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[profiles.TraceRef]() {
		keys[path] = true // trace: FILE
	}
	if t.Kind() != reflect.Struct {
		return keys
	}
	for i := range t.NumField() {
		f := t.Field(i)
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case !f.IsExported():
			continue
		case f.Anonymous:
			keysNamingFiles(f.Type, path, keys)
			continue
		case key == "":
			continue
		}
		if path != "" {
			key = path + "." + key
		}
		if key == "file" || strings.HasSuffix(key, ".file") {
			keys[key] = true
		}
		keysNamingFiles(f.Type, key, keys)
	}
	return keys
}

// filesNamed returns a problem at each key of a change (a JSON object)
// that names a file. A change made live reads no file on the rig's
// machine: the API would answer what the file holds in its errors, to
// anyone who may change the run.
func filesNamed(change []byte) []problem {
	var v any
	if json.Unmarshal(change, &v) != nil {
		return nil // not JSON: the profile language says what it is
	}
	var problems []problem
	var walk func(v any, path string)
	walk = func(v any, path string) {
		obj, isObject := v.(map[string]any)
		if !isObject {
			if fileKeys()[path] {
				problems = append(problems, problem{Error: path + ": a change made live reads no file on the rig's machine; a recorded series or measured delays are set in the profile", Path: path})
			}
			return
		}
		for k, sub := range obj {
			if path != "" {
				k = path + "." + k
			}
			walk(sub, k)
		}
	}
	walk(v, "")
	slices.SortFunc(problems, func(a, b problem) int { return strings.Compare(a.Path, b.Path) })
	return problems
}

// HopJSON is a hop as every answer gives it: GET /api/v1/hops, a
// change's answer and the stream. Params holds every one of the engine's
// keys (emulator.HopKeys), written as the profile language writes it (the
// profile as it runs, GET /api/v1/profile, writes the same values); a key
// the hop does not have reads as its default ("none"), and one set from a
// file (a recorded series, measured delays) as fromFile. The numbers after
// it are for plots.
type HopJSON struct {
	Name   string         `json:"name"`
	Params map[string]any `json:"params"`
	// Changes counts the changes made to the parameters so far, by the
	// schedule or by hand.
	Changes     uint64  `json:"changes"`
	RateBps     int64   `json:"rate_bps"` // 0: no rate
	DelayS      float64 `json:"delay_s"`
	LossRate    float64 `json:"loss_rate"`        // the long-run fraction the loss model loses
	Outage      string  `json:"outage,omitempty"` // drop or hold while down
	QueueBytes  int64   `json:"queue_bytes"`
	QueueFrames int     `json:"queue_frames"`
	HeldFrames  int     `json:"held_frames"`
}

// fromFile stands for a parameter that only a file gives.
const fromFile = "set from a file (see the profile)"

// hopParams writes every key of p.
func hopParams(p *emulator.HopParams) map[string]any {
	out := make(map[string]any, len(emulator.HopKeys()))
	var none emulator.HopParams
	for _, k := range emulator.HopKeys() {
		switch v, ok := profiles.HopValue(k.Key, p); {
		case ok:
			out[k.Key] = v
		case reflect.DeepEqual(k.Value(p), k.Value(&none)):
			out[k.Key] = k.Default
		default:
			out[k.Key] = fromFile
		}
	}
	return out
}

func hopJSON(h emulator.HopState) HopJSON {
	out := HopJSON{
		Name: h.Name, Params: hopParams(&h.Params), Changes: h.Changes, RateBps: int64(h.Params.Rate), DelayS: h.Params.Delay.Seconds(),
		Outage: outageNames[h.Outage], QueueBytes: h.QueueBytes, QueueFrames: h.QueueFrames, HeldFrames: h.HeldFrames,
	}
	if h.Params.Loss != nil {
		out.LossRate = h.Params.Loss.LossRate()
	}
	return out
}

// paramsCache keeps each hop's parameters as written (hopParams), read
// from the session when a snapshot counts more changes than it has: the
// executor is asked once a change, however many clients read the hops.
type paramsCache struct {
	mu      sync.Mutex
	changes []uint64
	params  []map[string]any
}

// hopsOf is the hops of a snapshot, each with its parameters.
func (s *Server) hopsOf(snap *record.Snapshot) []HopJSON {
	hops := message(snap, "").Hops
	c := &s.params
	c.mu.Lock()
	defer c.mu.Unlock()
	stale := len(c.params) != len(hops)
	for i := range hops {
		stale = stale || hops[i].Changes > c.changes[i]
	}
	if stale {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		a, err := s.run.ask(ctx, linkRequest{Op: "hops"})
		cancel()
		var now []HopJSON
		if err == nil && a.Error == nil && json.Unmarshal(a.Hops, &now) == nil && len(now) == len(hops) {
			c.changes, c.params = make([]uint64, len(now)), make([]map[string]any, len(now))
			for i, h := range now {
				c.changes[i], c.params[i] = h.Changes, h.Params
			}
		}
	}
	for i := range hops {
		if i < len(c.params) {
			hops[i].Params = c.params[i]
		}
	}
	return hops
}
