package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/report"
)

// Two sites, one loop (issue 23; paper 001's Internet-distributed HIL):
// two rigs in two network namespaces joined by a veth pair, each running
// the real binary, paper 001's quarter car cut between them. Site A
// simulates the car (wheel, suspension, body), site B the other side of
// the cut (part: hardware), and each emulates its own outgoing direction
// of paper 001's link on top of the veth: 19 ms ± 2.75 ms (uniform),
// 0.07 % loss. The veth itself adds tens of microseconds.

// twoSiteProfile is a site's network: its outgoing direction emulated,
// the incoming one left to the other site (a hop that adds nothing).
func twoSiteProfile(seed int, out, in string) string {
	return fmt.Sprintf(`description: one site of a two-site loop; this site emulates its outgoing direction
seed: %d
duration: 10s
hops:
  outgoing: {delay: 19ms, jitter: {dist: uniform, spread: 2.75ms}, loss: {random: 0.07%%}}
  incoming: {}
flows:
  %s: {route: [outgoing], traffic: {cbr: {interval: 2ms, size: 64B}}}
  %s: {route: [incoming], traffic: {cbr: {interval: 2ms, size: 64B}}}
`, seed, out, in)
}

// twoSiteBench is a site's bench: the quarter car cut at cut, this site
// simulating part (model or hardware), its peer at peer over UDP.
func twoSiteBench(name, cut, part, sends, listen, peer, out, in, extra string) string {
	return fmt.Sprintf(`name: %s
endpoints:
  car:
    model:
      name: quarter-car
      cut: %s
      part: %s
      exchange: 2ms
      inputs: {v0: {square: {amplitude: 0.1, period: 2s}}}
      codec: {wire: {sends: %s}}
  peer: {udp: {listen: %s, peer: %s, codec: wire%s}}
bind:
  %s: {from: car, to: peer}
  %s: {from: peer, to: car}
`, name, cut, part, sends, listen, peer, extra, out, in)
}

// netnsPair makes two network namespaces joined by a veth pair, A at
// 10.77.0.1 and B at 10.77.0.2 (each namespace has its own routes, so the
// addresses never meet another test's), and removes them when the test
// ends, however it ends. It skips the test where namespaces cannot be made.
func netnsPair(t *testing.T) (nsA, nsB string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("two sites need two network namespaces, which need root (CAP_SYS_ADMIN and CAP_NET_ADMIN): run the tests as root, as CI does")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("two sites need the ip command (iproute2) to make network namespaces: not found")
	}
	n := netnsCount.Add(1)
	id := fmt.Sprintf("%d%d", os.Getpid()%100000, n)
	nsA, nsB = "hilrig-a"+id, "hilrig-b"+id
	vethA, vethB := "hva"+id, "hvb"+id // at most 15 characters
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	if err := ip("netns", "add", nsA); err != nil {
		t.Skipf("cannot make a network namespace here (%v): two sites are tested where ip netns works", err)
	}
	t.Cleanup(func() { ip("netns", "del", nsA) })
	if err := ip("netns", "add", nsB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ip("netns", "del", nsB) }) // the veth goes with it
	for _, args := range [][]string{
		{"link", "add", vethA, "type", "veth", "peer", "name", vethB},
		{"link", "set", vethA, "netns", nsA},
		{"link", "set", vethB, "netns", nsB},
		{"-n", nsA, "addr", "add", "10.77.0.1/24", "dev", vethA},
		{"-n", nsB, "addr", "add", "10.77.0.2/24", "dev", vethB},
		{"-n", nsA, "link", "set", vethA, "up"},
		{"-n", nsB, "link", "set", vethB, "up"},
		{"-n", nsA, "link", "set", "lo", "up"},
		{"-n", nsB, "link", "set", "lo", "up"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	return nsA, nsB
}

var netnsCount atomic.Int64

// site is one site's run: its directory of outputs and its process.
type site struct {
	dir    string
	cmd    *exec.Cmd
	stderr bytes.Buffer
}

// startSite starts hilrig run in namespace ns with the site's profile and
// bench, its outputs in dir.
func startSite(t *testing.T, ns, dir, profile, bench string, duration time.Duration) *site {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"site.yaml": profile, "bench.yaml": bench}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "..", filepath.Base(dir)+"-"+name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := &site{dir: dir}
	s.cmd = exec.Command("ip", "netns", "exec", ns, hilrig, "run", filepath.Join(dir, "..", filepath.Base(dir)+"-site.yaml"),
		"--bench", filepath.Join(dir, "..", filepath.Base(dir)+"-bench.yaml"), "--duration", duration.String(),
		"--summary", filepath.Join(dir, "summary.json"), "--trace", filepath.Join(dir, "trace.csv"), "--signals", filepath.Join(dir, "signals.csv"))
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(duration+30*time.Second, func() { s.cmd.Process.Kill() }) // a rig that does not stop fails the test
	t.Cleanup(func() { watchdog.Stop(); s.cmd.Process.Kill(); s.cmd.Wait() })
	return s
}

// wait waits for the site's run to end and returns its exit code.
func (s *site) wait(t *testing.T) int {
	t.Helper()
	err := s.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func (s *site) summary(t *testing.T) *record.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, "summary.json"))
	if err != nil {
		t.Fatalf("%v (stderr: %s)", err, s.stderr.String())
	}
	var sum record.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	return &sum
}

// runTwoSites runs the quarter car cut at cut between two rigs in two
// namespaces for about d: B first, with a second more and on_peer_lost:
// continue (A ends first, and B goes on without it), then A.
func runTwoSites(t *testing.T, cut string, d time.Duration) (a, b *site) {
	nsA, nsB := netnsPair(t)
	dir := t.TempDir()
	b = startSite(t, nsB, filepath.Join(dir, "B"), twoSiteProfile(2, "b-to-a", "a-to-b"),
		twoSiteBench("site-b", cut, "hardware", "sample", "10.77.0.2:7400", "10.77.0.1:7400", "b-to-a", "a-to-b", ", on_peer_lost: continue"), d+time.Second)
	a = startSite(t, nsA, filepath.Join(dir, "A"), twoSiteProfile(1, "a-to-b", "b-to-a"),
		twoSiteBench("site-a", cut, "model", "command", "10.77.0.1:7400", "10.77.0.2:7400", "a-to-b", "b-to-a", ""), d)
	if code := a.wait(t); code != 0 {
		t.Fatalf("site A exited %d: %s", code, a.stderr.String())
	}
	if code := b.wait(t); code != 0 {
		t.Fatalf("site B exited %d: %s", code, b.stderr.String())
	}
	return a, b
}

// emulatedMedian is the median one-way delay the sending site's engine
// gave flow: 19 ms ± 2.75 ms drawn uniformly, but a frame of a flow leaves
// a hop in order (jitter alone never reorders, profiles/README), so that a
// frame drawn earlier than the one before it waits for it: with a frame
// every 2 ms, the median is some 0.3 ms above 19 ms.
func emulatedMedian(t *testing.T, s *record.Summary, flow string) time.Duration {
	for _, f := range s.Flows {
		if f.Name == flow && f.Delay != nil {
			return time.Duration(f.Delay.P50 * 1e9)
		}
	}
	t.Fatalf("no delay of flow %s in the sending site's summary", flow)
	return 0
}

func TestTwoSitesCP2(t *testing.T) {
	a, b := runTwoSites(t, "CP2", 5*time.Second)
	sa, sb := a.summary(t), b.summary(t)
	link := func(s *record.Summary) *record.EndpointSummary {
		for i := range s.Endpoints {
			if s.Endpoints[i].Name == "peer" {
				return &s.Endpoints[i]
			}
		}
		t.Fatal("no endpoint peer in the summary")
		return nil
	}
	started := func(s *record.Summary) time.Time {
		at, err := time.Parse(time.RFC3339Nano, s.Timing.Started)
		if err != nil {
			t.Fatalf("timing.started: %v", err)
		}
		return at
	}
	// The loop strays from the uncut car by under 1 % of the peak (a
	// virtual-time run of the same loop in one rig, hilrig sim
	// internet-hil, strays by 0.80 %).
	out := sa.Models[0].Output
	t.Logf("site A: deflection strays from the uncut car by %.3g, %.3f %% of its peak", out.MaxError, 100*out.OfPeak)
	if out.OfPeak >= 0.01 || out.OfPeak == 0 {
		t.Errorf("the loop strays from the uncut car by %.3f %% of the peak; want under 1 %%", 100*out.OfPeak)
	}
	for _, x := range []struct {
		name      string
		s, other  *record.Summary
		fromOther string
		flow      string // the other site's flow to this one
	}{{"A", sa, sb, "B → A", "b-to-a"}, {"B", sb, sa, "A → B", "a-to-b"}} {
		w := link(x.s).Wire
		if w == nil || w.OneWayDelay == nil || w.ClockOffsetS == nil {
			t.Fatalf("site %s: no one-way delay or clock offset in the peer's wire summary: %+v", x.name, w)
		}
		// They share a clock: what the time exchanges measured of the
		// other site's run clock is the difference of the runs' starts.
		apart := *w.ClockOffsetS - started(x.s).Sub(started(x.other)).Seconds()
		p50, emulated := time.Duration(w.OneWayDelay.P50*1e9), emulatedMedian(t, x.other, x.flow)
		t.Logf("site %s: %s one-way delay p50 %v (emulated %v; mean %.3f ms, p99 %.3f ms), %d messages, %d missed, %d late; %d time exchanges, %d answered; clocks %+.1f µs apart, drift %+.2g",
			x.name, x.fromOther, p50, emulated, w.OneWayDelay.Mean*1e3, w.OneWayDelay.P99*1e3, w.Messages, w.Missed, w.Late, w.TimeExchanges, w.TimeRequestsAnswered, apart*1e6, *w.ClockDrift)
		if math.Abs(apart) > 50e-6 {
			t.Errorf("site %s: the clocks of the two sites are %.1f µs apart as measured; they share one: want within 50 µs", x.name, apart*1e6)
		}
		if d := p50 - emulated; d < -500*time.Microsecond || d > 500*time.Microsecond {
			t.Errorf("site %s: one-way delay %s p50 %v; the emulated median is %v: want within 0.5 ms", x.name, x.fromOther, p50, emulated)
		}
		if d := emulated - 19*time.Millisecond; d < 0 || d > time.Millisecond {
			t.Errorf("site %s: the emulated median %s is %v; want 19 ms and a little more (frames kept in order)", x.name, x.fromOther, emulated)
		}
		// Every 100 ms each way, for the 5 s both ran (less the start of
		// the later one): 40 at least.
		if w.TimeExchanges < 40 || w.TimeRequestsAnswered < 40 {
			t.Errorf("site %s: %d time exchanges, %d requests answered; want each rig to answer the other's, every 100 ms (at least 40 in 5 s)", x.name, w.TimeExchanges, w.TimeRequestsAnswered)
		}
	}
	sites := joinSites(t, a, b)
	if sites.Why != "" || len(sites.Distortion) < 3 {
		t.Fatalf("no distortion measured (%d lines): %s", len(sites.Distortion), sites.Why)
	}
	// couple's prediction for the delay measured, and the tolerance: the
	// band of DistortionPoint (the exchange's wait, none to a whole
	// exchange; the Hann window's main lobe).
	for _, p := range sites.Distortion {
		t.Logf("at %.3g rad/s: distortion %.1f dB measured, %.1f dB predicted (band %.1f to %.1f dB)", p.Omega, report.DB(p.Measured), report.DB(p.Predicted), 20*math.Log10(p.Low), 20*math.Log10(p.High))
		if !p.Within() {
			t.Errorf("at %.3g rad/s the distortion measured, %.1f dB, is outside couple's band for the delay measured, %.1f to %.1f dB", p.Omega, report.DB(p.Measured), 20*math.Log10(p.Low), 20*math.Log10(p.High))
		}
		if db := report.DB(p.Measured); db > -30 {
			t.Errorf("at %.3g rad/s CP2 distorts by %.1f dB; paper 001: near or below −40 dB (−37 at worst here, round trip 38 ms)", p.Omega, db)
		}
	}
}

// joinSites joins the two sites' outputs with hilrig join, as a user
// would, and with the report package, for the figures.
func joinSites(t *testing.T, a, b *site) *report.Sites {
	t.Helper()
	page := filepath.Join(t.TempDir(), "join.html")
	r := runHilrig(t, "join", a.dir, b.dir, "--out", page)
	if r.code != 0 {
		t.Fatalf("hilrig join exited %d: %s", r.code, r.stderr)
	}
	t.Logf("hilrig join:\n%s", r.stdout)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"One loop, two sites", "site-a → site-b", "site-b → site-a", "couple predicts"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("the joined report does not say %q", want)
		}
	}
	runA, err := report.LoadRun(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	runB, err := report.LoadRun(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := report.JoinSites(runA, runB)
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

// At CP1 the same link distorts far more (paper 001: near 20 dB around 30
// rad/s, against −40 dB at CP2), and the joined report says that CP2
// would distort less.
func TestTwoSitesCP1(t *testing.T) {
	a, b := runTwoSites(t, "CP1", 4*time.Second)
	out := a.summary(t).Models[0].Output
	t.Logf("site A: deflection strays from the uncut car by %.3g, %.1f %% of its peak", out.MaxError, 100*out.OfPeak)
	if out.OfPeak < 0.5 {
		t.Errorf("at CP1 the loop strays from the uncut car by %.2f %% of the peak; paper 001 (and a virtual-time run, 155 %%): far more than CP2's 1 %%", 100*out.OfPeak)
	}
	sites := joinSites(t, a, b)
	peak := 0.0
	for _, p := range sites.Distortion {
		peak = max(peak, cmplx.Abs(p.Measured))
		t.Logf("at %.3g rad/s: distortion %.1f dB measured, %.1f dB predicted (band %.1f to %.1f dB)", p.Omega, report.DB(p.Measured), report.DB(p.Predicted), 20*math.Log10(p.Low), 20*math.Log10(p.High))
		if !p.Within() {
			t.Errorf("at %.3g rad/s the distortion measured, %.1f dB, is outside couple's band for the delay measured, %.1f to %.1f dB", p.Omega, report.DB(p.Measured), 20*math.Log10(p.Low), 20*math.Log10(p.High))
		}
	}
	if db := 20 * math.Log10(peak); db < -10 {
		t.Errorf("CP1's largest distortion measured is %.1f dB; paper 001: near 20 dB around 30 rad/s", db)
	}
	if len(sites.Ranking) < 2 || sites.Ranking[0].Cut != "CP2" {
		t.Errorf("the join ranks the cuts %+v; want CP2 first (it distorts less)", sites.Ranking)
	}
	if r := runHilrig(t, "join", a.dir, b.dir); !strings.Contains(r.stdout, "CP2 would distort less") {
		t.Errorf("hilrig join does not say that CP2 would distort less:\n%s", r.stdout)
	}
}

// Killing rig B mid-run: rig A reports the peer lost at the instant its
// timeout ran out after B's last message, sends nothing more, stops as a
// failure (exit 1), and its trace and summary are complete.
func TestTwoSitesPeerKilled(t *testing.T) {
	nsA, nsB := netnsPair(t)
	dir := t.TempDir()
	b := startSite(t, nsB, filepath.Join(dir, "B"), twoSiteProfile(2, "b-to-a", "a-to-b"),
		twoSiteBench("site-b", "CP2", "hardware", "sample", "10.77.0.2:7400", "10.77.0.1:7400", "b-to-a", "a-to-b", ""), 10*time.Second)
	a := startSite(t, nsA, filepath.Join(dir, "A"), twoSiteProfile(1, "a-to-b", "b-to-a"),
		twoSiteBench("site-a", "CP2", "model", "command", "10.77.0.1:7400", "10.77.0.2:7400", "a-to-b", "b-to-a", ""), 10*time.Second)
	time.Sleep(2 * time.Second)
	killed := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	b.wait(t)
	code := a.wait(t)
	if code != 1 {
		t.Errorf("site A exited %d after losing its peer; want 1 (on_peer_lost: stop, a failure): %s", code, a.stderr.String())
	}
	sa := a.summary(t)
	startA, err := time.Parse(time.RFC3339Nano, sa.Timing.Started)
	if err != nil {
		t.Fatal(err)
	}
	killedAt := killed.Sub(startA).Seconds() // on A's clock
	var lost *record.Event
	for i, e := range sa.Events {
		if e.Kind == "peer_lost" {
			lost = &sa.Events[i]
		}
	}
	if lost == nil {
		t.Fatalf("site A reports no peer_lost event: %+v (stderr: %s)", sa.Events, a.stderr.String())
	}
	// B's last message left it at most one exchange and the jitter's
	// spread (2 ms + 5.5 ms) before the kill, through the veth (µs): A
	// loses it its timeout (100 ms) after that; up to 30 ms later on a
	// loaded machine.
	timeout := 0.1
	t.Logf("B killed at %.6f s on A's clock; A lost its peer at %.6f s (%.1f ms after): %s", killedAt, lost.AtS, (lost.AtS-killedAt)*1e3, lost.Detail)
	if lo, hi := killedAt+timeout-0.0075-0.005, killedAt+timeout+0.030; lost.AtS < lo || lost.AtS > hi {
		t.Errorf("A lost its peer at %.6f s; B was killed at %.6f s: want between %.6f and %.6f", lost.AtS, killedAt, lo, hi)
	}
	if !strings.Contains(sa.Stopped, "peer was lost") || len(sa.Failures) == 0 {
		t.Errorf("site A stopped %q (failures %q); want the peer lost as its failure", sa.Stopped, sa.Failures)
	}
	// Its trace is complete: every frame the summary counts, the event's
	// row, and nothing sent after the peer was lost (its outputs safe:
	// nothing more goes to a peer that is gone).
	rows := readRealTrace(t, filepath.Join(a.dir, "trace.csv"))
	var sent int
	var eventRow bool
	for _, r := range rows {
		switch {
		case r.flow == "peer" && r.status == "peer_lost":
			eventRow = true
		case r.flow == "a-to-b":
			sent++
			if r.sent.Seconds() > lost.AtS {
				t.Errorf("A sent frame %d at %v, after it lost its peer at %.6f s", r.seq, r.sent, lost.AtS)
			}
		}
	}
	if !eventRow {
		t.Error("A's trace has no peer_lost row")
	}
	for _, f := range sa.Flows {
		if f.Name == "a-to-b" && uint64(sent) != f.Sent {
			t.Errorf("A's trace has %d frames of a-to-b; its summary counts %d sent", sent, f.Sent)
		}
	}
	for _, o := range sa.Outputs {
		if o.Lost > 0 {
			t.Errorf("A's %s lost %d rows", o.Output, o.Lost)
		}
	}
}

// TestTwoSitesReadme: the README's walkthrough for two sites is a profile
// and a bench that hilrig checks, the same as this file runs.
func TestTwoSitesReadme(t *testing.T) {
	text, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "### Two sites\n")
	if !ok {
		t.Fatal("README.md has no section Two sites")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for rest := section; ; {
		_, after, found := strings.Cut(rest, "```yaml\n")
		if !found {
			break
		}
		block, tail, _ := strings.Cut(after, "```\n")
		blocks, rest = append(blocks, block), tail
	}
	if len(blocks) != 2 {
		t.Fatalf("the section has %d YAML blocks; want site A's profile and bench", len(blocks))
	}
	dir := t.TempDir()
	profile, bench := filepath.Join(dir, "site-a.yaml"), filepath.Join(dir, "bench-a.yaml")
	os.WriteFile(profile, []byte(blocks[0]), 0o644)
	os.WriteFile(bench, []byte(blocks[1]), 0o644)
	if r := runHilrig(t, "check", profile, "--bench", bench); r.code != 0 {
		t.Fatalf("hilrig check of the README's site A: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := twoSiteBench("site-a", "CP2", "model", "command", "10.77.0.1:7400", "10.77.0.2:7400", "a-to-b", "b-to-a", "")
	if blocks[1] != want {
		t.Errorf("the README's bench differs from the one tested:\n%s\nwant\n%s", blocks[1], want)
	}
	if r := runHilrig(t, "sim", profile, "--bench", bench, "--duration", "2s", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"max_error_of_peak"`) {
		t.Errorf("hilrig sim of the README's site A: exit %d\n%s", r.code, r.stderr)
	}
}
