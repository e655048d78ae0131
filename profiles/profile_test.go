package profiles

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// minimal is a valid profile that the malformed cases below edit.
const minimal = `duration: 10s
hops:
  a: {rate: 4Mbit, delay: 2ms, queue: 30000B}
  b: {delay: 1ms}
flows:
  f:
    route: [a, b]
    traffic: {cbr: {interval: 20ms, size: 1000B}}
`

func TestParseMinimal(t *testing.T) {
	p, err := Parse("m.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "m" || p.RunDuration() != 10*time.Second || p.Hops.Len() != 2 {
		t.Errorf("parsed %+v", p.Profile)
	}
	want := emulator.HopParams{Rate: 4 * emulator.Mbitps, Delay: 2 * time.Millisecond, Queue: emulator.Limit{N: 30000, Unit: emulator.Bytes}}
	if !reflect.DeepEqual(p.Config.Hops[0].HopParams, want) {
		t.Errorf("hop a = %+v, want %+v", p.Config.Hops[0].HopParams, want)
	}
	if got := p.Config.Flows[0].Traffic; got != (emulator.CBR{Interval: 20 * time.Millisecond, Size: 1000}) {
		t.Errorf("traffic = %+v", got)
	}
	if !p.Traced(0) {
		t.Error("flows are traced unless trace: false")
	}
}

// withSchedule gives the minimal profile one schedule entry, on line 10.
func withSchedule(entry string) string { return minimal + "schedule:\n  - " + entry + "\n" }

// withB gives hop b of the minimal profile one more setting, on line 6.
func withB(setting string) string {
	return strings.Replace(minimal, "b: {delay: 1ms}", "b:\n    delay: 1ms\n    "+setting, 1)
}

func TestMalformedProfiles(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // the complete error output, one line per problem
	}{
		{"rate with a wrong unit",
			strings.Replace(minimal, "rate: 4Mbit", "rate: 4 Mbps", 1),
			[]string{`x.yaml:3:13: hops.a.rate: "4 Mbps" is not a rate (want e.g. 4Mbit, 512kbit)`}},
		{"misspelt key",
			strings.Replace(minimal, "delay: 1ms", "dealy: 1ms", 1),
			[]string{`x.yaml:4:7: hops.b.dealy: unknown key; did you mean delay? (want rate, delay, queue, overhead, per_frame, loss, jitter, reorder, duplicate, corrupt, flap, bus)`}},
		{"unknown top-level key",
			minimal + "sede: 3\n",
			[]string{`x.yaml:9:1: sede: unknown key; did you mean seed? (want extends, name, description, seed, duration, hops, flows, schedule)`}},
		{"route names a missing hop",
			strings.Replace(minimal, "route: [a, b]", "route: [a, c]", 1),
			[]string{`x.yaml:7:16: flows.f.route[1]: no hop named "c"`}},
		{"route with a typo",
			strings.Replace(minimal, "b: {delay: 1ms}", "bb: {delay: 1ms}", 1),
			[]string{`x.yaml:7:16: flows.f.route[1]: no hop named "b"; did you mean bb?`}},
		{"missing duration",
			strings.Replace(minimal, "duration: 10s\n", "", 1),
			[]string{`x.yaml:1:1: missing duration: want a duration (e.g. 1.5ms, 2s)`}},
		{"ambiguous minutes",
			strings.Replace(minimal, "duration: 10s", "duration: 10m", 1),
			[]string{`x.yaml:1:11: duration: "10m" is ambiguous (write min for minutes or ms for milliseconds)`}},
		{"zero duration",
			strings.Replace(minimal, "duration: 10s", "duration: 0s", 1),
			[]string{`x.yaml:1:11: duration: must be positive`}},
		{"queue without unit",
			strings.Replace(minimal, "queue: 30000B", "queue: 30000", 1),
			[]string{`x.yaml:3:39: hops.a.queue: "30000" is not a limit (want bytes such as 30000B or 30kB, or frames such as 50 frames)`}},
		{"ambiguous size",
			strings.Replace(minimal, "queue: 30000B", "queue: 30KB", 1),
			[]string{`x.yaml:3:39: hops.a.queue: "30KB" is ambiguous (1000 or 1024 bytes? write kB or KiB)`}},
		{"queue on a hop without rate",
			strings.Replace(minimal, "b: {delay: 1ms}", "b: {delay: 1ms, queue: 10 frames}", 1),
			[]string{`x.yaml:4:26: hops.b.queue: a hop without a rate or a time per frame has no queue; give it one or remove the queue`}},
		{"two traffic sources",
			strings.Replace(minimal, "{cbr: {interval: 20ms, size: 1000B}}", "{cbr: {interval: 20ms, size: 1000B}, poisson: {rate: 1Mbit, size: 1B}}", 1),
			[]string{`x.yaml:8:14: flows.f.traffic: give only one of cbr, poisson, onoff`}},
		{"cbr with interval and rate",
			strings.Replace(minimal, "interval: 20ms", "interval: 20ms, rate: 1Mbit", 1),
			[]string{`x.yaml:8:20: flows.f.traffic.cbr: give either interval or rate`}},
		{"route is not a list",
			strings.Replace(minimal, "route: [a, b]", "route: a", 1),
			[]string{`x.yaml:7:12: flows.f.route: want a list, got "a"`}},
		{"hop is not a mapping",
			strings.Replace(minimal, "b: {delay: 1ms}", "b: 1ms", 1),
			[]string{`x.yaml:4:6: hops.b: want a hop (e.g. {rate: 4Mbit, delay: 2ms, queue: 30000B}), got "1ms"`}},
		{"YAML syntax error",
			strings.Replace(minimal, "route: [a, b]", "route: [a, b", 1),
			[]string{`x.yaml:8:12: YAML syntax: did not find expected ',' or ']'`}},
		{"several problems at once",
			strings.Replace(strings.Replace(minimal, "rate: 4Mbit", "rate: fast", 1), "route: [a, b]", "route: [a, z]", 1),
			[]string{
				`x.yaml:3:13: hops.a.rate: "fast" is not a rate (want e.g. 4Mbit, 512kbit)`,
				`x.yaml:7:16: flows.f.route[1]: no hop named "z"`,
			}},
		{"outages overlap",
			minimal + "schedule:\n  - {at: 1s, for: 2s, hop: a, outage: drop}\n  - {at: 2s, for: 1s, hop: a, outage: hold}\n",
			[]string{`x.yaml:11:10: schedule[1].at: outage on hop "a" overlaps the one at schedule[0]`}},
		{"schedule after the end",
			minimal + "schedule:\n  - {at: 10s, hop: a, rate: 1Mbit}\n",
			[]string{`x.yaml:10:10: schedule[0].at: 10s is not before the profile's duration (10s)`}},
		{"hold limit without hold",
			minimal + "schedule:\n  - {at: 1s, for: 1s, hop: a, outage: drop, hold_limit: 10 frames}\n",
			[]string{`x.yaml:10:57: schedule[0].hold_limit: only an outage: hold has a hold buffer`}},
		{"outage mode misspelt",
			minimal + "schedule:\n  - {at: 1s, for: 1s, hop: a, outage: hodl}\n",
			[]string{`x.yaml:10:39: schedule[0].outage: "hodl" is not an outage mode (want drop, hold); did you mean hold?`}},
		{"schedule changes nothing",
			minimal + "schedule:\n  - {at: 1s, hop: a}\n",
			[]string{`x.yaml:10:5: schedule[0]: changes nothing (give outage, a ramp, or hop parameters such as rate or delay)`}},
		{"a second YAML document",
			minimal + "---\nduration: 1s\n",
			[]string{`x.yaml:9:1: a profile is one YAML document; found a second`}},
		{"empty file", "", []string{`x.yaml:1:1: empty profile`}},
		{"two loss models", withB("loss: {random: 1%, gilbert: {p: 1%}}"),
			[]string{`x.yaml:6:11: hops.b.loss: give only one of random, gilbert, markov4, trace`}},
		{"probability over 100%", withB("loss: {random: 150%}"),
			[]string{`x.yaml:6:20: hops.b.loss.random: "150%" is outside [0, 1] (0% to 100%)`}},
		{"markov4 sums over one", withB("loss: {markov4: {p13: 60%, p14: 50%}}"),
			[]string{`x.yaml:6:21: hops.b.loss.markov4: p13 + p14 is 1.1; leaving state 1 cannot be more likely than 100%`}},
		{"unknown jitter distribution", withB("jitter: {dist: gaussian, sigma: 1ms}"),
			[]string{`x.yaml:6:20: hops.b.jitter.dist: "gaussian" is not a jitter distribution (want uniform, normal, pareto, paretonormal, empirical)`}},
		{"jitter key of another distribution", withB("jitter: {dist: normal, sigma: 1ms, spread: 2ms}"),
			[]string{`x.yaml:6:48: hops.b.jitter.spread: normal jitter takes no spread (it takes sigma)`}},
		{"jitter missing its parameter", withB("jitter: {dist: pareto, mean: 2ms}"),
			[]string{`x.yaml:6:13: hops.b.jitter: pareto jitter needs sigma`}},
		{"correlation out of range", withB("jitter: {dist: normal, sigma: 1ms, correlation: 1.5}"),
			[]string{`x.yaml:6:53: hops.b.jitter.correlation: "1.5" is outside (−1, 1)`}},
		{"unknown reorder rule", withB("reorder: sometimes"),
			[]string{`x.yaml:6:14: hops.b.reorder: "sometimes" is not a reorder rule (want in_order, allowed), or {p, gap}`}},
		{"reorder without delay", strings.Replace(minimal, "b: {delay: 1ms}", "b:\n    reorder: {p: 5%}", 1),
			[]string{`x.yaml:5:14: hops.b.reorder: sending some frames at once needs a delay to overtake; give the hop a delay`}},
		{"corrupt rate not a number", withB("corrupt: {ber: high}"),
			[]string{`x.yaml:6:20: hops.b.corrupt.ber: "high" is not a bit error rate (want e.g. 1e-6)`}},
		{"empirical file missing", withB("jitter: {dist: empirical, file: nope.txt}"),
			[]string{`x.yaml:6:37: hops.b.jitter.file: cannot read nope.txt: no such file`}},
		{"empirical file with a bad line, at its own position", withB("jitter: {dist: empirical, file: testdata/delays-bad.txt}"),
			[]string{`testdata/delays-bad.txt:2:1: hops.b.jitter.file: "fast" is not a duration (want e.g. 1.5ms, 2s, 250us)`}},
		{"empirical bare numbers without a unit", withB("jitter: {dist: empirical, file: testdata/delays-ms.txt}"),
			[]string{
				`testdata/delays-ms.txt:2:1: hops.b.jitter.file: "12.5" is not a duration (want e.g. 1.5ms, 2s, 250us); write each value with its unit, or say the unit of bare numbers (hops.b.jitter.unit: ms)`,
				`testdata/delays-ms.txt:3:1: hops.b.jitter.file: "13.1" is not a duration (want e.g. 1.5ms, 2s, 250us); write each value with its unit, or say the unit of bare numbers (hops.b.jitter.unit: ms)`,
				`testdata/delays-ms.txt:5:1: hops.b.jitter.file: "11.9" is not a duration (want e.g. 1.5ms, 2s, 250us); write each value with its unit, or say the unit of bare numbers (hops.b.jitter.unit: ms)`,
				`testdata/delays-ms.txt:6:1: hops.b.jitter.file: "40.2" is not a duration (want e.g. 1.5ms, 2s, 250us); write each value with its unit, or say the unit of bare numbers (hops.b.jitter.unit: ms)`,
			}},
		{"repetitions shorter than the window", withSchedule("{at: 1s, for: 2s, every: 1s, hop: a, outage: drop}"),
			[]string{`x.yaml:10:30: schedule[0].every: 1s is shorter than for (2s); repetitions would overlap`}},
		{"count without every", withSchedule("{at: 1s, for: 1s, count: 3, hop: a, outage: drop}"),
			[]string{`x.yaml:10:30: schedule[0].count: count needs every: the period of the repetitions`}},
		{"repetitions past the end", withSchedule("{at: 5s, for: 1s, every: 2s, count: 4, hop: a, outage: drop}"),
			[]string{`x.yaml:10:41: schedule[0].count: repetition 4 would start at 11s, not before the profile's duration (10s)`}},
		{"a repetition overlaps another outage", withSchedule("{at: 1s, for: 1s, every: 2s, hop: a, outage: drop}\n  - {at: 4s, for: 2s, hop: a, outage: hold}"),
			[]string{`x.yaml:10:10: schedule[0].at: repetition 3 (at 5s) of this outage on hop "a" overlaps the one at schedule[1]`}},
		{"ramp without a duration", withSchedule("{at: 1s, hop: a, ramp: {rate: {from: 1Mbit, to: 2Mbit}}}"),
			[]string{`x.yaml:10:28: schedule[0].ramp: a ramp needs for: how long it takes`}},
		{"a value both set and ramped", withSchedule("{at: 1s, for: 1s, hop: a, rate: 1Mbit, ramp: {rate: {from: 1Mbit, to: 2Mbit}}}"),
			[]string{`x.yaml:10:57: schedule[0].ramp.rate: rate is both set and ramped by this entry`}},
		{"ramp of nothing", withSchedule("{at: 1s, for: 1s, hop: a, ramp: {}}"),
			[]string{`x.yaml:10:37: schedule[0].ramp: ramps nothing (give rate, delay or loss, each with from and to)`}},
		{"ramp without its end", withSchedule("{at: 1s, for: 1s, hop: a, ramp: {rate: {from: 1Mbit}}}"),
			[]string{`x.yaml:10:44: schedule[0].ramp.rate: missing to: want a rate (e.g. 4Mbit, 512kbit)`}},
		{"extends an unknown profile", "extends: nope\n" + minimal,
			[]string{`x.yaml:1:10: extends: cannot find "nope": no such file next to this profile, and no shipped profile by that name`}},
		{"extends is not a name", "extends: [a]\n" + minimal,
			[]string{`x.yaml:1:10: extends: want the name or path of a profile, got a list`}},
		// Required, and given empty: no network (issue 16, item 10).
		{"no hops and no flows", "duration: 1s\nhops: {}\nflows: {}\n",
			[]string{`x.yaml:2:7: hops: a profile needs at least one hop`, `x.yaml:3:8: flows: a profile needs at least one flow`}},
		{"no flows", "duration: 1s\nhops: {a: {delay: 1ms}}\nflows:\n",
			[]string{`x.yaml:3:7: flows: a profile needs at least one flow`}},
		{"no hops nor flows written", "duration: 1s\n",
			[]string{`x.yaml:1:1: missing hops: want a mapping of names to a hop`, `x.yaml:1:1: missing flows: want a mapping of names to a flow`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.yaml))
			var list lang.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v, want an ErrorList", err)
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func TestShippedProfilesLoad(t *testing.T) {
	names := Shipped()
	if len(names) == 0 {
		t.Fatal("no shipped profiles")
	}
	for _, name := range names {
		p, err := Load(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Description == "" {
			t.Errorf("%s has no description", name)
		}
		if _, err := emulator.New(p.Config, nil); err != nil {
			t.Errorf("%s: the engine rejects it: %v", name, err)
		}
	}
}

func TestLoadUnknown(t *testing.T) {
	_, err := Load("no-such-profile")
	if err == nil || !strings.Contains(err.Error(), "no-such-profile") {
		t.Errorf("got %v", err)
	}
}

// FuzzParse checks that no input makes the parser or validator panic or
// hang, that whatever it accepts the engine accepts too, that hilrig
// show's rendering of it runs the same, and that it is read the same
// parsed lazily (as it is only decoded) and at once (as show parses it):
// the same problems, or the same configuration.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(radio))
	for _, name := range Shipped() {
		data, _ := library.ReadFile(name + ".yaml")
		f.Add(data)
	}
	f.Add([]byte("hops: {a: &x {delay: 1ms}, b: *x}\nflows: {}\nduration: 1s\n"))
	f.Add([]byte("duration: [1s\n"))
	f.Add([]byte("# a header\n\nduration: 1s # how long\nhops: {a: {delay: 1ms}} # one\nflows:\n  # the flow\n  f: {route: [a]}\n# the end\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("fuzz.yaml", data)
		whole, wholeErr := parse("fuzz.yaml", string(data), nil, load, true)
		if fmt.Sprint(err) != fmt.Sprint(wholeErr) || err == nil && !reflect.DeepEqual(whole.Config, p.Config) {
			t.Fatalf("parsed lazily, %q gives\n%v\nparsed at once\n%v", data, err, wholeErr)
		}
		if err != nil {
			var list lang.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a positioned list: %v", err)
			}
			return
		}
		if _, err := emulator.New(p.Config, nil); err != nil {
			t.Fatalf("validated profile rejected by the engine: %v", err)
		}
		shown := p.AsWritten()
		again, err := Parse("fuzz.yaml", shown)
		if err != nil || !reflect.DeepEqual(again.Config, p.Config) {
			t.Fatalf("show's rendering runs differently (%v):\n%s", err, shown)
		}
	})
}
