package plant

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestEveryParameterHasADomain: each built-in's parameters say what they
// are and what values they take, and their defaults are among them.
func TestEveryParameterHasADomain(t *testing.T) {
	for _, b := range Builtins() {
		for _, p := range b.Params {
			d := p.Domain
			if d.Kind == "" || !(d.Min <= d.Max) {
				t.Errorf("%s.%s: domain %+v", b.Name, p.Name, d)
			}
			if why := d.Check(p.Value); why != "" {
				t.Errorf("%s.%s: the default %g %s", b.Name, p.Name, p.Value, why)
			}
		}
		if _, err := b.Model(nil); err != nil {
			t.Errorf("%s with its defaults: %v", b.Name, err)
		}
	}
}

// domainCase is a value of one parameter and whether its domain takes it.
type domainCase struct {
	v    float64
	want bool
}

// domainCases are the values on both sides of each of a domain's bounds,
// and those no domain takes: NaN, the infinities, subnormal numbers.
func domainCases(d Domain) []domainCase {
	cases := []domainCase{{math.NaN(), false}, {math.Inf(1), false}, {math.Inf(-1), false}}
	if !math.IsInf(d.Min, -1) {
		cases = append(cases, domainCase{d.Min, !d.MinOpen}, domainCase{math.Nextafter(d.Min, math.Inf(-1)), false})
		if d.Min == 0 {
			// The smallest value above zero a domain takes is MinNormal;
			// below it a number is subnormal.
			cases = append(cases, domainCase{MinNormal, true}, domainCase{math.Nextafter(MinNormal, 0), false}, domainCase{1e-320, false}, domainCase{math.SmallestNonzeroFloat64, false})
		} else {
			cases = append(cases, domainCase{math.Nextafter(d.Min, math.Inf(1)), !d.Whole})
		}
	} else {
		cases = append(cases, domainCase{-1, true}, domainCase{-MinNormal, true}, domainCase{-1e-320, false}, domainCase{-math.MaxFloat64, true})
	}
	if !math.IsInf(d.Max, 1) {
		cases = append(cases, domainCase{d.Max, !d.MaxOpen}, domainCase{math.Nextafter(d.Max, math.Inf(1)), false}, domainCase{math.Nextafter(d.Max, math.Inf(-1)), !d.Whole})
	} else {
		cases = append(cases, domainCase{math.MaxFloat64, true})
	}
	if d.Whole {
		cases = append(cases, domainCase{d.Min + 0.5, false}, domainCase{d.Min + 1, true})
	}
	if d.Min < 0 || d.Min == 0 && !d.MinOpen {
		cases = append(cases, domainCase{0, true})
	}
	return cases
}

// TestParameterDomains sets each parameter of each built-in, alone, to
// the values on both sides of its domain's bounds: a value outside is
// refused with the parameter, the value and the domain; one inside is not
// refused for its domain (it may still be refused for a condition between
// parameters, or for making the equations overflow, which other tests
// cover).
func TestParameterDomains(t *testing.T) {
	for _, b := range Builtins() {
		for _, p := range b.Params {
			for _, tc := range domainCases(p.Domain) {
				_, err := b.Model(map[string]float64{p.Name: tc.v})
				var errs ParamErrors
				if err != nil && !errors.As(err, &errs) {
					t.Fatalf("%s.%s = %g: %v is not a ParamErrors", b.Name, p.Name, tc.v, err)
				}
				refused := slices.ContainsFunc(errs, func(e *ParamError) bool {
					return slices.Equal(e.Params, []string{p.Name}) && strings.HasPrefix(e.Msg, "parameter "+p.Name+" = ")
				})
				if refused == tc.want {
					t.Errorf("%s.%s = %g (domain %s): refused %v, errors %v", b.Name, p.Name, tc.v, p.Domain, refused, err)
					continue
				}
				if refused && !strings.Contains(err.Error(), p.Domain.String()) {
					t.Errorf("%s.%s = %g: %q does not say the domain %s", b.Name, p.Name, tc.v, err, p.Domain)
				}
			}
		}
	}
}

// TestQuarterCarParameters are the cases, word for word: each a
// refusal that names the parameter, its value and its domain.
func TestQuarterCarParameters(t *testing.T) {
	b, _ := LookupBuiltin("quarter-car")
	for _, tc := range []struct {
		set  map[string]float64
		want string
	}{
		{map[string]float64{"m3": 0}, "model quarter-car: parameter m3 = 0 kg is out of range: must be > 0 (mass)"},
		{map[string]float64{"k1": math.NaN()}, "model quarter-car: parameter k1 = NaN is not a finite number: must be ≥ 0 (stiffness)"},
		{map[string]float64{"b2": math.Inf(1)}, "model quarter-car: parameter b2 = +Inf is not a finite number: must be ≥ 0 (damping)"},
		{map[string]float64{"m1": 1e-320}, "model quarter-car: parameter m1 = 1e-320 kg is subnormal (not zero, but smaller in magnitude than 2.2250738585072014e-308, the smallest normal float64): not a physical value; must be > 0 (mass)"},
		{map[string]float64{"m2": -900}, "model quarter-car: parameter m2 = -900 kg is out of range: must be > 0 (mass)"},
		// Every problem at once, in the order of the model's parameters.
		{map[string]float64{"b3": -1, "m1": 0}, "model quarter-car: parameter m1 = 0 kg is out of range: must be > 0 (mass)\nmodel quarter-car: parameter b3 = -1 N·s/m is out of range: must be ≥ 0 (damping)"},
		// Each in its domain, together too large: k1/m1 overflows.
		{map[string]float64{"m1": MinNormal, "k1": 1e6}, "model quarter-car: its parameters overflow: subsystems.wheel.A[1][0] is -Inf; a matrix entry must be a finite number; choose less extreme values"},
	} {
		_, err := b.Model(tc.set)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.set, err, tc.want)
		}
	}
}

// TestConditionsBetweenParameters name the parameters they concern, the
// one to change first.
func TestConditionsBetweenParameters(t *testing.T) {
	for _, tc := range []struct {
		model  string
		set    map[string]float64
		params []string
	}{
		{"motor-speed", map[string]float64{"umin": 5, "umax": 1}, []string{"umin", "umax"}},
		{"motor-speed", map[string]float64{"ki": -1}, []string{"kp", "ki", "kd"}},
		{"motor-speed", map[string]float64{"rate": 1e-5}, []string{"rate"}},
		{"parallel-robot", map[string]float64{"z0": -0.38}, []string{"x0", "z0", "xp", "L", "l"}},
		{"dc-motor", map[string]float64{"R": 1e3, "L": MinNormal}, []string{"L", "R"}}, // R/L overflows
	} {
		b, _ := LookupBuiltin(tc.model)
		_, err := b.Model(tc.set)
		var errs ParamErrors
		if !errors.As(err, &errs) || len(errs) != 1 || !slices.Equal(errs[0].Params, tc.params) || errs[0].Model != tc.model {
			t.Errorf("%s %v: %#v (%v), want one error about %v", tc.model, tc.set, errs, err, tc.params)
		}
	}
}

// TestModelNumbersAreFinite: New refuses a matrix entry, an initial state
// or a stimulus that is not a finite number, at its place.
func TestModelNumbersAreFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	base := func() Model {
		return Model{
			Subsystems: []Subsystem{{Name: "m", States: []string{"x", "v"}, Inputs: []string{"u"}, Outputs: []string{"x"},
				Linear: &LTI{A: dense([]float64{0, 1}, []float64{-400, -2}), B: dense([]float64{0}, []float64{1}), C: dense([]float64{1, 0})}}},
			Inputs: []Input{{Name: "u", Stimulus: Constant(1)}},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(m *Model)
		want   string
	}{
		{"A", func(m *Model) { m.Subsystems[0].Linear.A.Set(1, 0, nan) }, "subsystems.m.A[1][0]: is NaN; a matrix entry must be a finite number"},
		{"B", func(m *Model) { m.Subsystems[0].Linear.B.Set(1, 0, inf) }, "subsystems.m.B[1][0]: is +Inf; a matrix entry must be a finite number"},
		{"C", func(m *Model) { m.Subsystems[0].Linear.C.Set(0, 1, -inf) }, "subsystems.m.C[0][1]: is -Inf; a matrix entry must be a finite number"},
		{"D", func(m *Model) { m.Subsystems[0].Linear.D = dense([]float64{nan}) }, "subsystems.m.D[0][0]: is NaN; a matrix entry must be a finite number"},
		{"initial", func(m *Model) { m.Subsystems[0].Initial = []float64{0, inf} }, "subsystems.m.initial[1]: is +Inf; an initial state must be a finite number"},
		{"constant", func(m *Model) { m.Inputs[0].Stimulus = Constant(nan) }, "inputs.u: reaches NaN; a stimulus must stay a finite number"},
		{"step", func(m *Model) { m.Inputs[0].Stimulus = Step{To: -inf} }, "inputs.u: reaches -Inf; a stimulus must stay a finite number"},
		{"sine", func(m *Model) {
			m.Inputs[0].Stimulus = Sine{Amplitude: math.MaxFloat64, Offset: math.MaxFloat64, Period: 1}
		}, "inputs.u: reaches +Inf; a stimulus must stay a finite number"},
		{"square", func(m *Model) {
			m.Inputs[0].Stimulus = Square{Amplitude: math.MaxFloat64, Offset: -math.MaxFloat64, Period: 1}
		}, "inputs.u: reaches -Inf; a stimulus must stay a finite number"},
		{"steps", func(m *Model) { m.Inputs[0].Stimulus = Steps{{0, 1}, {1, nan}} }, "inputs.u: reaches NaN; a stimulus must stay a finite number"},
	} {
		m := base()
		if _, err := New(m); err != nil {
			t.Fatal(err)
		}
		tc.change(&m)
		_, err := New(m)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.want)
		}
	}
}

// FuzzBuiltinParams: whatever a parameter is set to, a built-in model is
// refused with ParamErrors, or it is built and checks with every number
// finite, and its plant's initial signals finite too.
func FuzzBuiltinParams(f *testing.F) {
	for _, v := range []float64{0, -1, 1, 0.5, 1e-320, MinNormal, 1e308, -1e308, math.NaN(), math.Inf(1)} {
		f.Add(uint8(0), uint8(0), v)
	}
	all := Builtins()
	f.Fuzz(func(t *testing.T, model, param uint8, v float64) {
		b := all[int(model)%len(all)]
		p := b.Params[int(param)%len(b.Params)]
		m, err := b.Model(map[string]float64{p.Name: v})
		if err != nil {
			var errs ParamErrors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("%s.%s = %g: %v", b.Name, p.Name, v, err)
			}
			return
		}
		if why := p.Domain.Check(v); why != "" {
			t.Fatalf("%s.%s = %g taken, though it %s", b.Name, p.Name, v, why)
		}
		pl, err := New(m)
		if err != nil {
			t.Fatalf("%s.%s = %g: %v", b.Name, p.Name, v, err)
		}
		_ = pl.initialSignals() // it computes, whatever it computes: a run checks its numbers
	})
}
