package expect

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// The paths an expectation may name are the summary's JSON keys, walked by
// reflection over record.Summary: a struct's keys are its fields' JSON
// names, a list whose elements are named (flows, hops, phases, endpoints,
// models: the element's first field is its name) is indexed by those names,
// any other list by nothing (the path ends there and means its length), and
// a map of counts by its keys (or nothing: their sum). The unit of a value
// follows the summary's naming convention: a key ending in _s is in
// seconds (and loses the suffix: delay_s is delay), _kib in KiB (max_rss),
// and one with bytes in it in bytes; loss_rate and *_of_peak are ratios.
// A struct's unit passes to its values (delay.p95 is in seconds).
//
// A few values are derived rather than stored; they are listed in derived.

// Unit is what a measured number is in.
type Unit uint8

// Units.
const (
	Count   Unit = iota // a plain number
	Seconds             // a time, written with its unit: 60ms, 2s
	Bytes               // a size: 1500B, 30kB, 64KiB
	Ratio               // a fraction, written 0.01 or 1%
	Flag                // true or false
	Text                // a word
)

func (u Unit) String() string {
	return [...]string{"a count", "a time", "a size", "a ratio", "true or false", "text"}[u]
}

// child is one key under a struct: a field, or a derived value.
type child struct {
	name   string
	unit   Unit
	scale  float64 // stored value × scale is in unit (KiB → bytes)
	index  []int   // the field
	typ    reflect.Type
	derive func(v reflect.Value) (float64, bool) // a derived value of the struct
	domain domain                                // a derived value's
	doc    string
}

// domain is what values a quantity can take, where that is known, so that
// a limit it could never meet (loss_rate < 5, a delay under -1ms, sent ==
// 1.5) is refused when the expectation is parsed, not met by a run.
type domain struct {
	whole       bool // a count of things
	nonNegative bool
	fraction    bool // from 0 to 1: a probability, a share
	percent     bool // a number in percent already (error_pct)
}

// domainOf is the domain of a summary's value of type t, in unit u, at
// the path segs.
func domainOf(t reflect.Type, u Unit, segs []string) domain {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch u {
	case Ratio:
		// A rate is a share of frames; a ratio to a peak may exceed 1.
		return domain{nonNegative: true, fraction: strings.HasSuffix(segs[len(segs)-1], "_rate")}
	case Bytes:
		return domain{nonNegative: true}
	case Seconds:
		return domain{nonNegative: !signedTime(segs)}
	case Count:
		switch t.Kind() {
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return domain{whole: true, nonNegative: true}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return domain{whole: true}
		}
	}
	return domain{}
}

// signedTime reports whether a time of the summary may be negative: an
// offset between clocks, a lateness (early is negative), a model's own
// time against the clock; delays, durations and periods may not.
func signedTime(segs []string) bool {
	for _, s := range segs {
		for _, signed := range []string{"lateness", "offset", "t_diff", "sim_time", "one_way_delay"} {
			if strings.Contains(s, signed) {
				return true
			}
		}
	}
	return false
}

// unitRules map the summary's key suffixes to units; the suffix is dropped
// from the path when strip is set.
var unitRules = []struct {
	suffix string
	unit   Unit
	scale  float64
	strip  bool
}{
	{"_s", Seconds, 1, true},
	{"_kib", Bytes, 1024, true},
	{"_bytes", Bytes, 1, false},
	{"_rate", Ratio, 1, false},
	{"_of_peak", Ratio, 1, false},
}

// derived are the values computed from a summary struct rather than read
// from it.
var derived = map[reflect.Type][]child{
	reflect.TypeFor[emulator.FlowSummary](): {{
		name: "lost", unit: Count, domain: domain{whole: true, nonNegative: true}, doc: "frames dropped by the network, whatever the reason (the sum of dropped)",
		derive: func(v reflect.Value) (float64, bool) {
			var n uint64
			for _, c := range v.Interface().(emulator.FlowSummary).Dropped {
				n += c
			}
			return float64(n), true
		},
	}},
	reflect.TypeFor[record.OutputError](): {{
		name: "error_pct", unit: Count, domain: domain{nonNegative: true, percent: true}, doc: "max_error_of_peak in percent",
		derive: func(v reflect.Value) (float64, bool) {
			o := v.Interface().(record.OutputError)
			if o.Peak <= 0 { // the uncut output stays at zero
				return 0, false
			}
			return 100 * o.MaxError / o.Peak, true
		},
	}},
}

var childCache sync.Map // reflect.Type → []child

// childrenOf lists a struct's keys: its JSON fields (embedded structs
// flattened, as encoding/json does) and its derived values.
func childrenOf(t reflect.Type) []child {
	if cs, ok := childCache.Load(t); ok {
		return cs.([]child)
	}
	var cs []child
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			for _, inner := range childrenOf(f.Type) {
				if inner.derive == nil {
					inner.index = append([]int{i}, inner.index...)
					cs = append(cs, inner)
				}
			}
			continue
		}
		if !f.IsExported() || tag == "-" || tag == "" {
			continue
		}
		c := child{name: tag, index: []int{i}, typ: f.Type, scale: 1, unit: baseUnit(f.Type)}
		for _, r := range unitRules {
			if strings.HasSuffix(tag, r.suffix) || r.suffix == "_bytes" && strings.HasPrefix(tag, "bytes_") {
				c.unit, c.scale = r.unit, r.scale
				if r.strip {
					c.name = strings.TrimSuffix(tag, r.suffix)
				}
				break
			}
		}
		cs = append(cs, c)
	}
	cs = append(cs, derived[t]...)
	childCache.Store(t, cs)
	return cs
}

func baseUnit(t reflect.Type) Unit {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return Flag
	case reflect.String:
		return Text
	}
	return Count
}

func childNamed(cs []child, name string) (child, bool) {
	for _, c := range cs {
		if c.name == name {
			return c, true
		}
	}
	return child{}, false
}

func childNames(cs []child) []string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	return names
}

// keyed reports whether a list's elements are named: structs whose first
// field is a string.
func keyed(t reflect.Type) bool {
	e := t.Elem()
	return e.Kind() == reflect.Struct && e.NumField() > 0 && e.Field(0).Type.Kind() == reflect.String
}

// mapKeys are the keys of the summary's maps of counts: the engine's drop
// reasons (emulator's dropCounts fills every one).
func mapKeys() []string {
	var keys []string
	for s := range emulator.Status(math.MaxUint8) {
		if s.Dropped() {
			keys = append(keys, s.String())
		}
	}
	slices.Sort(keys)
	return keys
}

// isLeaf reports whether a value of type t ends a path: a number, a flag
// or text.
func isLeaf(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		return false
	}
	return true
}

// SignalStats are the values an expectation may take of a recorded model
// signal: models.ENDPOINT.SIGNAL.STAT.
var SignalStats = []struct {
	Name, Doc string
	domain    domain
}{
	{"min", "its smallest value", domain{}},
	{"max", "its largest value", domain{}},
	{"mean", "its mean over the exchanges", domain{}},
	{"rms", "its root mean square", domain{nonNegative: true}},
	{"peak", "its largest magnitude", domain{nonNegative: true}},
	{"final", "its value at the last exchange", domain{}},
	{"max_error", "the largest |cut − uncut| against the uncut model run alongside", domain{nonNegative: true}},
	{"rms_error", "the RMS of cut − uncut", domain{nonNegative: true}},
	{"error_pct", "max_error as a percentage of the uncut signal's peak", domain{nonNegative: true, percent: true}},
}

func signalStatNames() []string {
	names := make([]string, len(SignalStats))
	for i, s := range SignalStats {
		names[i] = s.Name
	}
	return names
}

// Path is one path of the tree, with placeholders for names (FLOW, HOP,
// PHASE, ENDPOINT, MODEL, OUTPUT, SIGNAL, REASON) and the unit of its
// value.
type Path struct {
	Path string
	Unit Unit
	Doc  string
}

// placeholders name the elements of named lists in Paths.
var placeholders = map[reflect.Type]string{
	reflect.TypeFor[emulator.FlowSummary]():    "FLOW",
	reflect.TypeFor[emulator.HopSummary]():     "HOP",
	reflect.TypeFor[emulator.StationSummary](): "STATION",
	reflect.TypeFor[record.PhaseSummary]():     "PHASE",
	reflect.TypeFor[record.EndpointSummary]():  "ENDPOINT",
	reflect.TypeFor[record.ModelSummary]():     "MODEL",
	reflect.TypeFor[record.OutputSummary]():    "OUTPUT",
}

// Paths lists every path an expectation may take, walked from the
// summary's types as Parse walks them.
func Paths() []Path {
	var out []Path
	join := func(path, name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	var walk func(t reflect.Type, path string, unit Unit)
	walk = func(t reflect.Type, path string, unit Unit) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Struct:
			for _, c := range childrenOf(t) {
				u := unit
				if c.derive != nil || c.unit != Count || baseUnit(c.typ) != Count {
					u = c.unit
				}
				if c.derive != nil {
					out = append(out, Path{join(path, c.name), u, c.doc})
					continue
				}
				walk(c.typ, join(path, c.name), u)
			}
			if t == reflect.TypeFor[record.ModelSummary]() {
				for _, s := range SignalStats {
					out = append(out, Path{join(path, "SIGNAL."+s.Name), Count, "a recorded signal: " + s.Doc})
				}
				// The part's own time and t_diff are times.
				for _, name := range []string{executor.SimTimeSignal, executor.TDiffSignal} {
					for _, s := range SignalStats {
						if !slices.Contains(errorStats, s.Name) {
							out = append(out, Path{join(path, name+"."+s.Name), Seconds, "the recorded " + name + " of a part that keeps its own time (steps on data or is supervised): " + s.Doc})
						}
					}
				}
			}
		case t.Kind() == reflect.Slice && keyed(t):
			walk(t.Elem(), join(path, placeholders[t.Elem()]), unit)
		case t.Kind() == reflect.Slice:
			out = append(out, Path{path, Count, "how many"})
		case t.Kind() == reflect.Map:
			out = append(out, Path{path, Count, "the sum over " + strings.Join(mapKeys(), ", ")})
			out = append(out, Path{join(path, "REASON"), Count, "one of " + strings.Join(mapKeys(), ", ")})
		default:
			out = append(out, Path{path, unit, ""})
		}
	}
	walk(reflect.TypeFor[record.Summary](), "", Count)
	return out
}
