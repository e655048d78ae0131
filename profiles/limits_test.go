package profiles

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// century is emulator.MaxDuration as a profile writes it.
const century = "876600h"

// TestDurationsUpToACentury: every duration a profile, a --set, a flag or
// a live change gives is at most emulator.MaxDuration, refused beyond it at
// its key's place; so nothing the engine adds from them wraps.
func TestDurationsUpToACentury(t *testing.T) {
	if got := lang.Duration(emulator.MaxDuration).String(); got != century {
		t.Fatalf("MaxDuration is written %s", got)
	}
	for _, tc := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{century, emulator.MaxDuration, ""},
		{"3155760000s", emulator.MaxDuration, ""},
		{"3155760000000000000ns", emulator.MaxDuration, ""},
		{"3155760000000000001ns", 0, "is too long: hilrig takes durations up to 876600h (a century)"},
		{"876601h", 0, "is too long"},
		{"9223372036854775807ns", 0, "is too long"},
		{"9223372036.854775807s", 0, "is too long"},
		{"9223372036854775808ns", 0, "is not a whole number of nanoseconds, or is too long"},
	} {
		got, err := lang.ParseDuration(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
		}
	}

	const tooLong = "9223372036.854775807s"
	for _, tc := range []struct {
		name, text string
		sets       []string
		want       string
	}{
		{"the duration", strings.Replace(minimal, "duration: 10s", "duration: "+tooLong, 1), nil, "x.yaml:1:11: duration: "},
		{"a delay", minimal, []string{"hops.a.delay=9223372036854775807ns"}, "--set:1:14: hops.a.delay: "},
		{"a time per frame", withB("per_frame: " + tooLong), nil, "x.yaml:6:16: hops.b.per_frame: "},
		{"a jitter", withB("jitter: {dist: normal, sigma: " + tooLong + "}"), nil, "x.yaml:6:35: hops.b.jitter.sigma: "},
		{"a schedule entry's for", withSchedule("{at: 1s, for: " + tooLong + ", hop: a, outage: drop}"), nil, "x.yaml:10:19: schedule[0].for: "},
		{"a delay change's for", withSchedule("{at: 1s, for: " + tooLong + ", hop: a, delay: 1s}"), nil, "x.yaml:10:19: schedule[0].for: "},
		{"a phase's for", withSchedule("{at: 2.33s, for: " + tooLong + ", phase: p}"), nil, "x.yaml:10:22: schedule[0].for: "},
		{"a period", withSchedule("{at: 1s, every: " + tooLong + ", hop: a, outage: drop}"), nil, "x.yaml:10:21: schedule[0].every: "},
		{"a start", withSchedule("{at: " + tooLong + ", hop: a, outage: drop}"), nil, "x.yaml:10:10: schedule[0].at: "},
		{"a source's start", strings.Replace(minimal, "size: 1000B}", "size: 1000B, start: "+tooLong+"}", 1), nil, "x.yaml:8:57: flows.f.traffic.cbr.start: "},
	} {
		_, err := Parse("x.yaml", []byte(tc.text), tc.sets...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), "is too long: hilrig takes durations up to 876600h (a century)") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one error at %s: ... is too long", tc.name, err, tc.want)
		}
	}

	// A live change says the same.
	p, err := Parse("x.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.ParseChange("PATCH", []byte(`{"delay": "9223372036854775807ns"}`), "a"); err == nil || !strings.Contains(err.Error(), "PATCH:1:11: delay: \"9223372036854775807ns\" is too long") {
		t.Errorf("a live change: %v", err)
	}
}

// TestLongestDurationsRun: a profile at the limits loads, the engine
// takes what it loads, and its phase windows and ramp steps are in order.
func TestLongestDurationsRun(t *testing.T) {
	text := strings.NewReplacer("duration: 10s", "duration: "+century, "delay: 2ms", "delay: "+century).Replace(minimal) + `schedule:
  - {at: 1s, for: 876599h, hop: b, outage: drop}
  - {at: 2.33s, for: 876599h, phase: long}
  - {at: 0s, for: 876600h, hop: b, ramp: {delay: {from: 0s, to: 876600h}}}
  - {at: 0s, every: 438300h, for: 438300h, phase: halves}
`
	p, err := Parse("x.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emulator.New(p.Config, nil); err != nil {
		t.Fatalf("the engine refuses what loaded: %v", err)
	}
	for _, ph := range p.Phases() {
		for _, w := range ph.Windows {
			for k := range w.Occurrences() {
				if o := w.Occurrence(k); o.To < o.From || o.From < 0 {
					t.Errorf("phase %s: window %d is [%v, %v)", ph.Name, k, o.From, o.To)
				}
			}
		}
	}
	last := time.Duration(-1)
	for _, s := range p.Config.Schedule {
		if set, ok := s.Change.(emulator.SetHop); ok && set.Set == emulator.FieldDelay {
			if s.At <= last || s.At > emulator.MaxDuration || set.Params.Delay < 0 || set.Params.Delay > emulator.MaxDuration {
				t.Errorf("a ramp step at %v (after %v) sets the delay to %v", s.At, last, set.Params.Delay)
			}
			last = s.At
		}
	}
	if want := emulator.MaxDuration; last != want {
		t.Errorf("the ramp's last step is at %v, want %v", last, want)
	}
}

// FuzzScheduleNearMaxDuration writes profiles whose duration, schedule
// entries, phases and ramps are near emulator.MaxDuration (or past it, in
// any unit) and checks what loads: the engine takes it, its phase windows
// and changes are in order and within twice the limit, and its run's
// events are never due before the time they are queued at.
func FuzzScheduleNearMaxDuration(f *testing.F) {
	f.Add(uint64(1e9), uint64(9223372036854775807), uint64(0), uint8(0), uint8(0), uint16(0))
	f.Add(uint64(3155759999999999999), uint64(1), uint64(2), uint8(1), uint8(1), uint16(3))
	f.Add(uint64(0), uint64(3155760000000000000), uint64(3155760000000000000), uint8(2), uint8(2), uint16(1))
	f.Add(uint64(2330000000), uint64(1<<63|12), uint64(1<<63|7), uint8(3), uint8(0), uint16(2))
	f.Fuzz(func(t *testing.T, at, length, every uint64, kind, unit uint8, count uint16) {
		// A value as given, or counted back from the limit when the top
		// bit is set; written in ns, us, ms, s or h where that is exact.
		write := func(v uint64) string {
			if v>>63 != 0 {
				v = uint64(emulator.MaxDuration) - v&(1<<62-1)%uint64(emulator.MaxDuration)
			}
			units := []struct {
				name string
				ns   uint64
			}{{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"h", 3600e9}}
			u := units[int(unit)%len(units)]
			if v%u.ns != 0 {
				u = units[0]
			}
			return strconv.FormatUint(v/u.ns, 10) + u.name
		}
		entry := "{at: " + write(at)
		if length != 0 {
			entry += ", for: " + write(length)
		}
		if every != 0 {
			entry += ", every: " + write(every)
			if count != 0 {
				entry += ", count: " + strconv.Itoa(int(count))
			}
		}
		switch kind % 4 {
		case 0:
			entry += ", hop: a, outage: drop}"
		case 1:
			entry += ", hop: a, delay: " + write(length/2) + "}"
		case 2:
			entry += ", phase: p}"
		case 3:
			entry += ", hop: b, ramp: {delay: {from: 0s, to: " + write(every) + "}}}"
		}
		text := "duration: " + write(at|every) + `
hops:
  a: {rate: 4Mbit, delay: ` + write(length) + `}
  b: {delay: 1ms}
flows:
  f: {route: [a, b], traffic: {cbr: {interval: 100000h, size: 100B}}}
schedule:
  - ` + entry + "\n"
		p, err := Parse("x.yaml", []byte(text))
		if err != nil {
			var list lang.ErrorList
			if !errors.As(err, &list) || len(list) == 0 || list[0].Pos.Line == 0 {
				t.Fatalf("%s: not a positioned error: %v", text, err)
			}
			return
		}
		for _, ph := range p.Phases() {
			for _, w := range ph.Windows {
				for _, k := range []int64{0, w.Occurrences() - 1} {
					if o := w.Occurrence(k); o.From < 0 || o.To < o.From || o.To > 2*emulator.MaxDuration {
						t.Fatalf("%s: window %d of phase %s is [%v, %v)", text, k, ph.Name, o.From, o.To)
					}
				}
			}
		}
		for _, s := range p.Config.Schedule {
			if s.At < 0 || s.At > emulator.MaxDuration || s.For < 0 || s.For > emulator.MaxDuration {
				t.Fatalf("%s: a change at %v for %v", text, s.At, s.For)
			}
		}
		n, err := emulator.New(p.Config, nil)
		if err != nil {
			t.Fatalf("%s: the engine refuses what loaded: %v", text, err)
		}
		end, events := p.RunDuration(), 0
		for due, ok := n.NextEvent(); ok && due < end && events < 10_000; due, ok = n.NextEvent() {
			if due < n.Now() {
				t.Fatalf("%s: an event due at %v, queued by %v", text, due, n.Now())
			}
			n.Advance(due)
			events++
		}
	})
}
