package record_test

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"syscall"
	"testing"

	"github.com/hilrig/hilrig/rig/record"
)

// disk is a file on a disk with room bytes left: a write takes what fits
// and fails with ENOSPC for the rest, as write(2) does on a full file
// system; quiet makes it come back short without saying why.
type disk struct {
	room     int
	quiet    bool
	got      []byte
	calls    int // writes asked for
	failedAt int // the write that came back short; 0: none
}

func (d *disk) Write(p []byte) (int, error) {
	d.calls++
	n := min(len(p), d.room)
	d.got = append(d.got, p[:n]...)
	d.room -= n
	if n == len(p) {
		return n, nil
	}
	if d.failedAt == 0 {
		d.failedAt = d.calls
	}
	if d.quiet {
		return n, nil
	}
	return n, syscall.ENOSPC
}

// TestWriterAccountsForEveryRecord: whatever the file does, every record
// given to a writer is written whole or unwritten, the file holds exactly
// the records counted written (and then at most part of one), a file that
// failed is not written to again, and its failure is told once.
func TestWriterAccountsForEveryRecord(t *testing.T) {
	const header, n, size = "n\n", 40000, 8 // rows "0001234\n": 320 kB, more than one write
	row := func(b []byte, r *int) []byte { return fmt.Appendf(b, "%07d\n", *r) }
	for _, tc := range []struct {
		name    string
		room    int
		quiet   bool
		written uint64
	}{
		{"room for all", 1 << 30, false, n},
		{"full from the start (/dev/full)", 0, false, 0},
		{"room for part of the header", 1, false, 0},
		{"room for the header only", 2, false, 0},
		{"full after 1000 rows", 2 + size*1000, false, 1000},
		{"full in the middle of row 1234", 2 + size*1234 + 5, false, 1234},
		{"full in the middle of a later write", 2 + size*39000 + 3, false, 39000},
		{"a short write without an error", 2 + size*777 + 1, true, 777},
	} {
		for _, async := range []bool{false, true} {
			name := fmt.Sprintf("%s (asynchronous %v)", tc.name, async)
			d := &disk{room: tc.room, quiet: tc.quiet}
			slots := 0
			if async {
				slots = n // a ring that never fills: this is about the file
			}
			w := record.NewWriter(d, []byte(header), slots, nil, row)
			var mu sync.Mutex
			var told []error
			w.OnFailure(func(err error) { mu.Lock(); told = append(told, err); mu.Unlock() })
			for i := range n {
				*w.Next() = i
				w.Publish()
			}
			err := w.Close()
			c := w.Account()
			if c.Written != tc.written || c.Unwritten != n-tc.written || c.Dropped != 0 || c.Lost() != n-tc.written {
				t.Errorf("%s: %+v, want %d written and %d unwritten", name, c, tc.written, n-tc.written)
			}
			whole := 0
			if tc.written > 0 {
				whole = len(header) + size*int(tc.written)
				if string(d.got[whole-size:whole]) != fmt.Sprintf("%07d\n", tc.written-1) {
					t.Errorf("%s: the last row counted written is %q", name, d.got[whole-size:whole])
				}
			}
			if len(d.got) < whole || len(d.got) >= whole+max(size, len(header)) {
				t.Errorf("%s: the file has %d bytes for %d rows written", name, len(d.got), tc.written)
			}
			failed := tc.written < n
			if failed != (err != nil) || !errors.Is(c.Err, err) || len(told) != map[bool]int{true: 1}[failed] || failed && !errors.Is(told[0], err) {
				t.Errorf("%s: Close returned %v, the account %v, told %v", name, err, c.Err, told)
			}
			if failed && !tc.quiet && !errors.Is(err, syscall.ENOSPC) || tc.quiet && !errors.Is(err, io.ErrShortWrite) {
				t.Errorf("%s: %v", name, err)
			}
			w.Close()
			if failed && d.calls != d.failedAt {
				t.Errorf("%s: written to %d times after it failed", name, d.calls-d.failedAt)
			}
		}
	}
}

// TestAccountFailure: an output that lost nothing is no failure; one that
// lost rows says how many, of how many, why, and what the file has.
func TestAccountFailure(t *testing.T) {
	full := syscall.ENOSPC
	for _, tc := range []struct {
		c    record.Account
		want string
	}{
		{record.Account{Written: 3000}, ""},
		{record.Account{Written: 2988, Dropped: 12}, "the trace is incomplete: 12 of its 3000 rows lost to a full ring: the disk fell behind by more than the ring holds"},
		{record.Account{Written: 1149, Unwritten: 1851, Err: full}, "writing the trace failed: no space left on device: 1851 of its 3000 rows lost; the file has the 1149 before it failed"},
		{record.Account{Unwritten: 3000, Err: full}, "writing the trace failed: no space left on device: all its 3000 rows lost"},
		{record.Account{Err: full}, "writing the trace failed: no space left on device: it had no rows to write, only its header"},
		{record.Account{Written: 1137, Dropped: 12, Unwritten: 1851, Err: full}, "writing the trace failed: no space left on device: 1863 of its 3000 rows lost (12 to a full ring before: the disk fell behind); the file has the 1137 before it failed"},
	} {
		err := tc.c.Failure("trace", "rows")
		if got := fmt.Sprint(err); tc.want == "" && err != nil || tc.want != "" && got != tc.want {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
		if tc.c.Err != nil && !errors.Is(err, tc.c.Err) {
			t.Errorf("%+v: %v does not wrap the file's error", tc.c, err)
		}
		s := tc.c.Summary("trace")
		if s.Written != tc.c.Written || s.Lost != tc.c.Dropped+tc.c.Unwritten || s.Dropped != tc.c.Dropped || s.Unwritten != tc.c.Unwritten || (s.Error != "") != (tc.c.Err != nil) {
			t.Errorf("%+v: summary %+v", tc.c, s)
		}
	}
}
