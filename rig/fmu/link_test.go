//go:build linux

package fmu

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/rig/fmu/fmutest"
)

// TestReportRoundTrip: an error reported by the child reads, in the rig,
// as the error it was: its text, and the typed error errors.As finds in
// it.
func TestReportRoundTrip(t *testing.T) {
	call := &fmi.CallError{Function: "fmi2DoStep", Version: fmi.FMI2, Status: fmi.Error, Log: []string{"fmi2Error logStatusError: no"}}
	output := &fmi.OutputError{Signal: "y", Value: math.NaN(), Time: 0.5, When: "at t = 0.5"}
	for _, err := range []error{
		call,
		&fmi.CallError{Function: "fmi3InstantiateCoSimulation", Version: fmi.FMI3, Status: fmi.Error, Detail: "returned NULL"},
		output,
		errors.Join(errors.New("input"), call),
		errors.Join(errors.New("wrapped"), output),
		errors.Join(fmi.ErrTerminated, errors.New("at t = 0.5")),
		errors.New("a step to 1 from 2: the time must increase"),
	} {
		got := decodeReport(reportOf(t, err))
		if got.Error() != err.Error() {
			t.Errorf("%q reads as %q", err, got)
		}
		var ce *fmi.CallError
		var oe *fmi.OutputError
		if errors.As(err, &ce) != errors.As(got, &ce) || errors.As(err, &oe) != errors.As(got, &oe) || errors.Is(err, fmi.ErrTerminated) != errors.Is(got, fmi.ErrTerminated) {
			t.Errorf("%q: the type is lost (%T)", err, got)
		}
		if oe != nil && !math.IsNaN(oe.Value) {
			t.Errorf("the value %v", oe.Value)
		}
	}
}

// reportOf is the child's report of err.
func reportOf(tb testing.TB, err error) []byte {
	k := testLink(tb, 0, 1)
	k.writeReport(err)
	return append([]byte(nil), k.report[:k.resp.errLen]...)
}

// testLink maps a link for n inputs and m outputs, removed at the test's
// end.
func testLink(t testing.TB, n, m int) *link {
	fd, err := unix.MemfdCreate("test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Ftruncate(fd, int64(newLayout(n, m).size)); err != nil {
		t.Fatal(err)
	}
	k, err := mapLink(fd, n, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.unmap() })
	return k
}

// FuzzLink: whatever the child's memory holds (an FMU may scribble on
// it), what the rig reads from it, an error's report and the log's lines,
// is read without a panic, within bounds: an error always, at most
// TailLines lines of at most a slot each, in valid UTF-8.
func FuzzLink(f *testing.F) {
	for _, err := range []error{
		&fmi.CallError{Function: "fmi2DoStep", Version: fmi.FMI2, Status: fmi.Error, Log: []string{"fmi2Error: no"}},
		&fmi.OutputError{Signal: "y", Value: math.Inf(1), Time: 1, When: "at t = 1"},
		errors.Join(fmi.ErrTerminated, errors.New("at t = 0.5")),
	} {
		f.Add(reportOf(f, err), uint64(3), uint64(100), []byte("\x05\x00\x00\x00hello"))
	}
	f.Add([]byte(`{"call":{"log":["\xff"]}}`), uint64(1<<63), uint64(0), []byte("\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, report []byte, lines, bytes uint64, slot []byte) {
		k := testLink(t, 1, 1)
		n := copy(k.report, report)
		if err := decodeReport(k.report[:n]); err == nil {
			t.Fatal("a report read as no error")
		}
		for i := 0; i < TailLines; i++ {
			copy(k.ring[i*slotSize:(i+1)*slotSize], slot)
		}
		k.h.logLines, k.h.logBytes = lines, bytes
		log := &Log{}
		k.readLog(log)
		for _, line := range log.Tail(0) {
			if len(line) > slotSize*3 || !utf8.ValidString(line) { // a byte that is not UTF-8 becomes 3
				t.Fatalf("a line of %d bytes: %.80q", len(line), line)
			}
		}
		if got, _ := log.Counts(); got != lines {
			t.Errorf("counted %d lines; want %d", got, lines)
		}
		if len(log.Tail(0)) > TailLines {
			t.Errorf("%d lines kept", len(log.Tail(0)))
		}
	})
}

// linkEchoEnv makes the test binary the other end of BenchmarkRoundTrip:
// it answers each request at once, over the transport it names.
const linkEchoEnv = "HILRIG_LINK_ECHO"

func init() {
	switch os.Getenv(linkEchoEnv) {
	case "futex":
		runtime.LockOSThread()
		k, err := mapLink(3, 1, 1)
		if err != nil {
			os.Exit(2)
		}
		for n := nextNumber(0); ; n = nextNumber(n) {
			await(&k.h.request, &k.h.hostSleep, n, time.Time{}, 0, nil)
			k.out[0] = k.in[0]
			post(&k.h.response, &k.h.rigSleep, n)
		}
	case "socketpair":
		runtime.LockOSThread()
		var buf [128]byte
		for {
			n, err := unix.Read(3, buf[:])
			if err != nil || n == 0 {
				os.Exit(0)
			}
			unix.Write(3, buf[:echoResponse])
		}
	}
}

// The sizes of a step's messages for one input and one output, as the
// link lays them out: what a socket would carry.
var (
	echoRequest  = int(unsafe.Sizeof(request{})) + 8
	echoResponse = int(unsafe.Sizeof(response{})) + 8
)

// BenchmarkRoundTrip is the transport alone, for one input and one output:
// a request and its answer between the rig and a child that echoes at
// once, over the link (shared memory, futex wakes) and over a socketpair
// with a fixed binary message of the same size (a write, a ppoll with the
// budget's timeout, a read), the alternative measured. It reports the
// round trip's percentiles.
func BenchmarkRoundTrip(b *testing.B) {
	for _, transport := range []string{"futex", "socketpair"} {
		b.Run(transport, func(b *testing.B) {
			var rig, child int
			var k *link
			if transport == "futex" {
				fd, err := unix.MemfdCreate("echo", unix.MFD_CLOEXEC)
				if err != nil {
					b.Fatal(err)
				}
				rig, child = fd, fd
				unix.Ftruncate(fd, int64(newLayout(1, 1).size))
				if k, err = mapLink(fd, 1, 1); err != nil {
					b.Fatal(err)
				}
				defer k.unmap()
			} else {
				fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
				if err != nil {
					b.Fatal(err)
				}
				rig, child = fds[0], fds[1]
				defer unix.Close(fds[1])
			}
			defer unix.Close(rig)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), linkEchoEnv+"="+transport)
			cmd.ExtraFiles = []*os.File{os.NewFile(uintptr(child), "echo")}
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var n uint32
			var msg [128]byte
			poll := []unix.PollFd{{Fd: int32(rig), Events: unix.POLLIN}}
			timeout := unix.NsecToTimespec(int64(time.Second))
			took := fmutest.NewPercentiles()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				start := time.Now()
				if k != nil {
					k.in[0] = float64(i)
					n = nextNumber(n)
					post(&k.h.request, &k.h.hostSleep, n)
					if await(&k.h.response, &k.h.rigSleep, n, start, time.Second, nil) != arrived || k.out[0] != float64(i) {
						b.Fatal("no echo")
					}
				} else {
					unix.Write(rig, msg[:echoRequest])
					if p, _ := unix.Ppoll(poll, &timeout, nil); p != 1 {
						b.Fatal("no echo")
					}
					if r, _ := unix.Read(rig, msg[:]); r != echoResponse {
						b.Fatalf("an echo of %d bytes", r)
					}
				}
				took.Add(time.Since(start))
			}
			took.Report(b)
		})
	}
}

// TestReportedSignal: the signal is read from the Go runtime's report in
// both its forms, and nothing else reads as one.
func TestReportedSignal(t *testing.T) {
	for _, tc := range []struct {
		report []string
		want   syscall.Signal
	}{
		{[]string{"SIGSEGV: segmentation violation", "PC=0x7f m=0 sigcode=1 addr=0x0", "signal arrived during cgo execution"}, syscall.SIGSEGV},
		{[]string{"SIGABRT: abort", "PC=0x7f m=0 sigcode=18446744073709551610"}, syscall.SIGABRT},
		{[]string{"fatal error: unexpected signal during runtime execution", "[signal SIGBUS: bus error code=0x2 addr=0x0 pc=0x1]"}, syscall.SIGBUS},
		{[]string{"panic: runtime error: index out of range [3] with length 3"}, 0},
		{[]string{"hilrig fmu-host: EOF: this command is the process of an isolated FMU, which hilrig starts"}, 0},
		{nil, 0},
	} {
		if got := reportedSignal(tc.report); got != tc.want {
			t.Errorf("%q: %v; want %v", tc.report, got, tc.want)
		}
	}
}
