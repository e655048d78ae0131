package fmi

import (
	"fmt"
	"strings"

	"github.com/hilrig/hilrig/emulator/suggest"
)

// SignalName is the name a plant model, a bench, a trace and an
// expectation know one of an FMU's values by, since their names are
// letters, digits and _ and an FMU's are not: each run of other
// characters becomes one _, none is left at either end, and a name that
// would start with a digit starts with _. body.v is body_v, der(x) is
// der_x, x[1,2] is x_1_2.
func SignalName(name string) string {
	var b strings.Builder
	gap := false
	for _, r := range name {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			if gap && b.Len() > 0 {
				b.WriteByte('_')
			}
			gap = false
			b.WriteRune(r)
			continue
		}
		gap = true
	}
	s := b.String()
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "_" + s
	}
	return s
}

// Value resolves one numeric value of the FMU by its own name (body.v,
// x[2]: an element, not a whole array) or by its SignalName (body_v,
// x_2). Two values of one SignalName are refused, each named.
func (d *Description) Value(name string) (Signal, error) {
	if sigs, err := d.signal(name); err == nil {
		if len(sigs) != 1 {
			return Signal{}, fmt.Errorf("%s is an array of %d values: name one, as %s", name, len(sigs), SignalName(sigs[0].Name))
		}
		if !sigs[0].Type.Numeric() {
			return Signal{}, fmt.Errorf("%s is a %s; a plant model's signals are numbers", name, sigs[0].Type)
		}
		return sigs[0], nil
	}
	var found []Signal
	var names []string
	for k := range d.Variables {
		if !d.Variables[k].Type.Numeric() {
			continue
		}
		for _, s := range d.elements(k) {
			n := SignalName(s.Name)
			names = append(names, n)
			if n == name {
				found = append(found, s)
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Signal{}, fmt.Errorf("the FMU has no value %s%s", name, suggest.DidYouMean(name, names))
	}
	var both []string
	for _, s := range found {
		both = append(both, s.Name)
	}
	return Signal{}, fmt.Errorf("%s stands for %s: name the one meant as the FMU does", name, strings.Join(both, " and "))
}
