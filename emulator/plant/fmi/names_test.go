package fmi

import (
	"strings"
	"testing"
)

func TestSignalName(t *testing.T) {
	for _, c := range []struct{ fmu, hilrig string }{
		{"v2", "v2"},
		{"body.v", "body_v"},
		{"der(x)", "der_x"},
		{"x[1,2]", "x_1_2"},
		{"a..b", "a_b"},
		{"_x_", "_x_"},
		{"2nd", "_2nd"},
		{"(.)", "_"},
		{"Δp", "p"},
		{"pump.p[1]", "pump_p_1"},
	} {
		if got := SignalName(c.fmu); got != c.hilrig {
			t.Errorf("SignalName(%q) = %q, want %q", c.fmu, got, c.hilrig)
		}
	}
}

// TestValue: a value is found by the FMU's name or by hilrig's, an
// element of an array by either; a whole array, a string and a name two
// values share are refused, saying what to write instead.
func TestValue(t *testing.T) {
	d := &Description{Variables: []Variable{
		{Name: "body.v", Type: Float64},
		{Name: "body_v2", Type: Float64},
		{Name: "x", Type: Float64, Shape: []int{2}},
		{Name: "label", Type: String},
		{Name: "a.b", Type: Float64},
		{Name: "a(b)", Type: Float64},
	}}
	for _, c := range []struct{ name, want, err string }{
		{"body.v", "body.v", ""},
		{"body_v", "body.v", ""},
		{"body_v2", "body_v2", ""},
		{"x[2]", "x[2]", ""},
		{"x_2", "x[2]", ""},
		{"x", "", "x is an array of 2 values: name one, as x_1"},
		{"label", "", "label is a String; a plant model's signals are numbers"},
		{"a_b", "", "a_b stands for a.b and a(b): name the one meant as the FMU does"},
		{"body_w", "", "the FMU has no value body_w; did you mean body_v?"},
	} {
		s, err := d.Value(c.name)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Value(%q): %v, want an error %q", c.name, err, c.err)
		case c.err == "" && (err != nil || s.Name != c.want):
			t.Errorf("Value(%q) = %q, %v; want %q", c.name, s.Name, err, c.want)
		}
	}
}
