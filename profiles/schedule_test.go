package profiles

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// intervals writes w's occurrences out.
func intervals(w Window) []Window {
	var out []Window
	for k := range w.Occurrences() {
		out = append(out, w.Occurrence(k))
	}
	return out
}

// TestFirstOverlapAsWrittenOut compares the arithmetic overlap check of
// two recurring windows with their occurrences written out: whether any
// overlap, and which overlap first.
func TestFirstOverlapAsWrittenOut(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	window := func() Window {
		w := Window{From: time.Duration(r.IntN(60)), Count: 1 + int64(r.IntN(12))}
		length := time.Duration(1 + r.IntN(9))
		w.Every = length + time.Duration(r.IntN(12))
		if w.Count == 1 && r.IntN(2) == 0 {
			w.Every, w.Count = 0, 0
		}
		w.To = w.From + length
		return w
	}
	for range 10_000 {
		a, b := window(), window()
		wantI, wantJ, want := int64(-1), int64(-1), false
		for i, x := range intervals(a) {
			for j, y := range intervals(b) {
				if x.From < y.To && y.From < x.To {
					if !want || int64(i) < wantI {
						wantI = int64(i)
					}
					if !want || int64(j) < wantJ {
						wantJ = int64(j)
					}
					want = true
				}
			}
		}
		i, j, ok := firstOverlap(a, b)
		if ok != want || ok && (i != wantI || j != wantJ) {
			t.Fatalf("%+v and %+v: first overlap %d, %d (%v), written out %d, %d (%v)", a, b, i, j, ok, wantI, wantJ, want)
		}
		for tt := a.From - 1; tt < a.Occurrence(a.Occurrences()-1).To+1; tt++ {
			in := false
			for _, x := range intervals(a) {
				in = in || tt >= x.From && tt < x.To
			}
			if a.Contains(tt) != in {
				t.Fatalf("%+v contains %v: %v, written out %v", a, tt, a.Contains(tt), in)
			}
		}
	}
}

// TestPathologicalScheduleIsBounded: issue 10's schedule, an outage every
// nanosecond for 100 s, and a count of 4·10^10, load as one recurring
// entry each, with as many allocations as the same entry recurring every
// second: nothing is written out per occurrence.
func TestPathologicalScheduleIsBounded(t *testing.T) {
	profile := func(entry string) string {
		return "duration: 100s\nhops:\n  h: {delay: 1ms}\nflows:\n  f: {route: [h], traffic: {cbr: {interval: 10ms, size: 100B}}}\nschedule:\n  - " + entry + "\n"
	}
	tests := []struct {
		entry, sameShape string
		count            int64
	}{
		{"{at: 0s, for: 1ns, every: 1ns, hop: h, outage: drop, phase: p}", "{at: 0s, for: 1ns, every: 1s, hop: h, outage: drop, phase: p}", 100e9},
		{"{at: 0s, for: 1ns, every: 2ns, count: 40000000000, hop: h, outage: drop}", "{at: 0s, for: 1ns, every: 2s, count: 40, hop: h, outage: drop}", 40e9},
		{"{at: 1s, for: 1ns, every: 1ns, hop: h, ramp: {delay: {from: 1ms, to: 2ms}}}", "{at: 1s, for: 1ns, every: 1s, hop: h, ramp: {delay: {from: 1ms, to: 2ms}}}", 99e9},
	}
	for _, tc := range tests {
		p := mustParse(t, "x.yaml", profile(tc.entry))
		if s := p.Config.Schedule; len(s) == 0 || s[0].Count != tc.count {
			t.Errorf("%s: %+v, want one block of %d occurrences", tc.entry, s, tc.count)
		}
		for _, ph := range p.Phases() {
			if len(ph.Windows) != 1 || ph.Windows[0].Occurrences() != tc.count {
				t.Errorf("%s: phase %+v", tc.entry, ph)
			}
		}
		parse := func(text string) func() {
			return func() {
				if _, err := Parse("x.yaml", []byte(text)); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Written out, the entry would take an allocation or more per
		// occurrence (10^11); the counts may differ by a few, with a longer
		// number to parse or the race detector's pools.
		often, seldom := testing.AllocsPerRun(5, parse(profile(tc.entry))), testing.AllocsPerRun(5, parse(profile(tc.sameShape)))
		if often > 2*seldom {
			t.Errorf("%s: %v allocations, %v recurring every second", tc.entry, often, seldom)
		}
		if _, err := emulator.New(p.Config, nil); err != nil {
			t.Errorf("%s: the engine refuses it: %v", tc.entry, err)
		}
	}
}

// TestCheckPeriods: a real-time run refuses periods shorter than the
// executor acts on, each at its place; sim takes them.
func TestCheckPeriods(t *testing.T) {
	p := mustParse(t, "x.yaml", minimal+`schedule:
  - {at: 1s, for: 1ns, every: 1ns, hop: a, outage: drop}
  - {at: 1s, for: 1us, every: 100us, hop: b, outage: drop}
  - {at: 2s, for: 1us, every: 99us, hop: b, delay: 5ms}
`)
	err := p.CheckPeriods(100*time.Microsecond, "the resolution")
	var list lang.ErrorList
	if !errors.As(err, &list) || len(list) != 2 ||
		list[0].Error() != "x.yaml:10:31: schedule[0].every: 1ns is shorter than the resolution (100us): a change cannot recur that often in real time (sim can)" ||
		list[1].Path != "schedule[2].every" || list[1].Pos.Line != 12 {
		t.Errorf("%v", err)
	}
	if err := p.CheckPeriods(time.Nanosecond, "the resolution"); err != nil {
		t.Errorf("1 ns: %v", err)
	}
}

// scheduleEntry is one fuzzed entry of FuzzSchedule, in units of 10 µs.
type fuzzedEntry struct {
	kind                 uint8
	at, span, every, cnt uint8
}

func (e fuzzedEntry) yaml() string {
	us := func(n uint8) string { return fmt.Sprintf("%dus", 10*int(n)) }
	var b strings.Builder
	fmt.Fprintf(&b, "{at: %s", us(e.at))
	if e.span > 0 {
		fmt.Fprintf(&b, ", for: %s", us(e.span))
	}
	if e.every > 0 {
		fmt.Fprintf(&b, ", every: %s", us(e.every))
	}
	if e.cnt > 0 {
		fmt.Fprintf(&b, ", count: %d", e.cnt)
	}
	hop := []string{"a", "b"}[e.kind/8%2]
	switch e.kind % 8 {
	case 0, 1:
		fmt.Fprintf(&b, ", hop: %s, outage: drop", hop)
	case 2:
		fmt.Fprintf(&b, ", hop: %s, outage: hold, hold_limit: 3 frames", hop)
	case 3:
		fmt.Fprintf(&b, ", hop: %s, delay: 50us, rate: 2Mbit", hop)
	case 4:
		fmt.Fprintf(&b, ", hop: %s, ramp: {delay: {from: 0s, to: 100us}, rate: {from: 8Mbit, to: 1Mbit}}", hop)
	case 5:
		b.WriteString(", flow: f, traffic: off")
	case 6:
		fmt.Fprintf(&b, ", hop: %s, loss: {random: 20%%}, phase: lossy", hop)
	case 7:
		b.WriteString(", phase: marked")
	}
	b.WriteString("}")
	return b.String()
}

// FuzzSchedule parses schedules of recurring entries, checks the outage
// overlap verdict against the outages written out, and runs the network
// they build for the profile's 10 ms: nothing panics, every problem is a
// positioned error, every frame is accounted for.
func FuzzSchedule(f *testing.F) {
	f.Add([]byte{0, 10, 5, 20, 0, 1, 30, 5, 20, 0})
	f.Add([]byte{0, 0, 1, 1, 0, 8, 0, 1, 1, 0})
	f.Add([]byte{4, 10, 10, 10, 0, 3, 12, 3, 10, 4, 5, 0, 2, 7, 0})
	f.Add([]byte{2, 0, 0, 3, 0, 7, 0, 9, 9, 0})
	f.Add([]byte{6, 1, 1, 1, 255, 10, 100, 1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		const end = 10 * time.Millisecond
		var entries []fuzzedEntry
		for len(data) >= 5 && len(entries) < 4 {
			entries = append(entries, fuzzedEntry{data[0], data[1], data[2], data[3], data[4]})
			data = data[5:]
		}
		text := `duration: 10ms
hops:
  a: {rate: 4Mbit, delay: 100us, queue: 20 frames}
  b: {delay: 50us}
flows:
  f: {route: [a, b], traffic: {cbr: {interval: 40us, size: 100B}}}
schedule:
`
		for _, e := range entries {
			text += "  - " + e.yaml() + "\n"
		}
		p, err := Parse("x.yaml", []byte(text))
		overlapping := outagesOverlap(entries, end)
		if err != nil {
			var list lang.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("not a positioned error list: %v", err)
			}
			if !overlapping && strings.Contains(err.Error(), "overlaps") {
				t.Fatalf("%s: no outages overlap, yet %v", text, err)
			}
			return
		}
		if overlapping {
			t.Fatalf("%s: outages overlap, yet it loaded", text)
		}
		var count counter
		n, err := emulator.New(p.Config, &count)
		if err != nil {
			t.Fatalf("%s: the engine refuses what loaded: %v", text, err)
		}
		n.Run(end)
		st := n.FlowStats(0)
		var finished uint64
		for _, c := range st.Status {
			finished += c
		}
		if finished != st.Sent || count.frames != st.Sent+st.Duplicates+st.DuplicatesLost {
			t.Fatalf("%s: %d sent, %d finished, the observer saw %d", text, st.Sent, finished, count.frames)
		}
	})
}

type counter struct{ frames uint64 }

func (c *counter) Finished(*emulator.Frame) { c.frames++ }

// outagesOverlap writes out the fuzzed entries' outages as the profile
// language defines them (at, then every `every`, `count` times or while
// before the end; each for `for`, or until the end) and reports whether
// two on one hop overlap.
func outagesOverlap(entries []fuzzedEntry, end time.Duration) bool {
	const unit = 10 * time.Microsecond
	var windows [2][]Window
	for _, e := range entries {
		if e.kind%8 > 2 {
			continue
		}
		at, span, every := time.Duration(e.at)*unit, time.Duration(e.span)*unit, time.Duration(e.every)*unit
		for k := 0; at+time.Duration(k)*every < end && (e.cnt == 0 || k < int(e.cnt)); k++ {
			from := at + time.Duration(k)*every
			to := end
			if span > 0 {
				to = from + span
			}
			windows[e.kind/8%2] = append(windows[e.kind/8%2], Window{From: from, To: to})
			if every == 0 {
				break
			}
		}
	}
	for _, ws := range windows {
		for i := range ws {
			for j := range i {
				if ws[i].From < ws[j].To && ws[j].From < ws[i].To {
					return true
				}
			}
		}
	}
	return false
}

// TestStartedBefore: of the occurrences at at + k·every, those that begin
// before end, no more than count: ⌈(end − at)/every⌉ capped by count.
func TestStartedBefore(t *testing.T) {
	const s = time.Second
	for _, tc := range []struct {
		at, every time.Duration
		count     int64
		end       time.Duration
		want      int64
	}{
		{3 * s, 30 * s, 4, 6 * s, 1},
		{3 * s, 30 * s, 4, 34 * s, 2},
		{3 * s, 30 * s, 4, 33 * s, 1}, // the second begins at 33 s: not before
		{3 * s, 30 * s, 4, 200 * s, 4},
		{7 * s, 0, 1, 6 * s, 0},
		{0, 2 * s, 1000, 6 * s, 3},
		{0, 1, 1 << 40, s, int64(s)},
	} {
		if got := StartedBefore(tc.at, tc.every, tc.count, tc.end); got != tc.want {
			t.Errorf("StartedBefore(%v, %v, %d, %v) = %d, want %d", tc.at, tc.every, tc.count, tc.end, got, tc.want)
		}
	}
}
