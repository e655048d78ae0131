package rig

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// DemoOptions set up the built-in virtual bench.
type DemoOptions struct {
	Cut      string        // where the quarter car is cut: CP1 or CP2
	Profile  string        // the network between car and seat
	Duration time.Duration // 0: 10 s
	Priority int
	Trace    io.Writer
	Signals  io.Writer
	Log      io.Writer // announcements
	Status   io.Writer // a live status (see Status)
	Out      io.Writer // what the demo is, once it is set up
}

// DemoBench is the bench of the demo: paper 001's quarter car cut at cut,
// the rig simulating wheel, suspension and body, the seat on a
// pseudo-terminal, the road a bump every second. flows are the profile's
// two flows: the car's frames to the seat, and back.
func DemoBench(cut, dir string, flows [2]string) string {
	return fmt.Sprintf(`name: demo
endpoints:
  car:
    model:
      name: quarter-car
      cut: %s
      exchange: 2ms
      inputs: {v0: {square: {amplitude: 0.1, period: 2s}}}
  seat: {pty: {link: %s, framing: line}}
bind:
  %s: {from: car, to: seat}
  %s: {from: seat, to: car}
`, cut, filepath.Join(dir, "seat"), flows[0], flows[1])
}

// Demo runs a complete hardware-in-the-loop run with no hardware: the rig
// simulates the quarter car cut at a coupling point and exchanges the
// coupling variables through the emulated network with a virtual device
// that plays the part on the bench. The device attaches to a real
// pseudo-terminal through the serial driver, runs the model's hardware
// part on a thread of its own at the same exchange rate, and answers each
// frame as hardware would.
func Demo(ctx context.Context, opt DemoOptions) (record.Summary, *profiles.LoadedBench, error) {
	if opt.Duration <= 0 {
		opt.Duration = 10 * time.Second
	}
	car, err := profiles.LoadModel("quarter-car", nil)
	if err != nil {
		return record.Summary{}, nil, err
	}
	if _, _, err := car.Cut(opt.Cut); err != nil {
		return record.Summary{}, nil, fmt.Errorf("--cut: %w", err)
	}
	p, err := profiles.Load(opt.Profile)
	if err != nil {
		return record.Summary{}, nil, err
	}
	if p.Flows.Len() < 2 {
		return record.Summary{}, nil, fmt.Errorf("profile %s has %d flows; the demo needs two, to the seat and back", p.Name, p.Flows.Len())
	}
	dir, err := os.MkdirTemp("", "hilrig-demo-")
	if err != nil {
		return record.Summary{}, nil, err
	}
	defer os.RemoveAll(dir)
	b, err := profiles.ParseBench("demo bench", []byte(DemoBench(opt.Cut, dir, [2]string{p.Flows.Names[0], p.Flows.Names[1]})), p)
	if err != nil {
		return record.Summary{}, nil, err
	}
	if opt.Out != nil {
		fmt.Fprintf(opt.Out, "hilrig demo: paper 001's quarter car cut at %s, a virtual seat on a pseudo-terminal, %s between them, for %v.\n", opt.Cut, p.Name, opt.Duration)
	}
	mon := &record.Monitor{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		s   record.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Run(ctx, p, b, Options{Duration: opt.Duration, Trace: opt.Trace, Signals: opt.Signals, Priority: opt.Priority, Log: opt.Log, Monitor: mon})
		done <- result{s, err}
	}()
	device, err := startSeat(ctx, filepath.Join(dir, "seat"), b.Models["car"], opt.Priority-2)
	if err != nil {
		cancel()
		if r := <-done; r.err != nil {
			return r.s, b, r.err // the run failed first: that is the news
		}
		return record.Summary{}, b, fmt.Errorf("the virtual seat: %w", err)
	}
	var status *Status
	if opt.Status != nil {
		status = NewStatus(opt.Status, opt.Duration)
	}
	ticker := time.NewTicker(250 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case r := <-done:
			device.stop()
			if status != nil {
				status.Close(mon)
			}
			return r.s, b, r.err
		case <-ticker.C:
			if status != nil {
				status.Show(mon)
			}
		}
	}
}

// seatDevice is the virtual hardware: the model's hardware part behind a
// pseudo-terminal, as a microcontroller on a USB adapter would be. It runs
// the same modelEnd as the rig's side of a cut, with the codecs swapped.
type seatDevice struct {
	port    serial.Port
	line    wire.Framing
	mu      sync.Mutex
	latest  []byte // the last frame received, not yet taken up
	fresh   bool
	quit    chan struct{}
	stopped sync.WaitGroup
}

// startSeat attaches to the device side of the pseudo-terminal at path
// and runs the hardware part there.
func startSeat(ctx context.Context, path string, bm *profiles.BenchModel, priority int) (*seatDevice, error) {
	var port serial.Port
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; {
		if port, err = serial.Open(path, &serial.Mode{BaudRate: 115200}); err == nil {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
	end, err := executor.NewPart(bm.Hardware, bm, bm.Receive, bm.Send)
	if err != nil {
		port.Close()
		return nil, err
	}
	line, _ := wire.NewFraming("line", wire.FramingOptions{})
	d := &seatDevice{port: port, line: line, quit: make(chan struct{})}
	d.stopped.Add(2)
	go d.read()
	go d.step(end, bm.Exchange, priority)
	return d, nil
}

// read keeps the latest frame the rig sent, for the stepping thread.
func (d *seatDevice) read() {
	defer d.stopped.Done()
	dec := d.line.NewDecoder(4096)
	buf := make([]byte, 4096)
	for {
		n, err := d.port.Read(buf)
		if err != nil || n == 0 && d.closed() {
			return
		}
		dec.Feed(buf[:n], 0, func(frame []byte, _ time.Duration) {
			d.mu.Lock()
			d.latest = append(d.latest[:0], frame...)
			d.fresh = true
			d.mu.Unlock()
		})
	}
}

func (d *seatDevice) closed() bool {
	select {
	case <-d.quit:
		return true
	default:
		return false
	}
}

// step runs the hardware part at the exchange rate on a real-time thread:
// take up what arrived, answer with the part's outputs, integrate.
func (d *seatDevice) step(end *executor.Part, exchange time.Duration, priority int) {
	defer d.stopped.Done()
	runtime.LockOSThread() // never unlocked: the thread may have been raised
	if priority > 0 {
		realtime.RaiseThread(priority)
	}
	clock := realtime.NewMonotonic()
	w, err := realtime.NewWaiter(clock, realtime.DefaultSpin)
	if err != nil {
		return
	}
	defer w.Close()
	var frame, taken []byte
	never := func() bool { return false }
	for next := time.Duration(0); !d.closed(); next += exchange {
		w.Until(next, never)
		d.mu.Lock()
		fresh := d.fresh
		taken, d.fresh = append(taken[:0], d.latest...), false
		d.mu.Unlock()
		if fresh {
			end.Take(taken)
		}
		frame = d.line.Append(frame[:0], end.Frame())
		if _, err := d.port.Write(frame); err != nil {
			return
		}
		end.Advance()
		// Fallen behind by whole exchanges (the machine was busy): the
		// seat's physics went on meanwhile, so integrate through them.
		for clock.Now() >= next+2*exchange {
			end.Advance()
			next += exchange
		}
	}
}

func (d *seatDevice) stop() {
	close(d.quit)
	d.port.Close()
	d.stopped.Wait()
}
