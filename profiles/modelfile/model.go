package modelfile

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/profiles/lang"
)

// ModelFile is a plant model written in YAML: linear blocks joined by
// named signals, so that a lab can bring its own plant without writing Go.
// (Nonlinear models are built in; hilrig models lists them.)
type ModelFile struct {
	Name        string                   `yaml:"name" doc:"short name, shown in reports" default:"the file name"`
	Description string                   `yaml:"description" doc:"what the model is and where its numbers come from"`
	Subsystems  lang.Map[ModelSubsystem] `yaml:"subsystems,required" doc:"the model's blocks, by name"`
	Inputs      lang.Map[Stimulus]       `yaml:"inputs" doc:"signals from outside the model, by name, with the stimulus that drives each when the rig simulates it"`
	Cuts        lang.Map[ModelCut]       `yaml:"cuts" doc:"the coupling points the model offers, by name"`
	Output      string                   `yaml:"output" doc:"the signal of interest, for couple and demo"`
}

// ModelSubsystem is a linear block: dx/dt = A·x + B·u, y = C·x + D·u.
type ModelSubsystem struct {
	States  []string  `yaml:"states" doc:"its states, in the order of A's rows and columns"`
	Inputs  []string  `yaml:"inputs" doc:"the signals it reads, in the order of B's and D's columns"`
	Outputs []string  `yaml:"outputs" doc:"the signals it produces, in the order of C's and D's rows; each signal is produced by one block"`
	A       Matrix    `yaml:"A" doc:"states × states" default:"zero"`
	B       Matrix    `yaml:"B" doc:"states × inputs" default:"zero"`
	C       Matrix    `yaml:"C" doc:"outputs × states" default:"zero"`
	D       Matrix    `yaml:"D" doc:"outputs × inputs; a block with D ≠ 0 passes its inputs straight to its outputs" default:"zero"`
	Initial []float64 `yaml:"initial" doc:"initial state" default:"zero"`
}

// Matrix is a list of rows of numbers.
type Matrix [][]float64

func (Matrix) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a matrix", Example: "[[0, 1], [-400, -2]]"}
}

// ModelCut is a coupling point.
type ModelCut struct {
	Hardware    []string `yaml:"hardware,required" doc:"the subsystems on the bench; the rig simulates the others"`
	Description string   `yaml:"description" doc:"where the cut is"`
}

// Stimulus drives a model input when the rig simulates it.
type Stimulus struct {
	Constant *float64          `yaml:"constant" doc:"a fixed value"`
	Step     *StepStimulus     `yaml:"step" doc:"a jump from one value to another"`
	Sine     *PeriodicStimulus `yaml:"sine" doc:"offset + amplitude·sin(2π·t/period)"`
	Square   *PeriodicStimulus `yaml:"square" doc:"offset + amplitude in the first half of each period, offset − amplitude in the second"`
	Steps    []StepLevel       `yaml:"steps" doc:"each value from its time until the next (0 before the first)"`
}

func (*Stimulus) OneOf() {}

func (Stimulus) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a stimulus", Example: "{step: {at: 0.1s, to: 1}}, {sine: {amplitude: 0.01, period: 2s}}"}
}

// StepStimulus goes from one value to another at a time.
type StepStimulus struct {
	At   lang.Duration `yaml:"at" doc:"when it jumps" default:"0s"`
	From float64       `yaml:"from" doc:"the value before" default:"0"`
	To   float64       `yaml:"to,required" doc:"the value from at on"`
}

// PeriodicStimulus is a sine or square wave.
type PeriodicStimulus struct {
	Amplitude float64       `yaml:"amplitude,required" doc:"half the peak-to-peak swing"`
	Period    lang.Duration `yaml:"period,required" doc:"the wave's period"`
	Offset    float64       `yaml:"offset" doc:"the mean value" default:"0"`
}

// StepLevel is one value of a steps stimulus.
type StepLevel struct {
	At    lang.Duration `yaml:"at,required" doc:"when the value starts"`
	Value float64       `yaml:"value,required" doc:"the value"`
}

// LoadedModel is a model ready to run: a built-in with its parameters, or
// a model file.
type LoadedModel struct {
	*plant.Plant
	Source  string         // the file, or "built-in"
	Builtin *plant.Builtin // nil for a model file
}

// LoadModel resolves a model: a built-in's name (with params changing its
// parameters) or a model file's path. Every problem of a file is reported
// at once with its line and column.
func LoadModel(ref string, params map[string]float64) (*LoadedModel, error) {
	if b, ok := plant.LookupBuiltin(ref); ok {
		m, err := b.Model(params)
		if err != nil {
			return nil, err
		}
		p, err := plant.New(m)
		if err != nil {
			return nil, fmt.Errorf("built-in model %s: %w", ref, err)
		}
		return &LoadedModel{Plant: p, Source: "built-in", Builtin: b}, nil
	}
	data, err := lang.ReadFile(ref, lang.MaxFileBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && !strings.ContainsAny(ref, "/.") {
			return nil, fmt.Errorf("no built-in model or file named %s%s (the built-in models: %s)", ref, lang.DidYouMean(ref, plant.BuiltinNames()), strings.Join(plant.BuiltinNames(), ", "))
		}
		return nil, err
	}
	if len(params) > 0 {
		return nil, fmt.Errorf("%s: params change a built-in model's parameters; a model file's numbers are in the file", ref)
	}
	return ParseModel(ref, data)
}

// ParseModel reads a model file's text; source names it in messages.
func ParseModel(source string, data []byte) (*LoadedModel, error) {
	var f ModelFile
	d, err := lang.DecodeFile(source, data, &f)
	if err != nil {
		return nil, err
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if f.Name == "" {
		f.Name = lang.NameOf(source)
	}
	m := plant.Model{Name: f.Name, Description: f.Description, Output: f.Output}
	for i, name := range f.Subsystems.Names {
		s := f.Subsystems.Values[i]
		path := "subsystems." + name
		lti := &plant.LTI{}
		for _, mx := range []struct {
			key  string
			rows Matrix
			into **mat.Dense
		}{{"A", s.A, &lti.A}, {"B", s.B, &lti.B}, {"C", s.C, &lti.C}, {"D", s.D, &lti.D}} {
			*mx.into = toDense(d, path+"."+mx.key, mx.rows)
		}
		m.Subsystems = append(m.Subsystems, plant.Subsystem{Name: name, States: s.States, Inputs: s.Inputs, Outputs: s.Outputs, Initial: s.Initial, Linear: lti})
	}
	for i, name := range f.Inputs.Names {
		f.Inputs.Values[i].Check(d, "inputs."+name)
		m.Inputs = append(m.Inputs, plant.Input{Name: name, Stimulus: f.Inputs.Values[i].PlantStimulus()})
	}
	for i, name := range f.Cuts.Names {
		c := f.Cuts.Values[i]
		m.Cuts = append(m.Cuts, plant.Cut{Name: name, Hardware: c.Hardware, Description: c.Description})
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	p, err := plant.New(m)
	if err != nil {
		ReportModelProblems(d, "", err)
		return nil, d.Err()
	}
	return &LoadedModel{Plant: p, Source: source}, nil
}

// ReportModelProblems places the plant's problems at their paths (under
// prefix, in a bench) in the file.
func ReportModelProblems(d *lang.Decoder, prefix string, err error) {
	var probs plant.Problems
	if !errors.As(err, &probs) {
		d.ErrorAt(prefix, "%v", err)
		return
	}
	for _, p := range probs {
		path := p.Path
		if prefix != "" {
			path = prefix + "." + path
		}
		d.ErrorAt(path, "%s", p.Msg)
	}
}

// toDense checks that a matrix is rectangular and converts it; an absent
// or empty matrix is nil (zero).
func toDense(d *lang.Decoder, path string, rows Matrix) *mat.Dense {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil
	}
	for i, r := range rows {
		if len(r) != len(rows[0]) {
			d.ErrorAt(fmt.Sprintf("%s[%d]", path, i), "has %d numbers; the first row has %d", len(r), len(rows[0]))
			return nil
		}
	}
	return mat.NewDense(len(rows), len(rows[0]), slices.Concat(rows...))
}

// PlantStimulus converts a decoded stimulus.
func (s *Stimulus) PlantStimulus() plant.Stimulus {
	switch {
	case s.Constant != nil:
		return plant.Constant(*s.Constant)
	case s.Step != nil:
		return plant.Step{Time: time.Duration(s.Step.At), From: s.Step.From, To: s.Step.To}
	case s.Sine != nil:
		return plant.Sine{Amplitude: s.Sine.Amplitude, Offset: s.Sine.Offset, Period: time.Duration(s.Sine.Period)}
	case s.Square != nil:
		return plant.Square{Amplitude: s.Square.Amplitude, Offset: s.Square.Offset, Period: time.Duration(s.Square.Period)}
	case s.Steps != nil:
		levels := make(plant.Steps, len(s.Steps))
		for i, l := range s.Steps {
			levels[i] = plant.Level{Time: time.Duration(l.At), Value: l.Value}
		}
		return levels
	}
	return nil
}

// Check reports what the decoder cannot: periods that are not positive
// and steps out of order.
func (s *Stimulus) Check(d *lang.Decoder, path string) {
	for _, w := range []struct {
		key string
		p   *PeriodicStimulus
	}{{"sine", s.Sine}, {"square", s.Square}} {
		if w.p != nil && w.p.Period <= 0 {
			d.ErrorAt(path+"."+w.key+".period", "must be positive")
		}
	}
	for i := 1; i < len(s.Steps); i++ {
		if s.Steps[i].At <= s.Steps[i-1].At {
			d.ErrorAt(fmt.Sprintf("%s.steps[%d].at", path, i), "must be after the previous step's %v", time.Duration(s.Steps[i-1].At))
		}
	}
}

// ModelReference is the key reference of model files, generated from the
// schema like the profile reference.
func ModelReference() string { return lang.ReferenceOf(reflect.TypeFor[ModelFile](), "top level") }
