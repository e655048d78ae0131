package lang

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// TypeInfo describes a kind of value for messages and the reference: what
// it is and an example of how to write it.
type TypeInfo struct{ What, Example string }

func (t TypeInfo) want() string {
	if t.Example == "" {
		return t.What
	}
	return t.What + " (e.g. " + t.Example + ")"
}

// Described is implemented by schema types that say how they are written.
type Described interface{ TypeInfo() TypeInfo }

func (Duration) TypeInfo() TypeInfo    { return TypeInfo{"a duration", "1.5ms, 2s"} }
func (Rate) TypeInfo() TypeInfo        { return TypeInfo{"a rate", "4Mbit, 512kbit"} }
func (Size) TypeInfo() TypeInfo        { return TypeInfo{"a size", "1000B, 30kB, 64KiB"} }
func (Limit) TypeInfo() TypeInfo       { return TypeInfo{"a limit", "30000B, 50 frames"} }
func (Probability) TypeInfo() TypeInfo { return TypeInfo{"a probability", "1%, 0.01"} }

func typeInfoOf(t reflect.Type) TypeInfo {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if d, ok := reflect.Zero(t).Interface().(Described); ok {
		return d.TypeInfo()
	}
	if d, ok := reflect.New(t).Interface().(Described); ok {
		return d.TypeInfo()
	}
	if m, ok := reflect.New(t).Interface().(interface{ ElemType() reflect.Type }); ok {
		return TypeInfo{"a mapping of names to " + typeInfoOf(m.ElemType()).What, ""}
	}
	switch t.Kind() {
	case reflect.Slice:
		return TypeInfo{"a list of " + plural(typeInfoOf(t.Elem()).What), ""}
	case reflect.Struct:
		return TypeInfo{"a mapping", "{" + KeyList(FieldsOf(t)) + "}"}
	case reflect.String:
		return TypeInfo{"text", ""}
	case reflect.Bool:
		return TypeInfo{"true or false", ""}
	case reflect.Uint64, reflect.Int, reflect.Int64:
		return TypeInfo{"a whole number", ""}
	case reflect.Float64:
		return TypeInfo{"a number", ""}
	}
	return TypeInfo{t.String(), ""}
}

// plural turns "a hop name" into "hop names" and "a schedule entry" into
// "schedule entries".
func plural(what string) string {
	what = strings.TrimPrefix(strings.TrimPrefix(what, "a "), "an ")
	if strings.HasSuffix(what, "y") {
		return strings.TrimSuffix(what, "y") + "ies"
	}
	return what + "s"
}

// ParseEnum sets *v to s when s is one of the allowed words; what names
// the kind of word for the error.
func ParseEnum[T ~string](v *T, s, what string, allowed ...string) error {
	if !slices.Contains(allowed, s) {
		return errors.New("is not " + what + " (want " + strings.Join(allowed, ", ") + ")" + DidYouMean(s, allowed).String())
	}
	*v = T(s)
	return nil
}

// TimeUnit is the unit of bare numbers in an empirical delay file.
type TimeUnit string

func (u *TimeUnit) ParseScalar(s string) error {
	return ParseEnum(u, s, "a time unit", "ns", "us", "ms", "s")
}

func (TimeUnit) TypeInfo() TypeInfo { return TypeInfo{"ns, us, ms or s", ""} }

// Correlation is a coefficient in (−1, 1), written 0.5 or 50%.
type Correlation float64

func (c *Correlation) ParseScalar(s string) error {
	t := strings.TrimSpace(s)
	percent := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(t, "%")), 64)
	if err != nil || math.IsNaN(v) {
		return errors.New("is not a correlation (want a number in (−1, 1) such as 0.5, or 50%)")
	}
	if percent {
		v /= 100
	}
	if !(v > -1 && v < 1) {
		return errors.New("is outside (−1, 1)")
	}
	*c = Correlation(v)
	return nil
}

func (Correlation) TypeInfo() TypeInfo { return TypeInfo{"a correlation", "0.5, 50%"} }

// BitErrorRate is a probability per bit, written as a number: 1e-6.
type BitErrorRate float64

func (b *BitErrorRate) ParseScalar(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) {
		return errors.New("is not a bit error rate (want e.g. 1e-6)")
	}
	if v < 0 || v > 1 {
		return errors.New("is outside [0, 1]")
	}
	*b = BitErrorRate(v)
	return nil
}

func (BitErrorRate) TypeInfo() TypeInfo { return TypeInfo{"a bit error rate", "1e-6"} }
