package web

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
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
	lines    []byte // the entries' lines, each ended by '\n'
	kept     int    // lines in it
	reserved int    // changes posted to the executor and not settled
	next     uint64 // the number of the next change to keep
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
		r.kept++
	}
}

// entries returns the lines kept, in the order applied.
func (r *asRunRecord) entries() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.lines)
}

// entryAt is the line of a schedule entry at an instant: pre is the entry
// as the profile language writes it at 0 (renderEntry), whose at, its
// first key, takes the instant's value.
func entryAt(pre string, at time.Duration) (string, bool) {
	rest, ok := strings.CutPrefix(pre, "{at: 0s")
	if !ok || !strings.HasPrefix(rest, ",") && !strings.HasPrefix(rest, "}") {
		return "", false
	}
	return "{at: " + profiles.Duration(at).String() + rest, true
}

// asRunMarker stands in the schedule for the changes made by hand while
// the profile is written; it is then replaced by their lines.
var asRunMarker = profiles.ScheduleEntry{Phase: "hilrig.as-run.changes"}

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
