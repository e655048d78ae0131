package benchfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
)

// issueBench is the bench of the issue, as written.
const issueBench = `endpoints:
  controller: {serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}
  plant:      {serial: {device: /dev/ttyACM0, baud: 115200, framing: line}}
bind:
  m2s: {from: controller, to: plant}
  s2m: {from: plant, to: controller}
`

func TestIssueBench(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBench("lab.yaml", []byte(issueBench), p)
	if err != nil {
		t.Fatal(err)
	}
	s := b.Endpoints.Values[0].Device.(*SerialPort)
	baud, bits, parity, stop := s.Settings()
	if b.Name != "lab" || s.Device != DevicePath("/dev/ttyUSB0") || baud != 115200 || bits != 8 || parity != "none" || stop != "1" {
		t.Errorf("bench %+v, serial %+v", b.Bench, s)
	}
	if f := s.Spec(); f.Name != "line" || f.Delimiter != "\n" || f.MaxFrame != DefaultMaxFrame {
		t.Errorf("framing %+v", f)
	}
}

func TestMalformedBenches(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	with := func(old, new string) string { return strings.Replace(issueBench, old, new, 1) }
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown flow", with("m2s:", "m2x:"),
			[]string{`x.yaml:5:8: bind.m2x: profile bottleneck has no flow "m2x"; did you mean m2s?`}},
		{"unknown endpoint", with("to: plant}", "to: plnat}"),
			[]string{`x.yaml:5:31: bind.m2s.to: no endpoint named "plnat"; did you mean plant?`}},
		{"misspelt key", with("baud: 115200, framing", "bauds: 115200, framing"),
			[]string{`x.yaml:2:47: endpoints.controller.serial.bauds: unknown key; did you mean baud? (want device, reconnect, baud, data_bits, parity, stop_bits, framing, delimiter, frame_size, gap, max_frame, codec)`}},
		{"unknown framing", with("framing: line}}\n  plant", "framing: lines}}\n  plant"),
			[]string{`x.yaml:2:70: endpoints.controller.serial.framing: "lines" is not a framing (want line, slip, cobs, fixed, idle); did you mean line?`}},
		{"missing device", with("device: /dev/ttyUSB0, ", ""),
			[]string{`x.yaml:2:24: endpoints.controller.serial: missing device: want a device path (e.g. /dev/ttyUSB0)`}},
		{"two kinds of endpoint", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{serial: {device: /dev/ttyUSB0}, pty: {}}"),
			[]string{`x.yaml:2:15: endpoints.controller: give only one of serial, pty, gpio, udp, tcp, model, fmu, replay`}},
		{"a key of another framing", with("framing: line}}\n  plant", "framing: line, frame_size: 8B}}\n  plant"),
			[]string{`x.yaml:2:88: endpoints.controller.serial.frame_size: frame_size goes with framing: fixed`}},
		{"fixed without a size", with("framing: line}}\n  plant", "framing: fixed}}\n  plant"),
			[]string{`x.yaml:2:24: endpoints.controller.serial: framing fixed needs frame_size`}},
		{"a fixed frame larger than the largest (an int on a 32-bit board)", with("framing: line}}\n  plant", "framing: fixed, frame_size: 5GB}}\n  plant"),
			[]string{`x.yaml:2:89: endpoints.controller.serial.frame_size: must be between 1B and 1MiB`}},
		{"bad data bits", with("baud: 115200, framing: line}}\n  plant", "baud: 115200, data_bits: 9}}\n  plant"),
			[]string{`x.yaml:2:72: endpoints.controller.serial.data_bits: must be 5, 6, 7 or 8`}},
		{"a flow to where it comes from", with("to: plant}", "to: controller}"),
			[]string{`x.yaml:5:31: bind.m2s.to: a flow must go to another endpoint than the one it comes from`}},
		{"an endpoint feeding two flows", with("from: plant, to: controller", "from: controller, to: plant"),
			[]string{`x.yaml:6:15: bind.s2m.from: controller already feeds flow m2s; an endpoint feeds one flow`}},
		{"an unused endpoint", issueBench[:strings.Index(issueBench, "bind:")] + "  spare: {pty: {}}\n" + issueBench[strings.Index(issueBench, "bind:"):],
			[]string{`x.yaml:4:10: endpoints.spare: is not used by any binding`}},
		{"udp without an address", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{udp: {peer: 127.0.0.1:9}}"),
			[]string{`x.yaml:2:21: endpoints.controller.udp: give listen or dial`}},
		{"gpio to serial", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{gpio: {inputs: [{pin: GPIO17}], outputs: [{pin: GPIO27, safe: low}]}}"),
			[]string{`x.yaml:5:8: bind.m2s: GPIO edge frames go between gpio endpoints; controller and plant are not both gpio`, `x.yaml:6:8: bind.s2m: GPIO edge frames go between gpio endpoints; plant and controller are not both gpio`}},
		{"codec wire with another framing", with("framing: line}}\n  plant", "framing: line, codec: wire}}\n  plant"),
			[]string{`x.yaml:2:70: endpoints.controller.serial.framing: codec wire carries COBS frames; leave framing out or make it cobs`}},
		{"an unknown line codec", with("framing: line}}\n  plant", "codec: csv}}\n  plant"),
			[]string{`x.yaml:2:68: endpoints.controller.serial.codec: "csv" is not a line codec (want wire)`}},
		// Addresses as the run will use them, checked before it.
		{"a udp peer by name", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{udp: {listen: '127.0.0.1:9000', peer: 'localhost:9001'}}"),
			[]string{`x.yaml:2:54: endpoints.controller.udp.peer: "localhost:9001": give the peer's IP address (e.g. 127.0.0.1:9000), not a name: datagrams go to exactly it`}},
		{"a port out of range, a datagram too large", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{udp: {listen: '127.0.0.1:99999', max_frame: 70000B}}"),
			[]string{
				`x.yaml:2:30: endpoints.controller.udp.listen: "127.0.0.1:99999": the port must be a number from 0 to 65535`,
				`x.yaml:2:60: endpoints.controller.udp.max_frame: must be between 1B and 65507B, the largest UDP payload`,
			}},
		{"two sockets on one address", strings.Replace(with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{udp: {listen: '127.0.0.1:9000'}}"), "{serial: {device: /dev/ttyACM0, baud: 115200, framing: line}}", "{udp: {listen: '127.0.0.1:9000'}}", 1),
			[]string{`x.yaml:3:30: endpoints.plant.udp.listen: controller listens on udp 127.0.0.1:9000 already; one socket per address`}},
		{"idle framing over tcp without a gap", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{tcp: {listen: '127.0.0.1:9000', framing: idle}}"),
			[]string{`x.yaml:2:57: endpoints.controller.tcp.framing: idle framing over TCP needs a gap: a stream has no character time to count from`}},
		{"dialing port 0", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{tcp: {dial: 'rig.lab:0'}}"),
			[]string{`x.yaml:2:28: endpoints.controller.tcp.dial: "rig.lab:0": port 0 is only for listen (any free port)`}},
		{"output without a safe level", with("{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}", "{gpio: {outputs: [{pin: GPIO27}]}}"),
			[]string{
				`x.yaml:2:33: endpoints.controller.gpio.outputs[0]: missing safe: want low or high`,
				`x.yaml:5:8: bind.m2s: GPIO edge frames go between gpio endpoints; controller and plant are not both gpio`,
				`x.yaml:6:8: bind.s2m: GPIO edge frames go between gpio endpoints; plant and controller are not both gpio`,
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBench("x.yaml", []byte(tc.yaml), p)
			var list lang.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v", err)
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func FuzzBench(f *testing.F) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(issueBench))
	f.Add([]byte("endpoints: {a: {gpio: {inputs: [{pin: X}]}}, b: {gpio: {outputs: [{pin: Y, safe: low}]}}}\nbind: {m2s: {from: a, to: b}}\n"))
	f.Add([]byte("endpoints: {a: {udp: {listen: ':1'}}, b: {tcp: {dial: 'h:2', reconnect: 1s, framing: idle, gap: 1ms}}}\nbind: {m2s: {from: a, to: b}}\n"))
	f.Add([]byte("endpoints: {car: {model: {name: quarter-car, cut: CP2, codec: {wire: {fields: {v2: f32le}, sends: command}}}}, seat: {pty: {codec: wire}}}\nbind: {m2s: {from: car, to: seat}, s2m: {from: seat, to: car}}\n"))
	f.Add([]byte("endpoints: {seat: {model: {name: quarter-car, cut: CP2, part: hardware, codec: wire}}, car: {udp: {listen: '10.0.0.2:1', peer: '10.0.0.1:1', codec: wire, peer_timeout: 50ms, on_peer_lost: continue}}}\nbind: {m2s: {from: seat, to: car}, s2m: {from: car, to: seat}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ParseBench("fuzz.yaml", data, p); err != nil {
			var list lang.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a positioned list: %v", err)
			}
		}
	})
}

// modelBench is the demo's wiring: the quarter car cut at CP2, the seat on
// a pseudo-terminal.
const modelBench = `endpoints:
  car:  {model: {name: quarter-car, cut: CP2, exchange: 2ms, step: 1ms}}
  seat: {pty: {link: /tmp/seat}}
bind:
  m2s: {from: car, to: seat}
  s2m: {from: seat, to: car}
`

func TestModelBench(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseBench("b.yaml", []byte(modelBench), p)
	if err != nil {
		t.Fatal(err)
	}
	m := b.Models["car"]
	if m == nil || m.Cut != "CP2" || m.Exchange != 2e6 || m.Step != 1e6 || m.Solver != "trapezoidal" || m.Send.String() != "csv" {
		t.Fatalf("%+v", m)
	}
	if got := strings.Join(m.Simulated.Out(), ","); got != "v2" {
		t.Errorf("sends %s", got)
	}
	// A struct codec with one field set and the other defaulted.
	b, err = ParseBench("b.yaml", []byte(strings.Replace(modelBench, "step: 1ms}", "step: 1ms, codec: {struct: {fields: {v2: {type: i16le, scale: 0.001}}}}}", 1)), p)
	if err != nil {
		t.Fatal(err)
	}
	if m := b.Models["car"]; m.Send.String() != "struct of 2 bytes" || m.Receive.String() != "struct of 8 bytes" {
		t.Errorf("codecs %s, %s", m.Send, m.Receive)
	}

	// The wire codec: a Protocol each way with the struct's layouts; the
	// rig sends commands here, so the seat answers with samples. Its
	// device endpoint, codec wire, has COBS frames.
	wired := strings.Replace(strings.Replace(modelBench, "step: 1ms}", "step: 1ms, codec: {wire: {fields: {v2: f32le}, sends: command}}}", 1), "{link: /tmp/seat}", "{link: /tmp/seat, codec: wire}", 1)
	if b, err = ParseBench("b.yaml", []byte(wired), p); err != nil {
		t.Fatal(err)
	}
	send, ok1 := b.Models["car"].Send.(*wire.Protocol)
	receive, ok2 := b.Models["car"].Receive.(*wire.Protocol)
	if !ok1 || !ok2 || send.Sends != wire.Command || receive.Sends != wire.Sample || send.Layout.Size() != 4 || receive.Layout.Size() != 8 {
		t.Errorf("codecs %#v, %#v", b.Models["car"].Send, b.Models["car"].Receive)
	}
	if f := b.Endpoints.Values[1].Device.(*PtyPort).Spec(); f.Name != "cobs" || !f.Wire {
		t.Errorf("the seat's framing %+v", f)
	}
}

func TestMalformedModelBenches(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	with := func(old, new string) string { return strings.Replace(modelBench, old, new, 1) }
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown model", with("quarter-car", "quarter-cart"),
			[]string{`x.yaml:2:24: endpoints.car.model.name: no built-in model or file named quarter-cart; did you mean quarter-car? (the built-in models: `}},
		{"unknown cut", with("cut: CP2", "cut: CP3"),
			[]string{`x.yaml:2:42: endpoints.car.model.cut: model quarter-car has no cut CP3; did you mean CP1? (its cuts: CP1, CP2)`}},
		{"step does not divide", with("step: 1ms", "step: 0.3ms"),
			[]string{`x.yaml:2:68: endpoints.car.model.step: the exchange step 2ms is not a whole number of steps of 300µs`}},
		{"sends between exchanges", with("step: 1ms", "step: 1ms, send_every: 3ms"),
			[]string{`x.yaml:2:85: endpoints.car.model.send_every: must be a whole number of exchanges of 2ms`}},
		{"rk4 too coarse", with("step: 1ms", "solver: rk4"),
			[]string{`x.yaml:2:70: endpoints.car.model.solver: rk4 at a step of 2ms is unstable for the simulated part (linear): its eigenvalue -2090+0i/s needs a step under 1.333ms; use the trapezoidal solver or a smaller step`}},
		{"unknown parameter", with("cut: CP2", "cut: CP2, params: {m4: 1}"),
			[]string{`x.yaml:2:55: endpoints.car.model.params: model quarter-car has no parameter m4; did you mean m1?`}},
		{"unknown input", with("cut: CP2", "cut: CP2, inputs: {road: {constant: 1}}"),
			[]string{`x.yaml:2:62: endpoints.car.model.inputs.road: model quarter-car has no input road (its inputs: v0)`}},
		{"unknown codec", with("step: 1ms", "step: 1ms, codec: json"),
			[]string{`x.yaml:2:80: endpoints.car.model.codec: "json" is not a codec (want csv, struct or wire, or a mapping with settings)`}},
		{"field not crossing", with("step: 1ms", "step: 1ms, codec: {struct: {fields: {v3: f32le}}}"),
			[]string{`x.yaml:2:103: endpoints.car.model.codec.struct.fields.v3: is not a variable that crosses cut CP2 (they are: v2, Fseat)`}},
		{"bad field type", with("step: 1ms", "step: 1ms, codec: {struct: {fields: {v2: f16}}}"),
			[]string{`x.yaml:2:103: endpoints.car.model.codec.struct.fields.v2: "f16" is not a field type`}},
		{"nothing received", strings.Replace(modelBench, "  s2m: {from: seat, to: car}\n", "", 1),
			[]string{`x.yaml:2:9: endpoints.car: cut CP2 receives Fseat from the hardware: bind a flow to car`}},
		{"a line to wire", with("link: /tmp/seat", "link: /tmp/seat, codec: wire"),
			[]string{`x.yaml:5:8: bind.m2s: endpoint seat speaks the wire protocol (codec: wire); give car codec: wire too (codec: {wire: {sends: command}} for a plant node on the bench), or seat another codec`}},
		{"wire to a line", with("step: 1ms", "step: 1ms, codec: wire"),
			[]string{`x.yaml:5:8: bind.m2s: model car speaks the wire protocol, in COBS frames; give endpoint seat codec: wire`, `x.yaml:6:8: bind.s2m: model car speaks the wire protocol, in COBS frames; give endpoint seat codec: wire`}},
		{"wire sends neither", with("step: 1ms", "step: 1ms, codec: {wire: {sends: reply}}"),
			[]string{`endpoints.car.model.codec.wire.sends: "reply" is not a message type (want sample, command)`}},
		{"wire field not crossing", with("step: 1ms", "step: 1ms, codec: {wire: {fields: {v3: f32le}}}"),
			[]string{`endpoints.car.model.codec.wire.fields.v3: is not a variable that crosses cut CP2 (they are: v2, Fseat)`}},
		{"to gpio", with("{pty: {link: /tmp/seat}}", "{gpio: {inputs: [{pin: A}], outputs: [{pin: B, safe: low}]}}"),
			[]string{`x.yaml:5:8: bind.m2s: GPIO edge frames go between gpio endpoints; car and seat are not both gpio`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBench("x.yaml", []byte(tc.yaml), p)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got\n%s\nwant it to contain\n%s", err, w)
				}
			}
		})
	}
}

// roleBench binds the flow roles, as the shipped benches do.
const roleBench = `endpoints:
  controller: {pty: {}}
  plant:      {pty: {}}
bind:
  to-plant:      {from: controller, to: plant}
  to-controller: {from: plant, to: controller}
`

// TestBindByRole: a bench that binds the roles binds, in each profile, the
// flow that has the role, whatever its name; a key that is a flow's name
// still binds that flow; the mistakes are reported at the bench's key or
// the profile's role.
func TestBindByRole(t *testing.T) {
	for _, tc := range []struct{ profile, toPlant, toController string }{
		{"bottleneck", "m2s", "s2m"},
		{"lte", "command", "sensor"},
		{"internet-hil", "to-remote", "from-remote"},
		{"twin-dropout", "command", "state"}, // inherited from twin-baseline
		{"platoon-80211p", "broadcast", "reply"},
	} {
		p, err := profiles.Load(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ParseBench("b.yaml", []byte(roleBench), p)
		if err != nil {
			t.Errorf("%s: %v", tc.profile, err)
			continue
		}
		want := []BoundFlow{{tc.toPlant, "to-plant", "controller", "plant"}, {tc.toController, "to-controller", "plant", "controller"}}
		if !slices.Equal(b.Bound, want) {
			t.Errorf("%s: bound %+v, want %+v", tc.profile, b.Bound, want)
		}
	}

	profile := func(flows string) *profiles.Loaded {
		t.Helper()
		p, err := profiles.Parse("p.yaml", []byte("duration: 1s\nhops: {h: {delay: 1ms}}\nflows:\n"+flows))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	byName := strings.Replace(roleBench, "to-controller: {from: plant", "back:          {from: plant", 1)
	p := profile("  out: {route: [h], role: to-plant}\n  back: {route: [h]}\n")
	if b, err := ParseBench("b.yaml", []byte(byName), p); err != nil || !slices.Equal(b.Bound, []BoundFlow{{"out", "to-plant", "controller", "plant"}, {"back", "back", "plant", "controller"}}) {
		t.Errorf("a role and a name: %v, %+v", err, b)
	}

	for _, tc := range []struct {
		name, flows, bench, want string
	}{
		{"a role no flow has", "  out: {route: [h], role: to-plant}\n  back: {route: [h]}\n", roleBench,
			`b.yaml:6:18: bind.to-controller: profile p has no flow with role to-controller (its flows are out, back): give one of them role: to-controller, or bind a flow by its name`},
		{"neither a flow nor a role", "  out: {route: [h], role: to-plant}\n  back: {route: [h], role: to-controller}\n", strings.Replace(roleBench, "to-plant: ", "to-plnat: ", 1),
			`b.yaml:5:18: bind.to-plnat: profile p has no flow "to-plnat"; did you mean to-plant?`},
		{"a flow bound twice", "  out: {route: [h], role: to-plant}\n  back: {route: [h], role: to-controller}\n", strings.Replace(roleBench, "to-controller: {from: plant", "out:           {from: plant", 1),
			`b.yaml:6:18: bind.out: binds flow out, which bind.to-plant binds already`},
		{"a name the profile lacks", "  out: {route: [h]}\n", strings.Replace(roleBench, "to-plant: ", "m2s:      ", 1),
			`b.yaml:5:18: bind.m2s: profile p has no flow "m2s"; its flows are out, and a bench may bind a role: to-plant or to-controller`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBench("b.yaml", []byte(tc.bench), profile(tc.flows))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got\n%v\nwant\n%s", err, tc.want)
			}
		})
	}

	_, err := profiles.Parse("p.yaml", []byte("duration: 1s\nhops: {h: {delay: 1ms}}\nflows:\n  a: {route: [h], role: to-plant}\n  b: {route: [h], role: to-plant}\n  c: {route: [h], role: sideways}\n"))
	want := "p.yaml:5:25: flows.b.role: flow a already has role to-plant; a role is one flow's\n" +
		`p.yaml:6:25: flows.c.role: "sideways" is not a flow role (want to-plant, to-controller)`
	if err == nil || err.Error() != want {
		t.Errorf("roles in the profile:\n got  %v\n want %s", err, want)
	}
}
