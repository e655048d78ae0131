package profiles

import (
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A bench file is the physical wiring of a rig: the endpoints (serial
// ports, pseudo-terminals, GPIO pins, sockets) and which of a profile's
// flows each carries. Profiles stay independent of benches: in sim a flow's
// traffic stands in for the hardware.

// Bench is the schema of a bench file.
type Bench struct {
	Name        string        `yaml:"name" doc:"short name, shown in reports" default:"the file name"`
	Description string        `yaml:"description" doc:"what the bench wires together"`
	Endpoints   Map[Endpoint] `yaml:"endpoints,required" doc:"the rig's I/O, by name"`
	Bind        Map[Binding]  `yaml:"bind,required" doc:"the profile's flows carried by endpoints, by role (to-plant, to-controller: the flow of the profile that has the role) or by flow name"`
}

// Endpoint is one of the kinds of I/O.
type Endpoint struct {
	Serial *SerialPort     `yaml:"serial" doc:"a serial port (USB adapter, UART)"`
	Pty    *PtyPort        `yaml:"pty" doc:"a virtual serial port: a pseudo-terminal that a program attaches to as if it were a USB adapter"`
	GPIO   *GPIOPins       `yaml:"gpio" doc:"GPIO pins: input edges become frames, outputs replay them"`
	UDP    *UDPSocket      `yaml:"udp" doc:"a UDP socket: one datagram per frame"`
	TCP    *TCPSocket      `yaml:"tcp" doc:"a TCP connection, cut into frames as a serial line is"`
	Model  *ModelEndpoint  `yaml:"model" doc:"a plant model the rig simulates, cut at a coupling point; its frames are the variables that cross the cut"`
	FMU    *FMUEndpoint    `yaml:"fmu" doc:"an FMU (FMI 2 or 3) the rig runs as its part of the plant; its frames are the values it sends and takes"`
	Replay *ReplayEndpoint `yaml:"replay" doc:"an endpoint played from a recording of an earlier run (hilrig run --record): the frames its device sent then, at the times they came"`
}

func (*Endpoint) oneOf() {}

// IsModel reports whether the rig computes the endpoint's frames from a
// model it runs (a model or an FMU), rather than exchanging them with a
// device or a recording.
func (e *Endpoint) IsModel() bool { return e.Model != nil || e.FMU != nil }

// SpeaksWire reports whether the endpoint's frames are wire protocol
// messages (codec wire).
func (e *Endpoint) SpeaksWire() bool {
	switch {
	case e.Serial != nil:
		return e.Serial.Spec().Wire
	case e.Pty != nil:
		return e.Pty.Spec().Wire
	case e.TCP != nil:
		return e.TCP.Spec().Wire
	}
	return false
}

func (Endpoint) typeInfo() typeInfo {
	return typeInfo{"an endpoint", "{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}"}
}

// LineSettings are a serial line's character format.
type LineSettings struct {
	Baud     *int         `yaml:"baud" doc:"bits per second; any rate the driver accepts, standard or not" default:"115200"`
	DataBits *int         `yaml:"data_bits" doc:"5, 6, 7 or 8" default:"8"`
	Parity   *ParityName  `yaml:"parity" doc:"none, odd, even, mark or space" default:"none"`
	StopBits *StopBitSpec `yaml:"stop_bits" doc:"1, 1.5 or 2" default:"1"`
}

// FrameSettings say how a byte stream is cut into frames.
type FrameSettings struct {
	Framing   *FramingName `yaml:"framing" doc:"line (a delimiter ends a frame), slip, cobs, fixed (frame_size bytes) or idle (a silence ends a frame)" default:"line"`
	Delimiter *string      `yaml:"delimiter" doc:"line: the bytes that end a frame, not part of it; without it a received line ends at CR, LF or CRLF (as terminals send them) and a written one with LF" default:"CR, LF or CRLF; LF written"`
	FrameSize *Size        `yaml:"frame_size" doc:"fixed: the size of every frame"`
	Gap       *Duration    `yaml:"gap" doc:"idle: the silence that ends a frame; over TCP, which has no character time, give it" default:"3.5 characters on a serial line"`
	MaxFrame  *Size        `yaml:"max_frame" doc:"longer frames are dropped and counted" default:"4096B"`
	Codec     *LineCodec   `yaml:"codec" doc:"wire: the frames are rig wire protocol messages (firmware/README.md) in COBS frames; the rig forwards them as they are, tracks them and the device's heartbeat, and syncs with the device's clock to measure the one-way delay from it (the summary's wire)" default:"none: the frames are opaque"`
}

// SerialPort is a serial device.
type SerialPort struct {
	Device    DevicePath `yaml:"device,required" doc:"the device, e.g. /dev/ttyUSB0 or /dev/serial/by-id/..."`
	Reconnect *Duration  `yaml:"reconnect" doc:"if the device vanishes, reopen it at this interval instead of stopping; the gap is recorded" default:"stop"`
	LineSettings
	FrameSettings
}

// PtyPort is a virtual serial device.
type PtyPort struct {
	Link      *string   `yaml:"link" doc:"make this path a symlink to the device to attach to" default:"none: the /dev/pts path is printed"`
	Reconnect *Duration `yaml:"reconnect" doc:"when the attached program closes the device (quitting picocom, say), the run waits for a program to open it again, looking at this interval, and records the gap; 0s: the run stops instead, as for a real adapter unplugged" default:"20ms"`
	LineSettings
	FrameSettings
}

// GPIOPins is a set of GPIO pins.
type GPIOPins struct {
	Inputs  []GPIOInputPin  `yaml:"inputs" doc:"pins whose edges become frames; the frame carries the pin's index in this list"`
	Outputs []GPIOOutputPin `yaml:"outputs" doc:"pins that replay edge frames: output i replays input i of the sending endpoint"`
}

// GPIOInputPin is an input pin.
type GPIOInputPin struct {
	Pin  PinName   `yaml:"pin,required" doc:"the pin's name, as hilrig ports lists it"`
	Pull *PullName `yaml:"pull" doc:"none, up or down" default:"none"`
	Edge *EdgeName `yaml:"edge" doc:"rising, falling or both" default:"both"`
}

// GPIOOutputPin is an output pin.
type GPIOOutputPin struct {
	Pin  PinName   `yaml:"pin,required" doc:"the pin's name"`
	Safe LevelName `yaml:"safe,required" doc:"low or high: the level at start, on stop and on error"`
}

// UDPSocket is a UDP socket.
type UDPSocket struct {
	Listen   *string `yaml:"listen" doc:"local address to receive on, host:port (give listen or dial)"`
	Dial     *string `yaml:"dial" doc:"remote address to exchange datagrams with, host:port"`
	Peer     *string `yaml:"peer" doc:"with listen: where to send frames" default:"whoever sent the last datagram"`
	MaxFrame *Size   `yaml:"max_frame" doc:"larger datagrams are dropped and counted" default:"65507B"`
}

// TCPSocket is a TCP connection.
type TCPSocket struct {
	Listen    *string   `yaml:"listen" doc:"local address to accept one connection at a time on (give listen or dial)"`
	Dial      *string   `yaml:"dial" doc:"remote address to connect to"`
	Reconnect *Duration `yaml:"reconnect" doc:"with dial: connect again at this interval after a disconnection" default:"stop"`
	FrameSettings
}

// Binding carries a flow from one endpoint to another.
type Binding struct {
	From EndpointName `yaml:"from,required" doc:"the endpoint whose frames enter the flow"`
	To   EndpointName `yaml:"to,required" doc:"the endpoint the flow's frames are written to"`
}

func (Binding) typeInfo() typeInfo { return typeInfo{"a binding", "{from: controller, to: plant}"} }

// DevicePath is a device file.
type DevicePath string

// PinName names a GPIO pin.
type PinName string

func (DevicePath) typeInfo() typeInfo { return typeInfo{"a device path", "/dev/ttyUSB0"} }
func (PinName) typeInfo() typeInfo    { return typeInfo{"a pin name", "GPIO17"} }

// EndpointName refers to an endpoint by name.
type EndpointName string

func (EndpointName) typeInfo() typeInfo { return typeInfo{"an endpoint name", ""} }

// Enumerations of the bench.
type (
	ParityName  string
	FramingName string
	PullName    string
	LineCodec   string
	EdgeName    string
	LevelName   string
	StopBitSpec string
)

func (v *ParityName) parseScalar(s string) error {
	return parseEnum(v, s, "a parity", "none", "odd", "even", "mark", "space")
}
func (v *FramingName) parseScalar(s string) error {
	return parseEnum(v, s, "a framing", "line", "slip", "cobs", "fixed", "idle")
}
func (v *LineCodec) parseScalar(s string) error {
	return parseEnum(v, s, "a line codec", "wire")
}
func (v *PullName) parseScalar(s string) error {
	return parseEnum(v, s, "a pull", "none", "up", "down")
}
func (v *EdgeName) parseScalar(s string) error {
	return parseEnum(v, s, "an edge", "rising", "falling", "both")
}
func (v *LevelName) parseScalar(s string) error {
	return parseEnum(v, s, "a level", "low", "high")
}
func (v *StopBitSpec) parseScalar(s string) error {
	return parseEnum(v, s, "a number of stop bits", "1", "1.5", "2")
}

func (ParityName) typeInfo() typeInfo  { return typeInfo{"none, odd, even, mark or space", ""} }
func (FramingName) typeInfo() typeInfo { return typeInfo{"line, slip, cobs, fixed or idle", ""} }
func (PullName) typeInfo() typeInfo    { return typeInfo{"none, up or down", ""} }
func (LineCodec) typeInfo() typeInfo   { return typeInfo{"wire", ""} }
func (EdgeName) typeInfo() typeInfo    { return typeInfo{"rising, falling or both", ""} }
func (LevelName) typeInfo() typeInfo   { return typeInfo{"low or high", ""} }
func (StopBitSpec) typeInfo() typeInfo { return typeInfo{"1, 1.5 or 2", ""} }

// LoadedBench is a bench that parsed and was checked against a profile.
type LoadedBench struct {
	*Bench
	Source string
	Models map[string]*BenchModel // the model endpoints, by name
	Bound  []BoundFlow            // the bindings resolved, in bench order
}

// Files are the files on disk the bench was made from: its own, its
// model files and the recordings its replay endpoints play, each once,
// sorted. hilrig refuses an output that is one of them.
func (b *LoadedBench) Files() []string {
	var files []string
	if b.Source != "" {
		files = append(files, b.Source)
	}
	for _, m := range b.Models {
		if m.Builtin == nil {
			files = append(files, m.Source)
		}
		if m.FMU != nil && m.FMU.StandInFile != "" {
			files = append(files, m.FMU.StandInFile)
		}
	}
	for _, e := range b.Endpoints.Values {
		if e.Replay != nil {
			files = append(files, e.Replay.Path())
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// BoundFlow is a flow of the profile carried between two endpoints.
type BoundFlow struct {
	Flow     string // the profile's flow
	Key      string // the bind key that binds it: its name or its role
	From, To string // the endpoints
}

// Binding returns how flow is bound, if it is.
func (b *LoadedBench) Binding(flow string) (BoundFlow, bool) {
	for _, bf := range b.Bound {
		if bf.Flow == flow {
			return bf, true
		}
	}
	return BoundFlow{}, false
}

// LoadBench reads a bench file and checks it against the profile it will
// run with: the flows it binds must be the profile's. Every problem is
// reported at once, each at its line and column.
func LoadBench(path string, profile *Loaded) (*LoadedBench, error) {
	data, err := ReadFile(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseBench(path, data, profile)
}

// ParseBench is LoadBench on text; source names it in messages.
func ParseBench(source string, data []byte, profile *Loaded) (*LoadedBench, error) {
	b := &Bench{}
	d, err := decodeFile(source, data, b)
	if err != nil {
		return nil, err
	}
	if b.Name == "" {
		b.Name = nameOf(source)
	}
	bound := b.resolveBindings(d, profile)
	models := b.check(d, source, bound)
	if err := d.err(); err != nil {
		return nil, err
	}
	return &LoadedBench{Bench: b, Source: source, Models: models, Bound: bound}, nil
}

// resolveBindings finds the profile's flow each bind key names: the flow of
// that name, else, for a role, the flow that has the role. Without a
// profile a key is taken as a flow's name.
func (b *Bench) resolveBindings(d *decoder, profile *Loaded) []BoundFlow {
	var bound []BoundFlow
	boundBy := map[string]string{} // flow → the key that binds it
	for i, key := range b.Bind.Names {
		bind := b.Bind.Values[i]
		bf := BoundFlow{Flow: key, Key: key, From: string(bind.From), To: string(bind.To)}
		path := "bind." + key
		if profile != nil && profile.Flows.Index(key) < 0 {
			if slices.Contains(roles, key) {
				if bf.Flow = profile.FlowWithRole(FlowRole(key)); bf.Flow == "" {
					d.errorAt(path, "profile %s has no flow with role %s (its flows are %s): give one of them role: %s, or bind a flow by its name", profile.Name, key, listed(profile.Flows.Names), key)
				}
			} else {
				hint := didYouMean(key, slices.Concat(profile.Flows.Names, roles)).String()
				if hint == "" {
					hint = "; its flows are " + listed(profile.Flows.Names) + ", and a bench may bind a role: " + strings.Join(roles, " or ")
				}
				d.errorAt(path, "profile %s has no flow %q%s", profile.Name, key, hint)
			}
		}
		if other, twice := boundBy[bf.Flow]; twice && bf.Flow != "" {
			d.errorAt(path, "binds flow %s, which bind.%s binds already", bf.Flow, other)
		}
		boundBy[bf.Flow] = key
		bound = append(bound, bf)
	}
	return bound
}

func (b *Bench) check(d *decoder, source string, bound []BoundFlow) map[string]*BenchModel {
	models := map[string]*BenchModel{}
	listening := map[string]string{} // "udp ADDR" → the endpoint listening there
	listenOnce := func(path, proto string, addr *string, name string) {
		if addr == nil {
			return
		}
		if other, taken := listening[proto+" "+*addr]; taken {
			d.errorAt(path, "%s listens on %s %s already; one socket per address", other, proto, *addr)
			return
		}
		listening[proto+" "+*addr] = name
	}
	for i, name := range b.Endpoints.Names {
		e := b.Endpoints.Values[i]
		path := "endpoints." + name
		if e.UDP != nil {
			listenOnce(path+".udp.listen", "udp", e.UDP.Listen, name)
		}
		if e.TCP != nil {
			listenOnce(path+".tcp.listen", "tcp", e.TCP.Listen, name)
		}
		switch {
		case e.Serial != nil:
			e.Serial.LineSettings.check(d, path+".serial")
			e.Serial.FrameSettings.check(d, path+".serial")
			positiveDuration(d, path+".serial.reconnect", e.Serial.Reconnect)
		case e.Pty != nil:
			e.Pty.LineSettings.check(d, path+".pty")
			e.Pty.FrameSettings.check(d, path+".pty")
			if e.Pty.Reconnect != nil && *e.Pty.Reconnect < 0 {
				d.errorAt(path+".pty.reconnect", "must not be negative (0s: stop the run)")
			}
		case e.GPIO != nil:
			e.GPIO.check(d, path+".gpio")
		case e.UDP != nil:
			checkAddresses(d, path+".udp", e.UDP.Listen, e.UDP.Dial)
			if e.UDP.Peer != nil {
				if e.UDP.Listen == nil {
					d.errorAt(path+".udp.peer", "peer goes with listen; a dialed socket answers its own address")
				} else if checkHostPort(d, path+".udp.peer", *e.UDP.Peer) {
					if _, err := netip.ParseAddrPort(*e.UDP.Peer); err != nil {
						d.errorAt(path+".udp.peer", "%q: give the peer's IP address (e.g. 127.0.0.1:9000), not a name: datagrams go to exactly it", *e.UDP.Peer)
					}
				}
			}
			if m := e.UDP.MaxFrame; m != nil && (*m <= 0 || *m > 65507) {
				d.errorAt(path+".udp.max_frame", "must be between 1B and 65507B, the largest UDP payload")
			}
		case e.TCP != nil:
			checkAddresses(d, path+".tcp", e.TCP.Listen, e.TCP.Dial)
			e.TCP.FrameSettings.check(d, path+".tcp")
			if f := e.TCP.Framing; f != nil && *f == "idle" && e.TCP.Gap == nil {
				d.errorAt(path+".tcp.framing", "idle framing over TCP needs a gap: a stream has no character time to count from")
			}
			if e.TCP.Reconnect != nil && e.TCP.Dial == nil {
				d.errorAt(path+".tcp.reconnect", "reconnect goes with dial; a listening endpoint always waits for the next connection")
			}
			positiveDuration(d, path+".tcp.reconnect", e.TCP.Reconnect)
		case e.Model != nil:
			if bm := checkModel(d, path+".model", source, e.Model); bm != nil {
				models[name] = bm
			}
		case e.FMU != nil:
			if bm := checkFMU(d, path+".fmu", source, e.FMU); bm != nil {
				models[name] = bm
			}
		case e.Replay != nil:
			e.Replay.check(d, path+".replay", source, name)
		}
	}
	sources := map[string]string{} // endpoint → the flow it feeds
	used := map[string]bool{}
	for _, bf := range bound {
		path := "bind." + bf.Key
		from, to := bf.From, bf.To
		for _, end := range []struct{ key, name string }{{"from", from}, {"to", to}} {
			if end.name != "" && b.Endpoints.Index(end.name) < 0 {
				d.errorAt(path+"."+end.key, "no endpoint named %q%s", end.name, didYouMean(end.name, b.Endpoints.Names))
			}
			used[end.name] = true
		}
		if from != "" && from == to {
			d.errorAt(path+".to", "a flow must go to another endpoint than the one it comes from")
		}
		if other, taken := sources[from]; taken && from != "" {
			d.errorAt(path+".from", "%s already feeds flow %s; an endpoint feeds one flow", from, other)
		}
		sources[from] = bf.Flow
		b.checkGPIOBinding(d, path, from, to)
	}
	for _, name := range b.Endpoints.Names {
		if !used[name] {
			d.errorAt("endpoints."+name, "is not used by any binding")
		}
	}
	b.checkModelBindings(d, models, bound)
	return models
}

// checkGPIOBinding checks that edge frames go between GPIO endpoints that
// have the pins for them.
func (b *Bench) checkGPIOBinding(d *decoder, path, from, to string) {
	fi, ti := b.Endpoints.Index(from), b.Endpoints.Index(to)
	if fi < 0 || ti < 0 {
		return
	}
	src, dst := b.Endpoints.Values[fi].GPIO, b.Endpoints.Values[ti].GPIO
	switch {
	case src == nil && dst == nil:
	case src == nil || dst == nil:
		d.errorAt(path, "GPIO edge frames go between gpio endpoints; %s and %s are not both gpio", from, to)
	case len(src.Inputs) == 0:
		d.errorAt(path+".from", "%s has no inputs to read edges from", from)
	case len(dst.Outputs) < len(src.Inputs):
		d.errorAt(path+".to", "%s has %d outputs for the %d inputs of %s", to, len(dst.Outputs), len(src.Inputs), from)
	}
}

func (s *LineSettings) check(d *decoder, path string) {
	if s.Baud != nil && *s.Baud <= 0 {
		d.errorAt(path+".baud", "must be positive")
	}
	if s.DataBits != nil && (*s.DataBits < 5 || *s.DataBits > 8) {
		d.errorAt(path+".data_bits", "must be 5, 6, 7 or 8")
	}
}

// framingKeys says which framing each framing-specific key belongs to.
var framingKeys = []struct{ key, framing string }{{"delimiter", "line"}, {"frame_size", "fixed"}, {"gap", "idle"}}

func (s *FrameSettings) check(d *decoder, path string) {
	framing := "line"
	if s.Codec != nil {
		framing = "cobs" // the wire protocol's
	}
	if s.Framing != nil {
		framing = string(*s.Framing)
		if s.Codec != nil && framing != "cobs" {
			d.errorAt(path+".framing", "codec wire carries COBS frames; leave framing out or make it cobs")
		}
	}
	given := map[string]bool{"delimiter": s.Delimiter != nil, "frame_size": s.FrameSize != nil, "gap": s.Gap != nil}
	for _, k := range framingKeys {
		if given[k.key] && k.framing != framing {
			d.errorAt(path+"."+k.key, "%s goes with framing: %s", k.key, k.framing)
		}
	}
	switch {
	case framing == "fixed" && s.FrameSize == nil:
		d.errorAt(path, "framing fixed needs frame_size")
	case s.FrameSize != nil && (*s.FrameSize <= 0 || *s.FrameSize > 1<<20):
		d.errorAt(path+".frame_size", "must be between 1B and 1MiB")
	case s.Delimiter != nil && *s.Delimiter == "":
		d.errorAt(path+".delimiter", "must not be empty")
	case s.Gap != nil && *s.Gap <= 0:
		d.errorAt(path+".gap", "must be positive")
	case s.MaxFrame != nil && (*s.MaxFrame <= 0 || *s.MaxFrame > 1<<20):
		d.errorAt(path+".max_frame", "must be between 1B and 1MiB")
	}
}

func (g *GPIOPins) check(d *decoder, path string) {
	if len(g.Inputs) == 0 && len(g.Outputs) == 0 {
		d.errorAt(path, "has no inputs and no outputs")
	}
	seen := map[PinName]string{}
	note := func(pin PinName, at string) {
		if other, dup := seen[pin]; dup && pin != "" {
			d.errorAt(at, "pin %s is already used at %s", pin, other)
		}
		seen[pin] = at
	}
	for i, in := range g.Inputs {
		note(in.Pin, fmt.Sprintf("%s.inputs[%d].pin", path, i))
	}
	for i, out := range g.Outputs {
		note(out.Pin, fmt.Sprintf("%s.outputs[%d].pin", path, i))
	}
}

func checkAddresses(d *decoder, path string, listen, dial *string) {
	if (listen == nil) == (dial == nil) {
		d.errorAt(path, "give listen or dial")
		return
	}
	key, addr := "listen", listen
	if dial != nil {
		key, addr = "dial", dial
	}
	checkHostPort(d, path+"."+key, *addr)
}

// checkHostPort checks an address as the run will use it: host:port, the
// port a number up to 65535 (a host name is looked up at the run).
func checkHostPort(d *decoder, path, addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		d.errorAt(path, "%q is not host:port", addr)
		return false
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || port == "" {
		d.errorAt(path, "%q: the port must be a number from 0 to 65535", addr)
		return false
	} else if n == 0 && !strings.HasSuffix(path, ".listen") {
		d.errorAt(path, "%q: port 0 is only for listen (any free port)", addr)
		return false
	}
	return true
}

func positiveDuration(d *decoder, path string, v *Duration) {
	if v != nil && *v <= 0 {
		d.errorAt(path, "must be positive")
	}
}

// Defaults of the bench, applied by whoever builds the endpoints.
const (
	DefaultBaud     = 115200
	DefaultMaxFrame = 4096
	// DefaultPtyReconnect is how often a pty endpoint whose device side
	// was closed looks for it to be opened again.
	DefaultPtyReconnect = 20 * time.Millisecond
)

// Settings returns the line settings with defaults filled in.
func (s LineSettings) Settings() (baud, dataBits int, parity string, stopBits string) {
	baud, dataBits, parity, stopBits = DefaultBaud, 8, "none", "1"
	if s.Baud != nil {
		baud = *s.Baud
	}
	if s.DataBits != nil {
		dataBits = *s.DataBits
	}
	if s.Parity != nil {
		parity = string(*s.Parity)
	}
	if s.StopBits != nil {
		stopBits = string(*s.StopBits)
	}
	return
}

// FramingSpec is a framing with its parameters, defaults filled in.
type FramingSpec struct {
	Name      string
	Delimiter string
	// AnyLineEnd: a line framing without a delimiter given ends a received
	// line at CR, LF or CRLF.
	AnyLineEnd bool
	Size       int
	Gap        time.Duration // 0: 3.5 characters
	MaxFrame   int
	// Wire: the frames are rig wire protocol messages (codec wire).
	Wire bool
}

// Spec returns the framing settings with defaults filled in.
func (s FrameSettings) Spec() FramingSpec {
	f := FramingSpec{Name: "line", Delimiter: "\n", MaxFrame: DefaultMaxFrame}
	if s.Codec != nil {
		f.Name, f.Wire = "cobs", true
	}
	if s.Framing != nil {
		f.Name = string(*s.Framing)
	}
	if s.Delimiter != nil {
		f.Delimiter = *s.Delimiter
	} else {
		f.AnyLineEnd = f.Name == "line"
	}
	if s.FrameSize != nil {
		f.Size = int(*s.FrameSize)
	}
	if s.Gap != nil {
		f.Gap = time.Duration(*s.Gap)
	}
	if s.MaxFrame != nil {
		f.MaxFrame = int(*s.MaxFrame)
	}
	if f.Size > 0 {
		f.MaxFrame = max(f.MaxFrame, f.Size)
	}
	return f
}

// BenchReference is the key reference of bench files, generated from the
// schema like the profile reference.
func BenchReference() string { return reference(reflect.TypeFor[Bench](), "top level") }
