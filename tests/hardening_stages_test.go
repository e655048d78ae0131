package tests

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/web"
)

// twoWayNetwork is twoWay without its schedule.
var twoWayNetwork = strings.Split(twoWay, "schedule:")[0]

// scheduledDelay is twoWay with a schedule that sets up's delay from the
// start, so that the profile's values now are not its hops' own.
var scheduledDelay = twoWayNetwork + "schedule:\n  - {at: 0s, hop: up, delay: 30ms}\n"

// hopParamsOf reads the params of the hop named hop from a JSON answer:
// a hop, a list of them, or an object with the hop under "hop".
func hopParamsOf(t *testing.T, body, hop string) map[string]any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if obj, ok := v.(map[string]any); ok && obj["hop"] != nil {
		v = obj["hop"]
	}
	list, ok := v.([]any)
	if !ok {
		list = []any{v}
	}
	for _, h := range list {
		if h, _ := h.(map[string]any); h["name"] == hop {
			params, _ := h["params"].(map[string]any)
			return params
		}
	}
	t.Fatalf("no hop %s with params in %s", hop, body)
	return nil
}

// TestOneHopRepresentation: GET of a hop, of the hops, a change's answer
// and the stream give a hop's every parameter the same way, as the profile
// language writes it, and a hop without loss says so.
func TestOneHopRepresentation(t *testing.T) {
	l := startLive(t, twoWay, web.Options{})
	conn, _, err := l.dial("?rate=20", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	code, body := l.request("PATCH", "/api/v1/hops/up", `{"loss": {"random": "5%"}, "jitter": {"dist": "normal", "sigma": "2ms"}, "reorder": "allowed", "flap": {"rate": "1Mbit", "every": "1s", "for": "100ms"}}`)
	if code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	patched := hopParamsOf(t, body, "up")
	want := map[string]any{
		"rate": "10Mbit", "delay": "20ms", "queue": "100 frames", "overhead": "0B", "per_frame": "0s",
		"loss": map[string]any{"random": "5%"}, "jitter": map[string]any{"dist": "normal", "sigma": "2ms"}, "reorder": "allowed",
		"duplicate": "0%", "corrupt": "none", "flap": map[string]any{"rate": "1Mbit", "every": "1s", "for": "100ms"},
	}
	if !reflect.DeepEqual(patched, want) {
		t.Errorf("PATCH's answer: %v, want %v", patched, want)
	}
	l.waitFor("a snapshot after the change", func(s *record.Snapshot) bool { return len(s.Hops) == 2 && s.Hops[1].Changes > 0 })
	_, one := l.request("GET", "/api/v1/hops/up", "")
	_, all := l.request("GET", "/api/v1/hops", "")
	if got := hopParamsOf(t, one, "up"); !reflect.DeepEqual(got, want) {
		t.Errorf("GET /api/v1/hops/up: %v, want %v", got, want)
	}
	if got := hopParamsOf(t, all, "up"); !reflect.DeepEqual(got, want) {
		t.Errorf("GET /api/v1/hops: %v, want %v", got, want)
	}
	if got := hopParamsOf(t, all, "down"); got["loss"] != "none" || got["rate"] != "none" || got["delay"] != "20ms" {
		t.Errorf("down, which has no loss and no rate: %v", got)
	}
	for {
		_, data, err := conn.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Hops json.RawMessage }
		json.Unmarshal(data, &m)
		if got := hopParamsOf(t, string(m.Hops), "up"); reflect.DeepEqual(got, want) {
			break // the stream has it too
		} else if got["loss"] != "none" {
			t.Fatalf("the stream's hop: %v, want %v", got, want)
		}
	}
	// The profile as it runs writes the same values.
	_, now := l.request("GET", "/api/v1/profile", "")
	if !strings.Contains(now, "up: {rate: 10Mbit, delay: 20ms, queue: 100 frames, loss: {random: 5%}, jitter: {dist: normal, sigma: 2ms}, reorder: allowed, flap: {rate: 1Mbit, every: 1s, for: 100ms}}") {
		t.Errorf("the profile as it runs:\n%s", now)
	}
}

// TestResetToTheProfile undoes changes made by hand: one parameter, one
// hop (to its schedule's delay, not its own), every hop; each reset is an
// entry of the as-run profile, which replays the run.
func TestResetToTheProfile(t *testing.T) {
	l := startLive(t, scheduledDelay, web.Options{})
	l.waitFor("the run to start", func(s *record.Snapshot) bool { return s.Time > 0 })
	if code, body := l.request("PATCH", "/api/v1/hops/up", `{"delay": "100ms", "loss": {"random": "5%"}}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	if code, body := l.request("PATCH", "/api/v1/hops/down", `{"rate": "1Mbit", "duplicate": "1%"}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	type answer struct {
		Entries []string
		Hops    []json.RawMessage
	}
	del := func(path string) answer {
		t.Helper()
		code, body := l.request("DELETE", path, "")
		var a answer
		if err := json.Unmarshal([]byte(body), &a); code != 200 || err != nil {
			t.Fatalf("DELETE %s: %d %v %s", path, code, err, body)
		}
		return a
	}
	a := del("/api/v1/hops/up/loss")
	if len(a.Entries) != 1 || !strings.HasSuffix(a.Entries[0], ", hop: up, loss: none}") {
		t.Errorf("DELETE of up's loss: %+v", a)
	}
	if p := hopParamsOf(t, string(a.Hops[0]), "up"); p["loss"] != "none" || p["delay"] != "100ms" {
		t.Errorf("up after its loss was reset: %v", p)
	}
	a = del("/api/v1/hops/up")
	if len(a.Entries) != 1 || !strings.HasSuffix(a.Entries[0], ", hop: up, delay: 30ms}") {
		t.Errorf("DELETE of up: %+v", a)
	}
	if a = del("/api/v1/hops/up"); len(a.Entries) != 0 {
		t.Errorf("a hop with the profile's values reset again: %+v", a)
	}
	a = del("/api/v1/hops")
	if len(a.Entries) != 1 || !strings.HasSuffix(a.Entries[0], ", hop: down, rate: none, duplicate: 0%}") {
		t.Errorf("DELETE of every hop: %+v", a)
	}
	for _, tc := range []struct{ path, want string }{
		{"/api/v1/hops/up/dealy", `no hop parameter \"dealy\"; did you mean delay?`},
		{"/api/v1/hops/uq", `no hop named \"uq\"; did you mean up?`},
	} {
		if code, body := l.request("DELETE", tc.path, ""); code < 400 || !strings.Contains(body, tc.want) {
			t.Errorf("DELETE %s: %d %s, want %q", tc.path, code, body, tc.want)
		}
	}
	if code, body := l.request("DELETE", "/api/v1/hops/up", `{"delay": "1ms"}`); code != 400 || !strings.Contains(body, "DELETE takes no body") {
		t.Errorf("DELETE with a body: %d %s", code, body)
	}

	_, body := l.request("GET", "/api/v1/profile?as-run", "")
	p, err := profiles.Parse("as-run.yaml", []byte(body))
	if err != nil {
		t.Fatalf("the as-run profile does not load: %v\n%s", err, body)
	}
	// Replayed, the schedule sets the hops as the run had them: up's
	// delay the schedule's, no loss; down without the rate given by hand.
	var changes []emulator.Scheduled
	for _, s := range p.Config.Schedule {
		changes = append(changes, s)
	}
	net, err := emulator.New(emulator.Config{Hops: p.Config.Hops, Flows: p.Config.Flows, Schedule: changes}, nil)
	if err != nil {
		t.Fatal(err)
	}
	net.Advance(59e9)
	up, down := net.HopNow(1).Params, net.HopNow(0).Params
	if up.Delay != 30e6 || up.Loss != nil || down.Rate != 0 || down.Duplicate != 0 {
		t.Errorf("replayed: up %+v, down %+v\n%s", up, down, body)
	}
}

// TestAsRunInTimeOrder: ?as-run lists the schedule in time order, the
// changes made by hand among the profile's entries, and loads.
func TestAsRunInTimeOrder(t *testing.T) {
	l := startLive(t, twoWayNetwork+`schedule:
  - {at: 50s, for: 1s, phase: handover}
  - {at: 30s, hop: up, delay: 25ms}
  - {at: 0s, for: 40s, hop: down, delay: 30ms}
`, web.Options{})
	l.waitFor("the run to start", func(s *record.Snapshot) bool { return s.Time > 0 })
	if code, body := l.request("PATCH", "/api/v1/hops/up", `{"delay": "100ms"}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	_, body := l.request("GET", "/api/v1/profile?as-run", "")
	if _, err := profiles.Parse("as-run.yaml", []byte(body)); err != nil {
		t.Fatalf("the as-run profile does not load: %v\n%s", err, body)
	}
	_, schedule, _ := strings.Cut(body, "\nschedule:\n")
	var ats []string
	for line := range strings.Lines(schedule) {
		if at, ok := strings.CutPrefix(strings.TrimSpace(line), "- {at: "); ok {
			at, _, _ = strings.Cut(at, ",")
			ats = append(ats, at)
		}
	}
	if len(ats) != 4 || ats[0] != "0s" || ats[2] != "30s" || ats[3] != "50s" || !strings.Contains(schedule, "hop: up, delay: 100ms}") {
		t.Errorf("as-run schedule out of time order: %v\n%s", ats, schedule)
	}
}

// TestDashboardHopViewInBrowser: the control strip shows what the chosen
// hop has (no loss is "none", not an example value), follows a change, and
// its Reset button returns the hop to the profile's values.
func TestDashboardHopViewInBrowser(t *testing.T) {
	ctx := browser(t)
	l := startLive(t, twoWay, web.Options{})
	if err := chromedp.Do(ctx, chromedp.Navigate(l.url+"/")); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "telemetry in the page", `hilrig.messages > 2`)
	placeholders := func() string {
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`["delay", "loss", "rate"].map((id) => document.getElementById(id).placeholder).join(" | ")`))
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID("hop"), "up")); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "up's settings", `document.getElementById("rate").placeholder === "10Mbit"`)
	if got := placeholders(); got != "20ms | none | 10Mbit" {
		t.Errorf("up, without loss: %q", got)
	}
	if code, body := l.request("PATCH", "/api/v1/hops/up", `{"loss": {"random": "5%"}, "delay": "35ms"}`); code != 200 {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	evaluateUntil(t, ctx, "the change in the strip", `document.getElementById("loss").placeholder === "5%"`)
	if got := placeholders(); got != "35ms | 5% | 10Mbit" {
		t.Errorf("up, changed: %q", got)
	}
	screenshot(t, ctx, "dashboard-hop-changed.png")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("reset"))); err != nil {
		t.Fatal(err)
	}
	evaluateUntil(t, ctx, "the reset to be answered", `document.getElementById("message").textContent.includes("hop up reset to the profile")`)
	evaluateUntil(t, ctx, "the reset in the strip", `document.getElementById("loss").placeholder === "none"`)
	if got := placeholders(); got != "20ms | none | 10Mbit" {
		t.Errorf("up, reset: %q", got)
	}
	screenshot(t, ctx, "dashboard-hop-reset.png")
}
