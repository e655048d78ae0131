package plant

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hilrig/hilrig/emulator/suggest"

	"gonum.org/v1/gonum/mat"
)

// Param is a parameter of a built-in model: its default value, its unit,
// where the value comes from, and the values it may take.
type Param struct {
	Name    string
	Value   float64
	Unit    string
	Meaning string
	Domain  Domain
}

// Builtin is a model the rig knows by name.
type Builtin struct {
	Name        string
	Description string
	Source      string // where its equations and numbers come from
	Params      []Param
	build       func(p params) Model
	// check tests what the parameters' domains cannot: a condition
	// between parameters, a value derived from them. Nil: none.
	check func(p params) *ParamError
}

// params reads a built-in's parameters by name.
type params map[string]float64

var builtins = map[string]*Builtin{}

func register(b *Builtin) { builtins[b.Name] = b }

// Builtins lists the built-in models, by name.
func Builtins() []*Builtin {
	var out []*Builtin
	for _, b := range builtins {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupBuiltin finds a built-in model by name.
func LookupBuiltin(name string) (*Builtin, bool) {
	b, ok := builtins[name]
	return b, ok
}

// BuiltinNames lists the built-in models' names.
func BuiltinNames() []string {
	var names []string
	for _, b := range Builtins() {
		names = append(names, b.Name)
	}
	return names
}

// Model builds the model with some parameters changed from their
// defaults. Every parameter is checked here, whoever gives it (couple,
// models, a bench's params, --param), before the equations see it: a name
// the model does not have is an error, and a value outside its domain, a
// condition between values that does not hold, and values that make the
// model's numbers overflow are ParamErrors, all of them at once.
func (b *Builtin) Model(overrides map[string]float64) (Model, error) {
	p := params{}
	for _, par := range b.Params {
		p[par.Name] = par.Value
	}
	var unknown []string
	for name, v := range overrides {
		if _, ok := p[name]; !ok {
			unknown = append(unknown, name)
			continue
		}
		p[name] = v
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		var names []string
		for _, par := range b.Params {
			names = append(names, par.Name)
		}
		return Model{}, fmt.Errorf("model %s has no parameter %s%s (its parameters: %s)", b.Name, strings.Join(unknown, ", "), suggest.DidYouMean(unknown[0], names), strings.Join(names, ", "))
	}
	errs := b.checkParams(p)
	if len(errs) == 0 && b.check != nil {
		if e := b.check(p); e != nil {
			errs = append(errs, e)
		}
	}
	var m Model
	if len(errs) == 0 {
		m = b.build(p)
		if probs := checkNumbers(m); len(probs) > 0 {
			// Each value in its domain, and still too large together: a
			// matrix entry or initial state that overflows.
			errs = append(errs, paramError(slices.Sorted(maps.Keys(overrides)), "its parameters overflow: %s %s; choose less extreme values", probs[0].Path, probs[0].Msg))
		}
	}
	if len(errs) > 0 {
		for _, e := range errs {
			e.Model = b.Name
		}
		return Model{}, errs
	}
	m.Name = b.Name
	m.Description = b.Description
	return m, nil
}

// dense is a matrix from its rows.
func dense(rows ...[]float64) *mat.Dense {
	r, c := len(rows), len(rows[0])
	data := make([]float64, 0, r*c)
	for _, row := range rows {
		data = append(data, row...)
	}
	return mat.NewDense(r, c, data)
}

func init() {
	register(&Builtin{
		Name: "quarter-car",
		Description: "A quarter-car with a driver's seat, driven by the road's vertical velocity: " +
			"wheel (unsprung mass on the tyre), suspension, body (sprung mass) and seat with driver.",
		Source: "Ersal et al., IJVD 61 (2013), Section 4 and Table 1 (paper 001)",
		Params: []Param{
			{"m1", 110, "kg", "unsprung mass (wheel)", positive("mass")},
			{"m2", 900, "kg", "sprung mass (body)", positive("mass")},
			{"m3", 20, "kg", "driver and seat mass", positive("mass")},
			{"k1", 1e6, "N/m", "tyre stiffness", nonNegative("stiffness")},
			{"b1", 200e3, "N·s/m", "tyre damping", nonNegative("damping")},
			{"k2", 275e3, "N/m", "suspension stiffness", nonNegative("stiffness")},
			{"b2", 30e3, "N·s/m", "suspension damping", nonNegative("damping")},
			{"k3", 1.4e3, "N/m", "seat stiffness", nonNegative("stiffness")},
			{"b3", 250, "N·s/m", "seat damping", nonNegative("damping")},
		},
		build: quarterCar,
	})
}

// quarterCar is paper 001's equations (18)–(24) as four linear blocks. The
// states are relative displacements and velocities, so that no absolute
// position drifts: z1 = x1 − x0 (tyre), d = x2 − x1 (suspension), z3 = x3 −
// x2 (seat). The suspension force Fs = k2·d + b2·(v2 − v1) pushes the wheel
// down and the body up; the seat force Fseat = k3·z3 + b3·(v3 − v2) acts on
// the body and, reversed, on the driver.
//
// Cut at CP1 the rig keeps wheel and suspension and exchanges the
// suspension force for the body's velocity; at CP2 it keeps everything but
// the seat and exchanges the body's velocity for the seat force, as in the
// paper's Figure 2.
func quarterCar(p params) Model {
	m1, m2, m3 := p["m1"], p["m2"], p["m3"]
	k1, b1, k2, b2, k3, b3 := p["k1"], p["b1"], p["k2"], p["b2"], p["k3"], p["b3"]
	return Model{
		Subsystems: []Subsystem{
			{
				Name: "wheel", States: []string{"z1", "v1"}, Inputs: []string{"v0", "Fs"}, Outputs: []string{"v1"},
				Linear: &LTI{
					A: dense([]float64{0, 1}, []float64{-k1 / m1, -b1 / m1}),
					B: dense([]float64{-1, 0}, []float64{b1 / m1, 1 / m1}),
					C: dense([]float64{0, 1}),
				},
			},
			{
				Name: "suspension", States: []string{"d"}, Inputs: []string{"v1", "v2"}, Outputs: []string{"Fs", "deflection"},
				Linear: &LTI{
					A: dense([]float64{0}),
					B: dense([]float64{-1, 1}),
					C: dense([]float64{k2}, []float64{1}),
					D: dense([]float64{-b2, b2}, []float64{0, 0}),
				},
			},
			{
				Name: "body", States: []string{"v2"}, Inputs: []string{"Fs", "Fseat"}, Outputs: []string{"v2"},
				Linear: &LTI{
					A: dense([]float64{0}),
					B: dense([]float64{-1 / m2, 1 / m2}),
					C: dense([]float64{1}),
				},
			},
			{
				Name: "seat", States: []string{"z3", "v3"}, Inputs: []string{"v2"}, Outputs: []string{"Fseat", "v3"},
				Linear: &LTI{
					A: dense([]float64{0, 1}, []float64{-k3 / m3, -b3 / m3}),
					B: dense([]float64{-1}, []float64{b3 / m3}),
					C: dense([]float64{k3, b3}, []float64{0, 1}),
					D: dense([]float64{-b3}, []float64{0}),
				},
			},
		},
		Inputs: []Input{{Name: "v0", Stimulus: Step{Time: 100e6, From: 0, To: 1}}},
		Cuts: []Cut{
			{Name: "CP1", Hardware: []string{"body", "seat"}, Description: "between the unsprung and the sprung mass: body and seat on the bench"},
			{Name: "CP2", Hardware: []string{"seat"}, Description: "between the sprung mass and the seat: the seat on the bench"},
		},
		Output: "deflection",
	}
}
