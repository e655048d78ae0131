// Package suite runs hilrig's regression suites: a suite file (the
// language is package profiles') names a bench and cases, each a profile
// run in virtual or real time with expectations on what it measures
// (package expect) and, optionally, a script that talks to the controller
// under test through the impaired link (Script). A suite is checked whole
// before anything runs, every problem at its line and column; then its
// cases run one after the other, each a session of package rig, and end in
// results that say, for each expectation, what was measured against what
// limit. Results become JUnit XML for CI (WriteJUnit) and an HTML report
// with plots (package report); Shard splits a suite across CI runners.
package suite

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/suitefile"
	"github.com/hilrig/hilrig/rig/expect"
)

// Suite is a suite ready to run: its cases loaded and their expectations
// parsed against their profiles and benches.
type Suite struct {
	*suitefile.LoadedSuite
	Cases []*Case
}

// Case is one run of a suite: a case of the file, or one combination of
// its matrix.
type Case struct {
	suitefile.SuitePoint
	Index  int // in the suite, from 0
	Expect []*expect.Expectation
}

// Load reads a suite file and checks it whole: every problem found, in the
// suite, the profiles and benches it names or its expectations, is
// reported at once (a lang.ErrorList), each at its line and column.
func Load(path string) (*Suite, error) {
	data, err := lang.ReadFile(path, lang.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse is Load on text; source names it in messages and anchors the files
// it names.
func Parse(source string, data []byte) (*Suite, error) {
	ls, err := suitefile.ParseSuite(source, data)
	var errs lang.ErrorList
	if err != nil && (ls == nil || !errors.As(err, &errs)) {
		return nil, err
	}
	// The suite's problems and its expectations' come together: the
	// expectations of what loaded are checked whatever else is wrong.
	s := &Suite{LoadedSuite: ls}
	// A problem may be in every point an expectation applies to, or only
	// in those whose profile lacks a name: the message says which, then.
	type problem struct {
		err    *lang.Error
		at     lang.Pos
		points []string
	}
	var problems []*problem
	found := map[string]*problem{}
	applies := map[lang.Pos]int{} // an expectation: how many points it applies to
	check := func(e suitefile.Expectation, names *expect.Names, point string) *expect.Expectation {
		x, err := expect.Parse(e.Text, names)
		if err == nil {
			return x
		}
		var bad *expect.Error
		if !errors.As(err, &bad) {
			bad = &expect.Error{Text: e.Text, Col: 1, Msg: err.Error()}
		}
		pe := &lang.Error{Pos: e.At(bad.Col), Path: e.Path, Msg: bad.Msg}
		key := pe.Error()
		if found[key] == nil {
			found[key] = &problem{err: pe, at: e.Pos}
			problems = append(problems, found[key])
		}
		if point != "" {
			found[key].points = append(found[key].points, point)
		}
		return nil
	}
	for i, pt := range ls.Points {
		names := NamesOf(pt)
		c := &Case{SuitePoint: pt, Index: i}
		for _, e := range pt.Expect {
			applies[e.Pos]++
			if x := check(e, names, pt.ID); x != nil {
				c.Expect = append(c.Expect, x)
			}
		}
		s.Cases = append(s.Cases, c)
	}
	// The expectations of a case that did not load are checked without
	// its names: their syntax, their units, their clock.
	clockOf := func(c *suitefile.SuiteCase) string {
		switch {
		case c != nil && c.Clock != nil:
			return string(*c.Clock)
		case ls.Clock != nil:
			return string(*ls.Clock)
		}
		return expect.Virtual
	}
	for _, e := range ls.Expect {
		if applies[e.Pos] == 0 {
			check(e, &expect.Names{}, "")
		}
	}
	for i := range ls.Cases.Names {
		c := ls.Cases.Values[i]
		for _, e := range c.Expect {
			if applies[e.Pos] == 0 {
				check(e, &expect.Names{Clock: clockOf(c)}, "")
			}
		}
	}
	if len(problems) == 0 && errs == nil {
		return s, nil
	}
	for _, p := range problems {
		if len(p.points) > 0 && len(p.points) < applies[p.at] {
			p.err.Msg += " (in " + strings.Join(p.points, ", ") + ")"
		}
		errs = append(errs, p.err)
	}
	// The suite's own problems first, in its order, then those in the
	// files it names.
	slices.SortStableFunc(errs, func(a, b *lang.Error) int {
		return cmp.Or(cmp.Compare(btoi(a.Pos.File != source), btoi(b.Pos.File != source)), cmp.Compare(a.Pos.File, b.Pos.File),
			cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
	return nil, errs
}

// NamesOf are what a run of pt will report, for its expectations: the
// names its profile and bench define, its clock, and the endpoints its
// script plays, which have no device (and so no device's account).
func NamesOf(pt suitefile.SuitePoint) *expect.Names {
	names := expect.NamesOf(pt.Profile, pt.Bench)
	names.Clock = expect.Virtual
	if pt.Real {
		names.Clock = expect.Real
	}
	for _, st := range pt.Script {
		var endpoint string
		switch {
		case st.Send != nil:
			endpoint = string(st.Send.Endpoint)
		case st.Expect != nil:
			endpoint = string(st.Expect.Endpoint)
		}
		if endpoint != "" && !slices.Contains(names.Played, endpoint) {
			names.Played = append(names.Played, endpoint)
		}
	}
	return names
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Files are the files on disk the suite was made from: its own file, and
// those of the profiles and benches its cases run (what they extend, the
// files they name), each once, sorted.
func (s *Suite) Files() []string {
	files := []string{s.Source}
	for _, c := range s.Cases {
		files = append(files, c.Profile.Files()...)
		if c.Bench != nil {
			files = append(files, c.Bench.Files()...)
		}
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// Dir is the case's directory in a report: its number in the suite and
// its name, made safe for a file name.
func (c *Case) Dir() string {
	return fmt.Sprintf("%03d-%s", c.Index+1, strings.Trim(unsafeChars().ReplaceAllString(c.ID, "_"), "_"))
}

// unsafeChars is compiled when a case is first named, not at the start of
// every command.
var unsafeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._=,-]+`) })
