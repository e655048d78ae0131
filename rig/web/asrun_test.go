package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// pacedServer serves a virtual run of text paced to the wall clock, as
// `sim --realtime-view` does, until the test ends.
func pacedServer(tb testing.TB, text string) *Server {
	tb.Helper()
	p, err := profiles.Parse("p.yaml", []byte(text))
	if err != nil {
		tb.Fatal(err)
	}
	mon := &record.Monitor{}
	s, err := rig.Open(p, nil, rig.Virtual, rig.Options{Paced: true, Monitor: mon})
	if err != nil {
		tb.Fatal(err)
	}
	srv := New(s, mon, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	for srv.state() != "running" || srv.mon.Seq() == 0 {
		time.Sleep(time.Millisecond)
	}
	return srv
}

const longLink = "duration: 100h\nhops:\n  link: {rate: 1Mbit, delay: 5ms}\nflows:\n  f: {route: [link], traffic: {cbr: {interval: 10ms, size: 100B}}}\nschedule:\n  - {at: 50h, for: 1s, hop: link, delay: 1s}\n"

// serve sends srv a request from the loopback and returns the answer.
func serve(srv *Server, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1"
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	srv.ServeHTTP(w, req)
	return w
}

// TestAsRunRecordKeepsTheOrderApplied: changes settled out of the order
// the executor applied them in (their answers race for the record) are
// kept in the order applied: two changes at one instant replay as they
// were applied, the later winning.
func TestAsRunRecordKeepsTheOrderApplied(t *testing.T) {
	var r asRunRecord
	for range 4 {
		if err := r.reserve(); err != nil {
			t.Fatal(err)
		}
	}
	delay := func(d time.Duration) change {
		return change{hop: 0, set: emulator.FieldDelay, params: emulator.HopParams{Delay: d}}
	}
	r.keep(2, "{at: 1s, hop: link, delay: 3ms}", delay(3*time.Millisecond))
	r.keep(1, "{at: 1s, hop: link, delay: 2ms}", delay(2*time.Millisecond))
	if got := string(r.entries()); got != "" {
		t.Errorf("kept before the first applied: %q", got)
	}
	r.keep(0, "{at: 1s, hop: link, delay: 1ms}", delay(time.Millisecond))
	r.release()
	want := "{at: 1s, hop: link, delay: 1ms}\n{at: 1s, hop: link, delay: 2ms}\n{at: 1s, hop: link, delay: 3ms}\n"
	if got := string(r.entries()); got != want || r.kept != 3 || r.reserved != 0 || len(r.early) != 0 {
		t.Errorf("kept %d, reserved %d, early %d:\n%s", r.kept, r.reserved, len(r.early), got)
	}
}

// TestAsRunRecordIsBounded: the record takes MaxChanges changes, counting
// those on their way; the next is refused with 409 and a message that
// says why, until a change on its way turns out not to be applied.
func TestAsRunRecordIsBounded(t *testing.T) {
	var r asRunRecord
	for i := range MaxChanges {
		if err := r.reserve(); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		if i < MaxChanges-1 {
			r.keep(uint64(i), "{at: 1s, phase: p}", change{})
		}
	}
	err := r.reserve()
	if err == nil || err.code != http.StatusConflict || !strings.Contains(err.msg, "100000 changes made by hand, the most it keeps: its as-run profile replays every one") {
		t.Fatalf("change %d: %+v", MaxChanges+1, err)
	}
	r.release()
	if err := r.reserve(); err != nil {
		t.Errorf("after a change not applied: %v", err)
	}
}

// TestFullRecordRefusesAChange: on a run whose record is full, a change
// is refused before it is applied: 409, the hop as it was, no event.
func TestFullRecordRefusesAChange(t *testing.T) {
	srv := pacedServer(t, longLink)
	srv.asRun.mu.Lock()
	srv.asRun.kept = MaxChanges
	srv.asRun.mu.Unlock()
	for _, tc := range []struct{ method, path, body string }{
		{"PATCH", "/api/v1/hops/link", `{"delay": "80ms"}`},
		{"POST", "/api/v1/hops/link/outage", `{"mode": "drop"}`},
		{"POST", "/api/v1/phases/p", ``},
	} {
		if w := serve(srv, tc.method, tc.path, tc.body); w.Code != http.StatusConflict || !strings.Contains(w.Body.String(), "the most it keeps") {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, w.Code, w.Body)
		}
	}
	hop := serve(srv, "GET", "/api/v1/hops/link", "").Body.String()
	if evs := serve(srv, "GET", "/api/v1/events", "").Body.String(); strings.TrimSpace(evs) != "[]" || !strings.Contains(hop, `"delay_s": 0.005`) {
		t.Errorf("events %s; hop %s", evs, hop)
	}
}

// TestChangeKeptAfterItsAnswerGaveUp: a change the executor takes after
// its answer stopped waiting (503) is kept all the same: the as-run
// profile replays what happened.
func TestChangeKeptAfterItsAnswerGaveUp(t *testing.T) {
	srv := pacedServer(t, longLink)
	defer func(wait time.Duration) { applyWait = wait }(applyWait)
	applyWait = 50 * time.Millisecond
	release := make(chan struct{})
	srv.host.s.Executor().Post(func(*executor.Executor, time.Duration) { <-release })
	w := serve(srv, "PATCH", "/api/v1/hops/link", `{"delay": "80ms"}`)
	close(release)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(serve(srv, "GET", "/api/v1/profile?as-run", "").Body.String(), "hop: link, delay: 80ms}"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the change applied late is not in the as-run profile:\n%s", serve(srv, "GET", "/api/v1/profile?as-run", "").Body)
		}
	}
	if w := serve(srv, "PATCH", "/api/v1/hops/link", `{"delay": "90ms"}`); w.Code != http.StatusOK {
		t.Errorf("the next change: %d %s", w.Code, w.Body)
	}
	asRun := serve(srv, "GET", "/api/v1/profile?as-run", "").Body.String()
	if strings.Count(asRun, "hop: link, delay: 80ms}") != 1 || !strings.Contains(asRun, "hop: link, delay: 90ms}") {
		t.Errorf("as-run:\n%s", asRun)
	}
}

// TestEntryAt: an entry's line at an instant, made from its line at 0,
// is the line the profile language writes for it at that instant.
func TestEntryAt(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte(longLink))
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{run: &remote{profile: p}}
	var entries []profiles.ScheduleEntry
	for _, body := range []string{`{"delay": "80ms", "loss": {"random": "5%"}}`, `{"rate": {"baud": 9600, "format": "7E1"}, "for": "2s"}`,
		`{"loss": {"gilbert": {"p": "1%", "r": "30%", "loss_bad": "90%", "loss_good": "0.1%"}}, "jitter": {"dist": "pareto", "mean": "2ms", "sigma": "1ms", "correlation": 0.25}}`, `{"outage": "hold", "for": "1s", "hold_limit": "5 frames"}`} {
		_, e, err := p.ParseChange("x", []byte(body), "link")
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	entries = append(entries, profiles.ScheduleEntry{Phase: "by-hand"}, profiles.ScheduleEntry{Phase: "p", For: ptr(lang.Duration(time.Second))})
	for _, e := range entries {
		pre := s.renderEntry(e)
		for _, at := range []time.Duration{0, 1, 1500 * time.Millisecond, 123456789123, emulator.MaxDuration} {
			e.At = lang.Duration(at)
			got, ok := entryAt(pre, at)
			if want := s.renderEntry(e); !ok || got != want {
				t.Errorf("at %v: %q, want %q", at, got, want)
			}
		}
	}
}

func mustOpen(t *testing.T, p *profiles.Loaded) *rig.Session {
	t.Helper()
	s, err := rig.Open(p, nil, rig.Virtual, rig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAsRunProfileAsWritten: the as-run profile, its changes' lines
// written into the profile's own, is the profile the profile language
// writes with those entries in its schedule, byte for byte, with or
// without a schedule of its own.
func TestAsRunProfileAsWritten(t *testing.T) {
	for _, text := range []string{longLink, strings.Split(longLink, "schedule:")[0]} {
		p, err := profiles.Parse("p.yaml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{run: &remote{profile: p}}
		prof := *p.Profile
		var lines []byte
		for i, body := range []string{`{"delay": "80ms"}`, `{"outage": "drop", "for": "1s"}`, `{"loss": {"random": "1%"}}`} {
			_, e, err := p.ParseChange("x", []byte(body), "link")
			if err != nil {
				t.Fatal(err)
			}
			e.At = lang.Duration(time.Duration(i+1) * 1234567)
			prof.Schedule = append(prof.Schedule, e)
			lines = append(append(lines, s.renderEntry(e)...), '\n')
		}
		all := *p
		all.Profile = &prof
		want := all.YAML()

		marked := *p.Profile
		marked.Schedule = append(marked.Schedule, asRunMarker)
		all.Profile = &marked
		got, err := spliceChanges(all.YAML(), s.renderEntry(asRunMarker), lines)
		if err != nil || string(got) != string(want) {
			t.Errorf("%v:\n%s\nwant\n%s", err, got, want)
		}
	}
}

// BenchmarkChangeKept makes changes to a hop of a paced run through the
// API, as fast as it takes them, and reports the memory each change
// leaves kept for the rest of the run (the heap after a collection,
// whatever keeps it: the as-run record, the engine, the run's events) and
// the record's own bytes for it. BENCHMARKS.md quotes it.
func BenchmarkChangeKept(b *testing.B) {
	srv := pacedServer(b, longLink)
	bodies := [2]string{`{"delay": "80ms", "loss": {"random": "5%"}}`, `{"delay": "20ms", "loss": {"random": "1%"}}`}
	patch := func(i int) {
		if w := serve(srv, "PATCH", "/api/v1/hops/link", bodies[i%2]); w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
	patch(0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	recordBefore := len(srv.asRun.entries())
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		patch(i)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "B-kept/change")
	b.ReportMetric(float64(len(srv.asRun.entries())-recordBefore)/float64(b.N), "record-B/change")
	var answer applied
	if w := serve(srv, "PATCH", "/api/v1/hops/link", bodies[0]); json.Unmarshal(w.Body.Bytes(), &answer) != nil || !strings.HasPrefix(answer.Entry, "{at: ") {
		b.Fatal(fmt.Sprint(w.Code, w.Body))
	}
}
