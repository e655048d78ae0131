package record_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/rig/record"
)

func writeRecording(t testing.TB) ([]byte, time.Time) {
	var b bytes.Buffer
	start := time.Unix(1763856000, 123456789)
	r := record.NewRecording(&b, "profile p, bench b", []record.RecordingInterface{{"controller", "pty /tmp/c"}, {"plant", "serial /dev/ttyUSB0"}}, []string{"m2s", "s2m"})
	r.Begin(start)
	r.Frame(0, false, 1500*time.Microsecond, 0, 0, []byte("hello"))
	r.Frame(1, true, 6500*time.Microsecond, 0, 0, []byte("hello"))
	r.Frame(1, false, 7*time.Millisecond, 1, 0, bytes.Repeat([]byte{0xAB}, 1000)) // grows its slot
	r.Frame(0, true, 12*time.Millisecond, -1, 0, nil)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), start
}

func TestRecordingRoundTrip(t *testing.T) {
	data, start := writeRecording(t)
	got, err := record.ReadRecording(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(start) || got.About != "profile p, bench b" || len(got.Interfaces) != 2 || got.Interfaces[1].Name != "plant" || got.Interfaces[1].Description != "serial /dev/ttyUSB0" {
		t.Fatalf("header: %+v", got)
	}
	want := []record.RecordedFrame{
		{0, false, 1500 * time.Microsecond, []byte("hello"), "m2s#0"},
		{1, true, 6500 * time.Microsecond, []byte("hello"), "m2s#0"},
		{1, false, 7 * time.Millisecond, bytes.Repeat([]byte{0xAB}, 1000), "s2m#0"},
		{0, true, 12 * time.Millisecond, []byte{}, ""},
	}
	if len(got.Frames) != len(want) {
		t.Fatalf("%d frames", len(got.Frames))
	}
	for i, w := range want {
		g := got.Frames[i]
		if g.Interface != w.Interface || g.Outbound != w.Outbound || g.At != w.At || !bytes.Equal(g.Payload, w.Payload) || g.Comment != w.Comment {
			t.Errorf("frame %d: %+v, want %+v", i, g, w)
		}
	}
	// A recording cut short reads up to its last whole block.
	cut, err := record.ReadRecording(bytes.NewReader(data[:len(data)-10]))
	if err != nil || len(cut.Frames) != 3 {
		t.Errorf("cut short: %v, %d frames", err, len(cut.Frames))
	}
}

// TestRecordingInTshark: Wireshark's reader takes the recording: its
// interfaces, times to the nanosecond, directions and comments.
func TestRecordingInTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark is missing: install Debian's tshark package")
		}
		t.Skip("no tshark (Debian's tshark package)")
	}
	data, _ := writeRecording(t)
	path := filepath.Join(t.TempDir(), "r.pcapng")
	os.WriteFile(path, data, 0o644)
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.interface_name", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.comment").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "controller\t1763856000.124956789\t5\tm2s#0") || !strings.Contains(lines[2], "\t1000\ts2m#0") {
		t.Errorf("tshark read:\n%s", out)
	}
}

func FuzzReadRecording(f *testing.F) {
	data, _ := writeRecording(f)
	f.Add(data)
	f.Add(data[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		record.ReadRecording(bytes.NewReader(b)) // must not panic
	})
}
