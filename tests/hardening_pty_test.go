package tests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrig/hilrig/drivers/driverstest"
	"golang.org/x/sys/unix"
)

// rigSideTerminals lists the /dev/pts devices the rig has open other than
// the device sides it links (those the test's programs attach to): the
// numbers of its own sides, and how many open files it has on them.
func rigSideTerminals(t *testing.T, r *rigProcess, deviceSides []string) (numbers []int, files int) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", r.cmd.Process.Pid)
	entries, err := os.ReadDir(fds)
	if err != nil {
		t.Fatalf("the rig's open files: %v", err)
	}
	seen := map[int]bool{}
	for _, e := range entries {
		target, _ := os.Readlink(filepath.Join(fds, e.Name()))
		var n int
		if _, err := fmt.Sscanf(target, "/dev/pts/%d", &n); err != nil || strings.Contains(target, " ") {
			continue
		}
		isDevice := false
		for _, d := range deviceSides {
			isDevice = isDevice || target == d
		}
		if isDevice {
			continue
		}
		files++
		if !seen[n] {
			seen[n] = true
			numbers = append(numbers, n)
		}
	}
	return numbers, files
}

// TestVirtualBenchKeepsToItsOwnTerminals is the hardening issue's pty item,
// as it was found: on the virtual bench, the program on the controller's
// device closes it, and then somebody opens a terminal (`script`, a new
// window), which the kernel gives the lowest free number. The rig took it
// for its device coming back when that number was its own side's: it said
// "device back", read what was typed there into the plant and wrote the
// plant's frames into it. Now it must neither report it nor exchange a byte
// with it, and the device's own program opening it again is still a gap,
// then back.
func TestVirtualBenchKeepsToItsOwnTerminals(t *testing.T) {
	r := startRig(t, plainLink, ptyBenchText("line", ""))
	ctrl, plant := r.attach("controller"), r.attach("plant")
	defer plant.Close()
	var deviceSides []string
	for _, name := range []string{"controller", "plant"} {
		target, err := os.Readlink(filepath.Join(r.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		deviceSides = append(deviceSides, target)
	}
	ctrl.Write([]byte("first\r"))
	plant.SetReadTimeout(2 * time.Second)
	readLines(t, plant, "first\n")

	numbers, files := rigSideTerminals(t, r, deviceSides)
	highest := 0
	for _, n := range numbers {
		highest = max(highest, n)
	}
	ctrl.Close() // quitting the terminal program
	// The rig's serial driver closes its side when it sees the device gone.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, now := rigSideTerminals(t, r, deviceSides); now < files {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rig never closed its side of the controller: %d files on %v", files, numbers)
		}
	}

	// Terminals opened until one is numbered past every side the rig had:
	// any number the rig let go is then one of these.
	var others []int
	for len(others) < 256 {
		m, n := driverstest.OpenTerminal(t)
		others = append(others, m)
		if n > highest {
			break
		}
	}
	for _, m := range others {
		unix.Write(m, []byte("typed into another terminal\r"))
	}
	// The plant talks to the controller all along: 30 frames over 300 ms,
	// fifteen reconnection intervals.
	var intoOthers []byte
	buf := make([]byte, 4096)
	for i := 0; i < 30; i++ {
		plant.Write([]byte("plant frame\n"))
		time.Sleep(10 * time.Millisecond)
		for _, m := range others {
			if n, _ := unix.Read(m, buf); n > 0 {
				intoOthers = append(intoOthers, buf[:n]...)
			}
		}
	}
	if len(intoOthers) > 0 {
		t.Errorf("the rig wrote %d bytes into another program's terminal: %q", len(intoOthers), intoOthers)
	}
	for _, m := range others {
		unix.Close(m)
	}

	ctrl = r.attach("controller") // the program starts again
	defer ctrl.Close()
	// Its first line may be sent before the rig has its side open again:
	// lines go until one arrives (the reconnection interval is 20 ms).
	var plantRead []byte
	for deadline := time.Now().Add(10 * time.Second); !bytes.Contains(plantRead, []byte("again\n")); {
		ctrl.Write([]byte("again\r"))
		plant.SetReadTimeout(100 * time.Millisecond)
		n, _ := plant.Read(buf)
		plantRead = append(plantRead, buf[:n]...)
		if time.Now().After(deadline) {
			t.Fatalf("the controller's lines never reached the plant after it came back; it read %q", plantRead)
		}
	}
	if bytes.Contains(plantRead, []byte("typed")) {
		t.Errorf("the plant read %q: what was typed into another terminal", plantRead)
	}
	if code := r.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	stderr := r.stderr.String()
	if back := strings.Count(stderr, "device back"); back != 1 {
		t.Errorf("the rig said its device was back %d times; want once, for the controller's own program:\n%s", back, stderr)
	}
	if gone := strings.Count(stderr, "device gone"); gone != 1 {
		t.Errorf("the rig said its device was gone %d times; want once:\n%s", gone, stderr)
	}
	if s := r.readSummary(); len(s.Endpoints[0].Gaps) != 1 {
		t.Errorf("controller gaps %v; want the one while its program was closed", s.Endpoints[0].Gaps)
	}
}

// readLines reads from port until it has read want.
func readLines(t *testing.T, port interface{ Read([]byte) (int, error) }, want string) {
	t.Helper()
	var got []byte
	buf := make([]byte, 256)
	for !bytes.Contains(got, []byte(want)) {
		n, err := port.Read(buf)
		if err != nil || n == 0 {
			t.Fatalf("read %q; want %q: %v", got, want, err)
		}
		got = append(got, buf[:n]...)
	}
}

// TestVirtualBenchLinkKeepsAFile: a bench whose link names somebody's file
// is an input error at the start, exit 2, naming the file; the file stays.
func TestVirtualBenchLinkKeepsAFile(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes")
	if err := os.WriteFile(notes, []byte("not a device\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bench := strings.Replace(ptyBenchText("line", ""), "DIR/controller", notes, 1)
	r := startRig(t, plainLink, bench)
	want := "controller: pseudo-terminal: " + notes + " exists and is a regular file, not a symbolic link; the link would replace it"
	if code := r.wait(); code != 2 || !strings.Contains(r.stderr.String(), want) {
		t.Errorf("exit %d: %s; want 2 and %q", code, r.stderr.String(), want)
	}
	if data, err := os.ReadFile(notes); err != nil || string(data) != "not a device\n" {
		t.Errorf("the file is now %q, %v", data, err)
	}
}
