package web

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
)

// MaxChanges bounds the changes made by hand that one run keeps. Its
// as-run profile replays every one, so none is dropped: a change beyond
// it is refused (409) before it is applied. The record keeps each as its
// schedule entry's line, some 40 to 100 bytes; the engine and the run's
// events keep more (BENCHMARKS.md has the figures).
const MaxChanges = 100_000

// asRunRecord is the changes made by hand, in the order the executor
// applied them, as the schedule entries that replay them: the lines the
// profile language writes them in, in one buffer (a parsed entry and the
// engine's parameters took some 600 bytes a change, kept for the run).
// (For the profile as it runs, the rig keeps the latest change that set
// each parameter of each hop, which is bounded by the hops: Host.)
type asRunRecord struct {
	mu       sync.Mutex
	lines    []byte       // the entries' lines, each ended by '\n'
	times    []entryTimes // when each acts, to write them in time order
	kept     int          // lines in it
	reserved int          // changes posted to the executor and not settled
	next     uint64       // the number of the next change to keep
	// early holds changes settled before one applied ahead of them:
	// each waits for its turn, so that changes at one instant replay in
	// the order they were applied.
	early map[uint64]keptChange
}

// hopParam is a parameter of a hop: its index and the engine's field.
type hopParam struct {
	hop   int
	field emulator.HopField
}

// keptChange is a change applied, for the record: its entry's line, and
// what it set.
type keptChange struct {
	line string
	c    change
}

// reserve makes room for a change about to be posted, or refuses it when
// the record is full; every reservation is settled (keep or release).
func (r *asRunRecord) reserve() *errChange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept+r.reserved >= MaxChanges {
		return refuse(http.StatusConflict, "", "this run has had %d changes made by hand, the most it keeps: its as-run profile replays every one, so no more are taken (start another run to change more)", MaxChanges)
	}
	r.reserved++
	return nil
}

// release settles a reservation whose change was not applied.
func (r *asRunRecord) release() {
	r.mu.Lock()
	r.reserved--
	r.mu.Unlock()
}

// keep settles the reservation of change number seq, applied, whose entry
// is line, and keeps it in its turn.
func (r *asRunRecord) keep(seq uint64, line string, c change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reserved--
	if r.early == nil {
		r.early = map[uint64]keptChange{}
	}
	r.early[seq] = keptChange{line, c}
	for {
		k, ok := r.early[r.next]
		if !ok {
			return
		}
		delete(r.early, r.next)
		r.next++
		r.lines = append(append(r.lines, k.line...), '\n')
		r.times = append(r.times, timesOf(&k.c.entry, MaxRunTime))
		r.kept++
	}
}

// entries returns the lines kept, in the order applied.
func (r *asRunRecord) entries() []byte {
	lines, _ := r.entriesAndTimes()
	return lines
}

// entriesAndTimes returns the lines kept, in the order applied, and when
// each acts.
func (r *asRunRecord) entriesAndTimes() ([]byte, []entryTimes) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.lines), slices.Clone(r.times)
}

// MaxRunTime stands for the end of a run when an entry recurs until it.
const MaxRunTime = emulator.MaxDuration

// entryTimes is when a schedule entry acts: from at, every every (0: once)
// count times, each act undone length later (0: never), or, ramping, all
// along length.
type entryTimes struct {
	at, length, every time.Duration
	count             int64
	ramp              bool
}

// timesOf is when e acts in a run that ends at end.
func timesOf(e *profiles.ScheduleEntry, end time.Duration) entryTimes {
	t := entryTimes{at: time.Duration(e.At), count: 1, ramp: e.Ramp != nil}
	if e.For != nil {
		t.length = time.Duration(*e.For)
	}
	if e.Every != nil && *e.Every > 0 {
		t.every = time.Duration(*e.Every)
		t.count = profiles.StartedBefore(t.at, t.every, math.MaxInt64, end)
		if e.Count != nil {
			t.count = min(t.count, int64(*e.Count))
		}
	}
	return t
}

// span is the first and last instant at which t acts.
func (t entryTimes) span() (first, last time.Duration) {
	last = t.at
	if t.count > 1 {
		last += time.Duration(t.count-1) * t.every
	}
	return t.at, last + t.length
}

// mayActTogether reports whether a and b may act at one instant, where
// which is written first decides which acts first. It is exact for
// entries that act once, and says yes for recurring or ramping ones whose
// spans meet.
func mayActTogether(a, b entryTimes) bool {
	af, al := a.span()
	bf, bl := b.span()
	switch {
	case al < bf || bl < af:
		return false
	case a.count > 1 || b.count > 1 || a.ramp || b.ramp:
		return true
	}
	acts := func(t entryTimes) []time.Duration {
		if t.length > 0 {
			return []time.Duration{t.at, t.at + t.length}
		}
		return []time.Duration{t.at}
	}
	for _, x := range acts(a) {
		if slices.Contains(acts(b), x) {
			return true
		}
	}
	return false
}

// maxOrdered bounds the entries timeOrder orders (it takes their number
// squared); a longer schedule is written in its own order.
const maxOrdered = 2000

// timeOrder is the order in which to write entries in time order: by
// their first instant, but two that may act at one instant keep their
// order, which decides which acts first, so that the schedule written
// replays exactly as the one given.
func timeOrder(ts []entryTimes) []int {
	order := make([]int, 0, len(ts))
	if len(ts) > maxOrdered {
		for i := range ts {
			order = append(order, i)
		}
		return order
	}
	placed := make([]bool, len(ts))
	for range ts {
		next := -1
	candidates:
		for i := range ts {
			if placed[i] || next >= 0 && ts[i].at >= ts[next].at {
				continue
			}
			for j := range i {
				if !placed[j] && mayActTogether(ts[j], ts[i]) {
					continue candidates // j must be written first
				}
			}
			next = i
		}
		placed[next] = true
		order = append(order, next)
	}
	return order
}

// entryAt is the line of a schedule entry at an instant: pre is the entry
// as the profile language writes it at 0 (renderEntry), whose at, its
// first key, takes the instant's value.
func entryAt(pre string, at time.Duration) (string, bool) {
	rest, ok := strings.CutPrefix(pre, "{at: 0s")
	if !ok || !strings.HasPrefix(rest, ",") && !strings.HasPrefix(rest, "}") {
		return "", false
	}
	return "{at: " + lang.Duration(at).String() + rest, true
}

// asRunMarker stands in the schedule for the changes made by hand while
// the profile is written; it is then replaced by their lines.
var asRunMarker = profiles.ScheduleEntry{Phase: "hilrig.as-run.changes"}

// asRunMarkerN is the marker of the n-th group of changes made by hand.
func asRunMarkerN(n int) profiles.ScheduleEntry {
	return profiles.ScheduleEntry{Phase: profiles.PhaseName(fmt.Sprintf("%s.%d", asRunMarker.Phase, n))}
}

// asRunSchedule is the schedule of the as-run profile in time order: the
// profile's entries (those the run reaches) and, among them, markers for
// the groups of changes made by hand (byHand, when each acts), which were
// applied after the profile's entries of their instant and stay after
// them. It returns the schedule and the number of changes in each group.
func asRunSchedule(profile []profiles.ScheduleEntry, end time.Duration, byHand []entryTimes) ([]profiles.ScheduleEntry, []int) {
	times := make([]entryTimes, len(profile))
	for i := range profile {
		times[i] = timesOf(&profile[i], end)
	}
	order := timeOrder(times)
	// slot[j]: how many of the profile's entries, in order, come before
	// change j: every one that acts at or before it, or may act with it.
	slot := make([]int, len(byHand))
	for j, h := range byHand {
		for q, i := range order {
			if times[i].at <= h.at || mayActTogether(times[i], h) {
				slot[j] = q + 1
			}
		}
		if j > 0 {
			slot[j] = max(slot[j], slot[j-1])
		}
	}
	var out []profiles.ScheduleEntry
	var groups []int
	j := 0
	for q := 0; q <= len(order); q++ {
		if start := j; j < len(slot) && slot[j] == q {
			for j < len(slot) && slot[j] == q {
				j++
			}
			out = append(out, asRunMarkerN(len(groups)))
			groups = append(groups, j-start)
		}
		if q < len(order) {
			out = append(out, profile[order[q]])
		}
	}
	return out, groups
}

// spliceChanges writes the lines of the changes made by hand where the
// marker's line is in text, a profile written with the marker as the last
// entry of its schedule, at its indentation.
func spliceChanges(text []byte, marker string, lines []byte) ([]byte, error) {
	item := "- " + marker + "\n"
	at := bytes.LastIndex(text, []byte(item))
	if at < 0 {
		return nil, errors.New("the profile language did not write the schedule as a list of one-line entries")
	}
	lineStart := bytes.LastIndexByte(text[:at], '\n') + 1
	indent := text[lineStart:at]
	var out bytes.Buffer
	out.Grow(len(text) + len(lines) + bytes.Count(lines, []byte("\n"))*(len(indent)+2))
	out.Write(text[:lineStart])
	for line := range bytes.Lines(lines) {
		out.Write(indent)
		out.WriteString("- ")
		out.Write(line)
	}
	out.Write(text[at+len(item):])
	return out.Bytes(), nil
}
