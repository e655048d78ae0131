package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/rig/record"
)

// This file is the recording part of the hardening issue (18): outputs
// that cannot be written (item 12), recordings cut short (14) and large
// recordings replayed (8).

// smallDisk mounts a file system of size bytes (a tmpfs) for the test: a
// full disk that fills without filling the machine's. Mounting needs
// root; without it, it says why and returns "".
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Logf("cannot mount a %s tmpfs as a full disk (%v: %s): /dev/full stands in", size, err, strings.TrimSpace(string(out)))
		return ""
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
				if dir = smallDisk(t, "64k"); dir == "" {
					t.Skip("no small disk to fill; the cases on /dev/full stand in")
				}
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
			if r.code != 2 || strings.Contains(r.stderr, "run stopped") {
				t.Errorf("exit %d, want 2 (an output lost rows), and no word of the run stopping", r.code)
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
	trace := "/dev/full"
	if disk := smallDisk(t, "64k"); disk != "" {
		trace = filepath.Join(disk, "trace.csv")
	}
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
	if code != 2 || !strings.Contains(stderr, "hilrig: run stopped: controller: pseudo-terminal "+filepath.Join(rig.dir, "controller")+": device vanished") {
		t.Errorf("exit %d, want 2 (outputs lost rows, whatever else failed) and the device's failure", code)
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

// writeTestRecording writes, as a run with --record does, a recording of
// n frames the controller's device sent, one every `every`, of 1 to size
// bytes, each followed by its copy written to the plant; and returns its
// path.
func writeTestRecording(t *testing.T, path string, n int, every time.Duration, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := record.NewRecording(f, "a test", []record.RecordingInterface{{Name: "controller"}, {Name: "plant"}}, []string{"m2s", "s2m"})
	r.Begin(time.Unix(1763856000, 0))
	payload := make([]byte, size)
	var published uint64
	frame := func(iface int, outbound bool, at time.Duration, seq int, p []byte) {
		// The recording's ring holds 8192 frames: never more than 6000
		// unwritten (its writer's buffer holds fewer than 2000).
		for published-r.Account().Written > 6000 {
			time.Sleep(100 * time.Microsecond)
		}
		r.Frame(iface, outbound, at, 0, uint64(seq), p)
		published++
	}
	for i := range n {
		p := payload[:1+i%size]
		for j := range p {
			p[j] = 'a' + byte((i+j)%26)
		}
		at := time.Duration(i) * every
		frame(0, false, at, i, p)
		frame(1, true, at+5*time.Millisecond, i, p)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if c := r.Account(); c.Lost() != 0 {
		t.Fatalf("the recording lost %d frames", c.Lost())
	}
}

// replayLink is a profile and a bench (the virtual one) that a recording
// of writeTestRecording replays through.
func replayLink(t *testing.T, dir string, duration string) (profile, bench string) {
	profile, bench = filepath.Join(dir, "link.yaml"), filepath.Join(dir, "bench.yaml")
	os.WriteFile(profile, []byte("duration: "+duration+"\nhops:\n  down: {delay: 5ms}\n  up: {delay: 5ms}\nflows:\n  m2s: {route: [down]}\n  s2m: {route: [up]}\n"), 0o644)
	os.WriteFile(bench, []byte(ptyBenchText("line", "")), 0o644)
	return profile, bench
}

// TestReplayOfARecordingCutShort: a recording cut inside a block, as the
// recording of a run that was killed is, replays the frames before the
// cut, and the run says so before it starts: the file, the byte and the
// block it is cut at, and what the endpoint replays (how many frames, to
// when). Before, it replayed its first half without a word.
func TestReplayOfARecordingCutShort(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "session.pcapng")
	writeTestRecording(t, path, 3000, time.Millisecond, 100)
	data := mustRead(t, path)
	os.WriteFile(path, data[:len(data)/2], 0o644)
	whole, cutErr := record.ReadRecording(bytes.NewReader(data[:len(data)/2]))
	var cut *record.CutShortError
	if !errors.As(cutErr, &cut) {
		t.Fatalf("reading it: %v", cutErr)
	}
	var sent []record.RecordedFrame
	for _, f := range whole.Frames {
		if f.Interface == 0 && !f.Outbound {
			sent = append(sent, f)
		}
	}
	profile, bench := replayLink(t, dir, "10s")
	trace := filepath.Join(dir, "trace.csv")
	r := runHilrig(t, "sim", profile, "--bench", bench, "--replay", "controller="+path, "--trace", trace)
	t.Logf("exit %d:\n%s", r.code, r.stderr)
	want := fmt.Sprintf("hilrig: %s is cut short at byte %d: block %d has %d of its %d bytes (the recording of a run that was killed?): controller replays the %d frames its device sent before, to %.6f s\n",
		path, cut.Offset, cut.Block, cut.Have, cut.Length, len(sent), sent[len(sent)-1].At.Seconds())
	if r.code != 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("want exit 0 and\n%s", want)
	}
	if rows := readTrace(t, trace); len(rows) != len(sent) || len(sent) < 1400 || len(sent) > 1600 {
		t.Errorf("%d rows in the trace, %d frames before the cut", len(rows), len(sent))
	}
}

// TestReplayRefusesWhatIsNotAFile: a recording to replay must be a
// regular file: a device would never end (/dev/zero) and a FIFO blocks
// the run before it starts (as it did: the open waited for a writer for
// ever). Each is refused at once, exit 2.
func TestReplayRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.pcapng")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	profile, bench := replayLink(t, dir, "10s")
	for _, tc := range []struct{ file, want string }{
		{"/dev/zero", "hilrig: --replay: /dev/zero: is not a regular file (a character device)"},
		{fifo, "hilrig: --replay: " + fifo + ": is not a regular file (a named pipe)"},
	} {
		cmd := exec.Command(hilrig, "sim", profile, "--bench", bench, "--replay", "controller="+tc.file)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		cmd.Start()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("--replay controller=%s: still running after 10 s", tc.file)
			continue
		}
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("--replay controller=%s: exit %d: %s", tc.file, code, stderr.String())
		}
	}
}

// TestReplayMemoryDoesNotGrowWithTheRecording replays a recording of
// 100 MB: the process's peak memory is that of a replay of a recording of
// 100 frames, give or take what the replay reads ahead and the noise of
// the runtime (16 MB). Before, it read the whole recording into memory:
// some 3.5 times its size.
func TestReplayMemoryDoesNotGrowWithTheRecording(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and replays 100 MB")
	}
	dir := t.TempDir()
	small, large := filepath.Join(dir, "small.pcapng"), filepath.Join(dir, "large.pcapng")
	writeTestRecording(t, small, 100, 100*time.Microsecond, 500)
	writeTestRecording(t, large, 160000, 100*time.Microsecond, 600) // 2 blocks of 32+300+16 B on average each
	info, err := os.Stat(large)
	if err != nil || info.Size() < 100<<20 {
		t.Fatalf("the large recording: %v, %d bytes", err, info.Size())
	}
	profile, bench := replayLink(t, dir, "17s")
	peak := func(path string) (int64, lossSummary) {
		summary := filepath.Join(dir, "s.json")
		used, code := residentPeak(t, exec.Command(hilrig, "sim", profile, "--bench", bench, "--replay", "controller="+path, "--summary", summary))
		if code != 0 {
			t.Fatalf("sim --replay %s: exit %d", path, code)
		}
		return used, readLossSummary(t, summary)
	}
	base, _ := peak(small)
	used, s := peak(large)
	t.Logf("peak RSS: %d MB replaying 100 frames, %d MB replaying %d MB (%d frames)", base>>20, used>>20, info.Size()>>20, s.Flows[0].Sent)
	if s.Flows[0].Sent != 160000 {
		t.Errorf("%d frames replayed, want 160000", s.Flows[0].Sent)
	}
	if used > base+16<<20 {
		t.Errorf("peak RSS %d MB replaying %d MB, %d MB replaying 100 frames", used>>20, info.Size()>>20, base>>20)
	}
}
