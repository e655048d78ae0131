package benchfile

import (
	"reflect"
	"slices"
	"strings"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
)

// A bench file is the physical wiring of a rig: the endpoints (serial
// ports, pseudo-terminals, GPIO pins, sockets) and which of a profile's
// flows each carries. Profiles stay independent of benches: in sim a flow's
// traffic stands in for the hardware.

// Bench is the schema of a bench file.
type Bench struct {
	Name        string             `yaml:"name" doc:"short name, shown in reports" default:"the file name"`
	Description string             `yaml:"description" doc:"what the bench wires together"`
	Endpoints   lang.Map[Endpoint] `yaml:"endpoints,required" doc:"the rig's I/O, by name"`
	Bind        lang.Map[Binding]  `yaml:"bind,required" doc:"the profile's flows carried by endpoints, by role (to-plant, to-controller: the flow of the profile that has the role) or by flow name"`
}

// Endpoint is one of the kinds of I/O: a device of a registered kind
// (bench_devices.go), or one of the alternatives its own fields name.
type Endpoint struct {
	Kind   string          // its key in the bench: serial, pty, gpio, udp, tcp, model, fmu or replay
	Device DeviceConfig    // a device's settings (*SerialPort, *PtyPort, ...); nil for the others
	Model  *ModelEndpoint  `yaml:"model" doc:"a plant model the rig simulates, cut at a coupling point; its frames are the variables that cross the cut"`
	FMU    *FMUEndpoint    `yaml:"fmu" doc:"an FMU (FMI 2 or 3) the rig runs as its part of the plant; its frames are the values it sends and takes"`
	Replay *ReplayEndpoint `yaml:"replay" doc:"an endpoint played from a recording of an earlier run (hilrig run --record): the frames its device sent then, at the times they came"`
}

func (*Endpoint) OneOf() {}

// IsModel reports whether the rig computes the endpoint's frames from a
// model it runs (a model or an FMU), rather than exchanging them with a
// device or a recording.
func (e *Endpoint) IsModel() bool { return e.Model != nil || e.FMU != nil }

// SpeaksWire reports whether the endpoint's frames are wire protocol
// messages (codec wire).
func (e *Endpoint) SpeaksWire() bool { return e.Device != nil && e.Device.Wire() }

// frames is how the endpoint's byte stream is cut into frames; nil when it
// has none.
func (e *Endpoint) frames() *FrameSettings {
	if e.Device == nil {
		return nil
	}
	return e.Device.Frames()
}

func (Endpoint) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "an endpoint", Example: "{serial: {device: /dev/ttyUSB0, baud: 115200, framing: line}}"}
}

// Binding carries a flow from one endpoint to another.
type Binding struct {
	From EndpointName `yaml:"from,required" doc:"the endpoint whose frames enter the flow"`
	To   EndpointName `yaml:"to,required" doc:"the endpoint the flow's frames are written to"`
}

func (Binding) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a binding", Example: "{from: controller, to: plant}"}
}

// EndpointName refers to an endpoint by name.
type EndpointName string

func (EndpointName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "an endpoint name", Example: ""}
}

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
func LoadBench(path string, profile *profiles.Loaded) (*LoadedBench, error) {
	data, err := lang.ReadFile(path, lang.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseBench(path, data, profile)
}

// ParseBench is LoadBench on text; source names it in messages.
func ParseBench(source string, data []byte, profile *profiles.Loaded) (*LoadedBench, error) {
	b := &Bench{}
	d, err := lang.DecodeFile(source, data, b)
	if err != nil {
		return nil, err
	}
	if b.Name == "" {
		b.Name = lang.NameOf(source)
	}
	bound := b.resolveBindings(d, profile)
	models := b.check(d, source, bound)
	if err := d.Err(); err != nil {
		return nil, err
	}
	return &LoadedBench{Bench: b, Source: source, Models: models, Bound: bound}, nil
}

// resolveBindings finds the profile's flow each bind key names: the flow of
// that name, else, for a role, the flow that has the role. Without a
// profile a key is taken as a flow's name.
func (b *Bench) resolveBindings(d *lang.Decoder, profile *profiles.Loaded) []BoundFlow {
	var bound []BoundFlow
	boundBy := map[string]string{} // flow → the key that binds it
	for i, key := range b.Bind.Names {
		bind := b.Bind.Values[i]
		bf := BoundFlow{Flow: key, Key: key, From: string(bind.From), To: string(bind.To)}
		path := "bind." + key
		if profile != nil && profile.Flows.Index(key) < 0 {
			if slices.Contains(profiles.FlowRoles, key) {
				if bf.Flow = profile.FlowWithRole(profiles.FlowRole(key)); bf.Flow == "" {
					d.ErrorAt(path, "profile %s has no flow with role %s (its flows are %s): give one of them role: %s, or bind a flow by its name", profile.Name, key, lang.Listed(profile.Flows.Names), key)
				}
			} else {
				hint := lang.DidYouMean(key, slices.Concat(profile.Flows.Names, profiles.FlowRoles)).String()
				if hint == "" {
					hint = "; its flows are " + lang.Listed(profile.Flows.Names) + ", and a bench may bind a role: " + strings.Join(profiles.FlowRoles, " or ")
				}
				d.ErrorAt(path, "profile %s has no flow %q%s", profile.Name, key, hint)
			}
		}
		if other, twice := boundBy[bf.Flow]; twice && bf.Flow != "" {
			d.ErrorAt(path, "binds flow %s, which bind.%s binds already", bf.Flow, other)
		}
		boundBy[bf.Flow] = key
		bound = append(bound, bf)
	}
	return bound
}

func (b *Bench) check(d *lang.Decoder, source string, bound []BoundFlow) map[string]*BenchModel {
	models := map[string]*BenchModel{}
	devices := &deviceCheck{d: d, listening: map[string]string{}}
	for i, name := range b.Endpoints.Names {
		e := b.Endpoints.Values[i]
		path := "endpoints." + name
		switch {
		case e.Device != nil:
			devices.endpoint = name
			e.Device.check(devices, path+"."+e.Kind)
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
				d.ErrorAt(path+"."+end.key, "no endpoint named %q%s", end.name, lang.DidYouMean(end.name, b.Endpoints.Names))
			}
			used[end.name] = true
		}
		if from != "" && from == to {
			d.ErrorAt(path+".to", "a flow must go to another endpoint than the one it comes from")
		}
		if other, taken := sources[from]; taken && from != "" {
			d.ErrorAt(path+".from", "%s already feeds flow %s; an endpoint feeds one flow", from, other)
		}
		sources[from] = bf.Flow
		b.checkDeviceBinding(d, path, from, to)
	}
	for _, name := range b.Endpoints.Names {
		if !used[name] {
			d.ErrorAt("endpoints."+name, "is not used by any binding")
		}
	}
	b.checkModelBindings(d, models, bound)
	return models
}

// checkDeviceBinding lets the device at either end of a flow whose frames
// need a certain device at the other end check it.
func (b *Bench) checkDeviceBinding(d *lang.Decoder, path, from, to string) {
	fi, ti := b.Endpoints.Index(from), b.Endpoints.Index(to)
	if fi < 0 || ti < 0 {
		return
	}
	for _, end := range []*Endpoint{b.Endpoints.Values[fi], b.Endpoints.Values[ti]} {
		if c, ok := end.Device.(bindingChecker); ok {
			c.checkBinding(d, b, path, from, to)
			return
		}
	}
}

// BenchReference is the key reference of bench files, generated from the
// schema like the profile reference.
func BenchReference() string { return lang.ReferenceOf(reflect.TypeFor[Bench](), "top level") }
