package web

import (
	"slices"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
)

func TestTimeOrder(t *testing.T) {
	s := time.Second
	once := func(at, length time.Duration) entryTimes { return entryTimes{at: at, length: length, count: 1} }
	every := func(at, period time.Duration, n int64) entryTimes { return entryTimes{at: at, every: period, count: n} }
	for _, tc := range []struct {
		name  string
		times []entryTimes
		want  []int
	}{
		{"out of order", []entryTimes{once(50*s, 0), once(10*s, 0), once(0, 40*s)}, []int{2, 1, 0}},
		{"ties keep their order", []entryTimes{once(10*s, 0), once(10*s, 0), once(5*s, 0)}, []int{2, 0, 1}},
		// The undo of the first, at 10 s, and the second act together:
		// which is written first acts first.
		{"an undo meets a change", []entryTimes{once(10*s, 0), once(5*s, 5*s)}, []int{0, 1}},
		{"an undo elsewhere", []entryTimes{once(10*s, 0), once(5*s, 4*s)}, []int{1, 0}},
		// Every 10 s from 0 meets the one at 10 s.
		{"a recurring entry meets one", []entryTimes{once(10*s, 0), every(0, 10*s, 5)}, []int{0, 1}},
		{"a recurring entry ends before", []entryTimes{once(60*s, 0), every(0, 10*s, 5)}, []int{1, 0}},
	} {
		if got := timeOrder(tc.times); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAsRunScheduleInTimeOrder: the changes made by hand go among the
// profile's entries by time, after those of their instant.
func TestAsRunScheduleInTimeOrder(t *testing.T) {
	d := func(v time.Duration) lang.Duration { return lang.Duration(v) }
	profile := []profiles.ScheduleEntry{{At: d(50 * time.Second), Phase: "late"}, {At: d(10 * time.Second), Phase: "mid"}, {At: 0, Phase: "start"}}
	byHand := []entryTimes{{at: 0, count: 1}, {at: 3 * time.Second, count: 1}, {at: 20 * time.Second, count: 1}}
	got, groups := asRunSchedule(profile, time.Minute, byHand)
	var names []string
	for _, e := range got {
		names = append(names, string(e.Phase))
	}
	want := []string{"start", "hilrig.as-run.changes.0", "mid", "hilrig.as-run.changes.1", "late"}
	if !slices.Equal(names, want) || !slices.Equal(groups, []int{2, 1}) {
		t.Errorf("%v %v, want %v [2 1]", names, groups, want)
	}
}
