package suite

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/suitefile"
	"github.com/hilrig/hilrig/rig/report"
)

// TestShippedSuites runs every suite in profiles/suites, as a user would
// with hilrig test: each must pass. The real-time one takes its 1.5 s of
// wall clock; the others run in virtual time.
func TestShippedSuites(t *testing.T) {
	paths, err := filepath.Glob("../../profiles/suites/*.yaml")
	if err != nil || len(paths) < 3 {
		t.Fatalf("shipped suites: %v, %v", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var progress bytes.Buffer
			results := Run(context.Background(), s.Cases, Options{Dir: dir, Progress: &progress})
			if len(results) != len(s.Cases) {
				t.Fatalf("%d results for %d cases", len(results), len(s.Cases))
			}
			for _, r := range results {
				if !r.Passed() {
					t.Errorf("%s failed:\n%s", r.Case.ID, strings.Join(r.Failures(), "\n"))
				}
				for _, f := range []string{SummaryFile, TraceFile, report.VerdictFile} {
					if info, err := os.Stat(filepath.Join(r.Dir, f)); err != nil || info.Size() == 0 {
						t.Errorf("%s: %s missing or empty (%v)", r.Case.ID, f, err)
					}
				}
			}
			if !strings.Contains(progress.String(), "--- PASS: "+s.Cases[0].ID) {
				t.Errorf("progress: %s", progress.String())
			}
		})
	}
}

// TestShard: for any n, the n shards of a suite are disjoint, together
// the whole suite, the same on every call, and as even as can be.
func TestShard(t *testing.T) {
	s, err := Load("../../profiles/suites/ci.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= len(s.Cases)+2; n++ {
		var all []int
		for i := 1; i <= n; i++ {
			part := s.Shard(i, n)
			again := s.Shard(i, n)
			if !slices.Equal(part, again) {
				t.Errorf("shard %d/%d differs between two calls", i, n)
			}
			if want := len(s.Cases)/n + btoi(i <= len(s.Cases)%n); len(part) != want {
				t.Errorf("shard %d/%d has %d cases, want %d", i, n, len(part), want)
			}
			for _, c := range part {
				all = append(all, c.Index)
			}
		}
		slices.Sort(all)
		want := make([]int, len(s.Cases))
		for i := range want {
			want[i] = i
		}
		if !slices.Equal(all, want) {
			t.Errorf("n=%d: the shards hold cases %v, want each of %v once", n, all, want)
		}
	}
	for _, tc := range []struct{ arg, err string }{
		{"2/3", ""}, {"3/3", ""}, {" 1 / 1 ", ""},
		{"0/3", `--shard "0/3": i must be from 1 to 3`},
		{"4/3", `--shard "4/3": i must be from 1 to 3`},
		{"1/0", `--shard "1/0": n must be at least 1`},
		{"2", `--shard "2": want i/n, e.g. 2/3 (the second of three parts)`},
		{"a/b", `--shard "a/b": want i/n, e.g. 2/3 (the second of three parts)`},
	} {
		_, _, err := ParseShard(tc.arg)
		if fmt.Sprint(err) != tc.err && !(err == nil && tc.err == "") {
			t.Errorf("ParseShard(%q): %v, want %s", tc.arg, err, tc.err)
		}
	}
}

// TestExpectationErrors: an expectation the language refuses is reported
// at its line and column in the suite; one that fails only for some points
// of a matrix says which.
func TestExpectationErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"cases:\n  a: {profile: bottleneck, expect: [flows.m2z.lost == 0]}\n",
			"testdata/s.yaml:2:43: cases.a.expect[0]: flows has no \"m2z\"; did you mean m2s? (it has m2s, s2m, cross)"},
		{"cases:\n  a: {profile: bottleneck, expect: [\"flows.m2s.delay.p95 < 60\"]}\n",
			"testdata/s.yaml:2:60: cases.a.expect[0]: \"60\" needs a unit: the value is a time (e.g. 60ms, 2s, 300us)"},
		{"expect:\n  - flows.m2s.lost = 0\ncases:\n  a: {profile: bottleneck}\n  b: {profile: teleop-table1}\n",
			"testdata/s.yaml:2:20: expect[0]: write == to compare"},
		{"cases:\n  a:\n    matrix: {profiles: [bottleneck, lte, teleop-table1]}\n    expect:\n      - flows.m2s.lost == 0\n      - models.car.deflection.max < 1\n",
			"testdata/s.yaml:5:15: cases.a.expect[0]: flows has no \"m2s\" (it has command, sensor) (in a[lte])\n" +
				"testdata/s.yaml:6:16: cases.a.expect[1]: models has no \"car\" (it has none)"},
		{"cases:\n  a:\n    profile: internet-hil\n    bench: ../../../profiles/suites/benches/quarter-car-cp2.yaml\n    expect: [models.car.deflection.eror_pct < 1, 'models.car.deflexion.max < 1']\n",
			"testdata/s.yaml:5:36: cases.a.expect[0]: models.car.deflection has no \"eror_pct\"; did you mean error_pct? (it has min, max, mean, rms, peak, final, max_error, rms_error, error_pct)\n" +
				"testdata/s.yaml:5:62: cases.a.expect[1]: models.car has no \"deflexion\"; did you mean deflection? (it has v0, v1, Fs, deflection, v2, Fseat, v3, endpoint, model, cut, solver, exchange, …)"},
		{"cases:\n  a: {profile: bottleneck, expect: [timing.wake_lateness.p99 < 1ms]}\n",
			"testdata/s.yaml:2:37: cases.a.expect[0]: timing is measured in real time only: the summary of a run in virtual time has none"},
		// What the script's playing leaves unmeasured (item 6 of issue
		// 22: accepted before the run, "nothing measured" after it).
		{"bench: ../../../profiles/benches/virtual.yaml\nclock: real\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: controller, line: A}\n      - expect: {endpoint: plant, line: A, within: 1s}\n" +
			"    expect: [timing.release_lateness.p99 < 1ms, timing.wake_lateness.p99 < 1ms, endpoints.plant.bytes_in > 0]\n",
			"testdata/s.yaml:9:21: cases.a.expect[0]: timing.release_lateness is never measured in this run: it is how late frames were written to a device, and the flows go to controller and plant, played in software (by a script or a recording); timing.wake_lateness is measured\n" +
				"testdata/s.yaml:9:91: cases.a.expect[2]: endpoints.plant would be what the rig read from and wrote to a device, and plant is played in software (a script or a recording): the summary has no device of that name"},
		{"cases:\n  a: {profile: bottleneck, expect: [clock == vritual, stopped == duraton]}\n",
			"testdata/s.yaml:2:46: cases.a.expect[0]: \"vritual\" is not a clock (want virtual, real); did you mean virtual?\n" +
				"testdata/s.yaml:2:66: cases.a.expect[1]: \"duraton\" is not how a run stops (want duration, interrupted, \"did not start\", \"failed: WHY\"); did you mean duration?"},
	} {
		_, err := Parse("testdata/s.yaml", []byte(tc.src))
		if fmt.Sprint(err) != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.src, err, tc.want)
		}
	}
}

// TestEveryProblemAtOnce: a suite with one of each mistake gets all of
// them in one go, in the order of the file: the keys that do not decode,
// the cases whose profile, set, bench or script is wrong (a case's other
// keys checked after its first problem), and the expectations, those of a
// case that did not load included.
func TestEveryProblemAtOnce(t *testing.T) {
	src := "name: all\ndurration: 2s\nduration: 0s\ncases:\n" +
		"  a:\n    profile: bottlenek\n    expect: [\"flows.m2s.delay.p95 < 60\"]\n" +
		"  b:\n    profile: bottleneck\n    set: {hops.core-up.rate: fast, duration: 5s}\n" +
		"  c:\n    profile: bottleneck\n    bench: ../../../profiles/benches/virtual.yaml\n    script:\n      - send: {endpoint: plnt, line: x}\n      - send: {endpoint: plant, line: x, every: oops, count: 2}\n" +
		"  d:\n    profile: bottleneck\n    matrix: {profiles: [lte, wifi-bursy]}\n" +
		"  e:\n    profile: bottleneck\n    bench: nosuch.yaml\n" +
		"  f:\n    profile: bottleneck\n    bench: ../../../profiles/benches/virtual.yaml\n" +
		"  g:\n    profile: bottleneck\n    expect: [\"timing.release_lateness.p99 < 300us\", \"flows.m2s.loss_rate < 5\", x =< 60ms]\n" +
		"  h:\n    profile: lte\n    clock: real\n"
	want := `testdata/s.yaml:2:1: durration: unknown key; did you mean duration? (want name, description, bench, clock, duration, expect, cases)
testdata/s.yaml:3:11: duration: must be positive
testdata/s.yaml:6:14: cases.a.profile: cannot find "bottlenek": no such file next to the suite, and no shipped profile by that name; did you mean bottleneck?
testdata/s.yaml:7:37: cases.a.expect[0]: "60" needs a unit: the value is a time (e.g. 60ms, 2s, 300us)
testdata/s.yaml:10:30: hops.core-up.rate: "fast" is not a rate (want e.g. 4Mbit, 512kbit)
testdata/s.yaml:10:36: cases.b.set.duration: a set may not change how long the run lasts: give the case duration: 5s (a case runs for its duration:, else the suite's, else its profile's)
testdata/s.yaml:15:26: cases.c.script[0].send.endpoint: bench virtual has no endpoint "plnt"; did you mean plant?
testdata/s.yaml:16:49: cases.c.script[1].send.every: "oops" is not a duration (want e.g. 1.5ms, 2s, 250us)
testdata/s.yaml:18:14: cases.d.profile: give profile or matrix.profiles, not both
testdata/s.yaml:19:30: cases.d.matrix.profiles[1]: cannot find "wifi-bursy": no such file next to the suite, and no shipped profile by that name; did you mean wifi-bursty?
testdata/s.yaml:22:12: cases.e.bench: open testdata/nosuch.yaml: no such file or directory
testdata/s.yaml:25:12: cases.f.bench: in virtual time a bench matters only for its models and the endpoints a script plays: bench virtual has no model, and the case no script
testdata/s.yaml:28:15: cases.g.expect[0]: timing is measured in real time only: the summary of a run in virtual time has none
testdata/s.yaml:28:76: cases.g.expect[1]: "5" is out of range: flows.m2s.loss_rate is a fraction, from 0 to 1 (or 0% to 100%); did you mean 5%?
testdata/s.yaml:28:82: cases.g.expect[2]: write <= to compare
testdata/s.yaml:30:5: cases.h: a real-time case needs a bench: give bench here or in the suite`
	s, err := Parse("testdata/s.yaml", []byte(src))
	var list lang.ErrorList
	if s != nil || !errors.As(err, &list) {
		t.Fatalf("Parse: %v, %T %v", s, err, err)
	}
	if err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}

// scriptSuite plays both ends of the virtual bench through paper 000's
// bottleneck, uncongested: a 7-byte frame takes Σ(prop + size·8/rate) =
// 1 ms + 56/100M s + 2 ms + 56/4M s + 1 ms + 56/100M s = 4.01512 ms from
// controller to plant, and a 4-byte one 4.00864 ms back.
const scriptSuite = `bench: ../../../profiles/benches/virtual.yaml
duration: 3s
cases:
  echo:
    profile: bottleneck
    script:
      - send: {endpoint: controller, line: "PING {n}", at: 1s, every: 20ms, count: 50}
      - expect: {endpoint: plant, line: PING 49, within: 4.1ms}
      - send: {endpoint: plant, line: PONG}
      - expect: {endpoint: controller, bytes: 50 4f 4e 47, within: 5ms}
      - send: {endpoint: plant, line: LATE, after: 100ms}
      - expect: {endpoint: controller, pattern: "^LATE$", within: 4ms}
      - send: {endpoint: plant, line: never}
  cut-short:
    profile: bottleneck
    duration: 1.5s
    script:
      - send: {endpoint: controller, line: "x", at: 1.4s}
      - expect: {endpoint: plant, line: y, within: 1s}
`

// TestScript checks the script's timing to the nanosecond in virtual time:
// a frame is matched at the instant it arrives, the next step starts then,
// a timeout fails the step at its deadline and ends the script.
func TestScript(t *testing.T) {
	s, err := Parse("testdata/script.yaml", []byte(scriptSuite))
	if err != nil {
		t.Fatal(err)
	}
	results := Run(context.Background(), s.Cases, Options{})
	want := [][]string{{
		`send 50 frames line "PING {n}", one every 20ms, from controller at 1s: sent at 1.980000 s`,
		`expect line "PING 49" at plant within 4.1ms: "PING 49" arrived at 1.984015 s, 4.01512ms after the step began`,
		`send line "PONG" from plant: sent at 1.984015 s`,
		`expect bytes 50 4f 4e 47 at controller within 5ms: "PONG" arrived at 1.988024 s, 4.00864ms after the step began`,
		`send line "LATE" from plant after 100ms: sent at 2.088024 s`,
		`expect a frame matching "^LATE$" at controller within 4ms failed: nothing matched from 2.088024 s to 2.092024 s: no frame arrived`,
		`send line "never" from plant failed: not reached`,
	}, {
		`send line "x" from controller at 1.4s: sent at 1.400000 s`,
		`expect line "y" at plant within 1s failed: the run ended at 1.500000 s, before it was done; 1 other frames arrived, the last "x"`,
	}}
	for i, r := range results {
		var got []string
		for _, st := range r.Script {
			got = append(got, st.String())
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("%s:\n got %s\nwant %s", r.Case.ID, strings.Join(got, "\n     "), strings.Join(want[i], "\n     "))
		}
		if r.Passed() {
			t.Errorf("%s passed", r.Case.ID)
		}
	}
	// The frames of the script are the flows' only ones: the generators of
	// the flows the played endpoints feed stand down.
	if f := results[0].Summary.Flows[0]; f.Name != "m2s" || f.Sent != 50 {
		t.Errorf("m2s: %+v", f)
	}
}

// TestScriptAllocs: a played endpoint takes a frame without allocating, as
// the executor's hot path must (a script may play a real-time run).
func TestScriptAllocs(t *testing.T) {
	for _, step := range []suitefile.ExpectStep{
		{Endpoint: "plant", Line: ptr("PING 49"), Within: lang.Duration(time.Second)},
		{Endpoint: "plant", Pattern: &suitefile.Pattern{Regexp: regexp.MustCompile(`^PING [0-9]+$`)}, Within: lang.Duration(time.Second)},
	} {
		sc := NewScript([]suitefile.ScriptStep{{Expect: &step}})
		sc.Start(fixedEngine(time.Millisecond), time.Minute)
		p := sc.Players()["plant"]
		frame := []byte("PING 48 and more bytes than a line would have")
		if allocs := testing.AllocsPerRun(1000, func() { p.Write(frame) }); allocs != 0 {
			t.Errorf("%+v: %.1f allocations per frame", step, allocs)
		}
	}
}

func ptr[T any](v T) *T { return &v }

type fixedEngine time.Duration

func (e fixedEngine) Now() time.Duration               { return time.Duration(e) }
func (e fixedEngine) NextEvent() (time.Duration, bool) { return 0, false }

// TestJUnit: the XML names every case, fails the failed ones with what was
// measured against what limit, and attaches the case's files.
func TestJUnit(t *testing.T) {
	src := `name: junit
duration: 10s
cases:
  plateau:
    profile: bottleneck
    expect: [flows.m2s.delay.max < 60ms, flows.m2s.lost == 0]
  fine:
    profile: bottleneck
    expect: [flows.s2m.lost == 0]
`
	s, err := Parse("testdata/junit.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	results := Run(context.Background(), s.Cases, Options{Dir: dir})
	var b bytes.Buffer
	if err := WriteJUnit(&b, s, results, JUnitOptions{Shard: "1/1", Report: filepath.Join(dir, "index.html"), Start: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	ts := doc.Suites[0]
	if doc.Tests != 2 || doc.Failures != 1 || ts.Tests != 2 || ts.Failures != 1 || ts.Errors != 0 || ts.Name != "junit" {
		t.Errorf("counts: %+v", doc)
	}
	c := ts.Cases[0]
	if c.Name != "plateau" || c.Classname != "junit" || c.Failure == nil || c.Error != nil {
		t.Fatalf("first case: %+v", c)
	}
	if want := "flows.m2s.delay.max < 60ms failed: measured 65.78ms, limit 60ms"; c.Failure.Message != want || c.Failure.Text != want || c.Failure.Type != "expectation" {
		t.Errorf("failure: %+v, want %s", c.Failure, want)
	}
	for _, want := range []string{
		"PASS flows.m2s.lost == 0: measured 0",
		"[[ATTACHMENT|" + filepath.Join(dir, "001-plateau", TraceFile) + "]]",
		"[[ATTACHMENT|" + filepath.Join(dir, "index.html") + "]]",
	} {
		if !strings.Contains(c.SystemOut.Text, want) {
			t.Errorf("system-out lacks %q:\n%s", want, c.SystemOut.Text)
		}
	}
	if ts.Cases[1].Failure != nil || ts.Cases[1].Name != "fine" {
		t.Errorf("second case: %+v", ts.Cases[1])
	}
}

// TestNotStarted: a real-time case whose device cannot be opened says
// first, and only, that the run did not start and why; its summary says
// so too (with or without a report directory), and its script and
// expectations, which measured nothing, are left out.
func TestNotStarted(t *testing.T) {
	dir := t.TempDir()
	bench := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(bench, []byte(`name: unplugged
endpoints:
  controller: {serial: {device: `+filepath.Join(dir, "no-such-tty")+`, baud: 115200, framing: line}}
  plant: {pty: {link: `+filepath.Join(dir, "plant")+`, framing: line}}
bind:
  to-plant: {from: controller, to: plant}
  to-controller: {from: plant, to: controller}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "bench: bench.yaml\nclock: real\nduration: 0.5s\ncases:\n  a:\n    profile: bottleneck\n" +
		"    script:\n      - send: {endpoint: plant, line: HI}\n    expect: [flows.m2s.lost == 0]\n"
	s, err := Parse(filepath.Join(dir, "s.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, reportDir := range []string{"", filepath.Join(dir, "report")} {
		r := RunCase(context.Background(), s.Cases[0], Options{Dir: reportDir})
		f := r.Failures()
		if r.Started || len(f) != 1 || !strings.HasPrefix(f[0], "the run did not start: controller: ") || !strings.Contains(f[0], "no-such-tty") {
			t.Errorf("dir %q: started %v, failures %q", reportDir, r.Started, f)
		}
		if r.Summary.Stopped != "did not start" || r.Summary.Profile != "bottleneck" || r.Summary.Bench != "unplugged" || r.Script != nil || r.Expect != nil {
			t.Errorf("dir %q: summary %+v, script %v, expect %v", reportDir, r.Summary, r.Script, r.Expect)
		}
		var b bytes.Buffer
		if err := WriteJUnit(&b, s, []*Result{r}, JUnitOptions{}); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); !strings.Contains(out, "stopped: did not start\n") || !strings.Contains(out, `<error message="the run did not start: controller: `) || strings.Contains(out, "send line") {
			t.Errorf("dir %q: JUnit:\n%s", reportDir, out)
		}
	}
}

// TestReportDirReused: a report directory used before keeps the case
// directories of the earlier run (they are the user's), and the run says
// which in one line; a case without a model leaves no signals file, and
// removes the one its earlier run left.
func TestReportDirReused(t *testing.T) {
	dir := t.TempDir()
	first, err := Parse("testdata/first.yaml", []byte("duration: 1s\ncases:\n  a: {profile: bottleneck}\n  b: {profile: lte}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	Run(context.Background(), first.Cases, Options{Dir: dir, Log: &log})
	if log.Len() != 0 {
		t.Errorf("a new directory: %s", log.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "001-a", SignalsFile)); err == nil {
		t.Error("a case without a model wrote a signals file")
	}
	stale := filepath.Join(dir, "001-c", SignalsFile)
	os.Mkdir(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte("t,x.y\n0,1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	second, err := Parse("testdata/second.yaml", []byte("duration: 1s\ncases:\n  c: {profile: bottleneck}\n"))
	if err != nil {
		t.Fatal(err)
	}
	results := Run(context.Background(), second.Cases, Options{Dir: dir, Log: &log})
	want := "hilrig: " + dir + " holds case directories that are not this run's, left as they are: 001-a, 002-b (its index.html is this run's; hilrig report " + dir + " would show them too)\n"
	if log.String() != want {
		t.Errorf("log:\n%s\nwant\n%s", log.String(), want)
	}
	for _, f := range []string{"001-a/" + report.VerdictFile, "002-b/" + report.VerdictFile, "notes.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("the case's earlier signals file is still there")
	}
	if _, err := WriteReport(dir, second, results, "", ""); err != nil {
		t.Fatal(err)
	}
	// The page is this run's: one run, case c (the earlier b ran lte).
	page, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil || strings.Contains(string(page), "run-2") || strings.Contains(string(page), "lte") {
		t.Errorf("the report shows an earlier run's case (%v)", err)
	}
}
