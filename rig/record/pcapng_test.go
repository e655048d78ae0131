package record_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
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
}

// TestRecordingCutShort reads a recording cut at every byte: cut inside
// its section header it is no recording; cut between two blocks it reads
// as a shorter recording; cut inside a block it reads up to that block,
// and says where it is cut: the block's offset, its number, its length
// and how much of it there is.
func TestRecordingCutShort(t *testing.T) {
	data, _ := writeRecording(t)
	whole, err := record.ReadRecording(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	// The blocks: where each begins, and the frames before it.
	type block struct {
		at, length int
		frames     int
	}
	var blocks []block
	for at, frames := 0, 0; at < len(data); {
		length := int(binary.LittleEndian.Uint32(data[at+4:]))
		blocks = append(blocks, block{at, length, frames})
		if binary.LittleEndian.Uint32(data[at:]) == 6 {
			frames++
		}
		at += length
	}
	if len(blocks) != 7 { // section, 2 interfaces, 4 frames
		t.Fatalf("%d blocks", len(blocks))
	}
	for n := 0; n < len(data); n++ {
		got, err := record.ReadRecording(bytes.NewReader(data[:n]))
		i := 0
		for i+1 < len(blocks) && blocks[i+1].at <= n {
			i++
		}
		b := blocks[i]
		var cut *record.CutShortError
		switch {
		case n == 0:
			if err == nil || err.Error() != "not a recording: empty" {
				t.Errorf("empty: %v", err)
			}
		case i == 0:
			if err == nil || !strings.HasPrefix(err.Error(), "not a recording: its section header is cut short at byte 0: block 0 has ") {
				t.Errorf("cut at %d, in the section header: %v", n, err)
			}
		case n == b.at:
			if err != nil || len(got.Frames) != b.frames {
				t.Errorf("cut at %d, between blocks: %v", n, err)
			}
		case !errors.As(err, &cut) || got == nil:
			t.Errorf("cut at %d: %v", n, err)
		default:
			want := record.CutShortError{Offset: int64(b.at), Block: i, Length: uint32(b.length), Have: int64(n - b.at)}
			if n-b.at < 8 {
				want.Length = 0
			}
			if *cut != want || len(got.Frames) != b.frames {
				t.Errorf("cut at %d: %+v and %d frames, want %+v and %d", n, *cut, len(got.Frames), want, b.frames)
			}
			for j, f := range got.Frames {
				if !bytes.Equal(f.Payload, whole.Frames[j].Payload) || f.At != whole.Frames[j].At {
					t.Errorf("cut at %d: frame %d differs", n, j)
				}
			}
		}
	}
	cut := &record.CutShortError{Offset: 1444, Block: 6, Length: 44, Have: 34}
	if cut.Error() != "cut short at byte 1444: block 6 has 34 of its 44 bytes" {
		t.Errorf("%q", cut.Error())
	}
}

// TestRecordingReaderAllocatesNothing: reading a frame allocates nothing
// once the reader's block has grown to the largest.
func TestRecordingReaderAllocatesNothing(t *testing.T) {
	var b bytes.Buffer
	r := record.NewRecording(&b, "", []record.RecordingInterface{{"controller", ""}}, []string{"m2s"})
	r.Begin(time.Unix(0, 0))
	const n = 2000
	for i := range n {
		r.Frame(0, false, time.Duration(i)*time.Millisecond, 0, uint64(i), []byte("a frame of a few bytes"))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	rr, err := record.NewRecordingReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var f record.RecordedFrame
	rr.Next(&f)
	read := 1
	allocs := testing.AllocsPerRun(n-10, func() {
		if err := rr.Next(&f); err != nil {
			t.Fatal(err)
		}
		read++
	})
	if allocs != 0 || string(rr.Comment()) != fmt.Sprintf("m2s#%d", read-1) {
		t.Errorf("%v allocations per frame; comment %q after %d frames", allocs, rr.Comment(), read)
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

// FuzzReadRecording: whatever the bytes, reading them does not panic;
// and a recording that reads whole, cut by a byte, reads as cut short
// at its last block, with the same frames before it.
func FuzzReadRecording(f *testing.F) {
	data, _ := writeRecording(f)
	f.Add(data)
	f.Add(data[:40])
	f.Add(data[:len(data)-10])
	f.Fuzz(func(t *testing.T, b []byte) {
		whole, err := record.ReadRecording(bytes.NewReader(b))
		if err != nil || len(b) == 0 {
			return
		}
		got, err := record.ReadRecording(bytes.NewReader(b[:len(b)-1]))
		if strings.HasPrefix(fmt.Sprint(err), "not a recording: its section header is cut short") {
			return // the section header was all there was
		}
		var cut *record.CutShortError
		if !errors.As(err, &cut) || got == nil {
			t.Fatalf("a whole recording less its last byte: %v", err)
		}
		if cut.Offset+int64(cut.Length) != int64(len(b)) || cut.Have != int64(cut.Length)-1 && cut.Length != 0 {
			t.Fatalf("cut %+v in %d bytes", cut, len(b))
		}
		if n := len(got.Frames); n != len(whole.Frames) && n != len(whole.Frames)-1 {
			t.Fatalf("%d frames cut short, %d whole", n, len(whole.Frames))
		}
		for i, f := range got.Frames {
			if w := whole.Frames[i]; !bytes.Equal(f.Payload, w.Payload) || f.At != w.At || f.Comment != w.Comment || f.Interface != w.Interface || f.Outbound != w.Outbound {
				t.Fatalf("frame %d: %+v, whole %+v", i, f, w)
			}
		}
	})
}
