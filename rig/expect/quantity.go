package expect

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles/lang"
)

// limit is the value an expectation compares with, in the unit's base
// (seconds, bytes, a fraction), and how it was written, so that measured
// values are shown the same way.
type limit struct {
	num  float64
	text string // as written
	word string // a text limit, unquoted
	// show and per: the unit the limit was written in, and how many of
	// the base unit one of it is; show empty: choose one per value.
	show string
	per  float64
}

// quantityRE is compiled when a limit is first read, not at the start of
// every command of the one binary.
var quantityRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*(\S*)$`)
})

// timeUnits and sizeUnits are the units measured values are shown in;
// limits are parsed by profiles, as a profile's quantities are.
var timeUnits = []struct {
	name string
	per  float64
}{{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}}

var sizeUnits = map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

func parseLimit(s string, u Unit) (limit, error) {
	l := limit{text: s, per: 1}
	switch u {
	case Text:
		l.word = s
		if strings.HasPrefix(s, `"`) {
			t, err := strconv.Unquote(s)
			if err != nil {
				return l, fmt.Errorf("%s is not a quoted string", s)
			}
			l.word = t
		} else if strings.ContainsAny(s, " \t") {
			return l, fmt.Errorf("%q: quote text with spaces", s)
		}
		return l, nil
	case Flag:
		switch s {
		case "true":
			l.num = 1
		case "false":
		default:
			return l, fmt.Errorf("%q is not true or false", s)
		}
		return l, nil
	}
	m := quantityRE().FindStringSubmatch(s)
	if m == nil {
		return l, fmt.Errorf("%q is not %s", s, u.example())
	}
	num, err := strconv.ParseFloat(m[1], 64)
	if err != nil || math.IsInf(num, 0) {
		return l, fmt.Errorf("%q is not %s", s, u.example())
	}
	unit := m[2]
	switch u {
	case Seconds:
		if unit == "" && num != 0 {
			return l, fmt.Errorf("%q needs a unit: the value is a time (e.g. 60ms, 2s, 300us)", s)
		}
		if unit == "" {
			return l, nil
		}
		d, err := lang.ParseDuration(strings.TrimLeft(s, "+-"))
		if err != nil {
			return l, errors.New(strings.Replace(err.Error(), "is not a duration", "is not a time", 1))
		}
		l.num = d.Seconds()
		if strings.HasPrefix(s, "-") {
			l.num = -l.num
		}
		l.show = strings.NewReplacer("µs", "us", "μs", "us").Replace(unit)
		for _, tu := range timeUnits {
			if tu.name == l.show {
				l.per = tu.per
			}
		}
	case Bytes:
		if unit == "" && num != 0 {
			return l, fmt.Errorf("%q needs a unit: the value is a size (e.g. 1500B, 30kB, 64KiB)", s)
		}
		if unit == "" {
			return l, nil
		}
		b, err := lang.ParseSize(strings.TrimLeft(s, "+-"))
		if err != nil {
			return l, err
		}
		l.num, l.show, l.per = float64(b), unit, sizeUnits[unit]
		if strings.HasPrefix(s, "-") {
			l.num = -l.num
		}
	case Ratio:
		switch unit {
		case "%":
			l.num, l.show, l.per = num/100, "%", 0.01
		case "":
			l.num = num
		default:
			return l, fmt.Errorf("%q is not a ratio (want e.g. 1%% or 0.01)", s)
		}
	default:
		if unit != "" {
			return l, fmt.Errorf("%q: the value is a plain number, without a unit", s)
		}
		l.num = num
	}
	return l, nil
}

func (u Unit) example() string {
	switch u {
	case Seconds:
		return "a time (e.g. 60ms, 2s, 300us)"
	case Bytes:
		return "a size (e.g. 1500B, 30kB, 64KiB)"
	case Ratio:
		return "a ratio (e.g. 1% or 0.01)"
	}
	return "a number"
}

// format writes a measured value of unit u in the limit's unit, or in one
// chosen for it when the limit was written without one.
func (l limit) format(v value, u Unit) string {
	switch {
	case u == Text:
		// As the limit is written: a bare word, or quoted.
		if strings.HasPrefix(l.text, `"`) || !bareWord(v.text) {
			return strconv.Quote(v.text)
		}
		return v.text
	case u == Flag:
		return strconv.FormatBool(v.num != 0)
	case l.show != "" && (u == Ratio || v.num == 0 || math.Abs(v.num/l.per) >= 1e-3):
		return formatIn(v.num, l.show, l.per)
	case l.show != "":
		return Format(v.num, u) // too small for the limit's unit: 73ns, not 7.3e-05ms
	case u == Ratio:
		return formatIn(v.num, "", 1)
	}
	return Format(v.num, u)
}

// bareWord reports whether text may be written in an expectation
// without quotes.
func bareWord(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t") && strconv.Quote(s) == `"`+s+`"`
}

// outOfRange says why the limit is one the value could never be compared
// with meaningfully: outside the quantity's domain, or a word it never
// takes; "" when it is not.
func (x *Expectation) outOfRange(names *Names) string {
	l, d := x.limit, x.domain
	switch x.Unit {
	case Flag:
		return ""
	case Text:
		return x.checkWord(names)
	}
	switch {
	case d.fraction && (l.num < 0 || l.num > 1):
		if l.show == "%" {
			return fmt.Sprintf("%q is out of range: %s is a fraction, from 0%% to 100%%", l.text, x.Path)
		}
		hint := ""
		if l.num > 1 && l.num <= 100 {
			hint = fmt.Sprintf("; did you mean %s%%?", l.text)
		}
		return fmt.Sprintf("%q is out of range: %s is a fraction, from 0 to 1 (or 0%% to 100%%)%s", l.text, x.Path, hint)
	case d.nonNegative && l.num < 0:
		return fmt.Sprintf("%q is out of range: %s is never negative", l.text, x.Path)
	case d.whole && l.num != math.Trunc(l.num) && (x.Op == Equal || x.Op == NotEqual):
		verdict := "never holds"
		if x.Op == NotEqual {
			verdict = "always holds"
		}
		return fmt.Sprintf("%q: %s is a whole number, so %s %s", l.text, x.Path, x.Op, verdict)
	}
	return ""
}

// textValues are the words a text of the summary may be, where they are
// known: the path, what it is, its words and the prefixes of its others.
var textValues = map[string]struct {
	what     string
	words    []string
	prefixes []string
	others   string
}{
	"clock":   {"a clock", []string{"virtual", "real"}, nil, ""},
	"stopped": {"how a run stops", []string{"duration", "interrupted", "did not start"}, []string{"failed"}, `"failed: WHY"`},
}

// checkWord checks a text limit against the words its value may be, and a
// clock against the run's.
func (x *Expectation) checkWord(names *Names) string {
	tv, ok := textValues[x.Path]
	if !ok {
		return ""
	}
	w := x.limit.word
	known := slices.Contains(tv.words, w)
	for _, p := range tv.prefixes {
		known = known || strings.HasPrefix(w, p)
	}
	if !known {
		var list []string
		for _, v := range tv.words {
			if !bareWord(v) {
				v = strconv.Quote(v)
			}
			list = append(list, v)
		}
		if tv.others != "" {
			list = append(list, tv.others)
		}
		return fmt.Sprintf("%q is not %s (want %s)%s", w, tv.what, strings.Join(list, ", "), suggest.DidYouMean(w, tv.words))
	}
	if x.Path == "clock" && names != nil && names.Clock != "" && (w == names.Clock) != (x.Op == Equal) {
		return fmt.Sprintf("the run is in %s time: %s never holds", names.Clock, x.Canonical())
	}
	return ""
}

func formatIn(v float64, unit string, per float64) string {
	return formatDigits(v, unit, per, 6)
}

// formatDigits writes v in unit, of which one is per, to digits
// significant digits, but a number of more digits than that whole
// (3600s, not 3.6e+03s).
func formatDigits(v float64, unit string, per float64, digits int) string {
	x := v / per
	s := strconv.FormatFloat(x, 'g', digits, 64)
	if strings.Contains(s, "e+") && math.Abs(x) < 1e15 {
		s = strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	}
	return s + unit
}

// Format writes a measured value of unit u with a unit of its own: 72.4ms,
// 30kB, 1.2%.
func Format(v float64, u Unit) string { return format(v, u, 6) }

// Rounded is Format to three significant digits, for a person reading
// a figure (65.8ms, 4.02ms, 30kB) rather than comparing it with a limit.
func Rounded(v float64, u Unit) string { return format(v, u, 3) }

func format(v float64, u Unit, digits int) string {
	switch u {
	case Seconds:
		if v == 0 {
			return "0s"
		}
		name, per := "ns", 1e-9
		for _, tu := range timeUnits[:4] {
			if math.Abs(v) >= tu.per {
				name, per = tu.name, tu.per
			}
		}
		return formatDigits(v, name, per, digits)
	case Bytes:
		name, per := "B", 1.0
		for _, su := range []string{"kB", "MB", "GB"} {
			if math.Abs(v) >= sizeUnits[su] {
				name, per = su, sizeUnits[su]
			}
		}
		return formatDigits(v, name, per, digits)
	case Ratio:
		return formatDigits(v, "%", 0.01, digits)
	}
	return formatDigits(v, "", 1, digits)
}
