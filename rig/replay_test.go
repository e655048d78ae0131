package rig

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig/record"
)

// writeRecording writes a recording of n frames the controller's device
// sent (one a millisecond, of 1 to 200 bytes) and, between them, frames
// the plant's sent and frames written to both, and returns its path.
func writeRecording(t testing.TB, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, "session.pcapng")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := record.NewRecording(f, "a test", []record.RecordingInterface{{Name: "controller"}, {Name: "plant"}}, []string{"m2s", "s2m"})
	r.Begin(time.Unix(1763856000, 0))
	payload := make([]byte, 200)
	published := uint64(0)
	frame := func(iface int, outbound bool, at time.Duration, flow int, seq uint64, p []byte) {
		// The recording's ring holds 8192 frames: never more than 6000
		// unwritten (the writer's buffer holds fewer than 2000).
		for published-r.Account().Written > 6000 {
			time.Sleep(100 * time.Microsecond)
		}
		r.Frame(iface, outbound, at, flow, seq, p)
		published++
	}
	for i := range n {
		at := time.Duration(i) * time.Millisecond
		p := payload[:1+i%200]
		for j := range p {
			p[j] = byte(i + j)
		}
		frame(0, false, at, 0, uint64(i), p)
		frame(1, true, at+5*time.Millisecond, 0, uint64(i), p)
		if i%3 == 0 {
			frame(1, false, at+time.Microsecond, 1, uint64(i/3), p[:1])
			frame(0, true, at+time.Microsecond+7*time.Millisecond, 1, uint64(i/3), p[:1])
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if c := r.Account(); c.Lost() != 0 {
		t.Fatalf("the recording lost %d frames", c.Lost())
	}
	return path
}

// played is a frame a replay sent.
type played struct {
	at      time.Duration
	payload string
}

// play runs a replay to its end as the executor does, and returns what it
// sent.
func play(t testing.TB, rec *RecordingFile, endpoint string) []played {
	t.Helper()
	p, err := Replay(rec, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	r := p.(*replay)
	r.Feed(0)
	r.open()
	defer r.close()
	var out []played
	for next := r.Next(); next != math.MaxInt64; next = r.Next() {
		r.Emit(next, func(_ int, payload []byte) { out = append(out, played{next, string(payload)}) })
	}
	if err := r.failure(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReplayStreams: a replay sends, in order and at their times, exactly
// the frames its endpoint's device sent in the recording (those of the
// other endpoint, and those written to it, left out), reading a file
// several times larger than what it reads ahead.
func TestReplayStreams(t *testing.T) {
	path := writeRecording(t, t.TempDir(), 30000) // 4.7 MB
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := record.ReadRecording(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 4*aheadChunk*aheadChunks || rec.whole != int64(len(data)) || rec.CutShort != nil {
		t.Fatalf("%d bytes, %d whole, cut %v", len(data), rec.whole, rec.CutShort)
	}
	for i, name := range []string{"controller", "plant"} {
		var want []played
		for _, f := range whole.Frames {
			if f.Interface == i && !f.Outbound {
				want = append(want, played{f.At, string(f.Payload)})
			}
		}
		got := play(t, rec, name)
		if len(got) != len(want) || rec.sent[i].n != uint64(len(want)) || rec.sent[i].last != want[len(want)-1].at {
			t.Fatalf("%s: replayed %d frames, the recording has %d (checked: %+v)", name, len(got), len(want), rec.sent[i])
		}
		for j := range want {
			if got[j] != want[j] {
				t.Fatalf("%s: frame %d: %v %q, want %v %q", name, j, got[j].at, got[j].payload, want[j].at, want[j].payload)
			}
		}
	}
}

// TestReplayAllocatesNothing: sending a replayed frame allocates nothing,
// reading included.
func TestReplayAllocatesNothing(t *testing.T) {
	rec, err := ReadRecording(writeRecording(t, t.TempDir(), 20000))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Replay(rec, "controller")
	r := p.(*replay)
	r.Feed(0)
	r.open()
	defer r.close()
	var sent int
	inject := func(int, []byte) { sent++ }
	for range 1000 { // the reader's block grows to the largest frame's
		r.Emit(r.Next(), inject)
	}
	if allocs := testing.AllocsPerRun(15000, func() { r.Emit(r.Next(), inject) }); allocs != 0 {
		t.Errorf("%v allocations per frame replayed", allocs)
	}
	if sent != 16001 {
		t.Errorf("%d frames sent", sent)
	}
}

// BenchmarkReplay checks and replays a recording of 100 000 frames of the
// controller's (and 130 000 others') as a run does; B/frame is what the
// process allocated per frame replayed: the buffers of the check and of
// the replay, made once, spread over the frames.
func BenchmarkReplay(b *testing.B) {
	path := writeRecording(b, b.TempDir(), 100000)
	b.ReportAllocs()
	var frames int
	inject := func(int, []byte) { frames++ }
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		rec, err := ReadRecording(path)
		if err != nil {
			b.Fatal(err)
		}
		p, _ := Replay(rec, "controller")
		r := p.(*replay)
		r.Feed(0)
		r.open()
		for next := r.Next(); next != math.MaxInt64; next = r.Next() {
			r.Emit(next, inject)
		}
		r.close()
	}
	runtime.ReadMemStats(&after)
	if frames != 100000*b.N {
		b.Fatalf("%d frames replayed", frames)
	}
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(frames), "B/frame")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}

// TestReadRecordingRefuses: what is not a regular file is refused before
// it is read (a device would never end, a FIFO would block), and what is
// not a recording says what is wrong with it, and where.
func TestReadRecordingRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(writeRecording(t, dir, 10))
	if err != nil {
		t.Fatal(err)
	}
	damaged := bytes.Clone(good)
	damaged[len(good)-40] ^= 0xFF // inside the last block's options
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, data, 0o644)
		return path
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: is not a regular file (a character device)"},
		{fifo, fifo + ": is not a regular file (a named pipe)"},
		{dir, dir + ": is not a regular file (a directory)"},
		{write("empty", nil), "empty: not a recording: empty"},
		{write("text", []byte("flow,seq,bytes\n")), "text: not a recording: no little-endian pcapng section header"},
		// 31 blocks: the section header, 2 interfaces, 10+10+4+4 frames.
		{write("joined", append(bytes.Clone(good), good...)), fmt.Sprintf("joined: block 31 at byte %d: a second section: recordings joined together, which hilrig does not replay", len(good))},
		{write("damaged", damaged), fmt.Sprintf("damaged: block 30 at byte %d: 254 bytes captured in a block of 60", len(good)-60)},
	} {
		done := make(chan error, 1)
		go func() { _, err := ReadRecording(tc.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: still reading after 5 s", tc.path)
		}
	}
}

// replayBench is the virtual bench with a profile whose flows its
// endpoints feed.
func replayBench(t *testing.T) (*profiles.Loaded, *benchfile.LoadedBench) {
	t.Helper()
	p, err := profiles.Parse("p.yaml", []byte("duration: 40s\nhops:\n  down: {delay: 5ms}\n  up: {delay: 5ms}\nflows:\n  m2s: {route: [down], role: to-plant}\n  s2m: {route: [up], role: to-controller}\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../profiles/benches/virtual.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	return p, b
}

// TestReplayCutShort: a recording cut inside a block (a run killed while
// it recorded) replays the frames before the cut, and the run says so
// before it starts: the file, the byte, the block, and what each endpoint
// replays.
func TestReplayCutShort(t *testing.T) {
	path := writeRecording(t, t.TempDir(), 3000)
	data, _ := os.ReadFile(path)
	os.WriteFile(path, data[:len(data)/2], 0o644)
	rec, err := ReadRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := rec.CutShort
	if cut == nil || cut.Offset > int64(len(data)/2) || cut.Offset+int64(cut.Length) <= int64(len(data)/2) || rec.whole != cut.Offset {
		t.Fatalf("cut %+v, whole %d, of %d bytes", cut, rec.whole, len(data)/2)
	}
	ctrl, plant := play(t, rec, "controller"), play(t, rec, "plant")
	p, b := replayBench(t)
	var log strings.Builder
	c, _ := Replay(rec, "controller")
	pl, _ := Replay(rec, "plant")
	s, err := Sim(p, b, Options{Players: map[string]Player{"controller": c, "plant": pl}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if s.Flows[0].Sent != uint64(len(ctrl)) || s.Flows[1].Sent != uint64(len(plant)) || len(ctrl) < 1400 || len(ctrl) > 1600 {
		t.Errorf("sent %d and %d, replayed %d and %d", s.Flows[0].Sent, s.Flows[1].Sent, len(ctrl), len(plant))
	}
	for _, want := range []string{
		fmt.Sprintf("hilrig: %s is %v (the recording of a run that was killed?): controller replays the %d frames its device sent before, to %.6f s\n", path, cut, len(ctrl), ctrl[len(ctrl)-1].at.Seconds()),
		fmt.Sprintf("hilrig: %s is %v (the recording of a run that was killed?): plant replays the %d frames its device sent before, to %.6f s\n", path, cut, len(plant), plant[len(plant)-1].at.Seconds()),
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the run said:\n%s\nwant\n%s", log.String(), want)
		}
	}
}

// TestReplayOfARecordingThatChanged: a recording replaced or cut after it
// was checked is not replayed from another file: the run says what was
// not replayed, as a failure.
func TestReplayOfARecordingThatChanged(t *testing.T) {
	dir := t.TempDir()
	path := writeRecording(t, dir, 100)
	for _, change := range []func(){
		func() { os.Truncate(path, 1000) },
		func() { os.Rename(writeRecording(t, t.TempDir(), 100), path) },
	} {
		rec, err := ReadRecording(path)
		if err != nil {
			t.Fatal(err)
		}
		change()
		p, b := replayBench(t)
		c, _ := Replay(rec, "controller")
		s, err := Sim(p, b, Options{Players: map[string]Player{"controller": c, "plant": &echo{next: math.MaxInt64}}})
		var runErr *RunError
		want := "replaying controller from " + path + ": it changed since it was checked: the frames after byte 0 were not sent"
		if !errors.As(err, &runErr) || err.Error() != want || len(s.Failures) != 1 || s.Failures[0] != want || s.Flows[0].Sent != 0 {
			t.Errorf("%v; failures %q, sent %d", err, s.Failures, s.Flows[0].Sent)
		}
	}
}
