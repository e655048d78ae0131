package profiles

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// typeInfo describes a kind of value for messages and the reference: what
// it is and an example of how to write it.
type typeInfo struct{ what, example string }

func (t typeInfo) want() string {
	if t.example == "" {
		return t.what
	}
	return t.what + " (e.g. " + t.example + ")"
}

// described is implemented by schema types that say how they are written.
type described interface{ typeInfo() typeInfo }

func (Duration) typeInfo() typeInfo    { return typeInfo{"a duration", "1.5ms, 2s"} }
func (Rate) typeInfo() typeInfo        { return typeInfo{"a rate", "4Mbit, 512kbit"} }
func (Size) typeInfo() typeInfo        { return typeInfo{"a size", "1000B, 30kB, 64KiB"} }
func (Limit) typeInfo() typeInfo       { return typeInfo{"a limit", "30000B, 50 frames"} }
func (Probability) typeInfo() typeInfo { return typeInfo{"a probability", "1%, 0.01"} }

func typeInfoOf(t reflect.Type) typeInfo {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if d, ok := reflect.Zero(t).Interface().(described); ok {
		return d.typeInfo()
	}
	if d, ok := reflect.New(t).Interface().(described); ok {
		return d.typeInfo()
	}
	if m, ok := reflect.New(t).Interface().(interface{ elemType() reflect.Type }); ok {
		return typeInfo{"a mapping of names to " + typeInfoOf(m.elemType()).what, ""}
	}
	switch t.Kind() {
	case reflect.Slice:
		return typeInfo{"a list of " + plural(typeInfoOf(t.Elem()).what), ""}
	case reflect.Struct:
		return typeInfo{"a mapping", "{" + keyList(fieldsOf(t)) + "}"}
	case reflect.String:
		return typeInfo{"text", ""}
	case reflect.Bool:
		return typeInfo{"true or false", ""}
	case reflect.Uint64, reflect.Int, reflect.Int64:
		return typeInfo{"a whole number", ""}
	case reflect.Float64:
		return typeInfo{"a number", ""}
	}
	return typeInfo{t.String(), ""}
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

// HopName refers to a hop by name.
type HopName string

// FlowName refers to a flow by name.
type FlowName string

// PhaseName names a phase of the schedule.
type PhaseName string

func (HopName) typeInfo() typeInfo   { return typeInfo{"a hop name", ""} }
func (PhaseName) typeInfo() typeInfo { return typeInfo{"a phase name", ""} }
func (FlowName) typeInfo() typeInfo  { return typeInfo{"a flow name", ""} }

func (Hop) typeInfo() typeInfo {
	return typeInfo{"a hop", "{rate: 4Mbit, delay: 2ms, queue: 30000B}"}
}

func (Flow) typeInfo() typeInfo {
	return typeInfo{"a flow", "{route: [a, b], traffic: {cbr: {interval: 20ms, size: 1000B}}}"}
}

func (Traffic) typeInfo() typeInfo {
	return typeInfo{"a traffic source", "{cbr: {interval: 20ms, size: 1000B}}"}
}

func (ScheduleEntry) typeInfo() typeInfo {
	return typeInfo{"a schedule entry", "{at: 20s, for: 1s, hop: edge, outage: hold}"}
}

// parseEnum sets *v to s when s is one of the allowed words; what names
// the kind of word for the error.
func parseEnum[T ~string](v *T, s, what string, allowed ...string) error {
	if !slices.Contains(allowed, s) {
		return errors.New("is not " + what + " (want " + strings.Join(allowed, ", ") + ")" + didYouMean(s, allowed).String())
	}
	*v = T(s)
	return nil
}

// OutageMode is what an outage does with the frames it stops: drop or hold.
type OutageMode string

func (m *OutageMode) parseScalar(s string) error {
	return parseEnum(m, s, "an outage mode", "drop", "hold")
}

func (OutageMode) typeInfo() typeInfo { return typeInfo{"drop or hold", ""} }

// Switch turns a flow's traffic on or off.
type Switch string

func (w *Switch) parseScalar(s string) error {
	return parseEnum(w, s, "a switch", "on", "off")
}

func (Switch) typeInfo() typeInfo { return typeInfo{"on or off", ""} }

// JitterDist names a jitter distribution.
type JitterDist string

func (j *JitterDist) parseScalar(s string) error {
	return parseEnum(j, s, "a jitter distribution", "uniform", "normal", "pareto", "paretonormal", "empirical")
}

func (JitterDist) typeInfo() typeInfo {
	return typeInfo{"uniform, normal, pareto, paretonormal or empirical", ""}
}

// TimeUnit is the unit of bare numbers in an empirical delay file.
type TimeUnit string

func (u *TimeUnit) parseScalar(s string) error {
	return parseEnum(u, s, "a time unit", "ns", "us", "ms", "s")
}

func (TimeUnit) typeInfo() typeInfo { return typeInfo{"ns, us, ms or s", ""} }

// Correlation is a coefficient in (−1, 1), written 0.5 or 50%.
type Correlation float64

func (c *Correlation) parseScalar(s string) error {
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

func (Correlation) typeInfo() typeInfo { return typeInfo{"a correlation", "0.5, 50%"} }

// BitErrorRate is a probability per bit, written as a number: 1e-6.
type BitErrorRate float64

func (b *BitErrorRate) parseScalar(s string) error {
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

func (BitErrorRate) typeInfo() typeInfo { return typeInfo{"a bit error rate", "1e-6"} }
