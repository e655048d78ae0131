package tests

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

// This file is the recording part of the hardening issue (18): outputs
// that cannot be written (item 12), recordings cut short (14) and large
// recordings replayed (8).

// smallDisk mounts a file system of size bytes (a tmpfs) for the test: a
// full disk that fills without filling the machine's. Mounting needs
// root; without it the test is skipped, and /dev/full stands in.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a %s tmpfs as a full disk (%v: %s); the cases on /dev/full stand in", size, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// lossSummary is what a summary says of a run's failures and outputs.
type lossSummary struct {
	Stopped  string   `json:"stopped"`
	Failures []string `json:"failures"`
	Flows    []struct {
		Name string `json:"name"`
		Sent uint64 `json:"sent"`
	} `json:"flows"`
	Endpoints []struct {
		Name      string `json:"name"`
		FramesIn  uint64 `json:"frames_in"`
		FramesOut uint64 `json:"frames_out"`
	} `json:"endpoints"`
	Outputs []struct {
		Output    string `json:"output"`
		Written   uint64 `json:"written"`
		Lost      uint64 `json:"lost"`
		Dropped   uint64 `json:"dropped"`
		Unwritten uint64 `json:"unwritten"`
		Error     string `json:"error"`
	} `json:"outputs"`
	Timing *struct {
		TraceDropped     uint64 `json:"trace_dropped"`
		RecordingDropped uint64 `json:"recording_dropped"`
	} `json:"timing"`
}

func readLossSummary(t *testing.T, path string) lossSummary {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s lossSummary
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return s
}

// wholeLines counts the lines of a file that end with a newline.
func wholeLines(t *testing.T, path string) uint64 {
	t.Helper()
	if strings.HasPrefix(path, "/dev/") {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return uint64(strings.Count(string(data), "\n"))
}

// checkOutput checks a failed output's account against the rows (frames)
// it was given and the file: every one is written or lost, the file
// holds exactly those written, and the failure is in the summary and on
// stderr.
func checkOutput(t *testing.T, s lossSummary, stderr, name, path string, given, header uint64) {
	t.Helper()
	for _, o := range s.Outputs {
		if o.Output != name {
			continue
		}
		if o.Written+o.Lost != given || o.Lost != o.Dropped+o.Unwritten || o.Lost == 0 || !strings.Contains(o.Error, "no space left on device") {
			t.Errorf("%s: %+v for %d given", name, o, given)
		}
		if path != "" {
			if lines := wholeLines(t, path); lines != 0 && lines != o.Written+header {
				t.Errorf("%s: %d whole lines in %s, %d rows counted written", name, lines, path, o.Written)
			}
		}
		said := false
		for _, f := range s.Failures {
			said = said || strings.HasPrefix(f, "writing the "+name+" failed: ") && strings.Contains(f, "no space left on device")
		}
		if !said || !strings.Contains(stderr, "hilrig: writing the "+name+" failed: ") {
			t.Errorf("%s: its failure is not told: failures %q, stderr:\n%s", name, s.Failures, stderr)
		}
		return
	}
	t.Errorf("the summary does not account for the %s: %+v", name, s.Outputs)
}

// TestSimOutputOnAFullDisk: a sim whose outputs cannot be written runs
// its whole duration (its summary is whole: it says so, stopped:
// duration), says which outputs failed and how many rows each lost, on
// stderr and in the summary's failures and outputs, and exits 1. Before,
// it said "run stopped: writing the trace" (it had not stopped), and its
// summary said nothing of the rows lost.
func TestSimOutputOnAFullDisk(t *testing.T) {
	tmp := t.TempDir()
	bench := []string{"--bench", "../profiles/benches/quarter-car-seat.yaml"}
	cases := []struct {
		name    string
		args    []string // the run
		outputs []string // the flags of the outputs that fail
		onDisk  bool     // on a small disk rather than /dev/full
	}{
		{"the trace on /dev/full", []string{"bottleneck", "--duration", "10s"}, []string{"--trace"}, false},
		{"trace, signals and queues on /dev/full", append([]string{"internet-hil", "--duration", "3s"}, bench...), []string{"--trace", "--signals", "--queues"}, false},
		{"the trace fills a 64 KiB disk", []string{"bottleneck", "--duration", "100s"}, []string{"--trace"}, true},
		{"the signals fill a 64 KiB disk", append([]string{"internet-hil", "--duration", "20s"}, bench...), []string{"--signals"}, true},
	}
	names := map[string]string{"--trace": "trace", "--signals": "signals", "--queues": "queues"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The same run to files that take everything: the rows each
			// output is given.
			given := map[string]uint64{}
			args := append([]string{"sim"}, tc.args...)
			for _, flag := range tc.outputs {
				path := filepath.Join(tmp, names[flag]+".csv")
				args = append(args, flag, path)
			}
			if r := runHilrig(t, append(args, "--summary", filepath.Join(tmp, "whole.json"))...); r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			for _, flag := range tc.outputs {
				given[flag] = wholeLines(t, filepath.Join(tmp, names[flag]+".csv")) - 1
			}

			dir := "/dev/full"
			if tc.onDisk {
				dir = smallDisk(t, "64k")
			}
			args = append([]string{"sim"}, tc.args...)
			paths := map[string]string{}
			for _, flag := range tc.outputs {
				paths[flag] = dir
				if tc.onDisk {
					paths[flag] = filepath.Join(dir, names[flag]+".csv")
				}
				args = append(args, flag, paths[flag])
			}
			summary := filepath.Join(tmp, "s.json")
			start := time.Now()
			r := runHilrig(t, append(args, "--summary", summary)...)
			t.Logf("%v: exit %d in %v:\n%s", args, r.code, time.Since(start).Round(time.Millisecond), r.stderr)
			if r.code != 1 || strings.Contains(r.stderr, "run stopped") {
				t.Errorf("exit %d, want 1, and no word of the run stopping", r.code)
			}
			s := readLossSummary(t, summary)
			if s.Stopped != "duration" || len(s.Failures) != len(tc.outputs) {
				t.Errorf("stopped %q, failures %q", s.Stopped, s.Failures)
			}
			for _, flag := range tc.outputs {
				checkOutput(t, s, r.stderr, names[flag], paths[flag], given[flag], 1)
			}
		})
	}
}

// TestRunOutputsOnAFullDiskAndADeviceFailing: a real-time run whose trace
// fills its disk and whose recording cannot be written at all, and whose
// controller is unplugged: it stops for the device, and says so, and also
// that the trace and the recording failed, and how many rows and frames
// each lost; the trace holds exactly the rows counted written. Before,
// only the device's failure was told, and trace_dropped was 0.
func TestRunOutputsOnAFullDiskAndADeviceFailing(t *testing.T) {
	disk := smallDisk(t, "64k")
	trace := filepath.Join(disk, "trace.csv")
	rig := startRig(t, plainLink, ptyBenchText("line", ", reconnect: 0s"), "--trace", trace, "--record", "/dev/full")
	ctrl, plant := rig.attach("controller"), rig.attach("plant")
	defer plant.Close()
	go io.Copy(io.Discard, plant) // a pseudo-terminal nobody reads fills, and then writing to it waits
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	send(ctrl, line, 3000, time.Millisecond, time.Now()) // 3000 rows of some 50 bytes: 150 kB
	time.Sleep(100 * time.Millisecond)
	ctrl.Close() // unplugged
	code := rig.wait()
	stderr := rig.stderr.String()
	t.Logf("exit %d:\n%s", code, stderr)
	if code != 1 || !strings.Contains(stderr, "hilrig: run stopped: controller: pseudo-terminal "+filepath.Join(rig.dir, "controller")+": device vanished") {
		t.Errorf("exit %d, want 1 and the device's failure", code)
	}
	s := readLossSummary(t, rig.summary)
	if !strings.HasPrefix(s.Stopped, "failed: controller") || len(s.Failures) != 3 || !strings.HasPrefix(s.Failures[0], "controller: ") {
		t.Errorf("stopped %q, failures %q", s.Stopped, s.Failures)
	}
	var rows, frames uint64
	for _, f := range s.Flows {
		rows += f.Sent
	}
	for _, e := range s.Endpoints {
		frames += e.FramesIn + e.FramesOut
	}
	if rows < 3000 {
		t.Errorf("%d frames sent, want 3000", rows)
	}
	checkOutput(t, s, stderr, "trace", trace, rows, 1)
	checkOutput(t, s, stderr, "recording", "", frames, 0)
	// The timing's counts of what the files lost count what the disk lost
	// too.
	for _, o := range s.Outputs {
		if s.Timing == nil || o.Output == "trace" && s.Timing.TraceDropped != o.Lost || o.Output == "recording" && s.Timing.RecordingDropped != o.Lost {
			t.Errorf("timing %+v, %s lost %d", s.Timing, o.Output, o.Lost)
		}
	}
}
