package suitefile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/profiles/lang"
	"go.yaml.in/yaml/v4"
)

// A suite file is a regression suite for CI: a bench, and cases that each
// run a profile on it (with overrides, a duration, a seed, or a matrix of
// profiles × seeds × overrides), in virtual or real time, with
// expectations on what the run measures and, optionally, a script that
// talks to the controller under test through the impaired link (send a
// frame from an endpoint the suite plays, expect one at an endpoint within
// a timeout: pytest-embedded's dut.expect, in YAML). The expectations are
// kept here as text with their positions: their language belongs to the
// rig (package rig/expect), which checks them against each case's profile
// and bench and reports problems at these positions.

// Suite is the schema of a suite file.
type Suite struct {
	Name        string              `yaml:"name" doc:"short name, shown in reports and the JUnit XML" default:"the file name"`
	Description string              `yaml:"description" doc:"what the suite checks"`
	Bench       *string             `yaml:"bench" doc:"the bench file, relative to the suite; a case may name its own" default:"none: the profiles alone, in virtual time"`
	Clock       *ClockName          `yaml:"clock" doc:"virtual (no hardware: as fast as the CPU allows, reproducible) or real (the bench's devices, at the wall clock)" default:"virtual"`
	Duration    *lang.Duration      `yaml:"duration" doc:"how long each case runs, unless it says (shorter than a profile's is fine: what it schedules later does not happen)" default:"the profile's"`
	Expect      []Expectation       `yaml:"expect" doc:"expectations every case must meet, besides its own"`
	Cases       lang.Map[SuiteCase] `yaml:"cases,required" doc:"the cases, by name"`
}

// SuiteCase is one case: a run and what it must show.
type SuiteCase struct {
	Description string         `yaml:"description" doc:"what the case checks"`
	Profile     *string        `yaml:"profile" doc:"a shipped profile's name, or a profile file relative to the suite (give this or matrix.profiles)"`
	Bench       *string        `yaml:"bench" doc:"the bench file, relative to the suite" default:"the suite's"`
	Clock       *ClockName     `yaml:"clock" doc:"virtual or real" default:"the suite's"`
	Duration    *lang.Duration `yaml:"duration" doc:"how long the run lasts" default:"the suite's, else the profile's"`
	Seed        *uint64        `yaml:"seed" doc:"seed of the random streams (give this or matrix.seeds)" default:"the profile's"`
	Set         Overrides      `yaml:"set" doc:"profile values to override, path: value, as hilrig sim --set does, e.g. {hops.core-up.rate: 2Mbit}; not duration or seed: those are the case's keys"`
	Matrix      *CaseMatrix    `yaml:"matrix" doc:"run the case once per combination of its lists: profiles × seeds × sets"`
	Expect      []Expectation  `yaml:"expect" doc:"what the run must show, e.g. \"flows.m2s.delay.p95 < 60ms\" (see Expectations)"`
	Script      []ScriptStep   `yaml:"script" doc:"frames to send from and expect at endpoints the suite plays, in order"`
}

func (SuiteCase) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a case", Example: "{profile: bottleneck, expect: [flows.m2s.lost == 0]}"}
}

// CaseMatrix is the lists a case is run over, every combination once.
type CaseMatrix struct {
	Profiles []string    `yaml:"profiles" doc:"profiles, as the case's profile"`
	Seeds    []uint64    `yaml:"seeds" doc:"seeds"`
	Set      []Overrides `yaml:"set" doc:"sets of overrides, each laid on the case's set (not duration or seed)"`
}

func (CaseMatrix) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a matrix", Example: "{profiles: [lte, wifi-bursty], seeds: [1, 2]}"}
}

// ScriptStep is one step of a case's script. The steps run in order, each
// from the end of the one before (the instant the last frame was sent, or
// the instant the expected frame arrived); a step that fails ends the
// script, and the case fails.
type ScriptStep struct {
	Send   *SendStep   `yaml:"send" doc:"send a frame (or count of them) from an endpoint the suite plays, into the flow it feeds"`
	Expect *ExpectStep `yaml:"expect" doc:"wait for a frame delivered to an endpoint the suite plays"`
}

func (*ScriptStep) OneOf() {}

func (ScriptStep) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a script step", Example: "{send: {endpoint: plant, line: PING}}, {expect: {endpoint: controller, line: PING, within: 100ms}}"}
}

// SendStep sends frames from a played endpoint.
type SendStep struct {
	Endpoint benchfile.EndpointName `yaml:"endpoint,required" doc:"the bench endpoint the suite plays; the frame enters the flow it feeds"`
	Line     *string                `yaml:"line" doc:"the frame's text, without the line's delimiter; {n} is replaced by the frame's number from 0"`
	Bytes    *HexBytes              `yaml:"bytes" doc:"the frame's bytes in hex, e.g. \"01 02 ff\""`
	At       *lang.Duration         `yaml:"at" doc:"when to send the first frame, from the start of the run" default:"at once"`
	After    *lang.Duration         `yaml:"after" doc:"how long after the end of the previous step to send the first frame"`
	Every    *lang.Duration         `yaml:"every" doc:"the interval between the frames of a count (give it with count)"`
	Count    *int                   `yaml:"count" doc:"how many frames to send (more than 1: give every too); {n} counts them" default:"1"`
}

// ExpectStep waits for a frame at a played endpoint.
type ExpectStep struct {
	Endpoint benchfile.EndpointName `yaml:"endpoint,required" doc:"the bench endpoint the suite plays; frames delivered to it are matched"`
	Line     *string                `yaml:"line" doc:"a frame whose text is exactly this"`
	Pattern  *Pattern               `yaml:"pattern" doc:"a frame whose text matches this regular expression (RE2 syntax, unanchored)"`
	Bytes    *HexBytes              `yaml:"bytes" doc:"a frame of exactly these bytes, in hex"`
	Within   lang.Duration          `yaml:"within,required" doc:"how long to wait, from the end of the previous step"`
}

// ClockName is virtual or real.
type ClockName string

func (c *ClockName) ParseScalar(s string) error {
	return lang.ParseEnum(c, s, "a clock", "virtual", "real")
}

func (ClockName) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "virtual or real", Example: ""} }

// HexBytes is bytes written in hex, spaces allowed: "01 02 ff".
type HexBytes []byte

func (h *HexBytes) ParseScalar(s string) error {
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil || len(b) == 0 {
		return errors.New("is not bytes in hex (want e.g. \"01 02 ff\")")
	}
	*h = b
	return nil
}

func (HexBytes) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "bytes in hex", Example: "\"01 02 ff\""}
}

// Pattern is a regular expression.
type Pattern struct{ *regexp.Regexp }

func (p *Pattern) ParseScalar(s string) error {
	re, err := regexp.Compile(s)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return fmt.Errorf("is not a regular expression: %s", se.Code)
		}
		return fmt.Errorf("is not a regular expression: %v", err)
	}
	p.Regexp = re
	return nil
}

func (Pattern) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a regular expression", Example: "'^T=[0-9.]+$'"}
}

// Expectation is an expectation's text and where it was written.
type Expectation struct {
	Text string
	Path string   // where in the suite, e.g. cases.delay.expect[0]
	Pos  lang.Pos // of the text's first character
	// exact: a column of the text is a column of the file (a plain or
	// quoted scalar on one line without escapes).
	exact bool
}

func (e *Expectation) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	if n.Kind != yaml.ScalarNode || lang.IsNull(n) {
		d.Errorf(n, path, "want an expectation (e.g. \"flows.m2s.delay.p95 < 60ms\"), got %s", lang.Describe(n))
		return
	}
	e.Text, e.Path, e.Pos = n.Value, path.String(), d.PosOf(n)
	switch n.Style {
	case 0, yaml.FlowStyle:
		e.exact = !strings.Contains(n.Value, "\n")
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		e.Pos.Col++
		e.exact = !strings.ContainsAny(n.Value, "\n\\'")
	}
}

// ParseScalar is never reached (decodeNode comes first): it makes the
// reference document an expectation as a value.
func (e *Expectation) ParseScalar(s string) error { e.Text = s; return nil }

func (Expectation) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "an expectation", Example: "\"flows.m2s.lost == 0\""}
}

// At is the position of the col-th character (from 1) of the text, or of
// the text when its columns are not the file's.
func (e Expectation) At(col int) lang.Pos {
	p := e.Pos
	if e.exact && col > 0 {
		p.Col += col - 1
	}
	return p
}

// Overrides are profile values to override, in order: path: value.
type Overrides []lang.Override

func (o *Overrides) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	if lang.IsNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want overrides, path: value (e.g. {hops.core-up.rate: 2Mbit}), got %s", lang.Describe(n))
		return
	}
	lang.ForEachPair(d, n, path, func(key string, k, v *yaml.Node) {
		ov := lang.Override{Path: key, Value: lang.Resolve(v), Pos: d.PosOf(k)}
		col := 1
		for _, seg := range strings.Split(key, ".") {
			m := lang.SetSegmentRE().FindStringSubmatch(seg)
			if m == nil {
				at := ov.Pos
				at.Col += col - 1
				d.Fail(path.Key(key).String())
				d.Report(at, path.Key(key).String(), "%q is not a key (want keys and list indices, e.g. schedule[0].at)", seg)
				return
			}
			st := lang.PathStep{Key: m[1], Index: -1, Col: col}
			if m[2] != "" {
				st.Index, _ = strconv.Atoi(m[2])
			}
			ov.Steps = append(ov.Steps, st)
			col += len(seg) + 1
		}
		for _, prev := range *o {
			if prev.Path == key {
				d.Errorf(k, path.Key(key), "given twice")
				return
			}
		}
		if msg := runKey(key, v, strings.Contains(path.String(), ".matrix.")); msg != "" {
			d.Errorf(k, path.Key(key), "%s", msg)
			return
		}
		*o = append(*o, ov)
	})
}

// runKey says why an override of key may not be in a case's set: the
// run's duration and seed are the case's keys, which a set's would
// contradict (the case's or the suite's duration: would silently win).
// One rule, then: a set changes the profile, the case's keys the run.
func runKey(key string, v *yaml.Node, inMatrix bool) string {
	value := "X"
	if v = lang.Resolve(v); v.Kind == yaml.ScalarNode && !lang.IsNull(v) {
		value = v.Value
	}
	switch {
	case key == "duration" && inMatrix:
		return fmt.Sprintf("a set may not change how long the run lasts, and a matrix does not vary it: give each duration a case of its own, with duration: %s (a case runs for its duration:, else the suite's, else its profile's)", value)
	case key == "duration":
		return fmt.Sprintf("a set may not change how long the run lasts: give the case duration: %s (a case runs for its duration:, else the suite's, else its profile's)", value)
	case key == "seed" && inMatrix:
		return fmt.Sprintf("a set may not change the seed: give matrix.seeds: [%s]", value)
	case key == "seed":
		return fmt.Sprintf("a set may not change the seed: give the case seed: %s (or matrix.seeds)", value)
	}
	return ""
}

// ParseScalar is never reached (decodeNode comes first): it makes the
// reference document overrides as a value.
func (o *Overrides) ParseScalar(string) error { return nil }

func (Overrides) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "an override set", Example: "{hops.core-up.rate: 2Mbit, hops.core-up.queue: 60000B}"}
}

// String writes the overrides as a matrix point's name shows them.
func (o Overrides) String() string {
	var parts []string
	for _, ov := range o {
		v := ov.Value.Value
		if ov.Value.Kind != yaml.ScalarNode {
			out, _ := yaml.Marshal(ov.Value)
			v = strings.TrimSpace(string(out))
		}
		parts = append(parts, ov.Path+"="+v)
	}
	return strings.Join(parts, ",")
}

// LoadedSuite is a suite that parsed and whose cases' profiles and benches
// loaded: its points, every case × matrix combination, in order.
type LoadedSuite struct {
	*Suite
	Source string
	Points []SuitePoint
}

// SuitePoint is one run of a suite: a case, or one combination of its
// matrix.
type SuitePoint struct {
	// ID names the point: the case's name, with the matrix combination in
	// brackets: delay[lte,seed=2,hops.core-up.rate=2Mbit].
	ID          string
	Case        string
	Description string
	Profile     *profiles.Loaded
	Bench       *benchfile.LoadedBench // nil: none
	Real        bool                   // the clock
	Duration    time.Duration
	Seed        *uint64
	Expect      []Expectation // the suite's, then the case's
	Script      []ScriptStep
	// Played are the endpoints the script plays, in bench order.
	Played []string
}

// LoadSuite reads a suite file and loads every case's profiles and
// benches. Every problem is reported at once, each at its line and
// column: in the suite, or in the profile or bench it names.
//
// When the suite is wrong the error is an ErrorList and, unless the file
// is not YAML at all, the suite is returned too, with the points that
// loaded, so that a caller checking more of it (the expectations, which
// are the rig's) reports its problems with these, at once.
func LoadSuite(path string) (*LoadedSuite, error) {
	data, err := lang.ReadFile(path, lang.MaxFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseSuite(path, data)
}

// ParseSuite is LoadSuite on text; source names it in messages and anchors
// the files it names.
func ParseSuite(source string, data []byte) (*LoadedSuite, error) {
	s := &Suite{}
	d, err := lang.DecodeFile(source, data, s)
	if err != nil {
		var list lang.ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				e.Msg = strings.NewReplacer("empty profile", "empty suite", "a profile is", "a suite is").Replace(e.Msg)
			}
		}
		return nil, err
	}
	if s.Name == "" {
		s.Name = lang.NameOf(source)
	}
	ls := &LoadedSuite{Suite: s, Source: source}
	// What decoded is checked too: a mistake in one key leaves the others
	// to their own checks.
	ls.Points = s.points(d, source)
	// A problem of a case's own set is met at each of its points.
	seen := map[string]bool{}
	d.Errs = slices.DeleteFunc(d.Errs, func(e *lang.Error) bool {
		dup := seen[e.Error()]
		seen[e.Error()] = true
		return dup
	})
	if err := d.Err(); err != nil {
		return ls, err
	}
	return ls, nil
}

// points expands the cases into their runs, loading each profile and
// bench once.
func (s *Suite) points(d *lang.Decoder, source string) []SuitePoint {
	if len(s.Cases.Names) == 0 {
		d.ErrorAt("cases", "a suite needs at least one case")
		return nil
	}
	if s.Duration != nil && *s.Duration == 0 {
		d.ErrorAt("duration", "must be positive")
	}
	l := &suiteLoader{d: d, source: source, profiles: map[string]*profiles.Loaded{}, benches: map[string]*benchfile.LoadedBench{}, failed: map[string]bool{}}
	var out []SuitePoint
	for ci, name := range s.Cases.Names {
		out = append(out, s.casePoints(l, name, s.Cases.Values[ci])...)
	}
	return out
}

// suiteLoader loads each profile and bench a suite names once.
type suiteLoader struct {
	d        *lang.Decoder
	source   string
	profiles map[string]*profiles.Loaded // by ref, case and set
	benches  map[string]*benchfile.LoadedBench
	failed   map[string]bool
}

// problemAt reports a problem of a case's keys taken together, at path:
// unlike errorAt, it leaves the values under path to their own checks,
// so that every problem of a case is reported at once. It says nothing
// when path or what holds it failed to decode (that error says it); the
// caller leaves out a check whose inputs failed.
func problemAt(d *lang.Decoder, path, format string, args ...any) {
	for q := path; ; q = lang.ParentPath(q) {
		if d.Failed[q] {
			return
		}
		if q == "" {
			break
		}
	}
	d.Report(d.PosAt(path), path, format, args...)
}

// casePoints checks a case and expands it into its points. After a
// problem it goes on with what it can still check: the case's profiles,
// sets, bench and script are checked whatever else is wrong with it.
func (s *Suite) casePoints(l *suiteLoader, name string, c *SuiteCase) []SuitePoint {
	d := l.d
	path := "cases." + name
	m := c.Matrix
	if m == nil {
		m = &CaseMatrix{}
	}
	checkCaseKeys(d, path, c, m)
	refs := m.Profiles
	if len(refs) == 0 {
		if c.Profile == nil {
			if m.Profiles == nil && !d.Failed[path+".profile"] && !d.Failed[path+".matrix"] && !d.Failed[path+".matrix.profiles"] {
				problemAt(d, path, "missing profile: want a shipped profile's name or a profile file (or matrix.profiles)")
			}
			return nil
		}
		refs = []string{*c.Profile}
	}
	run := s.caseRun(d, path, c)
	cp := &casePoint{suite: s, loader: l, name: name, path: path, c: c, m: m, run: run, bySetProblem: map[string]*setProblem{}}
	var out []SuitePoint
	for ri, ref := range refs {
		refPath := path + ".profile"
		if m.Profiles != nil {
			refPath = fmt.Sprintf("%s.matrix.profiles[%d]", path, ri)
		}
		for _, si := range m.setIndices() {
			out = append(out, cp.points(ref, refPath, si)...)
		}
	}
	cp.nameSetProblems()
	return out
}

// checkCaseKeys checks a case's keys against each other and its matrix's
// lists for emptiness and repeats.
func checkCaseKeys(d *lang.Decoder, path string, c *SuiteCase, m *CaseMatrix) {
	if c.Profile != nil && m.Profiles != nil {
		d.ErrorAt(path+".profile", "give profile or matrix.profiles, not both")
	}
	if c.Seed != nil && m.Seeds != nil {
		d.ErrorAt(path+".seed", "give seed or matrix.seeds, not both")
	}
	for _, list := range []struct {
		key   string
		given bool
		n     int
	}{{"profiles", m.Profiles != nil, len(m.Profiles)}, {"seeds", m.Seeds != nil, len(m.Seeds)}, {"set", m.Set != nil, len(m.Set)}} {
		if list.given && list.n == 0 {
			d.ErrorAt(path+".matrix."+list.key, "is empty: leave it out, or give at least one")
		}
	}
	if c.Matrix != nil && m.Profiles == nil && m.Seeds == nil && m.Set == nil {
		d.ErrorAt(path+".matrix", "is empty: give profiles, seeds or set")
	}
	for i, seed := range m.Seeds {
		if slices.Index(m.Seeds, seed) < i {
			d.ErrorAt(fmt.Sprintf("%s.matrix.seeds[%d]", path, i), "seed %d is given twice", seed)
		}
	}
	for i, ref := range m.Profiles {
		if slices.Index(m.Profiles, ref) < i {
			d.ErrorAt(fmt.Sprintf("%s.matrix.profiles[%d]", path, i), "profile %s is given twice", ref)
		}
	}
	for i, set := range m.Set {
		for j := range i {
			if m.Set[j].String() == set.String() {
				d.ErrorAt(fmt.Sprintf("%s.matrix.set[%d]", path, i), "the same set as matrix.set[%d]", j)
				break
			}
		}
	}
	if c.Duration != nil && *c.Duration == 0 {
		d.ErrorAt(path+".duration", "must be positive")
	}
}

// seedList is the seeds a case runs with: its matrix's, else its own
// (nil: the profile's).
func (m *CaseMatrix) seedList(own *uint64) []*uint64 {
	if len(m.Seeds) == 0 {
		return []*uint64{own}
	}
	var seeds []*uint64
	for i := range m.Seeds {
		seeds = append(seeds, &m.Seeds[i])
	}
	return seeds
}

// setIndices is the indices of the matrix's sets a case runs with; -1 is
// the case's own set alone.
func (m *CaseMatrix) setIndices() []int {
	if len(m.Set) == 0 {
		return []int{-1}
	}
	var indices []int
	for i := range m.Set {
		indices = append(indices, i)
	}
	return indices
}

// caseRun is what every point of a case runs with: its bench, clock and
// duration, each the case's own else the suite's. A key that failed to
// decode leaves what depends on it unchecked (the ...Unknown fields).
type caseRun struct {
	benchRef      *string
	benchPath     string
	benchUnknown  bool
	clock         string
	clockUnknown  bool
	duration      time.Duration
	durationKnown bool
}

func (s *Suite) caseRun(d *lang.Decoder, path string, c *SuiteCase) caseRun {
	r := caseRun{benchRef: s.Bench, benchPath: "bench", clock: "virtual"}
	if c.Bench != nil {
		r.benchRef, r.benchPath = c.Bench, path+".bench"
	}
	r.benchUnknown = d.Failed[path+".bench"] || c.Bench == nil && d.Failed["bench"]
	if s.Clock != nil {
		r.clock = string(*s.Clock)
	}
	if c.Clock != nil {
		r.clock = string(*c.Clock)
	}
	r.clockUnknown = d.Failed[path+".clock"] || c.Clock == nil && d.Failed["clock"]
	if r.clock == "real" && r.benchRef == nil && !r.benchUnknown && !r.clockUnknown {
		problemAt(d, path, "a real-time case needs a bench: give bench here or in the suite")
	}
	if len(c.Script) > 0 && r.benchRef == nil && !r.benchUnknown {
		problemAt(d, path+".script", "a script plays a bench's endpoints: give bench here or in the suite")
	}
	if s.Duration != nil {
		r.duration = time.Duration(*s.Duration)
	}
	if c.Duration != nil && *c.Duration > 0 {
		r.duration = time.Duration(*c.Duration)
	}
	r.durationKnown = !d.Failed[path+".duration"] && (c.Duration != nil || !d.Failed["duration"])
	return r
}

// setProblem is a problem of a set laid on profiles of a matrix, and
// which: it is reported once, saying which.
type setProblem struct {
	err  *lang.Error
	refs []string
}

// casePoint expands one case into its points, a profile and matrix set at
// a time.
type casePoint struct {
	suite        *Suite
	loader       *suiteLoader
	name, path   string
	c            *SuiteCase
	m            *CaseMatrix
	run          caseRun
	setProblems  []*setProblem
	bySetProblem map[string]*setProblem
}

// points are the points of profile ref with the matrix's si-th set (-1:
// the case's own alone), one per seed; none when the profile, its bench or
// the script has a problem.
func (cp *casePoint) points(ref, refPath string, si int) []SuitePoint {
	l, d, path := cp.loader, cp.loader.d, cp.path
	key := fmt.Sprintf("%s\x00%s\x00%d", ref, cp.name, si)
	p := cp.profile(key, ref, refPath, si)
	if l.failed[key] {
		return nil
	}
	b, ok := cp.bench(key, p)
	if !ok {
		return nil
	}
	end := cp.run.duration
	if end <= 0 {
		end = p.RunDuration()
	}
	if !cp.run.durationKnown {
		end = 0
	}
	played, scriptOK := checkScript(d, path+".script", cp.c.Script, b, end)
	if !scriptOK {
		return nil
	}
	if cp.run.clock == "virtual" && !cp.run.clockUnknown && b != nil && len(b.Models) == 0 && len(played) == 0 {
		if cp.c.Bench != nil {
			problemAt(d, path+".bench", "in virtual time a bench matters only for its models and the endpoints a script plays: bench %s has no model, and the case no script", b.Name)
			return nil
		}
		// The suite's bench, for its other cases: this one runs
		// without it.
		b = nil
	}
	var out []SuitePoint
	for _, seed := range cp.m.seedList(cp.c.Seed) {
		out = append(out, SuitePoint{
			ID: cp.pointID(ref, seed, si), Case: cp.name, Description: cp.c.Description, Profile: p, Bench: b, Real: cp.run.clock == "real",
			Duration: cp.run.duration, Seed: seed, Expect: slices.Concat(cp.suite.Expect, cp.c.Expect), Script: cp.c.Script, Played: played,
		})
	}
	return out
}

// pointID names a point: the case, with what its matrix varies in
// brackets.
func (cp *casePoint) pointID(ref string, seed *uint64, si int) string {
	var parts []string
	if cp.m.Profiles != nil {
		parts = append(parts, ref)
	}
	if len(cp.m.Seeds) > 0 {
		parts = append(parts, fmt.Sprintf("seed=%d", *seed))
	}
	if si >= 0 && len(cp.m.Set[si]) > 0 {
		parts = append(parts, cp.m.Set[si].String())
	}
	if parts == nil {
		return cp.name
	}
	return cp.name + "[" + strings.Join(parts, ",") + "]"
}

// profile loads profile ref with the case's set and the matrix's si-th
// once per key, marking the key failed when it does not load.
func (cp *casePoint) profile(key, ref, refPath string, si int) *profiles.Loaded {
	l, d, path := cp.loader, cp.loader.d, cp.path
	if p, seen := l.profiles[key]; seen {
		return p
	}
	sets := slices.Clone(cp.c.Set)
	setPath := path + ".set"
	if si >= 0 {
		sets = append(sets, cp.m.Set[si]...)
		setPath = fmt.Sprintf("%s.matrix.set[%d]", path, si)
	}
	p, err := profiles.LoadOverridden(d, ref, l.source, refPath, setPath, sets)
	if err != nil {
		for _, e := range asErrorList(err, d.Positions[refPath], refPath, "for "+refPath) {
			if cp.m.Profiles == nil || e.Pos.File != l.source || e.Path == refPath {
				d.Add(e)
				continue
			}
			cp.addSetProblem(e, ref)
		}
		l.failed[key] = true
	}
	l.profiles[key] = p
	return p
}

// addSetProblem reports a problem of a set laid on a profile of the
// matrix once, noting the profile.
func (cp *casePoint) addSetProblem(e *lang.Error, ref string) {
	sp := cp.bySetProblem[e.Error()]
	if sp == nil {
		sp = &setProblem{err: e}
		cp.bySetProblem[e.Error()] = sp
		cp.setProblems = append(cp.setProblems, sp)
		cp.loader.d.Add(e)
	}
	if !slices.Contains(sp.refs, ref) {
		sp.refs = append(sp.refs, ref)
	}
}

// nameSetProblems says in each set problem which profiles it was met
// with.
func (cp *casePoint) nameSetProblems() {
	for _, sp := range cp.setProblems {
		if len(sp.refs) == 1 {
			sp.err.Msg += " (with profile " + sp.refs[0] + ")"
		} else {
			sp.err.Msg += " (with profiles " + strings.Join(sp.refs, ", ") + ")"
		}
	}
}

// bench loads the case's bench (nil: none) for profile p, loaded under
// key, once; false when it does not load.
func (cp *casePoint) bench(key string, p *profiles.Loaded) (*benchfile.LoadedBench, bool) {
	l, d := cp.loader, cp.loader.d
	benchRef := cp.run.benchRef
	if benchRef == nil {
		return nil, true
	}
	bkey := *benchRef + "\x00" + key
	b, seen := l.benches[bkey]
	if !seen {
		file := *benchRef
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(l.source), file)
		}
		var err error
		if b, err = benchfile.LoadBench(file, p); err != nil {
			d.Add(asErrorList(err, d.Positions[cp.run.benchPath], cp.run.benchPath, fmt.Sprintf("the bench of %s, with profile %s", cp.path, p.Name))...)
			l.failed[bkey] = true
		}
		l.benches[bkey] = b
	}
	return b, !l.failed[bkey]
}

// asErrorList turns the error of loading a profile or bench into
// positioned errors: its own when it has them (those in another file than
// the suite say which of the suite's keys led there), else one at the
// suite's key that named the file.
func asErrorList(err error, at lang.Pos, path, context string) lang.ErrorList {
	var list lang.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			if e.Pos.File != at.File {
				e.Msg += " (" + context + ")"
			}
		}
		return list
	}
	return lang.ErrorList{{Pos: at, Path: path, Msg: err.Error()}}
}

// checkScript checks a case's script against its bench and the run's end
// (0: unknown), and returns the endpoints it plays, in bench order.
func checkScript(d *lang.Decoder, path string, script []ScriptStep, b *benchfile.LoadedBench, end time.Duration) ([]string, bool) {
	if len(script) == 0 || b == nil {
		return nil, true
	}
	before := d.Problems()
	sc := scriptChecker{d: d, b: b, end: end, feeds: map[string]string{}, fedBy: map[string]string{}, played: map[string]bool{}}
	for _, bf := range b.Bound {
		sc.feeds[bf.From] = bf.Flow
		sc.fedBy[bf.To] = bf.Flow
	}
	for i, st := range script {
		at := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case st.Send != nil:
			sc.send(at+".send", st.Send)
		case st.Expect != nil:
			sc.expect(at+".expect", st.Expect)
		}
	}
	var out []string
	for _, name := range b.Endpoints.Names {
		if sc.played[name] {
			out = append(out, name)
		}
	}
	return out, d.Problems() == before
}

// scriptChecker checks a script's steps against a bench, noting the
// endpoints they play.
type scriptChecker struct {
	d            *lang.Decoder
	b            *benchfile.LoadedBench
	end          time.Duration     // of the run; 0: unknown
	feeds, fedBy map[string]string // endpoint → flow
	played       map[string]bool
}

// playable reports whether the bench has an endpoint name that a script
// can play (not a model).
func (sc *scriptChecker) playable(at, name string) bool {
	i := sc.b.Endpoints.Index(name)
	switch {
	case i < 0:
		sc.d.ErrorAt(at, "bench %s has no endpoint %q%s", sc.b.Name, name, lang.DidYouMean(name, sc.b.Endpoints.Names))
		return false
	case sc.b.Endpoints.Values[i].IsModel():
		sc.d.ErrorAt(at, "%s is a model the rig simulates; a script plays the bench's other endpoints", name)
		return false
	}
	return true
}

func (sc *scriptChecker) send(at string, s *SendStep) {
	d := sc.d
	// The checks of a key come before those of the step, which
	// leave the step's keys unchecked.
	if s.At != nil && s.After != nil {
		d.ErrorAt(at+".after", "give at or after, not both")
	}
	count := 1
	if s.Count != nil {
		count = *s.Count
		if count < 1 {
			d.ErrorAt(at+".count", "%d frames: nothing would be sent; give at least 1 (the default), or leave the step out", count)
		}
	}
	if s.Every != nil && *s.Every <= 0 {
		d.ErrorAt(at+".every", "must be positive")
	}
	if s.Every != nil && s.Count == nil {
		d.ErrorAt(at+".every", "every is the interval between the frames of a count: give count too, how many frames to send")
	}
	if s.Every == nil && count > 1 {
		d.ErrorAt(at+".count", "%d frames need every, the interval between them", count)
	}
	if s.At != nil && sc.end > 0 {
		sc.sendsBeforeEnd(at, s, count)
	}
	if sc.playable(at+".endpoint", string(s.Endpoint)) {
		if sc.feeds[string(s.Endpoint)] == "" {
			d.ErrorAt(at+".endpoint", "%s feeds no flow of bench %s: nothing it sent would go anywhere", s.Endpoint, sc.b.Name)
		} else {
			sc.played[string(s.Endpoint)] = true
		}
	}
	switch {
	case s.Line != nil && s.Bytes != nil:
		d.ErrorAt(at, "give line or bytes, not both")
	case s.Line == nil && s.Bytes == nil:
		d.ErrorAt(at, "give line or bytes")
	}
}

// sendsBeforeEnd checks that the count frames of a send at a time are
// all sent before the end of the run.
func (sc *scriptChecker) sendsBeforeEnd(at string, s *SendStep, count int) {
	last := time.Duration(*s.At)
	if s.Every != nil && count > 1 {
		last += time.Duration(count-1) * time.Duration(*s.Every)
	}
	switch {
	case time.Duration(*s.At) >= sc.end:
		sc.d.ErrorAt(at+".at", "%s is at or past the end of the run, at %s: nothing would be sent", s.At, lang.Duration(sc.end))
	case last >= sc.end:
		sc.d.ErrorAt(at+".count", "the last of %d frames, one every %s from %s, would be sent at %s, at or past the end of the run, at %s", count, s.Every, s.At, lang.Duration(last), lang.Duration(sc.end))
	}
}

func (sc *scriptChecker) expect(at string, e *ExpectStep) {
	d := sc.d
	if e.Within <= 0 {
		d.ErrorAt(at+".within", "must be positive")
	}
	given := 0
	for _, g := range []bool{e.Line != nil, e.Pattern != nil, e.Bytes != nil} {
		if g {
			given++
		}
	}
	if sc.playable(at+".endpoint", string(e.Endpoint)) {
		if sc.fedBy[string(e.Endpoint)] == "" {
			d.ErrorAt(at+".endpoint", "no flow of bench %s goes to %s: nothing would arrive", sc.b.Name, e.Endpoint)
		} else {
			sc.played[string(e.Endpoint)] = true
		}
	}
	switch {
	case given == 0:
		d.ErrorAt(at, "give one of line, pattern or bytes")
	case given > 1:
		d.ErrorAt(at, "give one of line, pattern or bytes, not several")
	}
}

// SuiteReference is the key reference of suite files, generated from the
// schema like the profile reference.
func SuiteReference() string { return lang.ReferenceOf(reflect.TypeFor[Suite](), "top level") }
