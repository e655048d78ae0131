package tests

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPaper003Platoon co-simulates paper 003's platoon in virtual time: the
// lead's model stands in for the hardware and broadcasts its state every
// 100 ms over the shipped 802.11p profile (interfering traffic, 2 % loss);
// the rig's followers hold each broadcast until the next, as the paper's
// zero-order hold does. The first follower's spacing error, computed from
// the held lead position, jumps by the lead's travel between broadcasts at
// each one and falls back in between: a sawtooth spanning at least 17.9
// m/s · 0.1 s = 1.79 m, so its largest size is at least half that, 0.895 m,
// and at most the travel in two periods (one broadcast lost) at the top
// speed, 25.9 m/s · 0.2 s = 5.18 m. The followers behind, who also know
// their predecessors at once, see less and less: the platoon is string
// stable, each follower's largest error no larger than the one ahead of it.
func TestPaper003Platoon(t *testing.T) {
	signals := filepath.Join(t.TempDir(), "platoon.csv")
	r := runHilrig(t, "sim", "platoon-80211p", "--bench", "../profiles/benches/platoon-lead.yaml", "--signals", signals)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var s struct {
		Models []struct {
			FramesIn uint64 `json:"frames_in"`
		} `json:"models"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || len(s.Models) != 1 {
		t.Fatalf("summary: %v", err)
	}
	// 200 broadcasts in 20 s, 2 % lost: 196 ± 3σ (σ = √(200·0.02·0.98) = 2).
	if got := s.Models[0].FramesIn; got < 190 || got > 200 {
		t.Errorf("%d broadcasts taken up of 200", got)
	}
	rows := readCSV(t, signals)
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	peaks := make([]float64, 15)
	for _, row := range rows[1:] {
		for i := range peaks {
			e, err := strconv.ParseFloat(row[col["followers.e"+strconv.Itoa(i+1)]], 64)
			if err != nil {
				t.Fatal(err)
			}
			peaks[i] = max(peaks[i], math.Abs(e))
		}
	}
	t.Logf("largest spacing errors, followers 1 to 15 (m): %.3f", peaks)
	if peaks[0] > 5.18 || peaks[0] < 0.895 {
		t.Errorf("the first follower's error peaks at %.3f m", peaks[0])
	}
	for i := 1; i < len(peaks); i++ {
		if peaks[i] > peaks[i-1] {
			t.Errorf("follower %d's error %.3f m exceeds follower %d's %.3f m", i+1, peaks[i], i, peaks[i-1])
		}
	}
}
