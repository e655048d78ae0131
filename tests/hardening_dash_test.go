package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.bug.st/serial"
)

// Issue 22, items 3 and 4: the live dashboard's history and endpoint
// panel, and the metrics of endpoints, hops and the run, on `hilrig run`
// with its server in a child process (serve-live), as a user runs it.

// dashBench is two pseudo-terminals; the controller's frames longer than
// 64 bytes are bad.
const dashBench = `name: dash-bench
endpoints:
  controller: {pty: {link: DIR/controller, framing: line, max_frame: 64B}}
  plant:      {pty: {link: DIR/plant, framing: line}}
bind:
  m2s: {from: controller, to: plant}
  s2m: {from: plant, to: controller}
`

// dashProfile loses a frame in ten on the way to the plant.
const dashProfile = `duration: 120s
hops:
  down: {delay: 4ms, loss: {random: 10%}}
  up:   {delay: 4ms}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`

// liveRig is a `hilrig run --listen` started by a test, with its URL.
type liveRig struct {
	t      *testing.T
	dir    string
	url    string
	cmd    *exec.Cmd
	stderr *lockedBuffer
}

func startLiveRig(t *testing.T, profile, bench string) *liveRig {
	t.Helper()
	r := &liveRig{t: t, dir: t.TempDir(), stderr: &lockedBuffer{}}
	write := func(name, text string) string {
		p := filepath.Join(r.dir, name)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "DIR", r.dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r.cmd = exec.Command(hilrig, "run", "--bench", write("bench.yaml", bench), write("link.yaml", profile),
		"--summary", filepath.Join(r.dir, "summary.json"), "--listen", "127.0.0.1:0")
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	r.waitURL()
	return r
}

// waitURL reads the server's URL from what the rig says as it starts.
func (r *liveRig) waitURL() {
	r.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); r.url == ""; time.Sleep(20 * time.Millisecond) {
		if m := regexp.MustCompile(`live at (http://127\.0\.0\.1:[0-9]+)/`).FindStringSubmatch(r.stderr.String()); m != nil {
			r.url = m[1]
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no URL: %s", r.stderr.String())
		}
	}
}

// attach opens the pseudo-terminal the rig links at DIR/name.
func (r *liveRig) attach(name string) serial.Port {
	r.t.Helper()
	path := filepath.Join(r.dir, name)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("%s never appeared: %s", path, r.stderr.String())
		}
	}
	port, err := serial.Open(path, &serial.Mode{BaudRate: 115200})
	if err != nil {
		r.t.Fatalf("attaching to %s: %v", path, err)
	}
	return port
}

func (r *liveRig) get(path string) string {
	r.t.Helper()
	resp, err := http.Get(r.url + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		r.t.Fatalf("GET %s: %d, %v: %s", path, resp.StatusCode, err, body)
	}
	return string(body)
}

// metrics reads /metrics, parsed, and its text.
func (r *liveRig) metrics() (map[string]*dto.MetricFamily, string) {
	r.t.Helper()
	body := r.get("/metrics")
	return parseMetrics(r.t, body), body
}

// parseMetrics parses a Prometheus text exposition.
func parseMetrics(t testing.TB, body string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return families
}

// findMetric is the family's metric with the labels given (name, value,
// …), or nil.
func findMetric(families map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
metrics:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.Label {
				found = found || lp.GetName() == labels[i] && lp.GetValue() == labels[i+1]
			}
			if !found {
				continue metrics
			}
		}
		return m
	}
	return nil
}

// metricValue is the value of the family's metric with the labels given
// (name, value, …); ok false if there is none.
func metricValue(families map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	m := findMetric(families, name, labels...)
	switch {
	case m == nil:
		return 0, false
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	}
	return 0, true
}

// waitMetric reads the metrics until cond holds of them, for 10 s at most.
func (r *liveRig) waitMetric(what string, cond func(map[string]*dto.MetricFamily) bool) map[string]*dto.MetricFamily {
	r.t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		f, body := r.metrics()
		if cond(f) {
			return f
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s; the metrics:\n%s", what, body)
		}
	}
}

// TestLiveEndpointsAndHistory drives a `hilrig run --listen` through what
// the users did: the controller's device sends 100 lines and a
// bad one, goes away and comes back; the metrics have each endpoint's
// state and counts, the hops' loss and the run's labels, and promtool
// finds nothing to say of them; a page opened 10 s into the run (and
// reloaded) plots the run from its start and shows the endpoints in a
// panel; the delay axis can be logarithmic.
func TestLiveEndpointsAndHistory(t *testing.T) {
	r := startLiveRig(t, dashProfile, dashBench)
	started := time.Now()
	plant := r.attach("plant")
	defer plant.Close()
	go io.Copy(io.Discard, plant)
	ctrl := r.attach("controller")
	for i := range 100 {
		fmt.Fprintf(ctrl, "ping %d\n", i)
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Fprintf(ctrl, "%s\n", strings.Repeat("x", 100)) // longer than max_frame
	r.waitMetric("the controller's 100 frames and a bad one", func(f map[string]*dto.MetricFamily) bool {
		in, _ := metricValue(f, "hilrig_endpoint_frames_total", "endpoint", "controller", "direction", "in")
		bad, _ := metricValue(f, "hilrig_endpoint_bad_frames_total", "endpoint", "controller")
		return in == 100 && bad == 1
	})
	// Away, and back.
	ctrl.Close()
	r.waitMetric("the controller away", func(f map[string]*dto.MetricFamily) bool {
		c, ok := metricValue(f, "hilrig_endpoint_connected", "endpoint", "controller")
		return ok && c == 0
	})
	time.Sleep(500 * time.Millisecond)
	ctrl = r.attach("controller")
	defer ctrl.Close()
	f := r.waitMetric("the controller back", func(f map[string]*dto.MetricFamily) bool {
		c, _ := metricValue(f, "hilrig_endpoint_connected", "endpoint", "controller")
		return c == 1
	})

	var info struct {
		RunID string `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(r.get("/api/v1/run")), &info); err != nil || !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(info.RunID) {
		t.Errorf("run id %q, %v", info.RunID, err)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"hilrig_run_info", []string{"profile", "link", "bench", "dash-bench", "clock", "real", "run_id", info.RunID}, 1},
		{"hilrig_endpoint_connected", []string{"endpoint", "plant"}, 1},
		{"hilrig_endpoint_gaps_total", []string{"endpoint", "controller"}, 1},
		{"hilrig_endpoint_gaps_total", []string{"endpoint", "plant"}, 0},
		{"hilrig_endpoint_frames_total", []string{"endpoint", "controller", "direction", "in"}, 100},
		// "ping N\n" for N < 10 is 7 bytes, for N < 100 8, and the bad line 101.
		{"hilrig_endpoint_bytes_total", []string{"endpoint", "controller", "direction", "in"}, 10*7 + 90*8 + 101},
		{"hilrig_endpoint_bad_frames_total", []string{"endpoint", "controller"}, 1},
		{"hilrig_endpoint_frames_total", []string{"endpoint", "plant", "direction", "in"}, 0},
		{"hilrig_hop_loss_ratio", []string{"hop", "down"}, 0.1},
		{"hilrig_hop_loss_ratio", []string{"hop", "up"}, 0},
	} {
		if v, ok := metricValue(f, c.name, c.labels...); !ok || v != c.want {
			t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	// The plant got what the 10% loss let through: 100 less those lost.
	out, _ := metricValue(f, "hilrig_endpoint_frames_total", "endpoint", "plant", "direction", "out")
	lost, _ := metricValue(f, "hilrig_flow_frames_total", "flow", "m2s", "status", "loss_drop")
	if out+lost != 100 || lost == 0 {
		t.Errorf("the plant was written %v frames and %v were lost; want 100 in all", out, lost)
	}
	for _, name := range []string{"hilrig_endpoint_write_errors_total", "hilrig_run_start_time_seconds"} {
		if _, ok := metricValue(f, name); !ok {
			t.Errorf("no %s", name)
		}
	}
	checkMetricsWithPromtool(t, r.get("/metrics"))

	// The page, opened 10 s into the run.
	time.Sleep(time.Until(started.Add(10 * time.Second)))
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/")); err != nil {
		t.Fatal(err)
	}
	fromTheStart := func(what string) {
		t.Helper()
		// A point every 100 ms from the first snapshot, at 0 s: more than
		// 90 a line by 10 s (m2s's p50 and p99, s2m's have none: no frame).
		evaluateUntil(t, ctx, what, `hilrig.messages > 0 && hilrig.plots.queue.first() <= 0.1 && hilrig.plots.queue.points() > 2*90 && hilrig.plots.delay.first() < 2 && hilrig.plots.endpoints.first() <= 0.2`)
	}
	fromTheStart("the plots from the run's start")
	evaluateUntil(t, ctx, "the endpoints' panel", `(() => {
		const row = (name) => [...document.querySelectorAll("#endpoints tbody tr")].find((tr) => tr.dataset.endpoint === name);
		const c = row("controller"), p = row("plant");
		return c && p && c.cells[1].textContent === "connected, back" && c.cells[2].textContent === "1" && c.cells[3].textContent === "100" && c.cells[7].textContent === "1" && p.cells[1].textContent === "connected";
	})()`)
	evaluateUntil(t, ctx, "the controller's stretch away, shaded", `[...hilrig.plots.endpoints.bands.values()].some((b) => b.spans.length === 1 && b.spans[0][1] - b.spans[0][0] >= 0.4)`)
	screenshot(t, ctx, "dashboard-late.png")
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	fromTheStart("the plots from the run's start after a reload")
	// The delay axis, logarithmic: the plot says so, and so does the page
	// opened again.
	choose(t, ctx, "delay-axis", "log")
	evaluateUntil(t, ctx, "a logarithmic delay axis", `hilrig.plots.delay.log === true && !hilrig.plots.queue.log`)
	screenshot(t, ctx, "dashboard-log.png")
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	fromTheStart("the plots after a second reload")
	evaluateUntil(t, ctx, "the axis kept", `hilrig.plots.delay.log === true && document.getElementById("delay-axis").value === "log"`)
	choose(t, ctx, "window", "all")
	evaluateUntil(t, ctx, "the whole run", `hilrig.plots.delay.span === Infinity`)
	screenshot(t, ctx, "dashboard-whole.png")
}

// checkMetricsWithPromtool runs `promtool check metrics` on a scrape:
// Prometheus' own linter (names, units, _total counters, help). Skipped
// only when promtool is not installed (apt-get install prometheus).
func checkMetricsWithPromtool(t *testing.T, body string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Log("no promtool on the PATH (apt-get install prometheus): the metrics are not linted")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsPassPromtool lints a virtual-time run's metrics paced to the
// wall clock, with a model and its supervisor (paper 004's twin), which
// the run above has not.
func TestMetricsPassPromtool(t *testing.T) {
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("no promtool on the PATH: apt-get install prometheus")
	}
	dir := t.TempDir()
	cmd := exec.Command(hilrig, "sim", "twin-dropout", "--bench", "../profiles/benches/digital-twin.yaml", "--duration", "3s",
		"--listen", "127.0.0.1:0", "--realtime-view", "--summary", filepath.Join(dir, "summary.json"))
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := &liveRig{t: t, cmd: cmd, stderr: stderr}
	r.waitURL()
	f := r.waitMetric("the model's exchanges", func(f map[string]*dto.MetricFamily) bool {
		_, ok := metricValue(f, "hilrig_model_time_discrepancy_seconds")
		return ok
	})
	if v, ok := metricValue(f, "hilrig_run_info", "clock", "virtual", "profile", "twin-dropout"); !ok || v != 1 {
		t.Errorf("hilrig_run_info: %v, %v", v, ok)
	}
	checkMetricsWithPromtool(t, r.get("/metrics"))
}

// choose picks value in the page's select id, as a person would.
func choose(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.ID(id), value)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("`+id+`").dispatchEvent(new Event("change"))`)); err != nil {
		t.Fatal(err)
	}
}
