package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/spf13/pflag"
)

// durationFlag is a flag value for durations written as in profiles
// (1.5ms, 250us, 2min). Zero is "not given": its flag's usage says what
// stands in for it, and help prints no default. A positive flag (a run's
// length) refuses zero, which would otherwise read as not given.
type durationFlag struct {
	d        *time.Duration
	positive bool
}

var _ pflag.Value = durationFlag{}

func (f durationFlag) String() string {
	if f.d == nil || *f.d == 0 {
		return ""
	}
	return lang.Duration(*f.d).String()
}

func (f durationFlag) Set(s string) error {
	d, err := lang.ParseDuration(s)
	if err == nil && f.positive && d == 0 {
		return fmt.Errorf("%q: give a duration longer than 0s", s)
	}
	*f.d = d
	return err
}

func (durationFlag) Type() string { return "duration" }

// priorityFlag is the executor's SCHED_FIFO priority: 1 to 99, or 0 to
// leave the scheduling alone. Out of range is a usage error before
// anything runs, not a warning once the run has started.
type priorityFlag struct{ n *int }

var _ pflag.Value = priorityFlag{}

func (f priorityFlag) String() string { return strconv.Itoa(*f.n) }

func (f priorityFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 99 {
		return fmt.Errorf("%q: give a SCHED_FIFO priority from 1 to 99, or 0 to leave the scheduling alone", s)
	}
	*f.n = n
	return nil
}

func (priorityFlag) Type() string { return "int" }

// paramFlags collects repeated --param name=value.
type paramFlags map[string]float64

var _ pflag.SliceValue = paramFlags{}

func (p paramFlags) String() string { return strings.Join(p.GetSlice(), " ") }

func (p paramFlags) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want name=value, got %q", v)
	}
	f, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("%s: %q is not a number", name, value)
	}
	p[name] = f
	return nil
}

func (paramFlags) Type() string { return "params" }

func (p paramFlags) Append(v string) error { return p.Set(v) }

func (p paramFlags) Replace(vs []string) error {
	clear(p)
	for _, v := range vs {
		if err := p.Set(v); err != nil {
			return err
		}
	}
	return nil
}

func (p paramFlags) GetSlice() []string {
	var s []string
	for name, v := range p {
		s = append(s, name+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	slices.Sort(s)
	return s
}

// setFlag defines --set on fs: repeated path=value overrides of a profile,
// applied in order.
func setFlag(fs *pflag.FlagSet) *[]string {
	return fs.StringArray("set", nil, "override a profile value: `path=value`, e.g. hops.core-up.rate=2Mbit (repeatable)")
}
