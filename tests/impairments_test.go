package tests

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestImpairmentsEndToEnd runs a profile that uses every stochastic
// impairment through the binary. The statistics themselves are tested
// against their formulas in the emulator's unit tests; this checks that each
// feature reaches the trace and the summary, and that runs are reproducible.
func TestImpairmentsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	trace := func(name string, args ...string) []byte {
		path := filepath.Join(dir, name)
		r := runHilrig(t, append([]string{"sim", "testdata/impairments.yaml", "--trace", path}, args...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	first, again, other := trace("a.csv"), trace("b.csv"), trace("c.csv", "--seed", "4")
	if !bytes.Equal(first, again) {
		t.Error("the same seed gave different traces")
	}
	if bytes.Equal(first, other) {
		t.Error("a different seed gave the same trace")
	}

	rows := readTrace(t, filepath.Join(dir, "a.csv"))
	statuses := map[string]int{}
	arrived := map[string]map[uint64]bool{}
	for _, r := range rows {
		statuses[r.status]++
		if r.recv >= 0 && r.recv < r.sent {
			t.Fatalf("%s %d delivered before it was sent", r.flow, r.seq)
		}
		if r.status == "delivered" || r.status == "corrupted" {
			if arrived[r.flow] == nil {
				arrived[r.flow] = map[uint64]bool{}
			}
			arrived[r.flow][r.seq] = true
		}
	}
	for _, s := range []string{"delivered", "loss_drop", "corrupted", "duplicate"} {
		if statuses[s] == 0 {
			t.Errorf("no %s rows: %v", s, statuses)
		}
	}
	for _, r := range rows {
		if r.status == "duplicate" && !arrived[r.flow][r.seq] {
			t.Errorf("a copy of %s %d arrived but the original did not", r.flow, r.seq)
		}
	}

	// The schedule raises the random hop's loss to 50 % during [30 s, 40 s):
	// the lossy flow's loss there is at least that, and a few per cent
	// elsewhere (2 % + Gilbert's 4.4 % + the 4-state model's 1.9 %).
	var in, inLost, out, outLost float64
	for _, r := range rows {
		if r.flow != "lossy" || r.status == "in_flight" {
			continue
		}
		lost := 0.0
		if r.status == "loss_drop" {
			lost = 1
		}
		if r.sent >= 30*time.Second && r.sent < 40*time.Second {
			in, inLost = in+1, inLost+lost
		} else {
			out, outLost = out+1, outLost+lost
		}
	}
	t.Logf("lossy: %.3f lost during the 50 %% window, %.3f outside", inLost/in, outLost/out)
	if inLost/in < 0.45 || outLost/out > 0.15 || outLost/out < 0.04 {
		t.Errorf("loss %.3f inside the window, %.3f outside", inLost/in, outLost/out)
	}

	// Reordering: the flows through reorder: allowed and netem-style hops
	// arrive out of order at least once; the summary counts bursts.
	overtaken := map[string]int{}
	byRecv := slices.Clone(rows)
	slices.SortStableFunc(byRecv, func(a, b row) int { return cmp.Compare(a.recv, b.recv) })
	seen := map[string]uint64{}
	for _, r := range byRecv {
		if r.recv < 0 || r.status == "duplicate" {
			continue
		}
		if r.seq < seen[r.flow] {
			overtaken[r.flow]++
		}
		seen[r.flow] = max(seen[r.flow], r.seq)
	}
	if overtaken["jittery"] == 0 || overtaken["shuffled"] == 0 || overtaken["lossy"] != 0 {
		t.Errorf("frames overtaken per flow: %v", overtaken)
	}

	r := runHilrig(t, "sim", "testdata/impairments.yaml")
	var summary struct {
		Flows []struct {
			Name       string `json:"name"`
			Corrupted  uint64 `json:"corrupted"`
			Duplicates uint64 `json:"duplicates"`
			LossBursts *struct {
				Count uint64  `json:"count"`
				Mean  float64 `json:"mean"`
			} `json:"loss_bursts"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &summary); err != nil {
		t.Fatal(err)
	}
	for _, f := range summary.Flows {
		switch f.Name {
		case "lossy":
			if f.LossBursts == nil || f.LossBursts.Count == 0 || f.LossBursts.Mean < 1 {
				t.Errorf("lossy: loss bursts %+v", f.LossBursts)
			}
		case "noisy":
			if f.Corrupted == 0 {
				t.Error("noisy: nothing corrupted")
			}
		case "shuffled":
			if f.Duplicates == 0 {
				t.Error("shuffled: no duplicates")
			}
		}
	}
}
