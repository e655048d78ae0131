package rig

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"go.bug.st/serial"

	"github.com/hilrig/hilrig/drivers/realtime"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/device"
	"github.com/hilrig/hilrig/firmware/pid"
	"github.com/hilrig/hilrig/firmware/plantnode"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/modelfile"
	"github.com/hilrig/hilrig/rig/record"
)

// The demo's scenarios.
const (
	// ScenarioFirmware: the reference PID firmware on a pseudo-terminal
	// controls motor-speed, simulated by the rig.
	ScenarioFirmware = "firmware"
	// ScenarioQuarterCar: paper 001's quarter car simulated by the rig,
	// its seat on a pseudo-terminal, played by the reference plant node.
	ScenarioQuarterCar = "quarter-car"
)

// DemoScenarios are the scenarios, the default first.
var DemoScenarios = []string{ScenarioFirmware, ScenarioQuarterCar}

// DemoOptions set up the built-in virtual bench.
type DemoOptions struct {
	Scenario string        // a DemoScenarios; "" is the first
	Cut      string        // quarter-car: where the car is cut, CP1 or CP2
	Profile  string        // the network between the rig and the device
	Duration time.Duration // 0: 10 s
	Priority int
	Trace    io.Writer
	Signals  io.Writer
	Log      io.Writer // announcements
	Status   io.Writer // a live status (see Status)
	Out      io.Writer // what the demo is, once it is set up
}

// DemoBench is the bench of the quarter-car scenario: paper 001's quarter
// car cut at cut, the rig simulating wheel, suspension and body, the seat
// on a pseudo-terminal in dir, the road a bump every second; the car's
// body velocity goes to the seat as a wire command, the seat force comes
// back as a sample. flows are the profile's two flows: to the seat, and
// back.
func DemoBench(cut, dir string, flows [2]string) string {
	return fmt.Sprintf(`name: demo
endpoints:
  car:
    model:
      name: quarter-car
      cut: %s
      exchange: 2ms
      inputs: {v0: {square: {amplitude: 0.1, period: 2s}}}
      codec: {wire: {sends: command}}
  seat: {pty: {link: %s, codec: wire}}
bind:
  %s: {from: car, to: seat}
  %s: {from: seat, to: car}
`, cut, filepath.Join(dir, "seat"), flows[0], flows[1])
}

// FirmwareDemoBench is the bench of the firmware scenario: motor-speed cut
// at its controller, the rig simulating the motor, its load and the
// setpoint (a square wave between 5 and 15 rad/s, 4 s a period), the
// controller on a pseudo-terminal in dir with codec wire.
func FirmwareDemoBench(dir string, flows [2]string) string {
	return fmt.Sprintf(`name: demo-firmware
endpoints:
  motor:
    model:
      name: motor-speed
      cut: controller
      exchange: 2ms
      inputs: {setpoint: {square: {amplitude: 5, offset: 10, period: 4s}}}
      codec: wire
  controller: {pty: {link: %s, codec: wire}}
bind:
  %s: {from: motor, to: controller}
  %s: {from: controller, to: motor}
`, filepath.Join(dir, "controller"), flows[0], flows[1])
}

// DemoSetup is a scenario made ready: its profile and bench, and the
// device on the pseudo-terminal.
type DemoSetup struct {
	Scenario string
	Profile  *profiles.Loaded
	Bench    *benchfile.LoadedBench
	endpoint string // the device's, in the bench
	about    string // what the demo is, in a sentence
	build    func(uart device.UART, clock device.Clock) (device.Firmware, error)
}

// SetUpDemo checks the options and makes the scenario's bench, its
// pseudo-terminal in dir.
func SetUpDemo(opt DemoOptions, dir string) (*DemoSetup, error) {
	scenario := opt.Scenario
	if scenario == "" {
		scenario = DemoScenarios[0]
	}
	if !slices.Contains(DemoScenarios, scenario) {
		return nil, fmt.Errorf("--scenario: no scenario %q (want %s)", scenario, strings.Join(DemoScenarios, " or "))
	}
	if opt.Cut != "" && scenario != ScenarioQuarterCar {
		return nil, fmt.Errorf("--cut cuts the quarter car; scenario %s is cut at its controller", scenario)
	}
	p, err := profiles.Load(opt.Profile)
	if err != nil {
		return nil, err
	}
	if p.Flows.Len() < 2 {
		return nil, fmt.Errorf("profile %s has %d flows; the demo needs two, to the device and back", p.Name, p.Flows.Len())
	}
	// To the device and back: by the flows' roles where the profile gives
	// them (the device is the plant node in the quarter car, the
	// controller in the firmware scenario), else the first two flows.
	toDevice, fromDevice := profiles.ToPlant, profiles.ToController
	if scenario == ScenarioFirmware {
		toDevice, fromDevice = fromDevice, toDevice
	}
	flows := [2]string{p.Flows.Names[0], p.Flows.Names[1]}
	if to, from := p.FlowWithRole(toDevice), p.FlowWithRole(fromDevice); to != "" && from != "" {
		flows = [2]string{to, from}
	}
	d := &DemoSetup{Scenario: scenario, Profile: p}
	var text string
	switch scenario {
	case ScenarioQuarterCar:
		cut := opt.Cut
		if cut == "" {
			cut = "CP2"
		}
		car, err := modelfile.LoadModel("quarter-car", nil)
		if err != nil {
			return nil, err
		}
		if _, _, err := car.Cut(cut); err != nil {
			return nil, fmt.Errorf("--cut: %w", err)
		}
		text, d.endpoint = DemoBench(cut, dir, flows), "seat"
		var onBench []string // what the device plays: the seat at CP2, body and seat at CP1
		for _, c := range car.Cuts {
			if c.Name == cut {
				onBench = c.Hardware
			}
		}
		d.about = fmt.Sprintf("paper 001's quarter car cut at %s, its %s on a pseudo-terminal played by the reference plant node (firmware/plantnode), its pins wired to their physics", cut, strings.Join(onBench, " and "))
	case ScenarioFirmware:
		text, d.endpoint = FirmwareDemoBench(dir, flows), "controller"
		d.about = "the reference PID firmware (firmware/pid) on a pseudo-terminal, opened through the serial driver as a USB adapter is, controlling the speed of a DC motor the rig simulates (motor-speed)"
	}
	if d.Bench, err = benchfile.ParseBench("demo bench", []byte(text), p); err != nil {
		return nil, err
	}
	bm := d.Bench.Models[d.Bench.Endpoints.Names[0]]
	switch scenario {
	case ScenarioQuarterCar:
		d.build = func(uart device.UART, clock device.Clock) (device.Firmware, error) { return seatNode(bm, uart, clock) }
	case ScenarioFirmware:
		d.build = func(uart device.UART, _ device.Clock) (device.Firmware, error) {
			cfg, err := pidFor(bm, d.Bench.Endpoints.Values[0].Model.Params)
			if err != nil {
				return nil, err
			}
			return pid.New(cfg, uart, nil)
		}
	}
	return d, nil
}

// pidFor is the reference PID firmware's configuration for motor-speed's
// controller as bm has it, with params: the model's law, rate and limits; samples of
// the variables the rig sends (wL, r: measurement and setpoint), f64 each
// as the wire codec lays them out by default; commands of V. It holds its
// command and raises its fault flag after 100 ms without a measurement,
// and says so in a heartbeat every 100 ms.
func pidFor(bm *benchfile.BenchModel, params lang.Map[float64]) (pid.Config, error) {
	par := map[string]float64{}
	if b, ok := plant.LookupBuiltin(bm.Name); ok {
		for _, p := range b.Params {
			par[p.Name] = p.Value
		}
	}
	for i, name := range params.Names {
		par[name] = *params.Values[i]
	}
	sends := bm.Simulated.Out()
	y, r := slices.Index(sends, "wL"), slices.Index(sends, "r")
	if bm.Name != "motor-speed" || y < 0 || r < 0 || len(bm.Simulated.In()) != 1 {
		return pid.Config{}, fmt.Errorf("the PID firmware is motor-speed's controller, not %s's cut %s", bm.Name, bm.Cut)
	}
	samples, _ := wire.NewStruct(slices.Repeat([]wire.Field{{Type: wire.F64LE}}, len(sends)))
	command, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	return pid.Config{
		Law: pid.Law{Gains: pid.Gains{Kp: par["kp"], Ki: par["ki"], Kd: par["kd"]}, Period: time.Duration(math.Round(1e9 / par["rate"])),
			Min: par["umin"], Max: par["umax"], FilterTime: time.Duration(par["tf"] * 1e9), TrackingTime: time.Duration(par["tt"] * 1e9)},
		Measurement: samples, MeasurementField: y, SetpointField: r, Command: command,
		Timeout: 100 * time.Millisecond, Heartbeat: 100 * time.Millisecond,
	}, nil
}

// seatNode is the reference plant node with the seat on its pins: the
// command it applies is the body's velocity, the input it samples every
// exchange is the seat force, and between the two the seat's own
// equations (the quarter car's hardware part at CP2, or the suspension
// and body at CP1) run on the device's clock. Its watchdog holds the
// input at rest (0) when the car's commands stop for 100 ms.
func seatNode(bm *benchfile.BenchModel, uart device.UART, clock device.Clock) (device.Firmware, error) {
	it, err := plant.NewIntegrator(bm.Hardware, bm.Solver, bm.Step)
	if err != nil {
		return nil, err
	}
	if len(bm.Hardware.In()) != 1 || len(bm.Hardware.Out()) != 1 {
		return nil, fmt.Errorf("the seat node has one input and one output; cut %s has %d and %d", bm.Cut, len(bm.Hardware.Out()), len(bm.Hardware.In()))
	}
	one, _ := wire.NewStruct([]wire.Field{{Type: wire.F64LE}})
	pins := &physicsPins{it: it, clock: clock, at: -1}
	return plantnode.New(plantnode.Config{Period: bm.Exchange, Samples: one, Commands: one, Safe: []float64{0},
		Watchdog: 100 * time.Millisecond, Heartbeat: 100 * time.Millisecond}, uart, []device.AnalogIn{pins}, []device.AnalogOut{pins})
}

// StartPlantNode plays the hardware of bench model bm on the device side
// of the pseudo-terminal at path, once a run has made it: the reference
// plant node (firmware/plantnode), speaking the wire protocol, its pins
// wired to the equations of bm's hardware part (one input, one output),
// on threads of its own and its own clock, as the demo's seat is played.
// stop ends it, its output at its safe level.
func StartPlantNode(ctx context.Context, path string, bm *benchfile.BenchModel, priority int) (stop func(), err error) {
	dev, err := startDevice(ctx, path, func(uart device.UART, clock device.Clock) (device.Firmware, error) { return seatNode(bm, uart, clock) }, priority)
	if err != nil {
		return nil, err
	}
	return dev.stop, nil
}

// physicsPins are a plant node's output and input wired to a model part's
// equations, one input and one output: what the output drives is the
// part's input from that instant, and the input reads the part's output
// now, the part integrated up to the device's clock in whole steps.
type physicsPins struct {
	it    *plant.Integrator
	clock device.Clock
	at    time.Duration // the device's time of the integrator's, or -1 before the first use
}

func (p *physicsPins) catchUp() {
	now := p.clock.Now()
	if p.at < 0 {
		p.at = now
	}
	for p.at+p.it.Step() <= now {
		p.it.Advance()
		p.at += p.it.Step()
	}
}

func (p *physicsPins) Out(v float64) error {
	p.catchUp()
	p.it.SetIn(0, v)
	return nil
}

func (p *physicsPins) Read() (float64, error) {
	p.catchUp()
	p.it.Sample()
	return p.it.Out(0), nil
}

// Demo runs a complete hardware-in-the-loop run with no hardware: the rig
// simulates the scenario's model, cut at a coupling point, and exchanges
// the coupling variables through the emulated network with reference
// firmware on a real pseudo-terminal, attached through the serial driver
// as a microcontroller on a USB adapter would be, and running on threads
// of its own on its own clock. Both sides speak the wire protocol: the
// rig follows the device's messages, its clock and its heartbeat.
func Demo(ctx context.Context, opt DemoOptions) (record.Summary, *DemoSetup, error) {
	if opt.Duration <= 0 {
		opt.Duration = 10 * time.Second
	}
	dir, err := os.MkdirTemp("", "hilrig-demo-")
	if err != nil {
		return record.Summary{}, nil, err
	}
	defer os.RemoveAll(dir)
	d, err := SetUpDemo(opt, dir)
	if err != nil {
		return record.Summary{}, nil, err
	}
	if opt.Out != nil {
		fmt.Fprintf(opt.Out, "hilrig demo (%s): %s, %s between them, for %v.\n", d.Scenario, d.about, d.Profile.Name, opt.Duration)
	}
	mon := &record.Monitor{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The device's tick thread keeps a P while it sleeps, as the executor
	// does (realtime.Waiter): one more, before the run adds its own, for
	// as long as the device runs.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1))
	type result struct {
		s   record.Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := Run(ctx, d.Profile, d.Bench, Options{Duration: opt.Duration, Trace: opt.Trace, Signals: opt.Signals, Priority: opt.Priority, Log: opt.Log, Monitor: mon})
		done <- result{s, err}
	}()
	dev, err := startDevice(ctx, filepath.Join(dir, d.endpoint), d.build, threadPriorities(opt.Priority, runtime.NumCPU()).devices)
	if err != nil {
		cancel()
		if r := <-done; r.err != nil {
			return r.s, d, r.err // the run failed first: that is the news
		}
		return record.Summary{}, d, fmt.Errorf("the device on %s: %w", d.endpoint, err)
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
			dev.stop()
			if status != nil {
				status.Close(mon)
			}
			return r.s, d, r.err
		case <-ticker.C:
			if status != nil {
				status.Show(mon)
			}
		}
	}
}

// hostDevice runs a firmware on the device side of a pseudo-terminal, as
// a host build does (firmware/cmd): the bytes it reads go in as they
// arrive, stamped with the device's own clock, and its ticks run on a
// thread of its own, at real-time priority when allowed, woken at each
// tick's time.
type hostDevice struct {
	port    serial.Port
	fw      device.Firmware
	clock   *realtime.Monotonic
	mu      sync.Mutex // the firmware is single-threaded: one of the two at a time
	quit    chan struct{}
	stopped sync.WaitGroup
}

// portUART is the firmware's UART on a port the device's reader reads.
type portUART struct{ port serial.Port }

func (u portUART) Read([]byte) (int, error)    { return 0, nil } // the reader gives the firmware its bytes
func (u portUART) Write(p []byte) (int, error) { return u.port.Write(p) }

// startDevice attaches to the pseudo-terminal at path, once the run has
// made it, and starts the firmware build makes on it.
func startDevice(ctx context.Context, path string, build func(device.UART, device.Clock) (device.Firmware, error), priority int) (*hostDevice, error) {
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
	d := &hostDevice{port: port, clock: realtime.NewMonotonic(), quit: make(chan struct{})}
	if d.fw, err = build(portUART{port}, d.clock); err != nil {
		port.Close()
		return nil, err
	}
	d.stopped.Add(2)
	go d.read()
	go d.tick(priority)
	return d, nil
}

func (d *hostDevice) read() {
	defer d.stopped.Done()
	buf := make([]byte, 4096)
	for {
		n, err := d.port.Read(buf)
		if n > 0 {
			d.mu.Lock()
			d.fw.Receive(buf[:n], d.clock.Now())
			d.mu.Unlock()
		}
		if err != nil || n == 0 && d.closed() {
			return
		}
	}
}

func (d *hostDevice) closed() bool {
	select {
	case <-d.quit:
		return true
	default:
		return false
	}
}

// tick runs the firmware's periodic work at its times.
func (d *hostDevice) tick(priority int) {
	defer d.stopped.Done()
	runtime.LockOSThread() // never unlocked: the thread may have been raised
	if priority > 0 {
		realtime.RaiseThread(priority)
	}
	w, err := realtime.NewWaiter(d.clock, realtime.DefaultSpin)
	if err != nil {
		return
	}
	defer w.Close()
	quit := func() bool { return d.closed() }
	for !d.closed() {
		d.mu.Lock()
		now := d.clock.Now()
		if d.fw.Next() <= now {
			d.fw.Tick(now)
		}
		next := d.fw.Next()
		d.mu.Unlock()
		w.Until(next, quit)
	}
}

func (d *hostDevice) stop() {
	close(d.quit)
	d.port.Close()
	d.stopped.Wait()
	if n, ok := d.fw.(interface{ GoSafe() }); ok {
		n.GoSafe() // a node's outputs to their safe levels, as its host build does at its stop
	}
}
