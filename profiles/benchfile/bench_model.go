package benchfile

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/wire"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/modelfile"
)

// ModelEndpoint is a plant model the rig simulates, cut at a coupling
// point: the variables that cross the cut are its frames.
type ModelEndpoint struct {
	Name   string                       `yaml:"name,required" doc:"a built-in model (hilrig models lists them) or a model file, relative to the bench"`
	Cut    string                       `yaml:"cut,required" doc:"the coupling point; the rig simulates the part that is not on the bench"`
	Params lang.Map[float64]            `yaml:"params" doc:"a built-in model's parameters changed from their defaults, by name"`
	Inputs lang.Map[modelfile.Stimulus] `yaml:"inputs" doc:"the model's inputs driven otherwise than the model says, by name"`
	Part   *PartName                    `yaml:"part" doc:"which side of the cut the rig simulates: model, the part that is not on the bench; or hardware, the part that is, as the remote site of a loop between two rigs does (README: Two sites), the other site simulating the model's part" default:"model"`
	PartSettings
}

// PartName is model or hardware.
type PartName string

func (v *PartName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a side of the cut", "model", "hardware")
}

func (PartName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "model or hardware", Example: ""}
}

// PartSettings are how the rig's part of a model endpoint (a model, an
// FMU) exchanges and steps.
type PartSettings struct {
	Exchange  *lang.Duration `yaml:"exchange" doc:"communication step: how often the rig sends the variables that cross the cut and takes up the last ones received" default:"2ms"`
	SendEvery *lang.Duration `yaml:"send_every" doc:"how often the rig's part sends what crosses the cut, a whole number of exchanges: a short exchange then takes up what arrives soon after it arrives (a plant taking a command as it comes) while the samples go at their own rate" default:"every exchange"`
	Step      *lang.Duration `yaml:"step" doc:"integration step (an FMU's communication step); the exchange step must be a whole number of them" default:"the exchange step"`
	Solver    *SolverName    `yaml:"solver" doc:"rk4, or trapezoidal (implicit, for stiff models)" default:"trapezoidal"`
	Codec     *CodecSpec     `yaml:"codec" doc:"how the variables travel in a frame: csv, struct, wire, or any of them with settings" default:"csv"`
	ModelStepping
}

// steps are the exchange and integration steps the settings give, or
// their defaults.
func (e *PartSettings) steps() (exchange, step time.Duration) {
	exchange = 2 * time.Millisecond
	if e.Exchange != nil {
		exchange = time.Duration(*e.Exchange)
	}
	step = exchange
	if e.Step != nil {
		step = time.Duration(*e.Step)
	}
	return exchange, step
}

// SolverName is rk4 or trapezoidal.
type SolverName string

func (v *SolverName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a solver", string(plant.RK4), string(plant.Trapezoidal))
}

func (SolverName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "rk4 or trapezoidal", Example: ""}
}

// CodecSpec is one of the codecs, written as its name or with settings.
type CodecSpec struct {
	CSV    *CSVCodec    `yaml:"csv" doc:"one ASCII line per sample: the values separated by commas"`
	Struct *StructCodec `yaml:"struct" doc:"a packed binary layout, one field per value"`
	Wire   *WireCodec   `yaml:"wire" doc:"the rig wire protocol (firmware/README.md): numbered, time-stamped samples or commands with a CRC, in COBS frames, their values laid out as struct's"`
}

func (*CodecSpec) OneOf() {}

func (CodecSpec) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a codec", Example: "csv, struct, wire, {struct: {fields: {v2: f32le}}}"}
}

func (c *CodecSpec) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	if n.Kind == yaml.ScalarNode && !lang.IsNull(n) {
		switch n.Value {
		case "csv":
			c.CSV = &CSVCodec{}
		case "struct":
			c.Struct = &StructCodec{}
		case "wire":
			c.Wire = &WireCodec{}
		default:
			d.Errorf(n, path, "%q is not a codec (want csv, struct or wire, or a mapping with settings)%s", n.Value, lang.DidYouMean(n.Value, []string{"csv", "struct", "wire"}))
		}
		return
	}
	type plain CodecSpec
	d.DecodeStruct(n, reflect.ValueOf((*plain)(c)).Elem(), path)
}

// CSVCodec sets the csv codec.
type CSVCodec struct {
	Precision *int `yaml:"precision" doc:"significant digits" default:"as many as read back exactly"`
}

// StructCodec sets the struct codec.
type StructCodec struct {
	Fields lang.Map[FieldSpec] `yaml:"fields" doc:"each variable's type, scale and offset, by name; the fields are packed in the order of the model's signals" default:"f64le for each"`
}

// WireCodec sets the wire codec.
type WireCodec struct {
	Fields lang.Map[FieldSpec] `yaml:"fields" doc:"each variable's type, scale and offset, by name, as struct's" default:"f64le for each"`
	Sends  *WireSends          `yaml:"sends" doc:"what the rig's part sends: sample (measurements: it simulates the plant and a controller is on the bench) or command (it simulates the controller and a plant node is on the bench); it takes the other" default:"sample"`
}

// WireSends is sample or command.
type WireSends string

func (v *WireSends) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a message type", "sample", "command")
}

func (WireSends) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "sample or command", Example: ""}
}

// FieldSpec lays out one variable: a type name, or {type, scale, offset}.
type FieldSpec struct {
	Type   FieldTypeName `yaml:"type,required" doc:"f32le, f32be, f64le, f64be, i8, u8, i16le, i16be, u16le, u16be, i32le, i32be, u32le or u32be"`
	Scale  *float64      `yaml:"scale" doc:"value = raw·scale + offset" default:"1"`
	Offset *float64      `yaml:"offset" doc:"value = raw·scale + offset" default:"0"`
}

func (FieldSpec) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a field", Example: "f32le, {type: i16be, scale: 0.01}"}
}

func (f *FieldSpec) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	type plain FieldSpec
	d.ScalarOr(n, path, &f.Type, (*plain)(f))
}

// FieldTypeName is one of wire.FieldTypes.
type FieldTypeName string

func (v *FieldTypeName) ParseScalar(s string) error {
	var names []string
	for _, t := range wire.FieldTypes {
		names = append(names, string(t))
	}
	return lang.ParseEnum(v, s, "a field type", names...)
}

func (FieldTypeName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a field type", Example: "f32le, i16be"}
}

// BenchModel is a model endpoint, resolved and checked.
type BenchModel struct {
	*modelfile.LoadedModel // with the bench's params and stimuli
	Cut                    string
	Simulated, Hardware    *plant.Part
	Exchange, Step         time.Duration
	// SendEvery is how many exchanges apart the rig's part sends.
	SendEvery int
	Solver    plant.Solver
	// Send encodes what the rig sends across the cut (Simulated.Out);
	// Receive decodes what comes back (Simulated.In).
	Send, Receive wire.Codec
	// Stepping is how the rig's part steps and who watches it; nil: at
	// every exchange on the last input received, unwatched.
	Stepping *Stepping
	// FMU is the FMU of an FMU endpoint, whose plant is the FMU (the
	// rig's part) and what stands in for the hardware; nil for a model
	// endpoint.
	FMU *FMUModel
}

// checkModel resolves a model endpoint; it returns nil after reporting a
// problem.
func checkModel(d *lang.Decoder, path, benchSource string, e *ModelEndpoint) *BenchModel {
	lm := loadBenchModel(d, path, benchSource, "name", e.Name, e.Params, e.Inputs)
	if lm == nil {
		return nil
	}
	bm := &BenchModel{LoadedModel: lm, Cut: e.Cut}
	var err error
	if bm.Simulated, bm.Hardware, err = lm.Plant.Cut(e.Cut); err != nil {
		d.ErrorAt(path+".cut", "%v", err)
		return nil
	}
	if e.Part != nil && *e.Part == "hardware" {
		// The other site simulates the model's part: it is this rig's
		// hardware, and in virtual time it stands in.
		bm.Simulated, bm.Hardware = bm.Hardware, bm.Simulated
	}
	return e.PartSettings.finish(d, path, bm)
}

// loadBenchModel loads the model a bench names at path (its keys name,
// params and inputs): a built-in or a model file relative to the bench,
// with the bench's parameters and stimuli; nameKey is the key that names
// it. It returns nil after reporting a problem.
func loadBenchModel(d *lang.Decoder, path, benchSource, nameKey, name string, paramMap lang.Map[float64], inputs lang.Map[modelfile.Stimulus]) *modelfile.LoadedModel {
	ref := name
	if _, builtin := plant.LookupBuiltin(ref); !builtin && !filepath.IsAbs(ref) && strings.ContainsAny(ref, "/.") {
		ref = filepath.Join(filepath.Dir(benchSource), ref)
	}
	params := map[string]float64{}
	for i, name := range paramMap.Names {
		params[name] = *paramMap.Values[i]
	}
	if b, builtin := plant.LookupBuiltin(ref); builtin {
		if _, err := b.Model(params); err != nil {
			var bad plant.ParamErrors
			if !errors.As(err, &bad) {
				d.ErrorAt(path+".params", "%v", err)
			}
			for _, e := range bad { // each at the first of its parameters the bench gives
				at := path + ".params"
				if i := slices.IndexFunc(e.Params, func(name string) bool { _, given := params[name]; return given }); i >= 0 {
					at += "." + e.Params[i]
				}
				d.ErrorAt(at, "%v", e)
			}
			return nil
		}
	} else if len(params) > 0 {
		d.ErrorAt(path+".params", "params change a built-in model's parameters; %s is a model file, whose numbers are in the file", name)
		return nil
	}
	lm, err := modelfile.LoadModel(ref, params)
	if err != nil {
		var list lang.ErrorList
		if errors.As(err, &list) {
			d.Add(list...) // at their places in the model file
		} else {
			d.ErrorAt(path+"."+nameKey, "%v", err)
		}
		return nil
	}
	// The bench's stimuli replace the model's.
	if inputs.Len() > 0 {
		m := lm.Model
		m.Inputs = slices.Clone(m.Inputs)
		for i, name := range inputs.Names {
			at := slices.IndexFunc(m.Inputs, func(in plant.Input) bool { return in.Name == name })
			if at < 0 {
				var names []string
				for _, in := range m.Inputs {
					names = append(names, in.Name)
				}
				d.ErrorAt(path+".inputs."+name, "model %s has no input %s%s (its inputs: %s)", m.Name, name, lang.DidYouMean(name, names), strings.Join(names, ", "))
				continue
			}
			inputs.Values[i].Check(d, path+".inputs."+name)
			m.Inputs[at].Stimulus = inputs.Values[i].PlantStimulus()
		}
		if lm.Plant, err = plant.New(m); err != nil {
			modelfile.ReportModelProblems(d, path, err) // a stimulus that is not finite, at its input
			return nil
		}
	}
	return lm
}

// finish sets what the settings say of bm's part, its plant already cut,
// and checks that its parts step and its codecs code what crosses the
// cut; it returns nil after reporting a problem.
func (e *PartSettings) finish(d *lang.Decoder, path string, bm *BenchModel) *BenchModel {
	ok := e.setSteps(d, path, bm)
	e.setCodecs(d, path, bm)
	if !ok || bm.Send == nil || bm.Receive == nil {
		return nil
	}
	var stepOK bool
	if bm.Stepping, stepOK = e.ModelStepping.check(d, path, bm); !stepOK {
		return nil
	}
	return bm
}

// setSteps sets bm's exchange and integration steps, how often it sends
// and its solver, and checks that its parts can be stepped so; false
// after a problem.
func (e *PartSettings) setSteps(d *lang.Decoder, path string, bm *BenchModel) bool {
	bm.SendEvery, bm.Solver = 1, plant.Trapezoidal
	bm.Exchange, bm.Step = e.steps()
	ok := true
	if bm.Exchange <= 0 {
		d.ErrorAt(path+".exchange", "must be positive")
		ok = false
	}
	if bm.Step <= 0 {
		d.ErrorAt(path+".step", "must be positive")
		ok = false
	} else if bm.Exchange > 0 && bm.Exchange%bm.Step != 0 {
		d.ErrorAt(path+".step", "the exchange step %v is not a whole number of steps of %v", bm.Exchange, bm.Step)
		ok = false
	}
	if e.SendEvery != nil && bm.Exchange > 0 {
		if every := time.Duration(*e.SendEvery); every <= 0 || every%bm.Exchange != 0 {
			d.ErrorAt(path+".send_every", "must be a whole number of exchanges of %v", bm.Exchange)
			ok = false
		} else {
			bm.SendEvery = int(every / bm.Exchange)
		}
	}
	if e.Solver != nil {
		bm.Solver = plant.Solver(*e.Solver)
	}
	if ok {
		for _, part := range []*plant.Part{bm.Simulated, bm.Hardware} {
			if _, err := plant.NewIntegrator(part, bm.Solver, bm.Step); err != nil {
				d.ErrorAt(path+".solver", "%v", err)
				ok = false
				break
			}
		}
	}
	return ok
}

// setCodecs sets how bm's values cross the cut in frames, each way; a
// codec left nil had a problem, reported.
func (e *PartSettings) setCodecs(d *lang.Decoder, path string, bm *BenchModel) {
	switch {
	case e.Codec == nil || e.Codec.CSV != nil:
		c := wire.CSV{}
		if e.Codec != nil && e.Codec.CSV.Precision != nil {
			if p := *e.Codec.CSV.Precision; p < 1 || p > 17 {
				d.ErrorAt(path+".codec.csv.precision", "must be from 1 to 17")
			} else {
				c.Precision = p
			}
		}
		bm.Send, bm.Receive = c, c
	case e.Codec.Struct != nil || e.Codec.Wire != nil:
		e.setBinaryCodecs(d, path, bm)
	}
}

// setBinaryCodecs sets a struct or wire codec: one binary field per value
// crossing the cut, as the fields say (else a float64).
func (e *PartSettings) setBinaryCodecs(d *lang.Decoder, path string, bm *BenchModel) {
	crossing := append(bm.Simulated.Out(), bm.Simulated.In()...)
	fields, key := lang.Map[FieldSpec]{}, "struct"
	if e.Codec.Struct != nil {
		fields = e.Codec.Struct.Fields
	} else {
		fields, key = e.Codec.Wire.Fields, "wire"
	}
	for _, name := range fields.Names {
		if !slices.Contains(crossing, name) {
			d.ErrorAt(path+".codec."+key+".fields."+name, "is not a variable that crosses cut %s (they are: %s)", bm.Cut, strings.Join(crossing, ", "))
		}
	}
	send, receive := structLayout(fields, bm.Simulated.Out()), structLayout(fields, bm.Simulated.In())
	switch {
	case send == nil || receive == nil:
	case e.Codec.Wire != nil:
		// One Protocol per direction: each holds a sender's numbering
		// or a receiver's tracking. The executor gives each part its
		// own copies, stamped with its clock.
		sends, answers := wire.Sample, wire.Command
		if s := e.Codec.Wire.Sends; s != nil && *s == "command" {
			sends, answers = wire.Command, wire.Sample
		}
		for _, l := range []*wire.Struct{send, receive} {
			if err := wire.CheckValues(l, 0); err != nil { // a message no receiver would take
				d.ErrorAt(path+".codec", "%v", err)
			}
		}
		bm.Send = &wire.Protocol{Layout: send, Sends: sends}
		bm.Receive = &wire.Protocol{Layout: receive, Sends: answers}
	default:
		bm.Send, bm.Receive = send, receive
	}
	for i, name := range fields.Names {
		if s := fields.Values[i].Scale; s != nil && *s == 0 {
			d.ErrorAt(path+".codec."+key+".fields."+name+".scale", "must not be zero")
		}
	}
}

// structLayout is the binary layout of signals, each as fields says, else
// a float64; nil when a field's type is wrong (reported already).
func structLayout(fields lang.Map[FieldSpec], signals []string) *wire.Struct {
	var fs []wire.Field
	for _, s := range signals {
		f := wire.Field{Type: wire.F64LE}
		if i := fields.Index(s); i >= 0 {
			spec := fields.Values[i]
			f.Type = wire.FieldType(spec.Type)
			if spec.Scale != nil {
				f.Scale = *spec.Scale
			}
			if spec.Offset != nil {
				f.Offset = *spec.Offset
			}
		}
		fs = append(fs, f)
	}
	s, err := wire.NewStruct(fs)
	if err != nil {
		return nil
	}
	return s
}

// checkModelBindings checks that each model endpoint sends and receives
// through exactly the flows its cut needs, to endpoints that carry bytes.
func (b *Bench) checkModelBindings(d *lang.Decoder, models map[string]*BenchModel, bound []BoundFlow) {
	for i, name := range b.Endpoints.Names {
		if !b.Endpoints.Values[i].IsModel() {
			continue
		}
		path := "endpoints." + name
		var from, to []BoundFlow
		for _, bf := range bound {
			if bf.From == name {
				from = append(from, bf)
			}
			if bf.To == name {
				if len(to) > 0 {
					d.ErrorAt("bind."+bf.Key+".to", "%s already receives flow %s; a model receives one flow", name, to[0].Flow)
				}
				to = append(to, bf)
			}
			for _, peer := range []string{bf.From, bf.To} {
				if k := b.Endpoints.Index(peer); peer != name && k >= 0 && (bf.From == name || bf.To == name) {
					if b.Endpoints.Values[k].IsModel() {
						d.ErrorAt("bind."+bf.Key, "a model's frames go to hardware: a %s endpoint, not another model (%s)", byteKinds(), peer)
					}
				}
			}
		}
		bm := models[name]
		if bm == nil {
			continue
		}
		if _, ok := bm.Send.(*wire.Protocol); ok {
			b.checkWirePeers(d, name, bound)
		} else {
			b.checkPlainPeers(d, name, bound)
		}
		out, in := bm.Simulated.Out(), bm.Simulated.In()
		switch {
		case len(out) > 0 && len(from) == 0:
			d.ErrorAt(path, "cut %s sends %s to the hardware: bind a flow from %s", bm.Cut, strings.Join(out, ", "), name)
		case len(out) == 0 && len(from) > 0:
			d.ErrorAt("bind."+from[0].Key+".from", "cut %s sends nothing to the hardware", bm.Cut)
		}
		switch {
		case len(in) > 0 && len(to) == 0:
			d.ErrorAt(path, "cut %s receives %s from the hardware: bind a flow to %s", bm.Cut, strings.Join(in, ", "), name)
		case len(in) == 0 && len(to) > 0:
			d.ErrorAt("bind."+to[0].Key+".to", "cut %s receives nothing from the hardware", bm.Cut)
		}
	}
}

// checkPlainPeers checks that a model not speaking the wire protocol is
// bound to no device that does: the device's messages would reach the
// model as frames it cannot decode, and its own frames the device as
// garbage.
func (b *Bench) checkPlainPeers(d *lang.Decoder, model string, bound []BoundFlow) {
	for _, p := range peersOf(model, bound) {
		if k := b.Endpoints.Index(p.peer); k >= 0 && b.Endpoints.Values[k].SpeaksWire() {
			d.ErrorAt("bind."+p.key, "endpoint %s speaks the wire protocol (codec: wire); give %s codec: wire too (codec: {wire: {sends: command}} for a plant node on the bench), or %s another codec", p.peer, model, p.peer)
			return
		}
	}
}

// peerBinding is a binding of a model's flow and the endpoint at its
// other end.
type peerBinding struct{ peer, key string }

// peersOf lists the bindings of model's flows, with their other ends.
func peersOf(model string, bound []BoundFlow) []peerBinding {
	var out []peerBinding
	for _, bf := range bound {
		switch model {
		case bf.From:
			out = append(out, peerBinding{bf.To, bf.Key})
		case bf.To:
			out = append(out, peerBinding{bf.From, bf.Key})
		}
	}
	return out
}

// checkWirePeers checks that the byte streams a model speaking the wire
// protocol is bound to carry its COBS frames.
func (b *Bench) checkWirePeers(d *lang.Decoder, model string, bound []BoundFlow) {
	for _, p := range peersOf(model, bound) {
		peer := p.peer
		k := b.Endpoints.Index(peer)
		if k < 0 {
			continue
		}
		if fs := b.Endpoints.Values[k].frames(); fs != nil && fs.Spec().Name != "cobs" {
			d.ErrorAt("bind."+p.key, "model %s speaks the wire protocol, in COBS frames; give endpoint %s codec: wire", model, peer)
		}
	}
}
