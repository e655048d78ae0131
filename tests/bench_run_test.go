package tests

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"

	"github.com/hilrig/hilrig/firmware/wire"
)

// The benchmarks here run the real binary on a bench of two pseudo-terminals
// and measure from outside, as a controller and a plant would: b.N frames,
// each stamped just before it is written to one side and timed when it is
// read on the other. Use -benchtime=Nx: the frames are paced in wall time,
// so b.N sets how long a run takes, not how precise ns/op is.

// direct is a link with nothing on it: what is left is the rig's own
// forwarding latency.
const direct = `duration: 1h
hops:
  down: {}
  up:   {}
flows:
  m2s: {route: [down]}
  s2m: {route: [up]}
`

// forwarded is what one benchmark run saw.
type forwarded struct {
	got     []received
	sending time.Duration // from the first write to the last
	summary runSummary
	rig     *rigProcess
}

// forward sends n frames from the controller to the plant, every period
// apart.
func forward(b *testing.B, profile string, n int, every time.Duration) forwarded {
	b.Helper()
	rig := startRig(b, profile, ptyBenchText("line", ""))
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	got, bad, sending := rig.carry(traffic{send: line, n: n, every: every, settle: 100 * time.Millisecond, stop: syscall.SIGTERM})
	if bad != 0 {
		b.Fatalf("%d frames arrived damaged", bad)
	}
	return forwarded{got, sending, rig.readSummary(), rig}
}

// reportQuantiles reports p50, p99, p99.9 and max of ds in microseconds.
func reportQuantiles(b *testing.B, prefix string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) float64 { return float64(s[int(p*float64(len(s)-1))]) / 1e3 }
	b.ReportMetric(q(0.5), prefix+"-p50-µs")
	b.ReportMetric(q(0.99), prefix+"-p99-µs")
	b.ReportMetric(q(0.999), prefix+"-p99.9-µs")
	b.ReportMetric(float64(s[len(s)-1])/1e3, prefix+"-max-µs")
}

// inOrder fails b unless every frame 0..n-1 arrived once, in order.
func inOrder(b *testing.B, got []received, n int) {
	b.Helper()
	for i, r := range got {
		if r.seq != i {
			b.Fatalf("frame %d arrived as the %dth (lost or reordered)", r.seq, i)
		}
	}
	if len(got) != n {
		b.Fatalf("%d of %d frames arrived", len(got), n)
	}
}

// inRig is how long each delivered frame spent inside the rig, from the
// trace: ingress stamp (last byte read) to egress write.
func inRig(b *testing.B, rig *rigProcess) []time.Duration {
	rows, _ := readRunTrace(b, rig.trace)
	var ds []time.Duration
	for _, r := range rows {
		if r.flow == "m2s" && r.recv >= 0 {
			ds = append(ds, r.recv-r.sent)
		}
	}
	return ds
}

// BenchmarkRunForwarding is pty→pty forwarding at 1 kHz with no
// impairment: "e2e" is the controller's write to the plant's read, "rig"
// the part of it inside the rig.
func BenchmarkRunForwarding(b *testing.B) {
	f := forward(b, direct, b.N, time.Millisecond)
	inOrder(b, f.got, b.N)
	delays := make([]time.Duration, len(f.got))
	for i, r := range f.got {
		delays[i] = r.delay
	}
	reportQuantiles(b, "e2e", delays)
	reportQuantiles(b, "rig", inRig(b, f.rig))
	b.ReportMetric(float64(f.summary.Timing.ProcessAllocs)/float64(b.N), "process-allocs/frame")
	b.ReportMetric(float64(f.summary.Timing.MaxRSSKiB)/1024, "RSS-MiB")
}

// BenchmarkRunDelayError is the error of an emulated 5 ms delay at 1 kHz:
// the measured write-to-read time less 5 ms.
func BenchmarkRunDelayError(b *testing.B) {
	const delay = 5 * time.Millisecond
	f := forward(b, plainLink, b.N, time.Millisecond)
	inOrder(b, f.got, b.N)
	errs := make([]time.Duration, len(f.got))
	for i, r := range f.got {
		errs[i] = r.delay - delay
	}
	if slices.Min(errs) < 0 {
		b.Errorf("a frame arrived %v before its delay", -slices.Min(errs))
	}
	reportQuantiles(b, "error", errs)
	if w := f.summary.Timing.WakeLateness; w != nil {
		b.ReportMetric(w["p50"]*1e6, "wake-p50-µs")
		b.ReportMetric(w["p99"]*1e6, "wake-p99-µs")
		b.ReportMetric(w["p99_9"]*1e6, "wake-p99.9-µs")
		b.ReportMetric(w["max"]*1e6, "wake-max-µs")
	}
}

// BenchmarkRunThroughput writes line-framed 29-byte frames back to back at
// the pace of an 8N1 line (baud/10 bytes per second; at 921600 baud that is
// 92160 B/s, 3178 frames/s): the rig must deliver every one, in order.
// 3000000 baud is the top rate of common USB adapters.
func BenchmarkRunThroughput(b *testing.B) {
	for _, baud := range []int{921600, 3000000} {
		b.Run(fmt.Sprintf("baud=%d", baud), func(b *testing.B) {
			frameBytes := len(payload(0, 0)) + 1
			every := time.Duration(frameBytes) * time.Second * 10 / time.Duration(baud)
			f := forward(b, plainLink, b.N, every)
			inOrder(b, f.got, b.N)
			b.ReportMetric(float64(b.N*frameBytes)/f.sending.Seconds(), "B/s")
			b.ReportMetric(float64(b.N)/f.sending.Seconds(), "frames/s")
			if d := f.summary.Timing.IngressDropped; d != 0 {
				b.Errorf("the rig dropped %d frames at ingress", d)
			}
		})
	}
}

// harnessPriority is the SCHED_FIFO priority of the stand-ins for the
// controller and the plant, which are hardware on a real bench: below the
// rig's threads (80, its readers 79), above everything else, so that they
// do not add the scheduler's latency to what is measured.
const harnessPriority = 70

// harnessThread puts the calling goroutine on its own OS thread, for good,
// at harnessPriority. Without the privilege it changes nothing.
func harnessThread() {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: harnessPriority}
	unix.SchedSetAttr(0, &attr, 0)
}

// BenchmarkPtyCrossing is the floor under the benchmarks above: one write
// through one pseudo-terminal pair, slave to master, at 1 kHz, with the
// same harness threads and, as during a run, idle CPUs polling. A pty
// endpoint is two pairs joined by a bridge, so a frame from the
// controller's device to the plant's crosses four.
func BenchmarkPtyCrossing(b *testing.B) {
	// The rig's request, made here by hand: PM QoS, 0 µs, while open.
	if qos, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0); err == nil {
		defer qos.Close()
		qos.Write(make([]byte, 4))
	}
	master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(master)
	unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0)
	n, err := unix.IoctlGetUint32(master, unix.TIOCGPTN)
	if err != nil {
		b.Fatal(err)
	}
	slave, err := serial.Open(fmt.Sprintf("/dev/pts/%d", n), &serial.Mode{BaudRate: 115200})
	if err != nil {
		b.Fatal(err)
	}
	defer slave.Close()
	sent := make([]atomic.Int64, b.N) // written and read on two threads
	crossings := make([]time.Duration, 0, b.N)
	start := time.Now()
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		harnessThread()
		buf := make([]byte, 64)
		for len(crossings) < b.N {
			k, err := unix.Read(master, buf)
			if err != nil {
				return
			}
			now := time.Since(start)
			for range k / 8 { // 8-byte writes: several may arrive at once
				crossings = append(crossings, now-time.Duration(sent[len(crossings)].Load()))
			}
		}
	}()
	b.ResetTimer()
	go func() {
		harnessThread()
		for i := range b.N {
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * time.Millisecond)))
			sent[i].Store(int64(time.Since(start)))
			slave.Write([]byte("01234567"))
		}
	}()
	<-reading
	b.StopTimer()
	reportQuantiles(b, "crossing", crossings)
}

// BenchmarkRunModelRate runs `hilrig run` for 2 s with the quarter car's
// simulated part (cut at CP2, trapezoidal) exchanging at ever shorter
// periods with a device on UDP, and reports how the executor kept up:
// exchanges a second, overruns (an exchange started after the next was
// due), and how late exchanges started. The highest rate with no overrun
// and a p99 lateness under a tenth of the period is the real-time step
// rate BENCHMARKS.md quotes. Run with -benchtime=1x: each run takes 2 s.
func BenchmarkRunModelRate(b *testing.B) {
	sink := udpSink(b)
	for _, period := range []time.Duration{time.Millisecond, 500 * time.Microsecond, 250 * time.Microsecond, 100 * time.Microsecond, 50 * time.Microsecond, 20 * time.Microsecond} {
		b.Run("exchange="+period.String(), func(b *testing.B) {
			for range b.N {
				runModelRate(b, sink, period, 2*time.Second).report(b)
			}
		})
	}
}
