package tests

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// twinSummary is what the paper 004 tests read of a summary.
type twinSummary struct {
	Flows []struct {
		Name string `json:"name"`
		Sent uint64 `json:"sent"`
	} `json:"flows"`
	Models []struct {
		SimTimeS float64 `json:"sim_time_s"`
		Messages struct {
			Generated, Sent, Received, Lost, Skipped uint64
			InFlight                                 uint64 `json:"in_flight"`
			SkippedDisruption                        uint64 `json:"skipped_disruption"`
		} `json:"messages"`
		Sync struct {
			PeakTDiffS float64 `json:"peak_t_diff_s"`
			Episodes   []struct {
				StartS     float64  `json:"start_s"`
				EndS       *float64 `json:"end_s"`
				PeakTDiffS float64  `json:"peak_t_diff_s"`
				Steps      int      `json:"steps"`
				StepSizes  []struct {
					StepS float64 `json:"step_s"`
					Count uint64  `json:"count"`
				} `json:"step_sizes"`
				Disrupted bool `json:"disrupted"`
			} `json:"episodes"`
		} `json:"sync"`
	} `json:"models"`
}

func runTwin(t *testing.T, profile, bench string, args ...string) (twinSummary, []row) {
	t.Helper()
	dir := t.TempDir()
	trace, summary := filepath.Join(dir, "trace.csv"), filepath.Join(dir, "summary.json")
	args = append([]string{"sim", profile, "--bench", "../profiles/benches/" + bench, "--trace", trace, "--summary", summary}, args...)
	if r := runHilrig(t, args...); r.code != 0 {
		t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
	}
	data, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	var s twinSummary
	if err := json.Unmarshal(data, &s); err != nil || len(s.Models) != 1 {
		t.Fatalf("summary: %v\n%s", err, data)
	}
	return s, readTrace(t, trace)
}

// TestPaper004Drop reproduces paper 004's drop (Section 5.3, Tables 4
// and 5) in virtual time: the digital twin (DT) steps on the robot's
// states, 100 ms apart, with maxage 300 ms, θ_safe 299 ms, J = 3 and
// Δ = 10 ms; from 10 s to 11 s the state path holds every state and
// releases them together at 11 s.
//
// The timeline, with T_last the last state delivered before the outage
// and c the step cost (2.76 ms):
//   - the DT steps on stale data while it is valid: it stalls at
//     h_s = ⌊(T_last + maxage)/Δh⌋·Δh;
//   - t_diff = t − h_s crosses θ_safe at t_c = h_s + θ_safe, and the
//     supervisor, checking every Δ, flags at the first check after it,
//     within Δ of t_c;
//   - at the release t_r = 11 s it steps J·Δh at a time, the k-th step at
//     t_r + (k−1)·c leaving t_diff = t_r + (k−1)·c − h_s − k·J·Δh, so it is
//     back in sync after k = ⌈(t_r − h_s − θ_safe − c)/(J·Δh − c)⌉ steps
//     (while the queued states, up to 10.9 s, allow a full jump);
//   - it commands nothing from the flag to the resync: the k steps are
//     skipped during the disruption, and over the run it generates one
//     message per step, (h_end/Δh) − (J − 1)·k in all.
//
// Paper 004 counts StepsDone − 1 skipped (4–5) because its flag reaches
// the data broker one co-simulation step late (Jacobi); the rig commands
// nothing once flagged. Its DT resynced in 5–6 steps covering 10–13
// steps' worth of 100 ms (at most 2.8 jumps of 300 ms on average; its
// text's "3.8" does not agree with its own tables), because its states
// were about 249 ms old on arrival (γ_min) where this profile's are 11 ms:
// its DT stalled earlier and had further to catch up.
func TestPaper004Drop(t *testing.T) {
	s, trace := runTwin(t, "twin-dropout", "digital-twin.yaml")
	m := s.Models[0]
	const (
		dh      = 100 * time.Millisecond
		maxage  = 300 * time.Millisecond
		theta   = 299 * time.Millisecond
		check   = 10 * time.Millisecond
		cost    = 2760 * time.Microsecond
		release = 11 * time.Second
		jump    = 3
	)
	// The last state that left the hop before the outage began at 10 s.
	tLast := time.Duration(-1)
	for _, r := range trace {
		if r.flow == "state" && r.status == "delivered" && r.recv < 10*time.Second {
			tLast = max(tLast, r.sent)
		}
	}
	hs := (tLast + maxage) / dh * dh
	tc := hs + theta
	k := int(math.Ceil(float64(release-hs-theta-cost) / float64(jump*dh-cost)))
	t.Logf("T_last %v, stall at h_s %v, crossing at %v, predicted resync in %d jumps of %v", tLast, hs, tc, k, jump*dh)

	if len(m.Sync.Episodes) != 1 {
		t.Fatalf("%d out-of-sync episodes; want the drop's one: %+v", len(m.Sync.Episodes), m.Sync.Episodes)
	}
	ep := m.Sync.Episodes[0]
	flagged := time.Duration(math.Round(ep.StartS * 1e9))
	if flagged <= tc || flagged > tc+check {
		t.Errorf("flagged at %v; t_diff crossed θ_safe at %v, so within (%v, %v]", flagged, tc, tc, tc+check)
	}
	if ep.Steps != k || len(ep.StepSizes) != 1 || ep.StepSizes[0].StepS != 0.3 || int(ep.StepSizes[0].Count) != k || !ep.Disrupted {
		t.Errorf("resynced in %d steps %+v (disrupted %v); predicted %d jumps of 300 ms", ep.Steps, ep.StepSizes, ep.Disrupted, k)
	}
	resync := time.Duration(math.Round(*ep.EndS * 1e9))
	if want := release + time.Duration(k-1)*cost; resync != want {
		t.Errorf("back in sync at %v, predicted %v", resync, want)
	}
	// No command while out of sync.
	for _, r := range trace {
		if r.flow == "command" && r.sent >= flagged && r.sent < resync {
			t.Errorf("command %d sent at %v, while out of sync", r.seq, r.sent)
		}
	}
	c := m.Messages
	hEnd := time.Duration(math.Round(m.SimTimeS*1e9)) / dh
	if want := uint64(hEnd) - uint64((jump-1)*k); c.Generated != want {
		t.Errorf("generated %d messages; with %d jumps of 3 to h = %d·Δh, want %d", c.Generated, k, hEnd, want)
	}
	if c.SkippedDisruption != uint64(k) || c.Skipped != 0 || c.Generated != c.Sent+c.Skipped+c.SkippedDisruption || c.Sent != c.Received+c.Lost+c.InFlight {
		t.Errorf("messages %+v: want %d skipped during the drop, generated = sent + skipped, sent = received + lost + in flight", c, k)
	}
	t.Logf("paper 004 Table 4 (its mean): generated 294.4, skipped in the drop 4.6; here: generated %d, received %d, skipped in the drop %d; peak t_diff %.3f s", c.Generated, c.Received, c.SkippedDisruption, ep.PeakTDiffS)
}
