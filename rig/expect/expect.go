package expect

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/suggest"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/record"
)

// Op is a comparison.
type Op uint8

// Comparisons.
const (
	Less Op = iota
	LessEqual
	Greater
	GreaterEqual
	Equal
	NotEqual
)

var opTexts = [...]string{"<", "<=", ">", ">=", "==", "!="}

func (o Op) String() string { return opTexts[o] }

func (o Op) holds(a, b float64) bool {
	switch o {
	case Less:
		return a < b
	case LessEqual:
		return a <= b
	case Greater:
		return a > b
	case GreaterEqual:
		return a >= b
	case Equal:
		return a == b
	}
	return a != b
}

// Expectation is one parsed expectation, ready to be evaluated on a
// run's summary and signals.
type Expectation struct {
	Text string // as written
	Path string
	Op   Op
	Unit Unit

	limit  limit
	steps  []step
	scale  float64    // the value read × scale is in Unit
	sig    *signalRef // a recorded signal's statistic instead of steps
	domain domain     // the values it can take
}

// step is one move along a path through a summary.
type step struct {
	kind   stepKind
	index  []int  // stepField
	key    string // stepElem, stepMapKey
	derive func(reflect.Value) (float64, bool)
	at     string // the path up to here, for messages
}

type stepKind uint8

const (
	stepField  stepKind = iota // a struct's field
	stepElem                   // the element of a named list
	stepLen                    // a list's length (ends the path)
	stepMapKey                 // a map's entry
	stepMapSum                 // the sum of a map's entries (ends the path)
	stepDerive                 // a derived value (ends the path)
)

// signalRef is models.ENDPOINT.SIGNAL.STAT.
type signalRef struct{ endpoint, signal, stat string }

// Names are what a run's summary will name, known before it runs. An
// expectation naming a flow, hop, phase, endpoint, model or signal that is
// not here is an error when it is parsed. A nil list accepts any name:
// the summary then says, when the run is over.
type Names struct {
	// Clock is the run's, virtual or real, as the summary says it: a
	// virtual-time run's summary has no timing. Empty: either.
	Clock string

	Flows, Hops, Phases, Endpoints []string
	// Models are the model endpoints, in bench order, and Signals their
	// signals that the signals file has a column of, by model.
	Models  []string
	Signals map[string][]Signal
	// Played are the endpoints a software player plays (NamesOf lists a
	// bench's replays; add those given otherwise, hilrig's --replay): a
	// model across the cut from one has no stand-in, and so no stand-in's
	// signals.
	Played []string
	peers  map[string][]string // by model: the endpoints across its cut
	// devices are the bench's endpoints that are not models, by name
	// (nil: not known, and the run decides): what a run opens as a
	// device, unless it is played, and so what its summary accounts for.
	devices map[string]device
}

// device is what the summary will hold of an endpoint that is not a
// model: receives, whether a flow is bound to it (the executor writes to
// it, and measures how late); wire, whether it speaks the wire protocol.
type device struct{ receives, wire bool }

// Signal is a model's signal that the signals file records: a column, or
// more than one (executor.ModelSignals).
type Signal struct {
	Name string
	// Unit is Seconds for a time (the part's sim_time and t_diff); a
	// model's signals carry no unit, and are plain numbers (Count).
	Unit Unit
	// StandIn: only the hardware's stand-in computes it, and the stand-in
	// runs in virtual time only, when no player plays the endpoint across
	// the cut; otherwise the hardware computes it, and the rig does not
	// see it.
	StandIn bool
	// Ideal: the uncut model records it too, so max_error, rms_error and
	// error_pct compare with it.
	Ideal bool
}

// The clocks of Names.Clock.
const (
	Virtual = "virtual"
	Real    = "real"
)

// NamesOf lists what a run of profile p on bench b (nil: none) will
// report; set Clock to say in which time it runs, and add to Played the
// endpoints played otherwise than by the bench.
func NamesOf(p *profiles.Loaded, b *benchfile.LoadedBench) *Names {
	n := &Names{Flows: p.Flows.Names, Hops: p.Hops.Names, Phases: []string{}, Endpoints: []string{}, Models: []string{},
		Signals: map[string][]Signal{}, peers: map[string][]string{}, devices: map[string]device{}}
	for _, ph := range p.Phases() {
		n.Phases = append(n.Phases, ph.Name)
	}
	if b == nil {
		return n
	}
	for i, name := range b.Endpoints.Names {
		if b.Endpoints.Values[i].Replay != nil {
			n.Played = append(n.Played, name)
		}
		if e := b.Endpoints.Values[i]; !e.IsModel() {
			n.Endpoints = append(n.Endpoints, name)
			d := device{wire: e.SpeaksWire()}
			for _, bound := range b.Bound {
				d.receives = d.receives || bound.To == name
			}
			n.devices[name] = d
			continue
		}
		bm := b.Models[name]
		if bm == nil {
			continue
		}
		n.Models = append(n.Models, name)
		n.Signals[name] = signalsOf(name, bm)
		for _, bound := range b.Bound {
			switch name {
			case bound.From:
				n.peers[name] = append(n.peers[name], bound.To)
			case bound.To:
				n.peers[name] = append(n.peers[name], bound.From)
			}
		}
	}
	return n
}

// signalsOf are the signals model endpoint name records, from its columns
// with a stand-in (Parse leaves out the stand-in's where there is none),
// in the model's order, the part's own time last.
func signalsOf(name string, bm *benchfile.BenchModel) []Signal {
	var out []Signal
	ideal := map[string]bool{}
	spec := rig.ModelSpecOf(bm)
	for _, c := range executor.ModelSignals(name, spec, true, spec.OwnTime()) {
		if c.Part == executor.IdealPart {
			ideal[c.Signal] = true
			continue
		}
		i := slices.IndexFunc(out, func(s Signal) bool { return s.Name == c.Signal })
		switch {
		case i < 0:
			s := Signal{Name: c.Signal, Unit: Count, StandIn: c.Part == executor.StandInPart}
			if c.Seconds {
				s.Unit = Seconds
			}
			out = append(out, s)
		case c.Part != executor.StandInPart:
			out[i].StandIn = false
		}
	}
	for i := range out {
		out[i].Ideal = ideal[out[i].Name]
	}
	order := func(s Signal) int {
		if k := bm.SignalIndex(s.Name); k >= 0 {
			return k
		}
		return len(bm.Signals())
	}
	slices.SortStableFunc(out, func(a, b Signal) int { return order(a) - order(b) })
	return out
}

// keysOf says which of Names names the elements of a list of t.
func (n *Names) keysOf(t reflect.Type) []string {
	if n == nil {
		return nil
	}
	switch t {
	case reflect.TypeFor[emulator.FlowSummary]():
		return n.Flows
	case reflect.TypeFor[emulator.HopSummary]():
		return n.Hops
	case reflect.TypeFor[record.PhaseSummary]():
		return n.Phases
	case reflect.TypeFor[record.EndpointSummary]():
		return n.Endpoints
	case reflect.TypeFor[record.ModelSummary]():
		return n.Models
	case reflect.TypeFor[record.OutputSummary]():
		return record.OutputNames
	}
	return nil
}

// Error is a problem in an expectation's text.
type Error struct {
	Text string // the expectation
	Col  int    // where, from 1 (bytes)
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%q: column %d: %s", e.Text, e.Col, e.Msg) }

// Parse reads an expectation, PATH OP VALUE, and checks its path against
// names (nil: the paths of any run).
func Parse(text string, names *Names) (*Expectation, error) {
	x := &Expectation{Text: text}
	fail := func(col int, format string, args ...any) (*Expectation, error) {
		return nil, &Error{Text: text, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	i := skipSpace(text, 0)
	start := i
	for i < len(text) && isPathByte(text[i]) {
		i++
	}
	if i == start {
		return fail(i+1, "want PATH OP VALUE, e.g. flows.m2s.delay.p95 < 60ms")
	}
	x.Path = text[start:i]
	i = skipSpace(text, i)
	opCol := i + 1
	op, n := readOp(text[i:])
	if n == 0 {
		if i == len(text) {
			return fail(opCol, "want a comparison (<, <=, >, >=, ==, !=) after %s", x.Path)
		}
		if text[i] == '=' {
			switch {
			case strings.HasPrefix(text[i:], "=<"):
				return fail(opCol, "write <= to compare")
			case strings.HasPrefix(text[i:], "=>"):
				return fail(opCol, "write >= to compare")
			}
			return fail(opCol, "write == to compare")
		}
		return fail(opCol, "%q is not a comparison (want <, <=, >, >=, == or !=)", text[i:i+1])
	}
	x.Op = op
	i = skipSpace(text, i+n)
	valueCol := i + 1
	value := strings.TrimRight(text[i:], " \t")
	if value == "" {
		return fail(valueCol, "want a value after %s", op)
	}
	if err := x.resolve(start, names); err != nil {
		return nil, err
	}
	if (x.Unit == Flag || x.Unit == Text) && op != Equal && op != NotEqual {
		return fail(opCol, "%s is %s: compare it with == or !=", x.Path, x.Unit)
	}
	if x.domain.percent && strings.HasSuffix(value, "%") {
		return fail(valueCol, "%q: %s is already in percent: write %s", value, x.Path, strings.TrimSpace(strings.TrimSuffix(value, "%")))
	}
	var err error
	if x.limit, err = parseLimit(value, x.Unit); err != nil {
		return fail(valueCol, "%v", err)
	}
	if msg := x.outOfRange(names); msg != "" {
		return fail(valueCol, "%s", msg)
	}
	return x, nil
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func isPathByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func readOp(s string) (Op, int) {
	for _, o := range []Op{LessEqual, GreaterEqual, Equal, NotEqual, Less, Greater} {
		if strings.HasPrefix(s, o.String()) {
			return o, len(o.String())
		}
	}
	return 0, 0
}

// resolve walks the path through the summary's types; start is where the
// path begins in the text.
func (x *Expectation) resolve(start int, names *Names) error {
	segs := strings.Split(x.Path, ".")
	col := start + 1
	fail := func(format string, args ...any) error {
		return &Error{Text: x.Text, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	t := reflect.TypeFor[record.Summary]()
	unit, scale, done := Count, 1.0, ""
	var model string    // the model endpoint the path is in
	var endpoint string // the endpoint that is not a model the path is in
	for i, seg := range segs {
		if seg == "" {
			return fail("empty name in the path")
		}
		at := seg
		if done != "" {
			at = done + "." + seg
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Struct:
			c, ok := childNamed(childrenOf(t), seg)
			if ok && names != nil {
				if msg := clockOnlyMsg(t, seg, at, names.Clock); msg != "" {
					return fail("%s", msg)
				}
				if msg := names.unmeasuredMsg(t, seg, at, endpoint); msg != "" {
					return fail("%s", msg)
				}
			}
			if model != "" && t == reflect.TypeFor[record.ModelSummary]() {
				// A signal, unless the summary has the key; where a
				// signal is named as a value of the summary is
				// (sim_time), followed by a statistic it is the signal.
				sig, known, found := names.signal(model, seg)
				statOfLeaf := ok && c.derive == nil && isLeaf(c.typ) && i < len(segs)-1 && (found || !known && seg == executor.SimTimeSignal)
				if !ok && (!known || found) || statOfLeaf {
					return x.resolveSignal(names, model, sig, known, segs[i+1:], col+len(seg)+1, at)
				}
			}
			if !ok {
				return fail("%s%s%s", noKey(done, seg), suggest.DidYouMean(seg, x.candidates(t, model, names)), listOf(x.candidates(t, model, names)))
			}
			if c.derive != nil {
				x.steps = append(x.steps, step{kind: stepDerive, derive: c.derive, at: at})
				unit, t = c.unit, nil
				x.domain = c.domain
			} else {
				x.steps = append(x.steps, step{kind: stepField, index: c.index, at: at})
				t = c.typ
				if c.unit != Count || baseUnit(c.typ) != Count {
					unit, scale = c.unit, c.scale
				}
			}
		case t.Kind() == reflect.Slice && keyed(t):
			keys := names.keysOf(t.Elem())
			if keys != nil && !containsName(keys, seg) {
				return fail("%s%s%s", noKey(done, seg), suggest.DidYouMean(seg, keys), listOf(keys))
			}
			x.steps = append(x.steps, step{kind: stepElem, key: seg, at: at})
			switch t.Elem() {
			case reflect.TypeFor[record.ModelSummary]():
				model = seg
			case reflect.TypeFor[record.EndpointSummary]():
				if msg := names.endpointMsg(seg, at); msg != "" {
					return fail("%s", msg)
				}
				endpoint = seg
			}
			t = t.Elem()
		case t.Kind() == reflect.Map:
			keys := mapKeys()
			if !containsName(keys, seg) {
				return fail("%s%s%s", noKey(done, seg), suggest.DidYouMean(seg, keys), listOf(keys))
			}
			x.steps = append(x.steps, step{kind: stepMapKey, key: seg, at: at})
			t = t.Elem()
		case t.Kind() == reflect.Slice:
			return fail("%s is a list without names: it ends the path (and means how many it holds)", done)
		default:
			return fail("%s is a value: it has no %q", done, seg)
		}
		if t == nil && i < len(segs)-1 {
			col += len(seg) + 1
			return fail("%s is a value: it has no %q", at, segs[i+1])
		}
		done = at
		col += len(seg) + 1
	}
	col = start + 1
	if t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t.Kind() == reflect.Map:
			x.steps = append(x.steps, step{kind: stepMapSum, at: done})
			x.domain = domainOf(t.Elem(), unit, segs)
		case t.Kind() == reflect.Slice && !keyed(t):
			x.steps = append(x.steps, step{kind: stepLen, at: done})
			unit, scale = Count, 1
			x.domain = domain{whole: true, nonNegative: true}
		case t.Kind() == reflect.Slice:
			keys := names.keysOf(t.Elem())
			if keys == nil {
				return fail("%s is not a value: name one of them", done)
			}
			return fail("%s is not a value: name one of them%s", done, listOf(keys))
		case !isLeaf(t):
			return fail("%s is not a value: name one of its %s", done, strings.Join(x.candidates(t, model, names), ", "))
		default:
			x.domain = domainOf(t, unit, segs)
		}
	}
	x.Unit, x.scale = unit, scale
	return nil
}

// clockOnly are the summary's keys that only a run in one clock has:
// what a run in the other never measures.
var clockOnly = []struct {
	in         reflect.Type
	key, clock string
	msg        string // %s: the path to the key
}{
	{reflect.TypeFor[record.Summary](), "timing", Real, "%s is measured in real time only: the summary of a run in virtual time has none"},
	{reflect.TypeFor[record.ModelSummary](), "step_lateness", Real, "%s is measured in real time only: in virtual time a model's exchanges are never late"},
	{reflect.TypeFor[record.ModelSummary](), "hardware", Virtual, "%s is the hardware's stand-in, which only a run in virtual time has: in real time the hardware is the device"},
}

// clockOnly says why key, of a struct of type t at path at, is never
// measured by a run in clock ("": either), or nothing.
func clockOnlyMsg(t reflect.Type, key, at, clock string) string {
	for _, c := range clockOnly {
		if c.in == t && c.key == key && clock != "" && clock != c.clock {
			return fmt.Sprintf(c.msg, at)
		}
	}
	return ""
}

// endpointMsg says why the summary of the run will hold nothing of
// endpoint name (that is not a model), at path at, or nothing: a run
// opens a device for each endpoint in real time only, and not for one
// played in software, which the summary lists only for its wire
// protocol's account.
func (n *Names) endpointMsg(name, at string) string {
	d, known := n.device(name)
	played := slices.Contains(n.Played, name)
	switch {
	case !known:
		return ""
	case played && !d.wire:
		return fmt.Sprintf("%s would be what the rig read from and wrote to a device, and %s is played in software (a script or a recording): the summary has no device of that name", at, name)
	case !played && n.Clock == Virtual:
		return fmt.Sprintf("%s would be what the rig read from and wrote to a device, which a run in virtual time opens none of: the summary has it in real time only", at)
	}
	return ""
}

// unmeasuredMsg says why key, of a struct of type t at path at (in the
// summary of endpoint, when that is not ""), is never measured by the
// run, the bench being what it is, or nothing.
func (n *Names) unmeasuredMsg(t reflect.Type, key, at, endpoint string) string {
	if n == nil || n.devices == nil {
		return ""
	}
	switch {
	case t == reflect.TypeFor[record.TimingSummary]() && key == "release_lateness" && n.Clock != Virtual:
		var played []string
		for _, name := range n.Endpoints {
			if d := n.devices[name]; d.receives {
				if !slices.Contains(n.Played, name) {
					return "" // a flow is written to a device
				}
				played = append(played, name)
			}
		}
		why := "no flow of the bench goes to a device"
		if len(played) > 0 {
			why = fmt.Sprintf("the flows go to %s, played in software (by a script or a recording)", strings.Join(played, " and "))
		}
		return fmt.Sprintf("%s is never measured in this run: it is how late frames were written to a device, and %s; timing.wake_lateness is measured", at, why)
	case t == reflect.TypeFor[record.EndpointSummary]() && endpoint != "":
		d, known := n.device(endpoint)
		switch {
		case !known:
		case key == "wire" && !d.wire:
			return fmt.Sprintf("%s is the account of the rig wire protocol, and %s does not speak it (codec: wire)", at, endpoint)
		case key != "wire" && key != "name" && key != "kind" && key != "device" && slices.Contains(n.Played, endpoint):
			return fmt.Sprintf("%s is counted at a device, and %s is played in software: the summary has only its wire protocol's account (wire)", at, endpoint)
		}
	}
	return ""
}

// device is what the names know of endpoint name that is not a model.
func (n *Names) device(name string) (device, bool) {
	if n == nil || n.devices == nil {
		return device{}, false
	}
	d, ok := n.devices[name]
	return d, ok
}

// resolveSignal resolves models.MODEL.SIGNAL.STAT, sig being the signal
// as names know it (known: they do); rest is what follows the signal, col
// where it starts.
func (x *Expectation) resolveSignal(names *Names, model string, sig Signal, known bool, rest []string, col int, at string) error {
	stats := signalStatNames()
	fail := func(col int, format string, args ...any) error {
		return &Error{Text: x.Text, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	sigCol := col - len(sig.Name) - 1
	switch {
	case known && sig.StandIn && names.Clock == Real:
		return fail(sigCol, "%s is computed by the hardware's part alone, which in real time is the device: the rig records it in virtual time only, where the hardware's part stands in for the device", at)
	case known && sig.StandIn && names.playedPeer(model) != "":
		return fail(sigCol, "%s is computed by the hardware's part alone, and %s is played: without a stand-in for the hardware, the rig does not record it", at, names.playedPeer(model))
	case len(rest) == 0:
		return fail(sigCol, "%s is a signal: name one of its %s", at, strings.Join(stats, ", "))
	case !containsName(stats, rest[0]):
		return fail(col, "%s%s%s", noKey(at, rest[0]), suggest.DidYouMean(rest[0], stats), listOf(stats))
	case len(rest) > 1:
		return fail(col+len(rest[0])+1, "%s.%s is a value: it has no %q", at, rest[0], rest[1])
	case known && !sig.Ideal && slices.Contains(errorStats, rest[0]):
		return fail(col, "%s has no counterpart in the uncut model: %s compares with one (%s has %s)", at, rest[0], at, strings.Join(slices.DeleteFunc(slices.Clone(stats), func(s string) bool { return slices.Contains(errorStats, s) }), ", "))
	}
	x.sig = &signalRef{endpoint: model, signal: sig.Name, stat: rest[0]}
	x.steps, x.Unit, x.scale = nil, sig.Unit, 1
	for _, s := range SignalStats {
		if s.Name == rest[0] {
			x.domain = s.domain
		}
	}
	return nil
}

// errorStats are the SignalStats that compare with the uncut model.
var errorStats = []string{"max_error", "rms_error", "error_pct"}

// candidates are the keys that may follow at a struct of type t: at a
// model, its signals first (the list of a hint is cut after a dozen).
func (x *Expectation) candidates(t reflect.Type, model string, names *Names) []string {
	c := childNames(childrenOf(t))
	if t == reflect.TypeFor[record.ModelSummary]() {
		var sigs []string
		for _, s := range names.available(model) {
			if !slices.Contains(c, s.Name) { // sim_time: the summary's too
				sigs = append(sigs, s.Name)
			}
		}
		c = append(sigs, c...)
	}
	return c
}

// signal finds a model's signal: whether the model's signals are known,
// and if so whether it is one. A signal not known has a unit by its name:
// the part's time and t_diff are times.
func (n *Names) signal(model, name string) (s Signal, known, found bool) {
	if n == nil || n.Signals == nil {
		s = Signal{Name: name, Unit: Count}
		if name == executor.SimTimeSignal || name == executor.TDiffSignal {
			s.Unit = Seconds
		}
		return s, false, false
	}
	sigs, ok := n.Signals[model]
	if !ok {
		return Signal{Name: name}, false, false
	}
	for _, s := range sigs {
		if s.Name == name {
			return s, true, true
		}
	}
	return Signal{Name: name}, true, false
}

// available are the model's signals a run records: those of the
// hardware's stand-in only when there is one.
func (n *Names) available(model string) []Signal {
	if n == nil || n.Signals == nil {
		return nil
	}
	var out []Signal
	for _, s := range n.Signals[model] {
		if !s.StandIn || n.Clock != Real && n.playedPeer(model) == "" {
			out = append(out, s)
		}
	}
	return out
}

// playedPeer is an endpoint across the model's cut that a player plays,
// or "".
func (n *Names) playedPeer(model string) string {
	for _, p := range n.peers[model] {
		if slices.Contains(n.Played, p) {
			return p
		}
	}
	return ""
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func noKey(done, seg string) string {
	if done == "" {
		return fmt.Sprintf("a summary has no %q", seg)
	}
	return fmt.Sprintf("%s has no %q", done, seg)
}

func listOf(names []string) string {
	if len(names) == 0 {
		return " (it has none)"
	}
	const most = 12
	if len(names) > most {
		return " (it has " + strings.Join(names[:most], ", ") + ", …)"
	}
	return " (it has " + strings.Join(names, ", ") + ")"
}

// Result is an expectation evaluated on a run.
type Result struct {
	*Expectation
	OK bool
	// Measured is the value, written in the limit's unit; empty when
	// nothing was measured, and then Missing says why.
	Measured string
	Value    float64
	Missing  string
}

// Limit is the expectation's limit as written.
func (x *Expectation) Limit() string { return x.limit.text }

// LimitValue is the limit as a number in the value's base unit (seconds,
// bytes, a share as a fraction, true as 1), as a plot of the value draws
// it; false for a text.
func (x *Expectation) LimitValue() (float64, bool) { return x.limit.num, x.Unit != Text }

// String says what was expected and what was measured.
func (r Result) String() string {
	switch {
	case r.Measured == "":
		return fmt.Sprintf("%s: nothing measured (%s)", r.Canonical(), r.Missing)
	case r.OK:
		return fmt.Sprintf("%s: measured %s", r.Canonical(), r.Measured)
	}
	return fmt.Sprintf("%s failed: measured %s, limit %s", r.Canonical(), r.Measured, r.limit.text)
}

// Canonical is the expectation written with single spaces.
func (x *Expectation) Canonical() string { return x.Path + " " + x.Op.String() + " " + x.limit.text }

// Evaluate evaluates the expectations on a run's summary and, for the
// models' signals, what sig accumulated (nil: none were recorded).
func Evaluate(exps []*Expectation, sum *record.Summary, sig *Signals) []Result {
	out := make([]Result, len(exps))
	for i, x := range exps {
		out[i] = x.Eval(sum, sig)
	}
	return out
}

// Failed returns the results that did not pass.
func Failed(results []Result) []Result {
	var out []Result
	for _, r := range results {
		if !r.OK {
			out = append(out, r)
		}
	}
	return out
}

// Eval evaluates the expectation.
func (x *Expectation) Eval(sum *record.Summary, sig *Signals) Result {
	r := Result{Expectation: x}
	var v value
	if x.sig != nil {
		v = sig.value(x.sig)
	} else {
		v = x.walk(reflect.ValueOf(sum).Elem())
	}
	if v.missing != "" {
		r.Missing = v.missing
		return r
	}
	r.Value = v.num
	r.Measured = x.limit.format(v, x.Unit)
	switch x.Unit {
	case Text:
		r.OK = (v.text == x.limit.word) == (x.Op == Equal)
	case Flag:
		r.OK = (v.num == x.limit.num) == (x.Op == Equal)
	default:
		r.OK = x.Op.holds(v.num, x.limit.num)
	}
	return r
}

// value is what a path led to.
type value struct {
	num     float64
	text    string
	missing string // why there is none
}

func (x *Expectation) walk(v reflect.Value) value {
	for _, s := range x.steps {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return value{missing: "the summary has no " + parentOf(s.at)}
			}
			v = v.Elem()
		}
		switch s.kind {
		case stepField:
			v = v.FieldByIndex(s.index)
		case stepElem:
			found := false
			for i := range v.Len() {
				if e := v.Index(i); e.Field(0).String() == s.key {
					v, found = e, true
					break
				}
			}
			if !found {
				return value{missing: "the summary has no " + s.at}
			}
		case stepMapKey:
			e := v.MapIndex(reflect.ValueOf(s.key))
			if !e.IsValid() {
				return value{missing: "the summary has no " + s.at}
			}
			v = e
		case stepMapSum:
			var n float64
			for it := v.MapRange(); it.Next(); {
				n += number(it.Value())
			}
			return value{num: n}
		case stepLen:
			return value{num: float64(v.Len())}
		case stepDerive:
			n, ok := s.derive(v)
			if !ok {
				return value{missing: s.at + " is undefined for this run"}
			}
			return value{num: n}
		}
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return value{missing: "the summary has no " + x.Path}
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return value{text: v.String()}
	case reflect.Bool:
		if v.Bool() {
			return value{num: 1}
		}
		return value{num: 0}
	}
	return value{num: number(v) * x.scale}
}

func parentOf(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return path
}

func number(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint())
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return 0
}
