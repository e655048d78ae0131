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
// zero-order hold does. The stale lead position makes the first follower's
// spacing error a sawtooth of up to the distance the lead covers in a
// broadcast period and more (at most 26 m/s · 0.2 s, two periods when one
// is lost, is 5.2 m); the followers behind it, who also know their
// predecessors at once, see less and less: the platoon is string stable,
// each follower's largest error no larger than the one ahead of it.
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
	if peaks[0] > 5.2 || peaks[0] < 0.5 {
		t.Errorf("the first follower's error peaks at %.3f m", peaks[0])
	}
	for i := 1; i < len(peaks); i++ {
		if peaks[i] > peaks[i-1] {
			t.Errorf("follower %d's error %.3f m exceeds follower %d's %.3f m", i+1, peaks[i], i, peaks[i-1])
		}
	}
}
