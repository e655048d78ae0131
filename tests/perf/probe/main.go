// Command probe measures the rig from outside, for the scripts beside it
// (tests/perf/README.md). It prints one line per measurement,
//
//	LABEL n P50 P99 P99.9 MAX
//
// in microseconds, and `probe table` reads such lines and prints, per
// label, the median of each column over the runs and its spread.
//
//	probe pty -to A -from B [-make] [-back] [-delay D] [-period P] [-for T] [-prio N] LABEL [FORWARDER ARGS...]
//	    writes a 29-byte line to A every period from a thread at SCHED_FIFO
//	    N (and to B, with -back) and times its arrival at B (at A) on
//	    threads of their own at the same priority: arrival - write - D.
//	    With -make the probe makes the two pseudo-terminals itself: it
//	    holds their masters and links A and B to their devices
//	    (/dev/pts/N), for a forwarder to open; it starts timing once a
//	    line has gone through each way. A FORWARDER command is started
//	    once A and B are to be opened (before the probe waits for them to
//	    exist, or after it made them), and stopped with SIGINT after the
//	    last frame, before the pairs go: the probe fails if it fails.
//	probe hist LABEL < cyclictest -q -h N output
//	    cyclictest's histogram (1 µs buckets) as the same line.
//	probe summary LABEL FILE
//	    the release lateness of a hilrig run's JSON summary (n: the frames
//	    it delivered).
//	probe table < lines
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hilrig/hilrig/tests/perf/cyclichist"
	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "pty":
		err = ptyProbe(args)
	case "hist":
		if len(args) != 1 {
			usage()
		}
		err = hist(args[0], os.Stdin)
	case "summary":
		if len(args) != 2 {
			usage()
		}
		err = summary(args[0], args[1])
	case "table":
		err = table(os.Stdin, os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(2) // a device, file or input it could not use: the probe asserts nothing
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: probe pty|hist|summary|table ... (see the source's header)")
	os.Exit(2)
}

// frameLen is the benchmarks' frame: 29 bytes with its newline.
const frameLen = 29

func ptyProbe(args []string) error {
	fs := flag.NewFlagSet("pty", flag.ExitOnError)
	to := fs.String("to", "", "the device written to")
	from := fs.String("from", "", "the device the frames arrive at")
	back := fs.Bool("back", false, "also write to -from and time the arrival at -to")
	delay := fs.Duration("delay", 0, "the delay the frames are meant to take, subtracted")
	period := fs.Duration("period", time.Millisecond, "")
	dur := fs.Duration("for", 10*time.Second, "how long to write")
	prio := fs.Int("prio", 70, "SCHED_FIFO priority of the probe's threads (0: normal)")
	makePairs := fs.Bool("make", false, "make the pseudo-terminals, link -to and -from to their devices, and write and read on their masters")
	idlePoll := fs.Bool("idle-poll", true, "hold /dev/cpu_dma_latency at 0 (idle CPUs poll), as the rig and cyclictest do, so that every forwarder is measured alike")
	fs.Parse(args)
	if *to == "" || *from == "" || fs.NArg() < 1 {
		usage()
	}
	label := fs.Arg(0)
	var forwarder *exec.Cmd
	if fs.NArg() > 1 {
		forwarder = exec.Command(fs.Arg(1), fs.Args()[2:]...)
		forwarder.Stderr = os.Stderr
	}
	if *idlePoll {
		if f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0); err == nil {
			f.Write(make([]byte, 4))
			defer f.Close()
		}
	}
	unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
	open := openRaw
	if *makePairs {
		open = makePair
	} else if err := startForwarder(forwarder); err != nil {
		return err
	}
	a, err := open(*to)
	if err != nil {
		return err
	}
	b, err := open(*from)
	if err != nil {
		return err
	}
	if *makePairs {
		if err := startForwarder(forwarder); err != nil {
			return err
		}
	}
	n := int(*dur / *period)
	ways := []*way{{w: a, r: b, sent: make([]int64, n), lat: make([]int64, 0, n)}}
	if *back {
		ways = append(ways, &way{w: b, r: a, sent: make([]int64, n), lat: make([]int64, 0, n)})
	}
	start := time.Now()
	var stop atomic.Bool
	var readers sync.WaitGroup
	for i, w := range ways {
		readers.Go(func() { w.read(byte('a'+i), *prio, start, &stop) })
	}
	runtime.LockOSThread()
	raise(*prio)
	var frame [frameLen]byte
	begin := start
	if *makePairs {
		// The forwarder opens the devices after they exist: a line
		// through each way says it is up.
		if err := handshake(ways, frame[:]); err != nil {
			return err
		}
		begin = time.Now()
	}
	for i := range n {
		deadline := begin.Add(50*time.Millisecond + time.Duration(i)**period) // the readers up first
		ts := unix.NsecToTimespec(time.Until(deadline).Nanoseconds())
		if ts.Nano() > 0 {
			unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &ts, nil)
		}
		for j, w := range ways {
			put(frame[:], byte('a'+j), i)
			w.sent[i] = time.Since(start).Nanoseconds()
			if _, err := unix.Write(w.w, frame[:]); err != nil {
				return fmt.Errorf("writing: %w", err)
			}
		}
	}
	// What is still on its way has a delay and a period to arrive.
	time.Sleep(*delay + 100**period + 100*time.Millisecond)
	stop.Store(true)
	readers.Wait()
	if err := stopForwarder(forwarder); err != nil {
		return err
	}
	var all []int64
	for _, w := range ways {
		for _, l := range w.lat {
			all = append(all, l-delay.Nanoseconds())
		}
	}
	lost := len(ways)*n - len(all)
	if lost > 0 {
		fmt.Fprintf(os.Stderr, "probe: %s: %d of %d frames did not arrive\n", label, lost, len(ways)*n)
	}
	us := make([]float64, len(all))
	early := 0
	for i, v := range all {
		us[i] = float64(v) / 1e3
		if v < 0 {
			early++
		}
	}
	if early > 0 {
		fmt.Fprintf(os.Stderr, "probe: %s: %d frames arrived early\n", label, early)
	}
	printLine(label, us)
	return nil
}

// startForwarder starts cmd, if there is one, from a thread at normal
// priority (a child takes its forking thread's).
func startForwarder(cmd *exec.Cmd) error {
	if cmd == nil {
		return nil
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the forwarder: %w", err)
	}
	return nil
}

// stopForwarder stops cmd with SIGINT (SIGKILL 10 s later) and says how
// it ended if that was not at once by its own exit or by the signal.
func stopForwarder(cmd *exec.Cmd) error {
	if cmd == nil {
		return nil
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	}()
	err := cmd.Wait()
	close(done)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		// Killed by it, or (socat) exited 128 + its number on it.
		if status, ok := exit.Sys().(syscall.WaitStatus); ok && (status.Signaled() && status.Signal() == syscall.SIGINT || status.ExitStatus() == 128+int(syscall.SIGINT)) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("the forwarder %s: %w", cmd.Path, err)
	}
	return nil
}

// way is one direction: frames written to w arrive at r.
type way struct {
	w, r int
	sent []int64 // per sequence number, since start (ns)
	lat  []int64 // arrival - sent, in ns
	seen atomic.Bool
}

// handshakeTag marks the lines that only say a way is up.
const handshakeTag = 's'

// handshake writes a line on each way every 20 ms until one has come
// through each, for at most 20 s.
func handshake(ways []*way, frame []byte) error {
	for range 1000 {
		up := true
		for _, w := range ways {
			if w.seen.Load() {
				continue
			}
			up = false
			put(frame, handshakeTag, 0)
			unix.Write(w.w, frame)
		}
		if up {
			time.Sleep(50 * time.Millisecond) // what is still on its way arrives
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("no line came through in 20 s: is the forwarder running?")
}

// read times each frame's arrival: the time it was read, less the time it
// was written, on a locked thread at prio.
func (w *way) read(tag byte, prio int, start time.Time, stop *atomic.Bool) {
	runtime.LockOSThread()
	raise(prio)
	var buf [4096]byte
	var line []byte
	fds := []unix.PollFd{{Fd: int32(w.r), Events: unix.POLLIN}}
	for !stop.Load() {
		// Polled with a timeout, so that the end of the run ends the read.
		if k, _ := unix.Poll(fds, 100); k <= 0 {
			continue
		}
		k, err := unix.Read(w.r, buf[:])
		if k <= 0 || err != nil {
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				continue
			}
			return
		}
		now := time.Since(start).Nanoseconds()
		for _, c := range buf[:k] {
			if c != '\n' {
				line = append(line, c)
				continue
			}
			if len(line) == frameLen-1 && line[0] == handshakeTag {
				w.seen.Store(true)
			}
			if len(line) == frameLen-1 && line[0] == tag {
				if i, err := strconv.Atoi(strings.TrimRight(string(line[1:9]), " ")); err == nil && i < len(w.sent) {
					w.lat = append(w.lat, now-w.sent[i])
				}
			}
			line = line[:0]
		}
	}
}

// put writes frame i of a way tagged tag.
func put(frame []byte, tag byte, i int) {
	for k := range frame {
		frame[k] = '.'
	}
	frame[0] = tag
	copy(frame[1:9], fmt.Sprintf("%08d", i))
	frame[len(frame)-1] = '\n'
}

func raise(prio int) {
	if prio <= 0 {
		return
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(prio)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		fmt.Fprintln(os.Stderr, "probe: SCHED_FIFO:", err)
	}
}

// openRaw opens a terminal once it exists, blocking, in raw mode.
func openRaw(path string) (int, error) {
	var fd int
	var err error
	for range 200 {
		if fd, err = unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", path, err)
	}
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", path, err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	return fd, unix.IoctlSetTermios(fd, unix.TCSETS, t)
}

// makePair makes a pseudo-terminal, links path to its device, sets the
// device raw (the forwarder sets it again as it opens it) and returns its
// master. The pair lives as long as the probe.
func makePair(path string) (int, error) {
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("/dev/ptmx: %w", err)
	}
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		return -1, fmt.Errorf("unlocking a pseudo-terminal: %w", err)
	}
	n, err := unix.IoctlGetInt(master, unix.TIOCGPTN)
	if err != nil {
		return -1, fmt.Errorf("naming a pseudo-terminal: %w", err)
	}
	device := fmt.Sprintf("/dev/pts/%d", n)
	// The probe holds the device open too, unread, until it exits: a
	// master whose device no one has open reads as hung up (EIO).
	if _, err := openRaw(device); err != nil {
		return -1, err
	}
	os.Remove(path)
	if err := os.Symlink(device, path); err != nil {
		return -1, err
	}
	return master, nil
}

// hist reads cyclictest's histogram: lines "BUCKET COUNT" (µs), the
// overflows counted at the histogram's end (their value is unknown: the
// max line gives the largest).
func hist(label string, r io.Reader) error {
	h, err := cyclichist.Read(r)
	if err != nil {
		return fmt.Errorf("hist: %w", err)
	}
	us := make([]float64, 0, h.Total())
	for _, b := range h.Buckets {
		for range b.N {
			us = append(us, float64(b.US))
		}
	}
	// Past the histogram's end cyclictest keeps only the maximum.
	over := math.NaN()
	if h.MaxUS > 0 {
		over = float64(h.MaxUS)
	}
	for range h.Overflows {
		us = append(us, over)
	}
	printLine(label, us)
	return nil
}

// summary reads timing.release_lateness_s of a hilrig run's summary.
func summary(label, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var s struct {
		Flows []struct {
			Delivered int64 `json:"delivered"`
		} `json:"flows"`
		Timing struct {
			Release map[string]float64 `json:"release_lateness_s"`
		} `json:"timing"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	r := s.Timing.Release
	if r == nil {
		return fmt.Errorf("%s: no timing.release_lateness_s (no frame released?)", path)
	}
	var released int64 // n: the frames the rig delivered
	for _, f := range s.Flows {
		released += f.Delivered
	}
	fmt.Printf("%s %d %.1f %.1f %.1f %.1f\n", label, released, r["p50"]*1e6, r["p99"]*1e6, r["p99_9"]*1e6, r["max"]*1e6)
	return nil
}

// printLine prints a measurement's line: n, p50, p99, p99.9, max in µs.
func printLine(label string, us []float64) {
	slices.Sort(us)
	q := func(p float64) float64 {
		if len(us) == 0 {
			return math.NaN()
		}
		return us[max(0, int(math.Ceil(p*float64(len(us))))-1)]
	}
	fmt.Printf("%s %d %.1f %.1f %.1f %.1f\n", label, len(us), q(0.5), q(0.99), q(0.999), q(1))
}

// table prints, per label in the order first seen, the median over its
// lines of each column and the spread (min–max).
func table(r io.Reader, w io.Writer) error {
	rows := map[string][][]float64{}
	var order []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 {
			continue
		}
		var v []float64
		for _, s := range f[2:] {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return fmt.Errorf("table: %q: %w", sc.Text(), err)
			}
			v = append(v, x)
		}
		if _, ok := rows[f[0]]; !ok {
			order = append(order, f[0])
		}
		rows[f[0]] = append(rows[f[0]], v)
	}
	fmt.Fprintf(w, "%-16s %4s  %-22s %-22s %-22s %-24s\n", "µs, median [min–max]", "runs", "p50", "p99", "p99.9", "max")
	for _, label := range order {
		fmt.Fprintf(w, "%-21s %4d", label, len(rows[label]))
		for c := range 4 {
			col := make([]float64, 0, len(rows[label]))
			for _, v := range rows[label] {
				col = append(col, v[c])
			}
			slices.Sort(col)
			med := col[len(col)/2]
			if len(col)%2 == 0 {
				med = (col[len(col)/2-1] + col[len(col)/2]) / 2
			}
			fmt.Fprintf(w, "  %-22s", fmt.Sprintf("%.1f [%.1f–%.1f]", med, col[0], col[len(col)-1]))
		}
		fmt.Fprintln(w)
	}
	return sc.Err()
}
