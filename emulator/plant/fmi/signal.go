package fmi

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hilrig/hilrig/emulator/suggest"
)

// Signal is one value a Stepper sets or reads: a scalar variable, or one
// element of an FMI 3 array.
type Signal struct {
	Name     string // the variable's name, or name[i] (name[i,j], ...) for an element
	Variable int    // index in Description.Variables
	Element  int    // index of the element within the variable's values
	Type     Type
	Unit     string
	// Continuous is a Real/Float signal of continuous variability: input
	// files interpolate it linearly; the others hold each value.
	Continuous bool
}

// Signals resolves names to signals: a variable's name (or alias) stands
// for the variable, all its elements for an array; name[i] for one
// element. A name of no variable is refused with the one probably meant.
func (d *Description) Signals(names []string) ([]Signal, error) {
	var out []Signal
	for _, name := range names {
		sigs, err := d.signal(name)
		if err != nil {
			return nil, err
		}
		out = append(out, sigs...)
	}
	return out, nil
}

func (d *Description) signal(name string) ([]Signal, error) {
	if k := d.Variable(name); k >= 0 {
		return d.elements(k), nil
	}
	base, index, ok := strings.Cut(name, "[")
	if ok && strings.HasSuffix(index, "]") {
		if k := d.Variable(base); k >= 0 {
			v := &d.Variables[k]
			if v.Shape == nil {
				return nil, fmt.Errorf("%s is not an array: name it %s", base, base)
			}
			parts := strings.Split(strings.TrimSuffix(index, "]"), ",")
			if len(parts) != len(v.Shape) {
				return nil, fmt.Errorf("%s: %s has %d dimensions", name, base, len(v.Shape))
			}
			elem := 0
			for i, p := range parts {
				j, err := strconv.Atoi(strings.TrimSpace(p))
				if err != nil || j < 1 || j > v.Shape[i] {
					return nil, fmt.Errorf("%s: index %d of %s runs from 1 to %d", name, i+1, base, v.Shape[i])
				}
				elem = elem*v.Shape[i] + j - 1
			}
			all := d.elements(k)
			return all[elem : elem+1], nil
		}
	}
	return nil, fmt.Errorf("the FMU has no variable %s%s", name, suggest.DidYouMean(name, d.VariableNames()))
}

// elements is the signals of every element of a variable.
func (d *Description) elements(k int) []Signal {
	v := &d.Variables[k]
	names := v.ElementNames()
	out := make([]Signal, len(names))
	for i, n := range names {
		out[i] = Signal{Name: n, Variable: k, Element: i, Type: v.Type, Unit: v.Unit,
			Continuous: v.Variability == Continuous && (v.Type == Float64 || v.Type == Float32)}
	}
	return out
}

// channels moves signals to and from an instance in one call per type:
// each type's variables, once each, and a buffer of all their elements.
type channels struct {
	signals []Signal
	groups  []group
	at      []position // per signal: where its value is in the buffers
}

type group struct {
	t   Type
	vrs []ValueReference
	buf []float64
}

type position struct{ group, index int }

// newChannels prepares signals; an array input's elements that are not
// among them are set to their start values.
func newChannels(d *Description, signals []Signal) *channels {
	c := &channels{signals: signals, at: make([]position, len(signals))}
	offset := map[int]position{} // variable → group and the offset of its first element
	for i, s := range signals {
		start, seen := offset[s.Variable]
		if !seen {
			v := &d.Variables[s.Variable]
			g := -1
			for j := range c.groups {
				if c.groups[j].t == v.Type {
					g = j
				}
			}
			if g < 0 {
				c.groups = append(c.groups, group{t: v.Type})
				g = len(c.groups) - 1
			}
			grp := &c.groups[g]
			start = position{g, len(grp.buf)}
			grp.vrs = append(grp.vrs, v.ValueReference)
			for e := range v.Size() {
				val := 0.0
				if e < len(v.Start) {
					val = v.Start[e]
				}
				grp.buf = append(grp.buf, val)
			}
			offset[s.Variable] = start
		}
		c.at[i] = position{start.group, start.index + s.Element}
	}
	return c
}

// read gets every signal's value into dst.
func (c *channels) read(inst Instance, dst []float64) error {
	for i := range c.groups {
		g := &c.groups[i]
		if err := inst.Get(g.t, g.vrs, g.buf); err != nil {
			return err
		}
	}
	for i, p := range c.at {
		dst[i] = c.groups[p.group].buf[p.index]
	}
	return nil
}

// write sets every signal from src.
func (c *channels) write(inst Instance, src []float64) error {
	for i, p := range c.at {
		c.groups[p.group].buf[p.index] = src[i]
	}
	for i := range c.groups {
		g := &c.groups[i]
		if err := inst.Set(g.t, g.vrs, g.buf); err != nil {
			return err
		}
	}
	return nil
}

// check says why v cannot be a value of the signal's type, or returns nil.
func (s *Signal) check(v float64, version Version) error {
	if math.IsNaN(v) {
		return fmt.Errorf("%s is NaN", s.Name)
	}
	t := s.Type
	if t == Enumeration {
		t = Int64
		if version == FMI2 {
			t = Int32 // FMI 2 sets an enumeration as an Integer
		}
	}
	switch {
	case t == Float64:
		return nil
	case t == Float32:
		if math.Abs(v) > math.MaxFloat32 && !math.IsInf(v, 0) {
			return fmt.Errorf("%s: %g is out of range for Float32", s.Name, v)
		}
		return nil
	case t == Boolean:
		if v != 0 && v != 1 {
			return fmt.Errorf("%s: %g is not a Boolean (want 0 or 1)", s.Name, v)
		}
		return nil
	case v != math.Trunc(v):
		return fmt.Errorf("%s: %g is not a whole number, which a %s takes", s.Name, v, s.Type)
	}
	bits := intBits(t)
	lo, hi := -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) // hi excluded
	if t == UInt8 || t == UInt16 || t == UInt32 || t == UInt64 {
		lo, hi = 0, math.Ldexp(1, bits)
	}
	if v < lo || v >= hi {
		return fmt.Errorf("%s: %g is out of range for %s", s.Name, v, t)
	}
	return nil
}
