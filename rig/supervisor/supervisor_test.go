package supervisor_test

import (
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/supervisor"
)

const ms = time.Millisecond

// TestValidityEdges checks paper 004's Eq. 1 at its edges: a message is
// valid for a step to target iff target − maxage ≤ T ≤ target, and the
// newest valid one is taken.
func TestValidityEdges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stamps  []time.Duration
		target  time.Duration
		want    time.Duration
		ok      bool
		remains int // messages kept after the choice
	}{
		{"exactly maxage old", []time.Duration{700 * ms}, 1000 * ms, 700 * ms, true, 1},
		{"a nanosecond too old", []time.Duration{700*ms - 1}, 1000 * ms, 0, false, 1},
		{"stamped at the target", []time.Duration{1000 * ms}, 1000 * ms, 1000 * ms, true, 1},
		{"a nanosecond in the future", []time.Duration{1000*ms + 1}, 1000 * ms, 0, false, 1},
		{"the newest valid, the newer future kept", []time.Duration{750 * ms, 800 * ms, 900 * ms, 1100 * ms}, 1000 * ms, 900 * ms, true, 2},
		{"out of order on arrival", []time.Duration{900 * ms, 750 * ms, 800 * ms}, 1000 * ms, 900 * ms, true, 1},
		{"nothing", nil, 1000 * ms, 0, false, 0},
	} {
		b := supervisor.NewInbox(8, 1)
		for _, s := range tc.stamps {
			b.Slot()[0] = float64(s / ms)
			b.Put(s)
		}
		values, got, ok := b.Valid(tc.target, 300*ms)
		if ok != tc.ok || got != tc.want || ok && values[0] != float64(tc.want/ms) || b.Len() != tc.remains {
			t.Errorf("%s: got %v %v (values %v), %d kept; want %v %v, %d kept", tc.name, got, ok, values, b.Len(), tc.want, tc.ok, tc.remains)
		}
	}
}

// TestInboxDropsTheOldest: a full inbox drops its oldest message and
// allocates nothing.
func TestInboxDropsTheOldest(t *testing.T) {
	b := supervisor.NewInbox(4, 2)
	for i := range 10 {
		s := b.Slot()
		s[0], s[1] = float64(i), -float64(i)
		b.Put(time.Duration(i) * 100 * ms)
	}
	if newest, _ := b.Newest(); b.Len() != 4 || b.Dropped != 6 || newest != 900*ms {
		t.Fatalf("%d kept, %d dropped, newest %v", b.Len(), b.Dropped, newest)
	}
	if v, at, ok := b.Valid(650*ms, 100*ms); !ok || at != 600*ms || v[0] != 6 || v[1] != -6 {
		t.Errorf("chose %v at %v (%v)", v, at, ok)
	}
	i := 0
	if allocs := testing.AllocsPerRun(1000, func() {
		b.Slot()[0] = float64(i)
		b.Put(time.Duration(i) * ms)
		b.Valid(time.Duration(i)*ms, 10*ms)
		i++
	}); allocs != 0 {
		t.Errorf("%v allocations per message", allocs)
	}
}

// TestStepSize: in sync a step is Δh; out of sync up to J·Δh, bounded by
// the newest queued data and by the wall clock, in whole Δh.
func TestStepSize(t *testing.T) {
	dh := 100 * ms
	for _, tc := range []struct {
		flagged              bool
		jump                 int
		newest, current, lag time.Duration
		want                 time.Duration
	}{
		{false, 3, 2000 * ms, 1000 * ms, 900 * ms, dh},      // in sync: Δh whatever the data
		{true, 1, 2000 * ms, 1000 * ms, 900 * ms, dh},       // J = 1: no jump
		{true, 3, 2000 * ms, 1000 * ms, 900 * ms, 300 * ms}, // bounded by J
		{true, 3, 1250 * ms, 1000 * ms, 900 * ms, 200 * ms}, // by the data: 250 ms → 2 whole steps
		{true, 3, 2000 * ms, 1000 * ms, 150 * ms, dh},       // by the wall clock
		{true, 3, 1050 * ms, 1000 * ms, 900 * ms, dh},       // less than Δh of data: still Δh
		{true, 10, 9000 * ms, 1000 * ms, 9000 * ms, 1000 * ms},
		// 2³² + 1 steps of data and of lag, which a 32-bit int takes for 1.
		{true, 3, (1<<32 + 1) * dh, 0, (1<<32 + 1) * dh, 300 * ms},
	} {
		if got := supervisor.StepSize(dh, tc.jump, tc.flagged, tc.newest, tc.current, tc.lag); got != tc.want {
			t.Errorf("%+v: %v", tc, got)
		}
	}
}

// TestFlagHysteresis: out of sync when t_diff > θ_safe (not at it), back
// when t_diff ≤ θ_safe − resync; the episode keeps its peak and steps.
func TestFlagHysteresis(t *testing.T) {
	for _, resync := range []time.Duration{0, 50 * ms} {
		s, err := supervisor.New(supervisor.Config{ThetaSafe: 299 * ms, Resync: resync, Check: 10 * ms, Jump: 3}, 100*ms)
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			tdiff time.Duration
			want  supervisor.Transition
		}{
			{299 * ms, supervisor.NoChange}, // at θ_safe: in sync (Eq. 3 is strict)
			{299*ms + 1, supervisor.OutOfSync},
			{800 * ms, supervisor.NoChange},
			{299 * ms, map[bool]supervisor.Transition{true: supervisor.BackInSync, false: supervisor.NoChange}[resync == 0]},
			{249 * ms, map[bool]supervisor.Transition{true: supervisor.NoChange, false: supervisor.BackInSync}[resync == 0]},
		}
		for i, st := range steps {
			if got := s.Observe(time.Duration(i)*time.Second, st.tdiff); got != st.want {
				t.Errorf("resync %v, step %d (t_diff %v): %v, want %v", resync, i, st.tdiff, got, st.want)
			}
		}
		eps := s.Episodes()
		if len(eps) != 1 || eps[0].Peak != 800*ms || eps[0].Start != time.Second || eps[0].End < 0 {
			t.Errorf("resync %v: episodes %+v", resync, eps)
		}
	}
}

// TestViolatingRuns counts consecutive violating steps, as paper 004's
// Figure 9 does.
func TestViolatingRuns(t *testing.T) {
	s, _ := supervisor.New(supervisor.Config{ThetaSafe: 299 * ms, Check: 10 * ms, Jump: 1}, 100*ms)
	for _, v := range []bool{true, false, true, true, true, false, false, true, true} {
		tdiff := 100 * ms
		if v {
			tdiff = 400 * ms
		}
		s.Stepped(100*ms, tdiff, false)
	}
	runs := s.ViolatingRuns()
	if runs[0] != 1 || runs[1] != 1 || runs[2] != 1 {
		t.Errorf("runs of 1, 2, 3 steps: %v", runs[:4])
	}
}

// TestPeakCountsTheChecks: a model that stalls reaches its largest t_diff
// between steps, at the checks, just before the step that catches up; the
// run's peak is that, as the episode's is (the run's was taken after steps
// only: 0.5 s where the episode, and the signals, said 0.8 s).
func TestPeakCountsTheChecks(t *testing.T) {
	s, _ := supervisor.New(supervisor.Config{ThetaSafe: 299 * ms, Check: 10 * ms, Jump: 3}, 100*ms)
	step := func(now, tdiff time.Duration) {
		s.Stepped(100*ms, tdiff, false)
		s.Observe(now, tdiff)
	}
	step(10200*ms, 0) // the last step before the stall, to h = 10.2 s
	for now := 10210 * ms; now <= 11000*ms; now += 10 * ms {
		s.Observe(now, now-10200*ms) // the checks while stalled
	}
	step(11000*ms, 500*ms) // a jump of 300 ms
	step(11001*ms, 201*ms) // and another: back in sync
	eps := s.Episodes()
	if len(eps) != 1 || eps[0].Peak != 800*ms || eps[0].End != 11001*ms {
		t.Fatalf("episodes %+v; want one from 10.5 s to 11.001 s with peak 800ms", eps)
	}
	if s.Peak() != eps[0].Peak {
		t.Errorf("run's peak %v, episode's %v: the run's is the largest t_diff observed", s.Peak(), eps[0].Peak)
	}
}
