package plant

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MinNormal is the smallest positive normal float64, 2⁻¹⁰²²
// ≈ 2.2250738585072014e-308. A parameter that is not zero is at least this
// large in magnitude: below it a float64 is subnormal, with fewer than the
// 53 bits of precision of every other number, and its reciprocal overflows
// to +Inf (1/1e-320 is +Inf), so a mass of 1e-320 kg is not a physical
// value but one that turns the model's equations into infinities.
const MinNormal = 0x1p-1022

// Domain is the values a built-in model's parameter may take. Every
// parameter is a finite number, zero or at least MinNormal in magnitude;
// its domain bounds it further, as its physics requires.
type Domain struct {
	// Kind says in a word or two what the parameter is, and so why its
	// bounds are what they are: "mass", "stiffness", "gain".
	Kind string
	// Min and Max bound the value (±Inf: unbounded on that side), each
	// excluded when its Open is set.
	Min, Max         float64
	MinOpen, MaxOpen bool
	// Whole asks for a whole number (a count).
	Whole bool
}

// positive is a quantity that is more than zero: a mass, an inertia, a
// length, a time constant, anything the equations divide by.
func positive(kind string) Domain {
	return Domain{Kind: kind, Min: 0, MinOpen: true, Max: math.Inf(1)}
}

// nonNegative is a magnitude that may be zero: a stiffness, a damping, a
// friction, a load that may be absent.
func nonNegative(kind string) Domain { return Domain{Kind: kind, Min: 0, Max: math.Inf(1)} }

// anyFinite is a quantity of either sign: a gain, a position, an initial
// condition.
func anyFinite(kind string) Domain { return Domain{Kind: kind, Min: math.Inf(-1), Max: math.Inf(1)} }

// String writes the bounds as the domain's errors and hilrig models show
// them: "> 0", "≥ 0", "0 ≤ x < 1.5708", "a whole number from 1 to 100",
// "any finite number".
func (d Domain) String() string {
	lo, hi := !math.IsInf(d.Min, -1), !math.IsInf(d.Max, 1)
	num := strconv.FormatFloat
	switch {
	case d.Whole && lo && hi:
		return fmt.Sprintf("a whole number from %s to %s", num(d.Min, 'g', -1, 64), num(d.Max, 'g', -1, 64))
	case lo && hi:
		return fmt.Sprintf("%s %s x %s %s", num(d.Min, 'g', -1, 64), lessThan(d.MinOpen), lessThan(d.MaxOpen), num(d.Max, 'g', -1, 64))
	case lo && d.MinOpen:
		return "> " + num(d.Min, 'g', -1, 64)
	case lo:
		return "≥ " + num(d.Min, 'g', -1, 64)
	case hi && d.MaxOpen:
		return "< " + num(d.Max, 'g', -1, 64)
	case hi:
		return "≤ " + num(d.Max, 'g', -1, 64)
	}
	return "any finite number"
}

func lessThan(open bool) string {
	if open {
		return "<"
	}
	return "≤"
}

// Check says what is wrong with v for this domain, or "" when it fits.
func (d Domain) Check(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("is not a finite number: must be %s (%s)", d, d.Kind)
	case v != 0 && math.Abs(v) < MinNormal:
		return fmt.Sprintf("is subnormal (not zero, but smaller in magnitude than %g, the smallest normal float64): not a physical value; must be %s (%s)", MinNormal, d, d.Kind)
	case v < d.Min || d.MinOpen && v == d.Min || v > d.Max || d.MaxOpen && v == d.Max:
		return fmt.Sprintf("is out of range: must be %s (%s)", d, d.Kind)
	case d.Whole && v != math.Trunc(v):
		return fmt.Sprintf("is not a whole number: must be %s (%s)", d, d.Kind)
	}
	return ""
}

// ParamError is a built-in model's parameter that has no meaning, or a
// condition between parameters that does not hold.
type ParamError struct {
	Model string
	// Params are the parameters at fault: the one whose value is wrong,
	// or those a condition between them names, the first the one to
	// change.
	Params []string
	Msg    string
}

func (e *ParamError) Error() string { return "model " + e.Model + ": " + e.Msg }

// ParamErrors are every problem with the parameters a built-in model was
// given, in the order it lists its parameters.
type ParamErrors []*ParamError

func (es ParamErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// checkParams checks each parameter against its domain; p holds every
// parameter's value, defaults and overrides alike.
func (b *Builtin) checkParams(p params) ParamErrors {
	var errs ParamErrors
	for _, par := range b.Params {
		v := p[par.Name]
		if why := par.Domain.Check(v); why != "" {
			errs = append(errs, &ParamError{Model: b.Name, Params: []string{par.Name},
				Msg: fmt.Sprintf("parameter %s = %s %s", par.Name, withUnit(v, par.Unit), why)})
		}
	}
	return errs
}

// withUnit writes a value as a message quotes it: NaN and ±Inf as they
// are, and the unit after a number.
func withUnit(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if unit == "" || math.IsNaN(v) || math.IsInf(v, 0) {
		return s
	}
	return s + " " + unit
}

// paramError is a condition between parameters that does not hold, the
// first of names the one to change; Model names the model.
func paramError(names []string, format string, args ...any) *ParamError {
	return &ParamError{Params: names, Msg: fmt.Sprintf(format, args...)}
}
