package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/web"
)

// browser starts a headless Chromium (Debian's; .ci/run installs it) with
// a fresh profile, or skips the test when there is none and this is not
// CI.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no chromium on the PATH: .ci/run installs Debian's chromium package")
		}
		t.Skip("no chromium on the PATH: install it (apt-get install chromium) to run the dashboard's browser test")
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1100),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// A bound that only keeps a broken test from hanging.
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(cancelTimeout)
	return ctx
}

// evaluateUntil evaluates expr in the page until it is true, for at most
// 10 s.
func evaluateUntil(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({messages: hilrig.messages, last: hilrig.last, message: document.getElementById("message").textContent})`))
			screenshot(t, ctx, "timeout.png")
			t.Fatalf("timed out waiting for %s; the page: %s", what, state)
		}
	}
}

// screenshot saves the page as name in the test's artifact directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		path := filepath.Join(t.ArtifactDir(), name)
		if err = os.WriteFile(path, png, 0o644); err == nil {
			t.Logf("screenshot: %s", path)
		}
	}
	if err != nil {
		t.Errorf("screenshot: %v", err)
	}
}

// TestDashboardModelInBrowser shows a simulation paced to the wall clock
// (sim --realtime-view): paper 004's digital twin with its state path held
// for a second from 2 s, so that the twin falls out of sync and catches
// up. The model plot, the sync plot and the events show it; when the run
// ends and its server stops, the page says so and keeps the final
// summary. A screenshot goes to the test's artifact directory.
func TestDashboardModelInBrowser(t *testing.T) {
	ctx := browser(t)
	p, err := profiles.Load("twin-dropout", "schedule[0].at=2s")
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../profiles/benches/digital-twin.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	mon := &record.Monitor{}
	s, err := rig.Open(p, b, rig.Virtual, rig.Options{Duration: 6 * time.Second, Paced: true, Monitor: mon})
	if err != nil {
		t.Fatal(err)
	}
	srv := web.New(s, mon, web.Options{})
	serving, stop := context.WithCancel(context.Background())
	defer stop()
	u, err := srv.Start(serving, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := srv.Run(context.Background()); done <- err }()
	evaluateUntil(t, ctx, "the model and its supervisor in the page", `hilrig.plots.model.points() > 10 && hilrig.plots.sync.points() > 10`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The server stops with the run, as hilrig exits: the page has been
	// told the run ended, and keeps its final summary.
	stop()
	evaluateUntil(t, ctx, "the end of the run", `hilrig.last.state === "ended" && document.getElementById("state").textContent === "ended"`)
	evaluateUntil(t, ctx, "the server to be gone", `document.getElementById("conn").textContent.startsWith("the run has ended and its server has stopped")`)
	evaluateUntil(t, ctx, "the controls to go", `getComputedStyle(document.getElementById("controls")).display === "none" && document.getElementById("time").textContent === "6.0 s"`)
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("summary-section")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "Final summary: the run ended at 6 s (duration)") || !strings.Contains(summary, "command") {
		t.Errorf("the page's summary: %q", summary)
	}
	evaluateUntil(t, ctx, "the out-of-sync episode", `[...hilrig.plots.sync.bands.values()].some((b) => b.spans.length > 0)`)
	screenshot(t, ctx, "dashboard-twin.png")
	events, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("events")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(events, "out_of_sync") || !strings.Contains(events, "in_sync") {
		t.Errorf("the page's events: %q", events)
	}
}
