package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/web"
)

// appliedChange is the answer to a change.
type appliedChange struct {
	AtS     float64 `json:"at_s"`
	QueuedS float64 `json:"queued_s"`
	Entry   string
	Hop     json.RawMessage
}

func (l *live) change(method, path, body string) appliedChange {
	l.t.Helper()
	code, answer := l.request(method, path, body)
	var a appliedChange
	if err := json.Unmarshal([]byte(answer), &a); code != 200 || err != nil {
		l.t.Fatalf("%s %s %s: %d %v: %s", method, path, body, code, err, answer)
	}
	return a
}

// TestPatchDuringRealTimeRun changes the delay of the controller's hop
// from 20 ms to 80 ms while the virtual bench runs in real time, a frame
// each way every 2 ms (the exchange period of this bench). The change
// waits for the executor less than one exchange period, and the trace
// shows it at the instant it took effect: every frame sent before it
// is due 20 ms after it was sent, every frame sent from then on 80 ms.
func TestPatchDuringRealTimeRun(t *testing.T) {
	const period = 2 * time.Millisecond
	trace := filepath.Join(t.TempDir(), "trace.csv")
	l := liveRun{profile: twoWay, period: period, trace: trace, priority: 80}.start(t)
	l.waitFor("half a second", func(s *record.Snapshot) bool { return s.Time > 500*time.Millisecond })
	a := l.change("PATCH", "/api/v1/hops/down", `{"delay": "80ms"}`)
	at := time.Duration(a.AtS * 1e9).Round(time.Nanosecond)
	if a.QueuedS <= 0 || a.QueuedS > period.Seconds() {
		t.Errorf("the change waited %v s for the executor; the exchange period is %v", a.QueuedS, period)
	}
	l.waitFor("the new delay", func(s *record.Snapshot) bool { return s.Time > at+300*time.Millisecond })
	l.stop()
	rows, due := readRunTrace(t, trace)
	before, after := 0, 0
	for i, r := range rows {
		if r.flow != "m2s" || due[i] < 0 {
			continue
		}
		want := 20 * time.Millisecond
		if r.sent >= at {
			want, after = 80*time.Millisecond, after+1
		} else {
			before++
		}
		if got := due[i] - r.sent; got != want {
			t.Errorf("frame %d sent at %v (the change at %v): due %v after, want %v", r.seq, r.sent, at, got, want)
		}
	}
	if before < 100 || after < 50 {
		t.Errorf("%d frames before the change and %d after", before, after)
	}
}

// TestAsRunReplays steers a paced simulation, shortened to 3 s of the
// profile's 30 (as --duration does) and with a seed of its own (--seed),
// by hand (a rate, a loss, an outage, a phase, a rate for a while) and
// replays the as-run profile in virtual time as it is: the traces are the
// same, byte for byte. A paced run records what the virtual run records,
// each change took effect at the instant its schedule entry names, and
// the as-run profile lasts as long as the run and has its seed.
// Meanwhile the plain profile shows the hop's parameters as they are at
// the instant it names.
func TestAsRunReplays(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	const length = 3 * time.Second
	mon := &record.Monitor{}
	var paced strings.Builder
	seed := uint64(7) // not the profile's, as --seed 7
	s, err := rig.Open(p, nil, rig.Virtual, rig.Options{Trace: &paced, Duration: length, Seed: &seed, Paced: true, Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	srv := web.New(s, mon, web.Options{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	l := &live{t: t, srv: srv, http: hs, url: hs.URL, mon: mon, done: make(chan error, 1)}
	var ctx context.Context
	ctx, l.cancel = context.WithCancel(context.Background())
	go func() { _, err := srv.Run(ctx); l.done <- err }()
	defer l.stop()
	l.waitFor("the run to start", func(s *record.Snapshot) bool { return true })
	hop := p.Hops.Names[0]
	steps := []struct {
		after              time.Duration
		method, path, body string
	}{
		{500 * time.Millisecond, "PATCH", "/api/v1/hops/" + hop, `{"rate": "2Mbit", "loss": {"random": "5%"}}`},
		{1200 * time.Millisecond, "POST", "/api/v1/hops/" + hop + "/outage", `{"for": "300ms", "mode": "hold"}`},
		{1300 * time.Millisecond, "POST", "/api/v1/phases/by-hand", `{"for": "1s"}`},
		{2000 * time.Millisecond, "PATCH", "/api/v1/hops/" + hop, `{"delay": "50ms", "jitter": {"dist": "normal", "sigma": "5ms"}}`},
	}
	for _, st := range steps {
		l.waitFor(st.after.String(), func(s *record.Snapshot) bool { return s.Time >= st.after })
		l.change(st.method, st.path, st.body)
	}
	// The rate the hop has now: 1 Mbit/s for 600 ms from the change, 2
	// Mbit/s before and after it.
	at := l.change("PATCH", "/api/v1/hops/"+hop, `{"rate": "1Mbit", "for": "600ms"}`).AtS
	for range 2 {
		code, now := l.request("GET", "/api/v1/profile", "")
		if code != 200 {
			t.Fatalf("%d %s", code, now)
		}
		var seen float64
		if _, err := fmt.Sscanf(now, "# bottleneck as it runs at %g s of the run", &seen); err != nil {
			t.Fatalf("%v: %s", err, now)
		}
		rate := "2Mbit"
		if seen >= at && seen < at+0.6 {
			rate = "1Mbit"
		}
		current, err := profiles.Parse("now.yaml", []byte(now))
		if err != nil {
			t.Fatalf("%v\n%s", err, now)
		}
		h := current.Config.Hops[current.Hops.Index(hop)]
		if got := h.Rate.String(); got != rate || h.Loss != (emulator.Bernoulli{P: 0.05}) || current.RunDuration() != length {
			t.Errorf("at %v s (the 1 Mbit/s change at %v s): rate %s, loss %v, duration %v; want %s, 5%%, %v:\n%s", seen, at, got, h.Loss, current.RunDuration(), rate, length, now)
		}
		for i, other := range current.Config.Hops {
			if other.Name != hop && !reflect.DeepEqual(other, p.Config.Hops[i]) {
				t.Errorf("hop %s, unchanged, is %+v in the profile as it runs; %+v in the profile", other.Name, other, p.Config.Hops[i])
			}
		}
		if strings.Contains(now, "not shown") {
			t.Errorf("%s", now)
		}
		l.waitFor("the end of the change", func(s *record.Snapshot) bool { return s.Time.Seconds() >= at+0.7 })
	}
	code, asRun := l.request("GET", "/api/v1/profile?as-run", "")
	if code != 200 {
		t.Fatalf("%d %s", code, asRun)
	}
	if err := <-l.done; err != nil {
		t.Fatal(err)
	}
	l.done <- nil
	path := filepath.Join(t.TempDir(), "as-run.yaml")
	if err := os.WriteFile(path, []byte(asRun), 0o644); err != nil {
		t.Fatal(err)
	}
	replay, err := profiles.Load(path)
	if err != nil {
		t.Fatalf("the as-run profile does not load: %v\n%s", err, asRun)
	}
	var virtual strings.Builder
	if replay.RunDuration() != length {
		t.Errorf("the as-run profile lasts %v; the run, %v", replay.RunDuration(), length)
	}
	if _, err := rig.Sim(replay, nil, rig.Options{Trace: &virtual}); err != nil {
		t.Fatal(err)
	}
	if virtual.String() != paced.String() {
		t.Errorf("the replay's trace (%d bytes) differs from the run's (%d bytes); as-run profile:\n%s", virtual.Len(), paced.Len(), asRun)
	}
	// The changes; not the profile's own outage, at 20 s: the run ended
	// before.
	if n := strings.Count(asRun, "\n- {at: "); n != 1+len(steps) {
		t.Errorf("%d schedule entries in the as-run profile:\n%s", n, asRun)
	}
}

// TestDashboardInBrowser opens the dashboard on a running virtual bench in
// headless Chromium: the delay plot moves as telemetry arrives; the hop
// the controller's frames cross is changed from 20 ms to 80 ms with the
// page's control strip, and the frames' measured delay follows. A
// screenshot of the dashboard goes to the test's artifact directory
// (go test -artifacts).
func TestDashboardInBrowser(t *testing.T) {
	ctx := browser(t)
	l := startLive(t, twoWay, web.Options{})
	if err := chromedp.Do(ctx, chromedp.Navigate(l.url+"/")); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "telemetry in the page", `hilrig.messages > 5 && hilrig.plots.delay.points() > 10`)
	// The plot's pixels, and how many points it holds.
	look := func() (image string, points int) {
		image, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("plot-delay").toDataURL()`))
		if err == nil {
			points, err = chromedp.Run(ctx, chromedp.Evaluate[int](`hilrig.plots.delay.points()`))
		}
		if err != nil {
			t.Fatal(err)
		}
		return image, points
	}
	before, pointsBefore := look()
	evaluateUntil(t, ctx, "more telemetry", `hilrig.messages > 15`)
	after, pointsAfter := look()
	if before == after || pointsAfter <= pointsBefore {
		t.Errorf("the delay plot did not move: %d points, then %d", pointsBefore, pointsAfter)
	}

	// The control strip: hop down (the controller's frames to the plant),
	// delay 80 ms.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("hop"), "down"),
		chromedp.SendKeys(chromedp.ID("delay"), "80ms"),
		chromedp.Click(chromedp.ID("apply")),
	); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "the change to be answered", `document.getElementById("message").textContent.includes("hop down changed")`)
	// Answered, the change has taken effect: from then on a frame sent
	// before it arrives within the old delay, and one sent after it 80 ms
	// later. (Timed from the typing, a browser slow to type on a loaded
	// machine, 160 ms, let old frames in.)
	changed := time.Now()
	evaluateUntil(t, ctx, "the delay plot to follow", `(() => { const f = hilrig.last.flows.find((f) => f.name === "m2s"); return f.delay_s && Math.abs(f.delay_s.p50 - 0.08) < 0.0001; })()`)
	// Frames arriving 100 ms after the answer were all sent after the
	// change took effect: each took the new 80 ms, plus how late it was
	// released.
	time.Sleep(300 * time.Millisecond)
	got := l.plant.since(time.Duration(changed.Add(100 * time.Millisecond).UnixNano()))
	if len(got) < 20 {
		t.Fatalf("%d frames after the change", len(got))
	}
	var delays []time.Duration
	for _, r := range got {
		delays = append(delays, r.delay)
	}
	slices.Sort(delays)
	// The pinger stamps a frame with the wall clock when the executor runs
	// it, up to its wake-up lateness after the instant the executor
	// stamps it with (and releases it 80 ms after): a frame may seem that
	// much early, a millisecond at the most on a loaded machine.
	if med := delays[len(delays)/2]; delays[0] < 79*time.Millisecond || med < 80*time.Millisecond-100*time.Microsecond || med > 81*time.Millisecond {
		t.Errorf("after the change the frames took %v to %v (median %v), want 80 ms", delays[0], delays[len(delays)-1], med)
	}
	// An outage from the page, for the picture.
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("outage-for"), "1s"), chromedp.Click(chromedp.ID("outage"))); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "the outage", `document.getElementById("message").textContent.includes("down at")`)
	time.Sleep(2 * time.Second)
	screenshot(t, ctx, "dashboard.png")
	events, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("events")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(events, "down") {
		t.Errorf("the page's events: %q", events)
	}
}

// TestHopChangeMistakes: a wrong hop change gets a 4xx whose JSON error
// says what the profile language says, at the key at fault, and changes
// nothing: the hop is as it was afterwards.
func TestHopChangeMistakes(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	_, before := l.request("GET", "/api/v1/hops/down", "")
	for _, tc := range []struct {
		method, path, body string
		code               int
		want, at           string
	}{
		{"PATCH", "/api/v1/hops/dwn", `{"delay": "80ms"}`, 404, `no hop named \"dwn\"; did you mean down?`, "hop"},
		{"PATCH", "/api/v1/hops/down", `{"rate": "fast"}`, 400, `\"fast\" is not a rate`, "rate"},
		{"PATCH", "/api/v1/hops/down", `{"loss": {"randm": "5%"}}`, 400, "want one of random, gilbert, markov4, trace", "loss"},
		{"PATCH", "/api/v1/hops/down", `{"loss": {"random": "150%"}}`, 400, "", "loss.random"},
		{"PATCH", "/api/v1/hops/down", `{"delay": "80ms", "for": "-1s"}`, 400, "", "for"},
		{"PATCH", "/api/v1/hops/down", `{"outage": "hold"}`, 400, "POST /api/v1/hops/{hop}/outage", "outage"},
		{"PATCH", "/api/v1/hops/down", `{}`, 400, "changes nothing", ""},
		{"PATCH", "/api/v1/hops/down", `[`, 400, "the body is not valid JSON: unexpected end of JSON input (at byte 1)", ""},
		{"PATCH", "/api/v1/hops/down", `{"delay": "80ms",}`, 400, "the body is not valid JSON: invalid character '}' looking for beginning of object key string (at byte 18)", ""},
		{"PATCH", "/api/v1/hops/down", ``, 400, `the body is empty: give the hop's parameters to change, e.g. {\"delay\": \"50ms\"}`, ""},
		{"PATCH", "/api/v1/hops/down", `"80ms"`, 400, "the body is a JSON string, not a JSON object", ""},
		{"PATCH", "/api/v1/hops/down", `{"delay": "80ms", "delay": "90ms"}`, 400, "delay is given twice", "delay"},
		{"PATCH", "/api/v1/hops/down", `{"delay": "80ms", "loss": {"random": "1%", "random": "2%"}}`, 400, "loss.random is given twice", "loss.random"},
		{"POST", "/api/v1/hops/down/outage", `{"for": "1s"}`, 400, `"mode is required: drop or hold`, "mode"},
		{"POST", "/api/v1/hops/down/outage", ``, 400, `"mode is required: drop or hold`, "mode"},
		{"POST", "/api/v1/hops/down/outage", `{"for": "1s", "rate": "1Mbit", "mode": "drop"}`, 400, `unknown key \"rate\": an outage takes for, mode, hold_limit; a hop's parameters are changed with PATCH`, "rate"},
		{"POST", "/api/v1/hops/down/outage", `{"mode": "sometimes"}`, 400, `\"sometimes\" is not an outage mode`, "mode"},
		{"POST", "/api/v1/hops/down/outage", `{"mode": "drop", "for": "soon"}`, 400, "", "for"},
	} {
		code, body := l.request(tc.method, tc.path, tc.body, "Content-Type", "application/json")
		var e struct{ Error, Path string }
		if err := json.Unmarshal([]byte(body), &e); code != tc.code || err != nil || !strings.Contains(body, tc.want) || e.Path != tc.at || e.Error == "" || strings.Contains(body, "YAML") {
			t.Errorf("%s %s %s: %d %s; want %d, %q at %q", tc.method, tc.path, tc.body, code, body, tc.code, tc.want, tc.at)
		}
	}
	// A body's every problem, in the order of its keys.
	for _, tc := range []struct {
		path, body string
		want       []string // path: error
	}{
		{"/api/v1/hops/down/outage", `{"for": "-1s"}`, []string{`for: for: "-1s" must not be negative`, "mode: mode is required: drop or hold (e.g. {\"mode\": \"hold\", \"for\": \"2s\"})"}},
		{"/api/v1/hops/down/outage", `{"mode": 1, "for": "soon"}`, []string{"mode: mode: want a string such as \"drop\" or \"hold\", not a JSON number", `for: for: "soon" is not a duration (want e.g. 1.5ms, 2s, 250us)`}},
		{"/api/v1/hops/down", `{"rate": "fast", "outage": "hold", "loss": {"random": "150%"}}`, []string{`rate: rate: "fast" is not a rate (want e.g. 4Mbit, 512kbit)`, "outage: outage: an outage is POST /api/v1/hops/{hop}/outage", `loss.random: loss.random: "150%" is outside [0, 1] (0% to 100%)`}},
	} {
		method := "PATCH"
		if strings.HasSuffix(tc.path, "/outage") {
			method = "POST"
		}
		code, body := l.request(method, tc.path, tc.body, "Content-Type", "application/json")
		var e struct {
			Error, Path string
			Errors      []struct{ Error, Path string }
		}
		var got []string
		if err := json.Unmarshal([]byte(body), &e); err == nil {
			for _, p := range e.Errors {
				got = append(got, p.Path+": "+p.Error)
			}
		}
		if code != 400 || !slices.Equal(got, tc.want) || e.Error != e.Errors[0].Error || e.Path != e.Errors[0].Path {
			t.Errorf("%s %s %s: %d %s; want %q", method, tc.path, tc.body, code, body, tc.want)
		}
	}
	if _, after := l.request("GET", "/api/v1/hops/down", ""); after != before {
		t.Errorf("the hop changed: %s, then %s", before, after)
	}
}
