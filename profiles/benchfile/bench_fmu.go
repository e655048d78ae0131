package benchfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/modelfile"
)

// FMUEndpoint is an FMU (FMI 2 or 3, Co-Simulation or Model Exchange) the
// rig runs as its part of a plant: what it sends crosses the emulated
// network to the hardware, and what the hardware sends back are its
// inputs. Its values go by their hilrig names (fmi.SignalName: body.v is
// body_v), or by the FMU's own where a key allows.
type FMUEndpoint struct {
	File      string                       `yaml:"file,required" doc:"the .fmu, relative to the bench"`
	Interface *FMUInterface                `yaml:"interface" doc:"cs (the FMU's own solver steps it) or me (Model Exchange: the rig integrates it, to the FMU's tolerance)" default:"cs when the FMU offers it, else me"`
	Sends     []string                     `yaml:"sends,required" doc:"the FMU's outputs sent to the hardware, in the frame's order"`
	Takes     []string                     `yaml:"takes" doc:"the FMU's inputs taken from the hardware's frames, in the frame's order" default:"none"`
	Params    lang.Map[float64]            `yaml:"params" doc:"parameters and start values set before the FMU is initialised, by name"`
	Inputs    lang.Map[modelfile.Stimulus] `yaml:"inputs" doc:"the FMU's other inputs driven by a stimulus, by name" default:"their start values"`
	Hardware  *FMUHardware                 `yaml:"hardware" doc:"what stands in for the hardware in virtual time (hilrig sim): the hardware part of a model cut at a coupling point" default:"none: the FMU then runs in real time only"`
	Isolate   *bool                        `yaml:"isolate" doc:"run the FMU in a child process, so that its crash, hang or exit is the model's failure and not the rig's end" default:"true"`
	Budget    *lang.Duration               `yaml:"budget" doc:"the longest one step of an isolated FMU may take, in wall time, before it is killed and fails; 0 for none (a virtual-time run on a busy machine)" default:"1s"`
	OnFailure *FailureAction               `yaml:"on_failure" doc:"when the FMU fails: stop the run, or continue it sending the safe values; the run fails (exit 1) either way" default:"stop"`
	Safe      lang.Map[float64]            `yaml:"safe" doc:"the values sent in place of the FMU's once it has failed, by name of what it sends" default:"their start values"`
	PartSettings
}

// FMUHardware names the model whose hardware part stands in for the
// bench in virtual time.
type FMUHardware struct {
	Model  string                       `yaml:"model,required" doc:"a built-in model (hilrig models lists them) or a model file, relative to the bench"`
	Cut    string                       `yaml:"cut,required" doc:"the cut whose hardware part stands in: it reads what the FMU sends and gives what it takes"`
	Params lang.Map[float64]            `yaml:"params" doc:"a built-in model's parameters changed from their defaults, by name"`
	Inputs lang.Map[modelfile.Stimulus] `yaml:"inputs" doc:"the model's inputs the hardware part reads, driven otherwise than the model says"`
}

// FMUInterface is cs or me.
type FMUInterface string

func (v *FMUInterface) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "an FMU interface", "cs", "me")
}

func (FMUInterface) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "cs or me", Example: ""} }

// FailureAction is stop or continue.
type FailureAction string

func (v *FailureAction) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "what to do on failure", "stop", "continue")
}

func (FailureAction) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "stop or continue", Example: ""}
}

// FMUModel is what the rig needs of an FMU endpoint to start its FMU and
// to act when it fails.
type FMUModel struct {
	File        string // its path
	Description *fmi.Description
	Kind        fmi.Kind
	// Block is the FMU in the endpoint's plant: the subsystem fmu, which
	// the rig attaches the started FMU to.
	Block *fmi.Block
	// Params are the values set before initialisation, by the FMU's
	// names.
	Params  map[string]float64
	Isolate bool
	Budget  time.Duration
	// Safe are the values sent in place of what the FMU sends once it
	// has failed, in the frame's order.
	Safe []float64
	// Continue is whether the run goes on when the FMU fails.
	Continue bool
	// StandIn is whether a model's hardware part stands in for the
	// hardware, so that the endpoint runs in virtual time; StandInFile is
	// that model's file, "" for a built-in.
	StandIn     bool
	StandInFile string
}

// FMUSubsystem and PlaceholderSubsystem are the subsystems of an FMU
// endpoint's plant: the FMU, and what takes the hardware's place in the
// plant when no model stands in for it.
const (
	FMUSubsystem         = "fmu"
	PlaceholderSubsystem = "hardware"
)

// FMUCut is the one cut of an FMU endpoint's plant: between the FMU and
// the hardware.
const FMUCut = "fmu"

// DefaultFMUBudget is an isolated FMU's step budget when the bench gives
// none.
const DefaultFMUBudget = time.Second

// checkFMU resolves an FMU endpoint into a model endpoint whose plant is
// the FMU and what stands in for the hardware, cut between them; it
// returns nil after reporting a problem.
func checkFMU(d *lang.Decoder, path, benchSource string, e *FMUEndpoint) *BenchModel {
	file := e.File
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(benchSource), file)
	}
	archive, err := ReadFMU(file)
	if err != nil {
		d.ErrorAt(path+".file", "%v", err)
		return nil
	}
	fm := fmuSettings(d, path, e, file, archive)
	if fm == nil {
		return nil
	}
	c := fmuCheck{d: d, path: path, e: e, desc: archive.Description}
	sig, ok := c.signals(fm)
	if !ok {
		return nil
	}
	_, step := e.PartSettings.steps()
	if step <= 0 {
		d.ErrorAt(path+".step", "must be positive")
		return nil
	}
	block, err := fmi.NewBlock(c.desc, FMUSubsystem, slices.Concat(sig.takes, sig.stimulated), c.outputs(sig.sends), step)
	if err != nil {
		d.ErrorAt(path, "%v", err)
		return nil
	}
	fm.Block = block
	c.safeValues(fm, sig.sends)
	bm := c.plant(benchSource, file, fm, sig)
	if bm == nil {
		return nil
	}
	return e.PartSettings.finish(d, path, bm)
}

// fmuSettings is what an FMU endpoint says of how the FMU runs (its
// interface, process, budget), checked against what the archive offers;
// nil after a problem that leaves nothing to check.
func fmuSettings(d *lang.Decoder, path string, e *FMUEndpoint, file string, archive *fmi.Archive) *FMUModel {
	desc := archive.Description
	fm := &FMUModel{File: file, Description: desc, Params: map[string]float64{}, Isolate: true, Budget: DefaultFMUBudget}
	fm.Kind = fmi.CS
	if desc.Interface(fmi.CS) == nil {
		fm.Kind = fmi.ME
	}
	if e.Interface != nil {
		fm.Kind = map[FMUInterface]fmi.Kind{"cs": fmi.CS, "me": fmi.ME}[*e.Interface]
	}
	if desc.Interface(fm.Kind) == nil {
		d.ErrorAt(path+".interface", "%s offers no %s interface", e.File, fm.Kind)
		return nil
	}
	if _, _, err := archive.Library(fm.Kind, runtime.GOOS, runtime.GOARCH); err != nil {
		d.ErrorAt(path+".file", "%v", err)
		return nil
	}
	if e.Isolate != nil {
		fm.Isolate = *e.Isolate
	}
	if e.Budget != nil {
		if fm.Budget = time.Duration(*e.Budget); fm.Budget < 0 {
			d.ErrorAt(path+".budget", "must not be negative")
		} else if !fm.Isolate && fm.Budget > 0 {
			d.ErrorAt(path+".budget", "a budget is kept only for an isolated FMU (isolate: true): in the rig's process a step that hangs cannot be stopped")
		}
	}
	if !fm.Isolate && e.Budget == nil {
		fm.Budget = 0
	}
	fm.Continue = e.OnFailure != nil && *e.OnFailure == "continue"
	return fm
}

// fmuCheck checks an FMU endpoint's values against the FMU's description.
type fmuCheck struct {
	d    *lang.Decoder
	path string
	e    *FMUEndpoint
	desc *fmi.Description
}

// fmuSignals are an FMU endpoint's values by the FMU's names: those it
// sends to the hardware, takes from it, and the inputs a stimulus drives.
type fmuSignals struct {
	sends, takes, stimulated []string
	inputs                   []plant.Input
}

// resolve finds the FMU's value name, of one of the causalities want
// (any, when none is given).
func (c *fmuCheck) resolve(at, name string, want ...fmi.Causality) (fmi.Signal, bool) {
	s, err := c.desc.Value(name)
	if err != nil {
		c.d.ErrorAt(at, "%v", err)
		return s, false
	}
	if cz := c.desc.Variables[s.Variable].Causality; len(want) > 0 && !slices.Contains(want, cz) {
		c.d.ErrorAt(at, "%s is a variable of causality %s, not %s", name, cz, causalities(want))
		return s, false
	}
	return s, true
}

// signals resolves the values the endpoint names, each checked for what
// it is for, and sets fm's parameters; false after a problem.
func (c *fmuCheck) signals(fm *FMUModel) (fmuSignals, bool) {
	d, path, e := c.d, c.path, c.e
	var sig fmuSignals
	ok := true
	for i, name := range e.Sends {
		s, good := c.resolve(fmt.Sprintf("%s.sends[%d]", path, i), name, fmi.Output)
		ok = ok && good
		sig.sends = append(sig.sends, s.Name)
	}
	if len(e.Sends) == 0 {
		d.ErrorAt(path+".sends", "an FMU endpoint sends at least one of the FMU's outputs to the hardware")
		ok = false
	}
	for i, name := range e.Takes {
		s, good := c.resolve(fmt.Sprintf("%s.takes[%d]", path, i), name, fmi.Input)
		ok = ok && good
		sig.takes = append(sig.takes, s.Name)
	}
	for i, name := range e.Inputs.Names {
		at := path + ".inputs." + name
		s, good := c.resolve(at, name, fmi.Input)
		if good && slices.Contains(sig.takes, s.Name) {
			d.ErrorAt(at, "%s is taken from the hardware's frames (takes)", name)
			good = false
		}
		ok = ok && good
		e.Inputs.Values[i].Check(d, at)
		sig.stimulated = append(sig.stimulated, s.Name)
		sig.inputs = append(sig.inputs, plant.Input{Name: fmi.SignalName(s.Name), Stimulus: e.Inputs.Values[i].PlantStimulus()})
	}
	for i, name := range e.Params.Names {
		s, good := c.resolve(path+".params."+name, name)
		ok = ok && good
		fm.Params[s.Name] = *e.Params.Values[i]
	}
	for _, list := range [][]string{sig.sends, sig.takes, sig.stimulated} {
		for i, name := range list {
			if slices.Index(list, name) < i {
				d.ErrorAt(path, "%s is listed twice", name)
				ok = false
			}
		}
	}
	return sig, ok
}

// outputs are the plant's signals: what the FMU sends, then its other
// numeric outputs, which the trace's signals record too.
func (c *fmuCheck) outputs(sends []string) []string {
	outputs := slices.Clone(sends)
	for _, k := range c.desc.Outputs {
		v := &c.desc.Variables[k]
		if !v.Type.Numeric() {
			continue
		}
		for _, name := range v.ElementNames() {
			if !slices.Contains(outputs, name) {
				outputs = append(outputs, name)
			}
		}
	}
	return outputs
}

// safeValues sets what the hardware is sent when the FMU fails: its
// start values, but for those the endpoint gives.
func (c *fmuCheck) safeValues(fm *FMUModel, sends []string) {
	fm.Safe = fm.Block.Start()[:len(sends)]
	for i, name := range c.e.Safe.Names {
		s, err := c.desc.Value(name)
		k := -1
		if err == nil {
			k = slices.Index(sends, s.Name)
		}
		if k < 0 {
			c.d.ErrorAt(c.path+".safe."+name, "is not a value the FMU sends (sends: %s)", strings.Join(c.e.Sends, ", "))
			continue
		}
		fm.Safe[k] = *c.e.Safe.Values[i]
	}
}

// plant makes the FMU and what stands in for the hardware one plant, cut
// between them, and checks that what crosses the cut is what the
// endpoint sends and takes; nil after a problem.
func (c *fmuCheck) plant(benchSource, file string, fm *FMUModel, sig fmuSignals) *BenchModel {
	d, path, desc := c.d, c.path, c.desc
	m := plant.Model{Name: desc.ModelName, Description: desc.Description, Inputs: sig.inputs, Output: fmi.SignalName(sig.sends[0])}
	m.Subsystems = append(m.Subsystems, fm.Block.Subsystem())
	var hardware []string
	if h := c.e.Hardware; h != nil {
		stand, names, file := standIn(d, path+".hardware", benchSource, h, m.Inputs)
		if stand == nil {
			return nil
		}
		fm.StandInFile = file
		m.Subsystems = append(m.Subsystems, stand.Subsystems...)
		m.Inputs = append(m.Inputs, stand.Inputs...)
		hardware = names
		fm.StandIn = true
	} else {
		hardware = []string{PlaceholderSubsystem}
		m.Subsystems = append(m.Subsystems, placeholder(names(sig.sends), names(sig.takes)))
	}
	m.Cuts = []plant.Cut{{Name: FMUCut, Hardware: hardware, Description: "between the FMU and the hardware"}}
	p, err := plant.New(m)
	if err != nil {
		d.ErrorAt(path, "the FMU and the hardware part do not fit together: %v", err)
		return nil
	}
	bm := &BenchModel{LoadedModel: &modelfile.LoadedModel{Plant: p, Source: file}, Cut: FMUCut, FMU: fm}
	if bm.Simulated, bm.Hardware, err = p.Cut(FMUCut); err != nil {
		d.ErrorAt(path, "%v", err)
		return nil
	}
	// What crosses is what the bench says, in its order: the hardware
	// part reads all the FMU sends and gives all it takes.
	if got, want := bm.Simulated.Out(), names(sig.sends); !slices.Equal(got, want) {
		d.ErrorAt(path+".sends", "the FMU sends %s; the hardware part reads %s of them: a stand-in reads each value sent", strings.Join(want, ", "), list(got))
		return nil
	}
	if got, want := bm.Simulated.In(), names(sig.takes); !slices.Equal(got, want) {
		if slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))) {
			d.ErrorAt(path+".takes", "the hardware part gives %s in this order: list takes so", strings.Join(got, ", "))
		} else {
			d.ErrorAt(path+".takes", "the FMU takes %s; the hardware part gives %s of what it reads", list(want), list(got))
		}
		return nil
	}
	return bm
}

// standIn is the hardware part of the model h names, for an FMU's plant
// whose inputs are taken already: its subsystems, the model inputs they
// read, the subsystems' names and the model's file ("" for a built-in).
func standIn(d *lang.Decoder, path, benchSource string, h *FMUHardware, taken []plant.Input) (*plant.Model, []string, string) {
	lm := loadBenchModel(d, path, benchSource, "model", h.Model, h.Params, h.Inputs)
	if lm == nil {
		return nil, nil, ""
	}
	_, hw, err := lm.Plant.Cut(h.Cut)
	if err != nil {
		d.ErrorAt(path+".cut", "%v", err)
		return nil, nil, ""
	}
	out := &plant.Model{}
	names := hw.Subsystems()
	for _, s := range lm.Model.Subsystems {
		if slices.Contains(names, s.Name) {
			if s.Name == FMUSubsystem {
				d.ErrorAt(path+".cut", "the hardware part has a subsystem named %s, which is the FMU's", FMUSubsystem)
				return nil, nil, ""
			}
			out.Subsystems = append(out.Subsystems, s)
		}
	}
	for _, in := range lm.Model.Inputs {
		if slices.Contains(hw.External(), in.Name) && !slices.ContainsFunc(taken, func(t plant.Input) bool { return t.Name == in.Name }) {
			out.Inputs = append(out.Inputs, in)
		}
	}
	file := ""
	if lm.Builtin == nil {
		file = lm.Source
	}
	return out, names, file
}

// placeholder is the hardware in an FMU's plant when no model stands in
// for it: it reads what the FMU sends and gives what it takes, and is
// never run (a real-time run has the hardware).
func placeholder(reads, gives []string) plant.Subsystem {
	return plant.Subsystem{Name: PlaceholderSubsystem, Inputs: reads, Outputs: gives, Equations: &plant.Equations{
		Output: func(_ float64, _, _, y []float64) { clear(y) },
	}}
}

// OpenFMU opens an .fmu, which must be a regular file (OpenFile), and
// reads and checks its archive within the archive's limits
// (fmi.ReadArchive). The archive reads its entries from f, which the
// caller closes once it has unpacked what it needs.
func OpenFMU(path string) (a *fmi.Archive, f *os.File, err error) {
	f, info, err := lang.OpenFile(path)
	if err != nil {
		return nil, nil, err
	}
	if a, err = fmi.ReadArchive(f, info.Size()); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, f, nil
}

// ReadFMU is OpenFMU for what an archive says of itself (its description,
// binaries and resources' names), the file closed.
func ReadFMU(path string) (*fmi.Archive, error) {
	a, f, err := OpenFMU(path)
	if err != nil {
		return nil, err
	}
	return a, f.Close()
}

// names is the plant's names of an FMU's values.
func names(fmuNames []string) []string {
	out := make([]string, len(fmuNames))
	for i, n := range fmuNames {
		out[i] = fmi.SignalName(n)
	}
	return out
}

func causalities(cs []fmi.Causality) string {
	var s []string
	for _, c := range cs {
		s = append(s, string(c))
	}
	return strings.Join(s, " or ")
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
