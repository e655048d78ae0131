package drivers

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// line is a device's side of a stream: each write attempt takes at most
// the next of room's sizes (-1: fails with EIO), and then as much as the
// last; what it took is on the line.
type line struct {
	room  []int
	taken bytes.Buffer
}

func (l *line) Write(b []byte) (int, error) {
	n := len(b)
	if len(l.room) > 0 {
		n = l.room[0]
		if len(l.room) > 1 {
			l.room = l.room[1:]
		}
	}
	switch {
	case n < 0:
		return -1, unix.EIO
	case n == 0:
		return -1, unix.EAGAIN
	}
	n = min(n, len(b))
	l.taken.Write(b[:n])
	return n, nil
}

func newTestOut(clock Clock, sink Sink, counts *atomicCounts) streamOut {
	f, _ := wire.NewFraming("line", wire.FramingOptions{})
	w := newStreamOut(f, 64, counts)
	w.notices = newNotices(clock, sink, 0, "plant", "pty")
	return w
}

// A device that takes the head of a frame gets its rest before anything
// else: a frame is refused while the rest does not all go, and the line
// carries whole frames one after the other, whatever the device took at
// each attempt.
func TestStreamOutFinishesAFrameBeforeTheNext(t *testing.T) {
	for _, tc := range []struct {
		name         string
		room         []int // per attempt
		frames       int   // "frame0", "frame1"... written
		onLine       string
		out, refused uint64
		owed         bool // a rest still to write
		errs         string
	}{
		{"all taken", nil, 3, "frame0\nframe1\nframe2\n", 3, 0, false, "..."},
		{"nothing taken", []int{0}, 2, "", 0, 2, false, "RR"},
		{"a head, then the rest with the next", []int{3, 4, 7}, 2, "frame0\nframe1\n", 2, 0, false, ".."},
		{"a head, no room for the rest: refused", []int{3, 0, 4, 7}, 3, "frame0\nframe2\n", 2, 1, false, ".R."},
		{"the rest goes a little at a time", []int{3, 1, 1, 2, 7}, 4, "frame0\nframe3\n", 2, 2, false, ".RR."},
		{"a head left owed at the end", []int{3, 0}, 3, "fra", 0, 2, true, ".RR"},
		{"a device that fails", []int{-1}, 2, "", 0, 0, false, "EE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counts atomicCounts
			sink := &noticed{}
			w := newTestOut(&setClock{}, sink, &counts)
			dev := &line{room: tc.room}
			var errs strings.Builder
			for i := range tc.frames {
				switch err := w.write(dev, 1, fmt.Appendf(nil, "frame%d", i)); {
				case err == nil:
					errs.WriteByte('.')
				case errors.Is(err, ErrNotReading):
					errs.WriteByte('R')
				default:
					errs.WriteByte('E')
				}
			}
			c := counts.snapshot()
			if dev.taken.String() != tc.onLine || c.FramesOut != tc.out || c.NotTaken != tc.refused || counts.restOwed.Load() != tc.owed || errs.String() != tc.errs {
				t.Errorf("line %q, %d out, %d not taken, owed %v, results %s; want %q, %d, %d, %v, %s",
					dev.taken.String(), c.FramesOut, c.NotTaken, counts.restOwed.Load(), errs.String(), tc.onLine, tc.out, tc.refused, tc.owed, tc.errs)
			}
			if c.BytesOut != uint64(dev.taken.Len()) || c.WriteErrors != uint64(strings.Count(tc.errs, "R")+strings.Count(tc.errs, "E")) {
				t.Errorf("%d bytes out, %d on the line; %d write errors for %s", c.BytesOut, dev.taken.Len(), c.WriteErrors, tc.errs)
			}
		})
	}
}

// A rest owed to a device that went away, or to an earlier opening of it,
// is never written: its frame is cut, counted once, and the next frame
// starts on a clean line.
func TestStreamOutCutsARestOwedToAnotherOpening(t *testing.T) {
	for _, tc := range []struct {
		name string
		then func(w *streamOut, counts *atomicCounts, dev *line) error
		line string
	}{
		{"plugged in again", func(w *streamOut, _ *atomicCounts, dev *line) error { return w.write(dev, 2, []byte("next")) }, "frnext\n"},
		{"away", func(w *streamOut, _ *atomicCounts, dev *line) error { return w.write(nil, 1, []byte("next")) }, "fr"},
		{"stopped, then written", func(w *streamOut, counts *atomicCounts, dev *line) error {
			counts.cutRest() // as Stop does
			return w.write(nil, 1, []byte("next"))
		}, "fr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counts atomicCounts
			w := newTestOut(&setClock{}, &noticed{}, &counts)
			dev := &line{room: []int{2, 100}}
			if err := w.write(dev, 1, []byte("frame")); err != nil {
				t.Fatal(err)
			}
			tc.then(&w, &counts, dev)
			if c := counts.snapshot(); c.CutFrames != 1 || dev.taken.String() != tc.line {
				t.Errorf("%d cut, line %q; want 1 and %q", c.CutFrames, dev.taken.String(), tc.line)
			}
		})
	}
}

// A stretch of frames not taken is told once when it starts, and once when
// the device has taken every frame for a second since its last refusal
// (at the first frame it took), however the two alternate meanwhile.
func TestStretchesAreToldOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes string // per write 10 ms apart: '.' taken, 'R' refused, ' ' nothing written
		said   []string
	}{
		{"always taken", "....", nil},
		{"never taken", "RRRR", []string{"0s device_not_reading"}},
		{"one in two taken", strings.Repeat("R.", 200), []string{"0s device_not_reading"}},
		{"back for a second", "RRR" + strings.Repeat(".", 101), []string{"0s device_not_reading", "30ms device_reading: reading again after 30ms: 3 frames not taken"}},
		{"a second without writes", "RR" + strings.Repeat(" ", 100) + ".", []string{"0s device_not_reading", "1.02s device_reading: reading again after 1.02s: 2 frames not taken"}},
		{"two stretches", "R" + strings.Repeat(".", 100) + "RR" + strings.Repeat(".", 100), []string{
			"0s device_not_reading", "10ms device_reading: reading again after 10ms: 1 frames not taken",
			"1.01s device_not_reading", "1.03s device_reading: reading again after 20ms: 2 frames not taken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var counts atomicCounts
			clock, sink := &setClock{}, &noticed{}
			w := newTestOut(clock, sink, &counts)
			taking, refusing := &line{}, &line{room: []int{0}}
			for i, c := range tc.writes {
				clock.now = time.Duration(i) * 10 * time.Millisecond
				switch c {
				case '.':
					w.write(taking, 1, []byte("x"))
				case 'R':
					w.write(refusing, 1, []byte("x"))
				}
			}
			var said []string
			for _, n := range sink.notices() {
				said = append(said, strings.Replace(n, "plant: pty: ", "", 1))
			}
			want := make([]string, len(tc.said))
			for i, n := range tc.said {
				want[i] = n
				if strings.HasSuffix(n, "device_not_reading") {
					want[i] = n + ": not reading what the rig writes: the frames it does not take are dropped (egress_drop) until it reads again"
				}
			}
			if fmt.Sprint(said) != fmt.Sprint(want) {
				t.Errorf("said\n%q\nwant\n%q", said, want)
			}
		})
	}
}

// FuzzStreamOut writes frames of any bytes, SLIP framed, to a device that
// takes what the fuzzer says at each attempt: the line must decode to
// exactly the frames counted out, in order, and every frame written is
// out, not taken, or (the last only) owed.
func FuzzStreamOut(f *testing.F) {
	f.Add([]byte{3, 0, 200, 5, 1, 1, 1}, []byte("hello\xc0world\xdb!"))
	f.Add([]byte{0, 0, 0}, []byte("abc"))
	f.Add([]byte{255}, []byte{0xc0, 0xc0, 0xdb})
	f.Fuzz(func(t *testing.T, room, payloads []byte) {
		slip, _ := wire.NewFraming("slip", wire.FramingOptions{})
		var counts atomicCounts
		w := newStreamOut(slip, 64, &counts)
		w.notices = newNotices(&setClock{}, &noticed{}, 0, "e", "d")
		dev := &line{}
		for _, r := range room {
			dev.room = append(dev.room, int(r)%40) // 0: not reading
		}
		dev.room = append(dev.room, 1<<20) // and at last everything
		var out [][]byte
		var owed []byte
		for i := 0; len(payloads) > 0; i++ {
			n := min(len(payloads), 1+i%7)
			p := payloads[:n]
			payloads = payloads[n:]
			before := counts.snapshot().FramesOut
			wasOwed := counts.restOwed.Load()
			err := w.write(dev, 1, p)
			after := counts.snapshot().FramesOut
			if wasOwed && after > before {
				out = append(out, owed) // the rest went
				owed = nil
			}
			switch {
			case err == nil && counts.restOwed.Load():
				owed = p
			case err == nil:
				out = append(out, p)
			case !errors.Is(err, ErrNotReading):
				t.Fatal(err)
			}
		}
		var got [][]byte
		d := slip.NewDecoder(1 << 20)
		d.Feed(dev.taken.Bytes(), 0, func(frame []byte, _ time.Duration) { got = append(got, bytes.Clone(frame)) })
		c := counts.snapshot()
		if uint64(len(out)) != c.FramesOut || len(got) != len(out) || d.Errors() != 0 {
			t.Fatalf("%d frames out, %d counted, %d on the line (%d errors)", len(out), c.FramesOut, len(got), d.Errors())
		}
		for i := range got {
			if !bytes.Equal(got[i], out[i]) {
				t.Fatalf("frame %d on the line is %q; %q was written", i, got[i], out[i])
			}
		}
		if c.BytesOut != uint64(dev.taken.Len()) {
			t.Fatalf("%d bytes out, %d on the line", c.BytesOut, dev.taken.Len())
		}
	})
}

// A UDP endpoint sends to its peer with sendto on its own socket: the
// peer's address in the socket's family (an IPv4 peer of an IPv6 socket
// mapped), or an error for a peer the socket cannot reach.
func TestSockaddrOf(t *testing.T) {
	for _, tc := range []struct {
		family int
		peer   string
		want   string
	}{
		{unix.AF_INET, "192.0.2.1:9", "inet 192.0.2.1 port 9"},
		{unix.AF_INET, "[::ffff:192.0.2.1]:9", "inet 192.0.2.1 port 9"},
		{unix.AF_INET6, "192.0.2.1:9", "inet6 ::ffff:192.0.2.1 port 9"},
		{unix.AF_INET6, "[2001:db8::1]:9", "inet6 2001:db8::1 port 9"},
		{unix.AF_INET, "[2001:db8::1]:9", "cannot send to [2001:db8::1]:9 from a socket of address family 2"},
	} {
		var got string
		// The kernel's layout: the port in network byte order.
		switch sa, err := sockaddrOf(tc.family, netip.MustParseAddrPort(tc.peer)); {
		case err != nil:
			got = err.Error()
		case sa.size == unix.SizeofSockaddrInet4 && sa.any.Addr.Family == unix.AF_INET:
			in := (*unix.RawSockaddrInet4)(unsafe.Pointer(&sa.any))
			got = fmt.Sprintf("inet %v port %d", netip.AddrFrom4(in.Addr), binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&in.Port))[:]))
		case sa.size == unix.SizeofSockaddrInet6 && sa.any.Addr.Family == unix.AF_INET6:
			in := (*unix.RawSockaddrInet6)(unsafe.Pointer(&sa.any))
			got = fmt.Sprintf("inet6 %v port %d", netip.AddrFrom16(in.Addr), binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&in.Port))[:]))
		default:
			got = fmt.Sprintf("size %d, family %d", sa.size, sa.any.Addr.Family)
		}
		if got != tc.want {
			t.Errorf("%d %s: %s; want %s", tc.family, tc.peer, got, tc.want)
		}
	}
}
