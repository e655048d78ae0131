package record

import (
	"reflect"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// TestRecurringPhase: a phase that recurs every 3 ms for 100 s (33 334
// windows, kept as one) counts the frames sent in its windows and lists
// the first MaxListedWindows of them, saying how many more there are.
func TestRecurringPhase(t *testing.T) {
	const ms = time.Millisecond
	w := profiles.Window{From: ms, To: 2 * ms, Every: 3 * ms, Count: 33_334}
	r := NewPhases([]profiles.Phase{{Name: "p", Windows: []profiles.Window{w, {From: 200 * time.Second, To: 201 * time.Second}}}}, []string{"f"})
	for _, sent := range []time.Duration{0, ms, 2*ms - 1, 2 * ms, 4 * ms, 100_000 * ms, 100_001 * ms, 200 * time.Second} {
		r.Finished(&emulator.Frame{Sent: sent, Status: emulator.Delivered, Done: sent + ms})
	}
	s := r.Summary(300 * time.Second)[0]
	// In: 1 ms, 2 ms − 1 ns, 4 ms (the second window), 100 s (window
	// 33 333, the last), 200 s (the second entry). Out: 0, 2 ms, 100.001 s.
	if s.Flows[0].Sent != 5 {
		t.Errorf("%d frames counted, want 5", s.Flows[0].Sent)
	}
	if len(s.Windows) != MaxListedWindows || s.WindowsNotListed != 33_334+1-MaxListedWindows ||
		s.Windows[1] != [2]float64{0.004, 0.005} {
		t.Errorf("%d windows listed (second %v), %d not listed", len(s.Windows), s.Windows[1], s.WindowsNotListed)
	}
}

// TestPhasesAsTheRunWent: a run that stops at 6 s lists the windows it
// reached, the one it was in cut at 6 s, and leaves out the phase it
// never reached (its zeros would read as measured).
func TestPhasesAsTheRunWent(t *testing.T) {
	const s = time.Second
	r := NewPhases([]profiles.Phase{
		{Name: "handoff", Windows: []profiles.Window{{From: 3 * s, To: 3*s + 400*time.Millisecond, Every: 30 * s, Count: 4}}},
		{Name: "outage", Windows: []profiles.Window{{From: 5 * s, To: 8 * s}}},
		{Name: "recovered", Windows: []profiles.Window{{From: 70 * s, To: 90 * s}}},
		{Name: "every-2s", Windows: []profiles.Window{{From: 0, To: s, Every: 2 * s, Count: 1000}}},
	}, []string{"f"})
	got := map[string][][2]float64{}
	for _, ps := range r.Summary(6 * s) {
		got[ps.Name] = ps.Windows
	}
	want := map[string][][2]float64{
		"handoff":  {{3, 3.4}},
		"outage":   {{5, 6}},
		"every-2s": {{0, 1}, {2, 3}, {4, 5}}, // the one from 6 s has not begun
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("windows %v, want %v", got, want)
	}
}
