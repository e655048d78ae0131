// Package rigtest writes hardware-in-the-loop tests in go test: start a
// session from a bench and a profile, play bench endpoints in software
// (Send a frame at an instant, Expect one within a timeout, as
// pytest-embedded's dut.expect), run it in virtual time (reproducible, no
// hardware) or real time, and assert on what it measured with the
// expectation language of --expect and of suites:
//
//	func TestLink(t *testing.T) {
//		r := rigtest.New(t, "benches/virtual.yaml", "bottleneck", rigtest.Options{Duration: 3 * time.Second})
//		r.SendAt("controller", time.Second, "PING")
//		r.ExpectLine("plant", "PING", 10*time.Millisecond)
//		r.Run("flows.m2s.lost == 0", "flows.m2s.delay.max < 5ms")
//	}
//
// A test is a suite's case built in Go: it runs through package suite, so
// a step's timing and a failure's words are the same as hilrig test's.
package rigtest

import (
	"context"
	"regexp"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/suitefile"
	"github.com/hilrig/hilrig/rig/expect"
	"github.com/hilrig/hilrig/rig/suite"
)

// T is what rigtest needs of a test; *testing.T and *testing.B are T.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Options set up a session.
type Options struct {
	Real     bool          // real time; the default is virtual
	Duration time.Duration // 0: the profile's
	Seed     *uint64       // nil: the profile's
	Sets     []string      // profile overrides, path=value as hilrig sim --set takes them
	Priority int           // real time: the executor's SCHED_FIFO priority (0: leave it)
	// Dir, when set, keeps the run's summary, trace and signals in a
	// directory below it, for hilrig report.
	Dir string
}

// Rig is a session being set up; Run runs it.
type Rig struct {
	t        T
	point    suitefile.SuitePoint
	dir      string
	priority int
}

// New loads the bench file (empty: none, for a profile alone in virtual
// time) and the profile (a shipped name or a file) and prepares a session;
// a problem with either fails the test at once.
func New(t T, bench, profile string, opt Options) *Rig {
	t.Helper()
	p, err := profiles.Load(profile, opt.Sets...)
	if err != nil {
		t.Fatalf("rigtest: %v", err)
		return nil
	}
	var b *benchfile.LoadedBench
	if bench != "" {
		if b, err = benchfile.LoadBench(bench, p); err != nil {
			t.Fatalf("rigtest: %v", err)
			return nil
		}
	}
	return &Rig{t: t, dir: opt.Dir, priority: opt.Priority, point: suitefile.SuitePoint{
		ID: p.Name, Case: p.Name, Profile: p, Bench: b, Real: opt.Real, Duration: opt.Duration, Seed: opt.Seed,
	}}
}

// Send sends a line from a bench endpoint the test plays, into the flow
// it feeds, as soon as the previous step has ended.
func (r *Rig) Send(endpoint, line string) {
	r.step(suitefile.ScriptStep{Send: &suitefile.SendStep{Endpoint: benchfile.EndpointName(endpoint), Line: &line}})
}

// SendAt sends a line from a played endpoint at an instant of the run (or
// when the previous step ends, if that is later).
func (r *Rig) SendAt(endpoint string, at time.Duration, line string) {
	d := lang.Duration(at)
	r.step(suitefile.ScriptStep{Send: &suitefile.SendStep{Endpoint: benchfile.EndpointName(endpoint), Line: &line, At: &d}})
}

// SendBytes sends a frame of bytes from a played endpoint as soon as the
// previous step has ended.
func (r *Rig) SendBytes(endpoint string, frame []byte) {
	b := suitefile.HexBytes(frame)
	r.step(suitefile.ScriptStep{Send: &suitefile.SendStep{Endpoint: benchfile.EndpointName(endpoint), Bytes: &b}})
}

// ExpectLine waits, from the end of the previous step, for a frame whose
// text is line to be delivered to a played endpoint.
func (r *Rig) ExpectLine(endpoint, line string, within time.Duration) {
	r.step(suitefile.ScriptStep{Expect: &suitefile.ExpectStep{Endpoint: benchfile.EndpointName(endpoint), Line: &line, Within: lang.Duration(within)}})
}

// Expect waits, from the end of the previous step, for a frame delivered
// to a played endpoint whose text matches the regular expression pattern.
func (r *Rig) Expect(endpoint, pattern string, within time.Duration) {
	r.t.Helper()
	re, err := regexp.Compile(pattern)
	if err != nil {
		r.t.Fatalf("rigtest: Expect(%q): %v", pattern, err)
		return
	}
	r.step(suitefile.ScriptStep{Expect: &suitefile.ExpectStep{Endpoint: benchfile.EndpointName(endpoint), Pattern: &suitefile.Pattern{Regexp: re}, Within: lang.Duration(within)}})
}

func (r *Rig) step(s suitefile.ScriptStep) {
	r.point.Script = append(r.point.Script, s)
}

// Run runs the session with the expectations (see package expect) and
// reports, as test errors, each step of the script and each expectation
// that failed, with what was measured against what limit, and each file
// of the run that could not be written. An expectation
// that does not parse, or a session that cannot start, fails the test at
// once. The result is there for further checks.
func (r *Rig) Run(expectations ...string) *suite.Result {
	r.t.Helper()
	c := &suite.Case{SuitePoint: r.point}
	names := suite.NamesOf(r.point)
	for _, text := range expectations {
		x, err := expect.Parse(text, names)
		if err != nil {
			r.t.Fatalf("rigtest: %v", err)
			return nil
		}
		c.Expect = append(c.Expect, x)
	}
	res := suite.RunCase(context.Background(), c, suite.Options{Dir: r.dir, Priority: r.priority})
	if !res.Started {
		r.t.Fatalf("rigtest: the session did not start: %v", res.Err)
		return res
	}
	for _, f := range res.Failures() {
		r.t.Errorf("rigtest: %s", f)
	}
	for _, err := range res.OutputErrors {
		r.t.Errorf("rigtest: not written: %v", err)
	}
	return res
}
