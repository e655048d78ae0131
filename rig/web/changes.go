package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig/record"
)

// A change made by hand is applied on the executor between two of its
// events, at the run time it then has; it is recorded as an event of the
// run (in the summary, with its wall-clock time) and as a schedule entry
// of the as-run profile, so that a run steered by hand can be replayed as
// a profile.

// change is a change made by hand as the record keeps it: the schedule
// entry that replays it and, for a change to a hop's parameters, what it
// set them to (set 0: none), for the profile as it runs.
type change struct {
	entry  profiles.ScheduleEntry
	hop    int
	set    emulator.HopField
	params emulator.HopParams
}

// applied is the answer to a change.
type applied struct {
	AtS      float64   `json:"at_s"`      // the run's clock when it took effect
	WallTime time.Time `json:"wall_time"` // the wall clock then
	// QueuedS is how long the change waited for the executor to take it.
	QueuedS float64 `json:"queued_s"`
	// Entry is the change as a schedule entry of the profile language.
	Entry string `json:"entry"`
	// Hop is the hop as it is after the change (hop changes only).
	Hop any `json:"hop,omitempty"`
}

// errChange is a change refused, with its status and where in the request
// the problem is: msg and path are the first problem, all every one when
// the body has several.
type errChange struct {
	code int
	msg  string
	path string
	all  []problem
}

func (e *errChange) Error() string { return e.msg }

// problem is one thing wrong with a request, and where it is.
type problem struct {
	Error string `json:"error"`
	Path  string `json:"path,omitempty"`
}

func refuse(code int, path, format string, args ...any) *errChange {
	return &errChange{code: code, msg: fmt.Sprintf(format, args...), path: path}
}

// refuseAll refuses a body for its problems, in the order of its keys
// (those of no key in it last); keys are its top-level keys in order.
func refuseAll(keys []string, problems []problem) *errChange {
	at := func(p problem) int {
		key, _, _ := strings.Cut(p.Path, ".")
		key, _, _ = strings.Cut(key, "[")
		if i := slices.Index(keys, key); i >= 0 && p.Path != "" {
			return i
		}
		return len(keys)
	}
	slices.SortStableFunc(problems, func(a, b problem) int { return at(a) - at(b) })
	problems = slices.Compact(problems)
	e := &errChange{code: http.StatusBadRequest, msg: problems[0].Error, path: problems[0].Path}
	if len(problems) > 1 {
		e.all = problems
	}
	return e
}

func writeRefusal(w http.ResponseWriter, e *errChange) {
	if e.code == http.StatusTooManyRequests || e.code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, e.code, apiError{Error: e.msg, Path: e.path, Errors: e.all})
}

// readChange checks what every change must be, and reads its body: the
// server not read-only, JSON declared, the body within MaxBody, the run
// going on.
func (s *Server) readChange(w http.ResponseWriter, r *http.Request) ([]byte, *errChange) {
	if s.opt.ReadOnly {
		return nil, refuse(http.StatusForbidden, "", "this server is read-only (--read-only): the run can be watched, not changed")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, refuse(http.StatusRequestEntityTooLarge, "", "the body is over %d bytes; a change is a few hundred", MaxBody)
	}
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "", "reading the body: %v", err)
	}
	if err := checkJSON(r); err != nil && len(body) > 0 {
		return nil, refuse(http.StatusUnsupportedMediaType, "", "%v", err)
	}
	switch s.state() {
	case "waiting":
		return nil, refuse(http.StatusConflict, "", "the run has not started yet")
	case "ended":
		return nil, refuse(http.StatusConflict, "", "the run has ended")
	}
	if err := s.limits.change(); err != nil {
		return nil, err
	}
	return body, nil
}

// jsonObject checks that a body is one JSON object that has no key twice
// (at any depth), and returns its top-level keys in order. An empty body
// is refused with ifEmpty, unless that is "": then it is {}.
func jsonObject(body []byte, ifEmpty string) ([]string, *errChange) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		if ifEmpty != "" {
			return nil, refuse(http.StatusBadRequest, "", "%s", ifEmpty)
		}
		return nil, nil
	}
	if !utf8.Valid(body) {
		at := 0
		for rest := body; len(rest) > 0; {
			r, n := utf8.DecodeRune(rest)
			if r == utf8.RuneError && n <= 1 {
				break
			}
			at, rest = at+n, rest[n:]
		}
		return nil, refuse(http.StatusBadRequest, "", "the body is not valid JSON: not UTF-8 at byte %d", at)
	}
	var raw json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) && strings.Contains(syntaxErr.Error(), "after top-level value") {
			return nil, refuse(http.StatusBadRequest, "", "the body is not valid JSON: it has more than one JSON value (the second at byte %d)", syntaxErr.Offset-1)
		}
		if errors.As(err, &syntaxErr) {
			return nil, refuse(http.StatusBadRequest, "", "the body is not valid JSON: %s (at byte %d)", strings.TrimPrefix(syntaxErr.Error(), "json: "), syntaxErr.Offset)
		}
		return nil, refuse(http.StatusBadRequest, "", "the body is not valid JSON: %v", err)
	}
	if trimmed[0] != '{' {
		return nil, refuse(http.StatusBadRequest, "", "the body is %s, not a JSON object such as {\"for\": \"2s\"}", jsonKind(trimmed[0]))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	var keys []string
	if e := walkJSON(dec, "", &keys); e != nil {
		return nil, e
	}
	return keys, nil
}

// jsonKind names the kind of JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON array"
	case '"':
		return "a JSON string"
	case 'n':
		return "JSON null"
	case 't', 'f':
		return "a JSON boolean"
	}
	return "a JSON number"
}

// walkJSON reads one value of valid JSON and refuses a key given twice in
// an object; the keys of the top-level object go to top.
func walkJSON(dec *json.Decoder, path string, top *[]string) *errChange {
	tok, err := dec.Token()
	if err != nil {
		return refuse(http.StatusBadRequest, path, "the body is not valid JSON: %v", err)
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return refuse(http.StatusBadRequest, path, "the body is not valid JSON: %v", err)
			}
			key, _ := tok.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return refuse(http.StatusBadRequest, at, "%s is given twice", at)
			}
			seen[key] = true
			if path == "" && top != nil {
				*top = append(*top, key)
			}
			if e := walkJSON(dec, at, nil); e != nil {
				return e
			}
		}
		dec.Token() // }
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if e := walkJSON(dec, fmt.Sprintf("%s[%d]", path, i), nil); e != nil {
				return e
			}
		}
		dec.Token() // ]
	}
	return nil
}

// decodeStrict decodes a JSON object into v, refusing unknown keys and
// anything after it; the error names the key at fault. An empty body is
// {}.
func decodeStrict(body []byte, v any) *errChange {
	if _, err := jsonObject(body, ""); err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			return refuse(http.StatusBadRequest, typeErr.Field, "%s: want %s, not a JSON %s", typeErr.Field, jsonType(typeErr.Type.String()), typeErr.Value)
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			key := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return refuse(http.StatusBadRequest, key, "unknown key %q", key)
		}
		return refuse(http.StatusBadRequest, "", "the body is not a JSON object: %v", err)
	}
	return nil
}

// jsonType names a Go type of a request's field as JSON does.
func jsonType(goType string) string {
	if strings.TrimPrefix(goType, "*") == "string" {
		return "a string"
	}
	return goType
}

// apply asks the rig to make the change c, written as q asks it: the
// rig applies it on the executor, between two of its events (its entry's
// at is the instant it took effect); the record keeps it, and the answer
// says when it took effect. pre is c's entry written at 0 (renderEntry).
// A change the record has no room for is refused before it is asked, and
// a change applied is kept even when its answer did not wait for it.
func (s *Server) apply(w http.ResponseWriter, r *http.Request, c change, pre string, q linkRequest) {
	if err := s.asRun.reserve(); err != nil {
		writeRefusal(w, err)
		return
	}
	got := make(chan outcome, 1)
	go func() {
		a, err := s.run.ask(context.Background(), q)
		switch {
		case err != nil || a.Ended:
			got <- outcome{ended: true}
		case a.Error != nil:
			got <- outcome{err: a.Error.change()}
		default:
			got <- outcome{seq: a.Seq, at: time.Duration(a.At), queued: time.Duration(a.Queued), wall: a.Wall, hop: a.Hop}
		}
	}()
	ctx, cancel := context.WithTimeout(r.Context(), applyWait)
	defer cancel()
	res, settled := s.await(ctx, got)
	if !settled {
		go func() {
			res, _ := s.await(context.Background(), got)
			s.settle(res, c, pre)
		}()
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("the executor did not take the change in %v; should it take it, the run's events and as-run profile will have it", applyWait), "")
		return
	}
	line := s.settle(res, c, pre)
	switch {
	case res.ended:
		writeError(w, http.StatusConflict, "the run ended before the change could be applied", "")
	case res.err != nil:
		writeRefusal(w, res.err)
	default:
		var hop any
		if res.hop != nil {
			hop = res.hop
		}
		writeJSON(w, http.StatusOK, applied{AtS: res.at.Seconds(), WallTime: res.wall, QueuedS: res.queued.Seconds(), Entry: line, Hop: hop})
	}
}

// applyWait is how long a change's answer waits for the executor; a
// variable for tests.
var applyWait = 5 * time.Second

// outcome is what became of a change posted to the executor.
type outcome struct {
	err   *errChange // refused there
	ended bool       // the run ended before it was applied
	// Applied: its number in the order applied, when, after how long a
	// wait, the wall clock then, and the answer's hop.
	seq    uint64
	at     time.Duration
	queued time.Duration
	wall   time.Time
	hop    json.RawMessage
}

// await waits for the outcome of a change asked, until ctx is done
// (false).
func (s *Server) await(ctx context.Context, got <-chan outcome) (outcome, bool) {
	select {
	case res := <-got:
		return res, true
	case <-ctx.Done():
		return outcome{}, false
	}
}

// settle keeps a change applied in the record, with its entry at the
// instant it took effect, and returns the entry's line; or frees the
// record's room for a change not applied.
func (s *Server) settle(res outcome, c change, pre string) string {
	if res.ended || res.err != nil {
		s.asRun.release()
		return ""
	}
	c.entry.At = lang.Duration(res.at)
	line, ok := entryAt(pre, res.at)
	if !ok {
		line = s.renderEntry(c.entry)
	}
	s.asRun.keep(res.seq, line, c)
	return line
}

// eventWall is the wall-clock time of the last of the run's events: the
// instant of its run time on a real (or paced) clock, or now in virtual
// time, which has no wall clock.
func eventWall(events []record.Event) time.Time {
	if n := len(events); n > 0 && events[n-1].Wall != "" {
		if t, err := time.Parse(time.RFC3339Nano, events[n-1].Wall); err == nil {
			return t
		}
	}
	return time.Now()
}

// phaseName is what a phase may be called: it names windows in reports.
// Compiled at the first phase posted: its bounded repetition compiles to
// 760 allocations, three quarters of what the package did at every
// command's start.
var phaseName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })

// postPhase marks a named phase from now, for `for` or until the end:
// the frames sent meanwhile are counted under it in the summary.
func (s *Server) postPhase(w http.ResponseWriter, r *http.Request) {
	body, err := s.readChange(w, r)
	if err != nil {
		writeRefusal(w, err)
		return
	}
	name := r.PathValue("name")
	length, perr := parsePhase(name, body)
	if perr != nil {
		writeRefusal(w, perr)
		return
	}
	detail := "phase " + name
	entry := profiles.ScheduleEntry{Phase: profiles.PhaseName(name)}
	if length > 0 {
		detail += " for " + lang.Duration(length).String()
		entry.For = ptr(lang.Duration(length))
	}
	s.apply(w, r, change{entry: entry}, s.renderEntry(entry), linkRequest{Op: "phase", Phase: name, For: int64(length), Event: detail})
}

// parsePhase reads a phase's name and body: how long it lasts (0: until
// the end).
func parsePhase(name string, body []byte) (time.Duration, *errChange) {
	if !phaseName().MatchString(name) {
		return 0, refuse(http.StatusBadRequest, "name", "%q is not a phase name: letters, digits, '_', '.' and '-', up to 64", name)
	}
	var req struct {
		For *string `json:"for"`
	}
	if err := decodeStrict(body, &req); err != nil {
		return 0, err
	}
	if req.For == nil {
		return 0, nil
	}
	d, err := lang.ParseDuration(*req.For)
	if err == nil && d <= 0 {
		err = errors.New("must be positive")
	}
	if err != nil {
		return 0, refuse(http.StatusBadRequest, "for", "for: %v", err)
	}
	return d, nil
}

func ptr[T any](v T) *T { return &v }

// renderEntry writes a schedule entry as a profile would: it is the
// schedule line of a profile that has only that entry, rendered by the
// profile language's own renderer.
func (s *Server) renderEntry(e profiles.ScheduleEntry) string {
	p := *s.run.profile
	prof := *p.Profile
	prof.Schedule = []profiles.ScheduleEntry{e}
	p.Profile = &prof
	_, schedule, _ := strings.Cut(string(p.YAML()), "\nschedule:\n")
	line, _, _ := strings.Cut(schedule, "\n")
	return strings.TrimPrefix(strings.TrimSpace(line), "- ")
}
