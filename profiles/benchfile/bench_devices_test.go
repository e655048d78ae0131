package benchfile

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
)

// loopPort is a device kind made up for the test: a loopback line with a
// framing, registered as a new kind's file would register it.
type loopPort struct {
	Name string `yaml:"name,required" doc:"the loop's name"`
	FrameSettings
}

func (l *loopPort) check(c *deviceCheck, path string) {
	l.FrameSettings.check(c.d, path)
	if l.Name == "" {
		c.d.ErrorAt(path+".name", "must not be empty")
	}
}

func (l *loopPort) Frames() *FrameSettings { return &l.FrameSettings }

// withLoopKind registers loopPort as kind loop until the test ends or the
// function it returns is called.
func withLoopKind(t *testing.T) (remove func()) {
	r := &deviceRegistry
	r.Lock()
	before := r.kinds
	r.Unlock()
	registerDevice(DeviceKind{Key: "loop", Doc: "a loopback line", Bytes: true, Place: 60}, &loopPort{})
	remove = func() {
		r.Lock()
		r.kinds, r.schema = before, nil
		r.Unlock()
	}
	t.Cleanup(remove)
	return remove
}

func TestDeviceKindsInOrder(t *testing.T) {
	var keys []string
	for _, k := range DeviceKinds() {
		keys = append(keys, k.Key)
	}
	if want := []string{"serial", "pty", "gpio", "udp", "tcp"}; !slices.Equal(keys, want) {
		t.Errorf("device kinds %v, want %v", keys, want)
	}
}

// TestANewDeviceKindIsItsFile registers a kind the way its file would and
// finds it in everything the bench language does with kinds: decoding,
// its checks, the one-of message, wire framing, the model's peers and the
// key reference; and gone again when it is.
func TestANewDeviceKindIsItsFile(t *testing.T) {
	p, err := profiles.Load("bottleneck")
	if err != nil {
		t.Fatal(err)
	}
	referenceBefore := BenchReference()
	remove := withLoopKind(t)

	b, err := ParseBench("x.yaml", []byte(strings.Replace(issueBench, "{serial: {device: /dev/ttyACM0, baud: 115200, framing: line}}", "{loop: {name: l0, codec: wire}}", 1)), p)
	if err != nil {
		t.Fatal(err)
	}
	e := b.Endpoints.Values[1]
	if l, ok := e.Device.(*loopPort); !ok || e.Kind != "loop" || l.Name != "l0" || !e.SpeaksWire() {
		t.Errorf("plant decoded as kind %q, %#v, speaks wire %v", e.Kind, e.Device, e.SpeaksWire())
	}
	if k, ok := DeviceKindOf(e.Device); !ok || k.Key != "loop" {
		t.Errorf("DeviceKindOf(%T) = %v, %v", e.Device, k, ok)
	}

	for _, tc := range []struct{ name, yaml, want string }{
		{"its check", strings.Replace(issueBench, "{serial: {device: /dev/ttyACM0, baud: 115200, framing: line}}", "{loop: {name: '', framing: fixed, frame_size: 0B}}", 1),
			"x.yaml:3:29: endpoints.plant.loop.name: must not be empty\nx.yaml:3:61: endpoints.plant.loop.frame_size: must be between 1B and 1MiB"},
		{"the one-of message", strings.Replace(issueBench, "{serial: {device: /dev/ttyACM0, baud: 115200, framing: line}}", "{loop: {name: l0}, tcp: {dial: 'h:1'}}", 1),
			"x.yaml:3:15: endpoints.plant: give only one of serial, pty, gpio, udp, tcp, loop, model, fmu, replay"},
		{"its unknown key", strings.Replace(issueBench, "{serial: {device: /dev/ttyACM0, baud: 115200, framing: line}}", "{loop: {nme: l0}}", 1),
			"x.yaml:3:22: endpoints.plant.loop: missing name: want text\nx.yaml:3:23: endpoints.plant.loop.nme: unknown key; did you mean name? (want name, framing, delimiter, frame_size, gap, max_frame, codec)"},
		{"a model's peers", "endpoints:\n  car: {model: {name: quarter-car, cut: CP2}}\n  twin: {model: {name: quarter-car, cut: CP2}}\nbind:\n  m2s: {from: car, to: twin}\n",
			"x.yaml:5:8: bind.m2s: a model's frames go to hardware: a serial, pty, udp, tcp or loop endpoint, not another model (twin)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseBench("x.yaml", []byte(tc.yaml), p)
			var list lang.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got\n%s\nwant it to hold\n%s", err, tc.want)
			}
		})
	}

	ref := BenchReference()
	for _, want := range []string{"| `loop` | a mapping (e.g. {name, framing, delimiter, frame_size, gap, max_frame, codec}) |  | a loopback line |", "### `endpoints.NAME.loop`\n", "| `name` | text | required | the loop's name |"} {
		if !strings.Contains(ref, want) {
			t.Errorf("the bench reference lacks %q", want)
		}
	}
	remove()
	if BenchReference() != referenceBefore {
		t.Error("the bench reference still differs once the kind is gone")
	}
}
