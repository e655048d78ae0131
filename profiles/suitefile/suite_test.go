package suitefile

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles/lang"
)

var update = flag.Bool("update", false, "rewrite the generated key reference in profiles/suites/README.md")

// TestSuiteErrors: every malformed suite is refused with the exact
// message at the exact place: the suite's own mistakes in the suite, a
// profile's or bench's in its file, naming the case that led there.
func TestSuiteErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"",
			"testdata/s.yaml:1:1: empty suite"},
		{"cases: [",
			"testdata/s.yaml:2:1: YAML syntax: did not find expected node content"},
		{"name: x\n",
			"testdata/s.yaml:1:1: missing cases: want a mapping of names to a case"},
		{"cases: {}\n",
			"testdata/s.yaml:1:8: cases: a suite needs at least one case"},
		{"cases: []\n",
			"testdata/s.yaml:1:8: cases: want a mapping of names to a case (e.g. {profile: bottleneck, expect: [flows.m2s.lost == 0]}), got a list"},
		{"cases:\n  a: {profile: bottleneck}\nextra: 1\n",
			"testdata/s.yaml:3:1: extra: unknown key (want name, description, bench, clock, duration, expect, cases)"},
		{"cases:\n  a: {profile: bottlenek}\n",
			"testdata/s.yaml:2:16: cases.a.profile: cannot find \"bottlenek\": no such file next to the suite, and no shipped profile by that name; did you mean bottleneck?"},
		{"cases:\n  a: {matrix: {profiles: [lte, wifi-bursy]}}\n",
			"testdata/s.yaml:2:32: cases.a.matrix.profiles[1]: cannot find \"wifi-bursy\": no such file next to the suite, and no shipped profile by that name; did you mean wifi-bursty?"},
		{"cases:\n  a: {profile: nosuch.yaml}\n",
			"testdata/s.yaml:2:16: cases.a.profile: cannot find \"nosuch.yaml\": no such file next to the suite, and no shipped profile by that name"},
		{"cases:\n  a: {}\n",
			"testdata/s.yaml:2:6: cases.a: missing profile: want a shipped profile's name or a profile file (or matrix.profiles)"},
		{"cases:\n  a: {profile: bottleneck, matrix: {profiles: [lte]}}\n",
			"testdata/s.yaml:2:16: cases.a.profile: give profile or matrix.profiles, not both"},
		{"cases:\n  a: {profile: bottleneck, seed: 1, matrix: {seeds: [2]}}\n",
			"testdata/s.yaml:2:34: cases.a.seed: give seed or matrix.seeds, not both"},
		{"cases:\n  a: {profile: bottleneck, matrix: {}}\n",
			"testdata/s.yaml:2:36: cases.a.matrix: is empty: give profiles, seeds or set"},
		{"cases:\n  a: {profile: bottleneck, matrix: {seeds: []}}\n",
			"testdata/s.yaml:2:44: cases.a.matrix.seeds: is empty: leave it out, or give at least one"},
		{"cases:\n  a: {profile: bottleneck, matrix: {seeds: [1, 2, 1]}}\n",
			"testdata/s.yaml:2:51: cases.a.matrix.seeds[2]: seed 1 is given twice"},
		{"cases:\n  a: {matrix: {profiles: [lte, lte]}}\n",
			"testdata/s.yaml:2:32: cases.a.matrix.profiles[1]: profile lte is given twice"},
		{"cases:\n  a: {profile: bottleneck, seed: -1}\n",
			"testdata/s.yaml:2:34: cases.a.seed: \"-1\" is not a whole number"},
		{"cases:\n  a: {profile: bottleneck, duration: 0s}\n",
			"testdata/s.yaml:2:38: cases.a.duration: must be positive"},
		{"cases:\n  a: {profile: bottleneck, duration: 10}\n",
			"testdata/s.yaml:2:38: cases.a.duration: \"10\" is not a duration (want e.g. 1.5ms, 2s, 250us)"},
		{"duration: 0s\ncases:\n  a: {profile: bottleneck}\n",
			"testdata/s.yaml:1:11: duration: must be positive"},
		{"clock: wall\ncases:\n  a: {profile: bottleneck}\n",
			"testdata/s.yaml:1:8: clock: \"wall\" is not a clock (want virtual, real)"},
		{"cases:\n  a: {profile: bottleneck, clock: real}\n",
			"testdata/s.yaml:2:6: cases.a: a real-time case needs a bench: give bench here or in the suite"},
		{"cases:\n  a: {profile: bottleneck, set: {hops.core-up.rate: fast}}\n",
			"testdata/s.yaml:2:53: hops.core-up.rate: \"fast\" is not a rate (want e.g. 4Mbit, 512kbit)"},
		{"cases:\n  a: {profile: bottleneck, set: {hops.core-upp.rate: 2Mbit}}\n",
			"testdata/s.yaml:2:39: hops.core-upp: the profile has no \"core-upp\" in hops; did you mean core-up?"},
		{"cases:\n  a: {profile: bottleneck, set: {hops..rate: 2Mbit}}\n",
			"testdata/s.yaml:2:39: cases.a.set.hops..rate: \"\" is not a key (want keys and list indices, e.g. schedule[0].at)"},
		{"cases:\n  a: {profile: bottleneck, set: [hops.core-up.rate=2Mbit]}\n",
			"testdata/s.yaml:2:33: cases.a.set: want overrides, path: value (e.g. {hops.core-up.rate: 2Mbit}), got a list"},
		{"cases:\n  a: {profile: bottleneck, matrix: {set: [{hops.core-up.queue: 10 frame}, {hops.core-up.rate: 0Mbit}]}}\n",
			"testdata/s.yaml:2:95: hops.core-up.rate: \"0Mbit\" must be positive"},
		{"cases:\n  a: {profile: bottleneck, expect: [1, {a: b}]}\n",
			"testdata/s.yaml:2:40: cases.a.expect[1]: want an expectation (e.g. \"flows.m2s.delay.p95 < 60ms\"), got a mapping"},
		{"bench: nosuch.yaml\ncases:\n  a: {profile: bottleneck}\n",
			"testdata/s.yaml:1:8: bench: open testdata/nosuch.yaml: no such file or directory"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a: {profile: lte, set: {flows.sensor.role: null}}\n",
			"benches/virtual.yaml:15:18: bind.to-controller: profile lte has no flow with role to-controller (its flows are command, sensor): give one of them role: to-controller, or bind a flow by its name (the bench of cases.a, with profile lte)"},
		{"cases:\n  a: {profile: bottleneck, bench: ../benches/virtual.yaml}\n",
			"testdata/s.yaml:2:35: cases.a.bench: in virtual time a bench matters only for its models and the endpoints a script plays: bench virtual has no model, and the case no script"},
		{"cases:\n  a: {profile: bottleneck, script: [{send: {endpoint: plant, line: x}}]}\n",
			"testdata/s.yaml:2:36: cases.a.script: a script plays a bench's endpoints: give bench here or in the suite"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plnt, line: x}\n",
			"testdata/s.yaml:6:26: cases.a.script[0].send.endpoint: bench virtual has no endpoint \"plnt\"; did you mean plant?"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant}\n",
			"testdata/s.yaml:6:15: cases.a.script[0].send: give line or bytes"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, bytes: '01'}\n",
			"testdata/s.yaml:6:15: cases.a.script[0].send: give line or bytes, not both"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, bytes: 0g}\n",
			"testdata/s.yaml:6:40: cases.a.script[0].send.bytes: \"0g\" is not bytes in hex (want e.g. \"01 02 ff\")"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: 1s, after: 1s}\n",
			"testdata/s.yaml:6:57: cases.a.script[0].send.after: give at or after, not both"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, every: 1s}\n",
			"testdata/s.yaml:6:49: cases.a.script[0].send.every: every is the interval between the frames of a count: give count too, how many frames to send"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, count: 3}\n",
			"testdata/s.yaml:6:49: cases.a.script[0].send.count: 3 frames need every, the interval between them"},
		{"bench: ../benches/virtual.yaml\nduration: 2s\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: 5s}\n",
			"testdata/s.yaml:7:46: cases.a.script[0].send.at: 5s is at or past the end of the run, at 2s: nothing would be sent"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    duration: 2s\n    script:\n      - send: {endpoint: plant, line: x, at: 1s, every: 100ms, count: 10}\n      - send: {endpoint: plant, line: x, at: 1s, every: 100ms, count: 11}\n",
			"testdata/s.yaml:8:71: cases.a.script[1].send.count: the last of 11 frames, one every 100ms from 1s, would be sent at 2s, at or past the end of the run, at 2s"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: 30s}\n",
			"testdata/s.yaml:6:46: cases.a.script[0].send.at: 30s is at or past the end of the run, at 30s: nothing would be sent"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, line: x, pattern: x, within: 1s}\n",
			"testdata/s.yaml:6:17: cases.a.script[0].expect: give one of line, pattern or bytes, not several"},
		{"cases:\n  a: {profile: bottleneck, set: {duration: 5s}}\n",
			"testdata/s.yaml:2:34: cases.a.set.duration: a set may not change how long the run lasts: give the case duration: 5s (a case runs for its duration:, else the suite's, else its profile's)"},
		{"cases:\n  a: {profile: bottleneck, set: {seed: 9}}\n",
			"testdata/s.yaml:2:34: cases.a.set.seed: a set may not change the seed: give the case seed: 9 (or matrix.seeds)"},
		{"cases:\n  a: {profile: bottleneck, matrix: {set: [{duration: 5s}, {seed: 2}]}}\n",
			"testdata/s.yaml:2:44: cases.a.matrix.set[0].duration: a set may not change how long the run lasts, and a matrix does not vary it: give each duration a case of its own, with duration: 5s (a case runs for its duration:, else the suite's, else its profile's)\ntestdata/s.yaml:2:60: cases.a.matrix.set[1].seed: a set may not change the seed: give matrix.seeds: [2]"},
		{"cases:\n  a: {profile: bottleneck, matrix: {set: [{}, {hops.core-up.rate: 2Mbit}, {}]}}\n",
			"testdata/s.yaml:2:75: cases.a.matrix.set[2]: the same set as matrix.set[0]"},
		{"cases:\n  a:\n    matrix: {profiles: [bottleneck, lte, wifi-bursty], set: [{hops.up.rate: 2Mbit}]}\n",
			"testdata/s.yaml:3:68: hops.up: the profile has no \"up\" in hops (with profiles bottleneck, lte)"},
		{"cases:\n  a:\n    matrix: {profiles: [bottleneck, lte], set: [{hops.core-up.rate: 2Mbit}]}\n",
			"testdata/s.yaml:3:55: hops.core-up: the profile has no \"core-up\" in hops (with profile lte)"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, every: 0s, count: 0}\n",
			"testdata/s.yaml:6:49: cases.a.script[0].send.every: must be positive\ntestdata/s.yaml:6:60: cases.a.script[0].send.count: 0 frames: nothing would be sent; give at least 1 (the default), or leave the step out"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, line: x}\n",
			"testdata/s.yaml:6:17: cases.a.script[0].expect: missing within: want a duration (e.g. 1.5ms, 2s)"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, within: 1s}\n",
			"testdata/s.yaml:6:17: cases.a.script[0].expect: give one of line, pattern or bytes"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, pattern: 'a(b', within: 1s}\n",
			"testdata/s.yaml:6:44: cases.a.script[0].expect.pattern: \"a(b\" is not a regular expression: missing closing )"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, line: x, within: 0s}\n",
			"testdata/s.yaml:6:52: cases.a.script[0].expect.within: must be positive"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - {send: {endpoint: plant, line: x}, expect: {endpoint: plant, line: x, within: 1s}}\n",
			"testdata/s.yaml:6:9: cases.a.script[0]: give only one of send, expect"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - wait: 1s\n",
			"testdata/s.yaml:6:9: cases.a.script[0].wait: unknown key (want send, expect)\ntestdata/s.yaml:6:9: cases.a.script[0]: want one of send, expect"},
		{"bench: ../suites/benches/quarter-car-cp2.yaml\ncases:\n  a:\n    profile: internet-hil\n    script:\n      - send: {endpoint: car, line: x}\n",
			"testdata/s.yaml:6:26: cases.a.script[0].send.endpoint: car is a model the rig simulates; a script plays the bench's other endpoints"},
		{"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: -1s}\n",
			"testdata/s.yaml:6:46: cases.a.script[0].send.at: \"-1s\" must not be negative"},
	} {
		_, err := ParseSuite("testdata/s.yaml", []byte(tc.src))
		if err == nil {
			t.Errorf("%q: no error, want %s", tc.src, tc.want)
			continue
		}
		if err.Error() != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, err, tc.want)
		}
	}
}

// TestSuitePoints: a matrix expands into its combinations, in order, each
// named after what it varies; defaults come from the suite.
func TestSuitePoints(t *testing.T) {
	src := `name: points
bench: ../benches/virtual.yaml
duration: 2s
expect: [flows.m2s.lost == 0]
cases:
  plain:
    profile: bottleneck
    seed: 7
    script:
      - send: {endpoint: controller, line: "x{n}", every: 10ms, count: 3}
      - expect: {endpoint: plant, pattern: "^x2$", within: 50ms}
    expect: ["flows.m2s.delay.max < 10ms"]
  grid:
    clock: real
    duration: 1s
    set: {description: the grid}
    matrix:
      profiles: [bottleneck, teleop-table1]
      seeds: [1, 2]
      set: [{flows.m2s.trace: false}, {description: another}]
  sets:
    profile: bottleneck
    matrix: {set: [{}, {hops.core-up.rate: 2Mbit}]}
  quiet:
    profile: bottleneck
    script:
      - send: {endpoint: controller, line: x, count: 1}
`
	s, err := ParseSuite("testdata/points.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range s.Points {
		ids = append(ids, p.ID)
	}
	want := []string{"plain",
		"grid[bottleneck,seed=1,flows.m2s.trace=false]", "grid[bottleneck,seed=2,flows.m2s.trace=false]",
		"grid[bottleneck,seed=1,description=another]", "grid[bottleneck,seed=2,description=another]",
		"grid[teleop-table1,seed=1,flows.m2s.trace=false]", "grid[teleop-table1,seed=2,flows.m2s.trace=false]",
		"grid[teleop-table1,seed=1,description=another]", "grid[teleop-table1,seed=2,description=another]",
		"sets", "sets[hops.core-up.rate=2Mbit]", "quiet"}
	if strings.Join(ids, " ") != strings.Join(want, " ") {
		t.Fatalf("points %v\nwant %v", ids, want)
	}
	plain := s.Points[0]
	if plain.Real || plain.Duration.Seconds() != 2 || *plain.Seed != 7 || len(plain.Expect) != 2 || plain.Expect[0].Text != "flows.m2s.lost == 0" || plain.Expect[1].Path != "cases.plain.expect[0]" {
		t.Errorf("plain: %+v", plain)
	}
	if strings.Join(plain.Played, ",") != "controller,plant" || plain.Bench == nil {
		t.Errorf("plain plays %v", plain.Played)
	}
	// The expectation's place: line 12, after `expect: ["`.
	if got := plain.Expect[1].At(7).String(); got != "testdata/points.yaml:12:21" {
		t.Errorf("column 7 of the case's expectation is at %s", got)
	}
	g := s.Points[1]
	if !g.Real || g.Duration.Seconds() != 1 || *g.Seed != 1 || g.Profile.Name != "bottleneck" {
		t.Errorf("grid[0]: %+v", g)
	}
	if d := g.Profile.Description; d != "the grid" || g.Profile.Traced(0) {
		t.Errorf("grid[0]'s profile is %q, traces m2s %v; want the case's description and its point's trace: false", d, g.Profile.Traced(0))
	}
	if d := s.Points[3].Profile.Description; d != "another" || !s.Points[3].Profile.Traced(0) {
		t.Errorf("grid[2]'s profile is %q, want its set's description", d)
	}
	// A case in virtual time with neither a script nor a model has
	// nothing to do on the suite's bench: it runs without it. With a
	// script (of one frame: count 1 alone), it plays the bench.
	if b := s.Points[9].Bench; s.Points[9].ID != "sets" || b != nil {
		t.Errorf("%s runs on bench %v, want none", s.Points[9].ID, b)
	}
	if q := s.Points[11]; q.Bench == nil || strings.Join(q.Played, ",") != "controller" {
		t.Errorf("quiet: bench %v, plays %v", q.Bench, q.Played)
	}
	// Points of a profile and set share the loaded profile.
	if s.Points[1].Profile != s.Points[2].Profile || s.Points[1].Profile == s.Points[3].Profile {
		t.Error("the points of one profile and set do not share it, or points of two sets do")
	}
}

func FuzzParseSuite(f *testing.F) {
	for _, src := range malformedSuites {
		f.Add(src)
	}
	f.Add("cases:\n  a: {profile: bottleneck, expect: [flows.m2s.lost == 0]}\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := ParseSuite("testdata/fuzz.yaml", []byte(src))
		if err != nil {
			list, ok := err.(lang.ErrorList)
			if !ok || len(list) == 0 {
				t.Fatalf("%q: %T %v", src, err, err)
			}
			return
		}
		if len(s.Points) == 0 {
			t.Fatalf("%q: a suite without points", src)
		}
	})
}

var malformedSuites = []string{
	"",
	"cases: [",
	"name: x\n",
	"cases: {}\n",
	"cases: []\n",
	"cases:\n  a: {profile: bottleneck}\nextra: 1\n",
	"cases:\n  a: {profile: bottlenek}\n",
	"cases:\n  a: {profile: nosuch.yaml}\n",
	"cases:\n  a: {}\n",
	"cases:\n  a: {profile: bottleneck, matrix: {profiles: [lte]}}\n",
	"cases:\n  a: {profile: bottleneck, seed: 1, matrix: {seeds: [2]}}\n",
	"cases:\n  a: {profile: bottleneck, matrix: {}}\n",
	"cases:\n  a: {profile: bottleneck, matrix: {seeds: []}}\n",
	"cases:\n  a: {profile: bottleneck, matrix: {seeds: [1, 2, 1]}}\n",
	"cases:\n  a: {matrix: {profiles: [lte, lte]}}\n",
	"cases:\n  a: {profile: bottleneck, seed: -1}\n",
	"cases:\n  a: {profile: bottleneck, duration: 0s}\n",
	"cases:\n  a: {profile: bottleneck, duration: 10}\n",
	"duration: 0s\ncases:\n  a: {profile: bottleneck}\n",
	"clock: wall\ncases:\n  a: {profile: bottleneck}\n",
	"cases:\n  a: {profile: bottleneck, clock: real}\n",
	"cases:\n  a: {profile: bottleneck, set: {hops.core-up.rate: fast}}\n",
	"cases:\n  a: {profile: bottleneck, set: {hops.core-upp.rate: 2Mbit}}\n",
	"cases:\n  a: {profile: bottleneck, set: {hops..rate: 2Mbit}}\n",
	"cases:\n  a: {profile: bottleneck, set: [hops.core-up.rate=2Mbit]}\n",
	"cases:\n  a: {profile: bottleneck, matrix: {set: [{hops.core-up.queue: 10 frame}, {hops.core-up.rate: 0Mbit}]}}\n",
	"cases:\n  a: {profile: bottleneck, expect: [1, {a: b}]}\n",
	"bench: nosuch.yaml\ncases:\n  a: {profile: bottleneck}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a: {profile: lte}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a: {profile: bottleneck}\n",
	"cases:\n  a: {profile: bottleneck, script: [{send: {endpoint: plant, line: x}}]}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plnt, line: x}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, bytes: '01'}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, bytes: 0g}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: 1s, after: 1s}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, every: 1s}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, every: 0s, count: 0}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, line: x}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, within: 1s}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, pattern: 'a(b', within: 1s}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - expect: {endpoint: plant, line: x, within: 0s}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - {send: {endpoint: plant, line: x}, expect: {endpoint: plant, line: x, within: 1s}}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - wait: 1s\n",
	"bench: ../suites/benches/quarter-car-cp2.yaml\ncases:\n  a:\n    profile: internet-hil\n    script:\n      - send: {endpoint: car, line: x}\n",
	"bench: ../benches/virtual.yaml\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: -1s}\n",
	"cases:\n  a: {profile: bottleneck, set: {duration: 5s}}\n",
	"cases:\n  a: {profile: bottleneck, matrix: {set: [{}, {hops.core-up.rate: 2Mbit}, {}]}}\n",
	"cases:\n  a:\n    matrix: {profiles: [bottleneck, lte], set: [{hops.core-up.rate: 2Mbit}]}\n",
	"bench: ../benches/virtual.yaml\nduration: 2s\ncases:\n  a:\n    profile: bottleneck\n    script:\n      - send: {endpoint: plant, line: x, at: 1s, every: 0.5s, count: 3}\n",
}

// TestSuiteReference keeps the key reference in suites/README.md equal
// to what the schema defines.
func TestSuiteReference(t *testing.T) {
	const file = "suites/README.md"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	begin := "<!-- BEGIN SUITE KEYS: generated by `go test ./profiles/suitefile -run TestSuiteReference -update`; do not edit -->\n"
	end := "<!-- END SUITE KEYS -->"
	start, stop := strings.Index(doc, begin), strings.Index(doc, end)
	if start < 0 || stop < start {
		t.Fatalf("%s lacks the markers %q and %q", file, begin, end)
	}
	want := "\n" + SuiteReference()
	if doc[start+len(begin):stop] == want {
		return
	}
	if !*update {
		t.Fatalf("%s's key reference is out of date; run: go test ./profiles/suitefile -run TestSuiteReference -update", file)
	}
	if err := os.WriteFile(file, []byte(doc[:start+len(begin)]+want+doc[stop:]), 0o644); err != nil {
		t.Fatal(err)
	}
}
