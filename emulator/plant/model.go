package plant

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/hilrig/hilrig/emulator/suggest"
)

// Model is a plant: subsystems joined by signals. A signal is produced by
// exactly one subsystem (one of its outputs), or is one of the model's
// inputs, and any number of subsystems read it.
type Model struct {
	Name        string
	Description string
	Subsystems  []Subsystem
	// Inputs are the signals no subsystem produces (a road, a voltage),
	// each with the stimulus that drives it when the rig simulates it.
	Inputs []Input
	// Cuts are the coupling points the model offers.
	Cuts []Cut
	// Output is the signal of interest: what couple analyses and demo
	// reports unless told otherwise.
	Output string
}

// Subsystem is one block of a model: its states, the signals it reads and
// the signals it produces, and its equations, either linear (Linear) or Go
// functions (Equations).
type Subsystem struct {
	Name      string
	States    []string
	Inputs    []string
	Outputs   []string
	Initial   []float64 // initial state; nil means zero
	Linear    *LTI
	Equations *Equations
}

// LTI is a linear time-invariant block: dx/dt = A·x + B·u, y = C·x + D·u,
// with x its states, u its inputs and y its outputs, in the order the
// subsystem lists them. A nil matrix is zero.
type LTI struct{ A, B, C, D *mat.Dense }

// Equations are a nonlinear block. Derivative writes dx/dt and Output
// writes the outputs y, from time t, the state x and the inputs u; neither
// may keep the slices or allocate, since they run at every solver stage.
// Feedthrough says whether Output reads u: a block that does passes its
// inputs straight to its outputs, and must not close a loop of such blocks.
//
// A block with a Period is sampled, as a controller in a processor is: it
// acts only at its hits, the multiples of Period from time 0. At a hit
// its outputs are computed once, y = Output(t, x, u), and held until the
// next (a zero-order hold), and then its state jumps to Update(t, x, u),
// written into next (x and u as they are at the hit, before the jump;
// next does not alias x). Between hits its state stays put, so it has no
// Derivative. The period must be a whole number of solver steps.
//
// Failure, when set, says why a block that can fail (an FMU whose step
// returned an error) has: the integrator reports it as the part's first
// number that is not finite (NonFinite), before any signal the failed
// block then gives.
type Equations struct {
	Derivative  func(t float64, x, u, dx []float64)
	Output      func(t float64, x, u, y []float64)
	Feedthrough bool
	Period      time.Duration
	Update      func(t float64, x, u, next []float64)
	Failure     func() error
}

// Input is a signal from outside the model and how it is stimulated.
type Input struct {
	Name     string
	Stimulus Stimulus
}

// Cut is a coupling point: the subsystems that are hardware on the bench.
// The others are simulated by the rig, and the signals that pass between
// the two parts cross the emulated network.
type Cut struct {
	Name        string
	Hardware    []string
	Description string
}

// Problem is one thing wrong with a model, at the path of the offending
// part, written as in a model file: subsystems.NAME.inputs[0].
type Problem struct{ Path, Msg string }

// Problems is every problem New found.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Path + ": " + p.Msg
	}
	return strings.Join(lines, "\n")
}

// Plant is a checked model, ready to be cut and run.
type Plant struct {
	Model
	signals  []string // external inputs first, then every output
	index    map[string]int
	producer []int // per signal: the subsystem that produces it, or -1
	stimulus []Stimulus
	subs     []block // per subsystem
	order    []int   // subsystems in the order their outputs are computed
}

// block is a subsystem with its signals resolved to indices.
type block struct {
	*Subsystem
	in, out     []int // signal index of each input and output
	feedthrough bool
	period      time.Duration // > 0: a sampled block
	a, b, c, d  []float64     // row-major; nil when zero
}

// IsIdentifier reports whether s is a name as C writes one: a letter or
// underscore, then letters, digits and underscores, ASCII only.
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// New checks a model and prepares it. It reports every problem at once.
func New(m Model) (*Plant, error) {
	p := &Plant{Model: m, index: map[string]int{}}
	var probs Problems
	bad := func(path, format string, args ...any) {
		probs = append(probs, Problem{path, fmt.Sprintf(format, args...)})
	}
	if len(m.Subsystems) == 0 {
		bad("subsystems", "a model needs at least one subsystem")
	}
	addSignal := func(name string, producer int) {
		p.index[name] = len(p.signals)
		p.signals = append(p.signals, name)
		p.producer = append(p.producer, producer)
	}
	for _, in := range m.Inputs {
		path := "inputs." + in.Name
		_, dup := p.index[in.Name]
		switch {
		case !IsIdentifier(in.Name):
			bad(path, "is not a valid signal name (letters, digits and _, not starting with a digit)")
		case dup:
			bad(path, "given twice")
		case in.Stimulus == nil:
			bad(path, "has no stimulus")
		default:
			addSignal(in.Name, -1)
			p.stimulus = append(p.stimulus, in.Stimulus)
		}
	}
	seenSub := map[string]bool{}
	for i := range m.Subsystems {
		s := &m.Subsystems[i]
		path := "subsystems." + s.Name
		if !IsIdentifier(s.Name) {
			bad(path, "is not a valid subsystem name")
		} else if seenSub[s.Name] {
			bad(path, "given twice")
		}
		seenSub[s.Name] = true
		checkNames(s.States, path+".states", "state", bad)
		checkNames(s.Inputs, path+".inputs", "input", bad)
		checkNames(s.Outputs, path+".outputs", "output", bad)
		if s.Initial != nil && len(s.Initial) != len(s.States) {
			bad(path+".initial", "has %d values for %d states", len(s.Initial), len(s.States))
		}
		b := block{Subsystem: s}
		switch {
		case (s.Linear == nil) == (s.Equations == nil):
			bad(path, "needs either linear matrices or equations")
		case s.Linear != nil:
			b.a = matrix(s.Linear.A, len(s.States), len(s.States), path+".A", "states", "states", bad)
			b.b = matrix(s.Linear.B, len(s.States), len(s.Inputs), path+".B", "states", "inputs", bad)
			b.c = matrix(s.Linear.C, len(s.Outputs), len(s.States), path+".C", "outputs", "states", bad)
			b.d = matrix(s.Linear.D, len(s.Outputs), len(s.Inputs), path+".D", "outputs", "inputs", bad)
			b.feedthrough = b.d != nil
		case s.Equations.Period < 0:
			bad(path+".period", "must be positive")
		case s.Equations.Period > 0:
			if s.Equations.Derivative != nil {
				bad(path, "is sampled (a period) and has a derivative; a sampled block's state changes at its hits only, by its update")
			}
			if len(s.States) > 0 && s.Equations.Update == nil {
				bad(path, "is sampled and has states but no update")
			}
			if len(s.Outputs) > 0 && s.Equations.Output == nil {
				bad(path, "has outputs but no output function")
			}
			b.feedthrough = s.Equations.Feedthrough
			b.period = s.Equations.Period
		default:
			if s.Equations.Update != nil {
				bad(path, "has an update but no period: only a sampled block updates its state at hits")
			}
			if len(s.States) > 0 && s.Equations.Derivative == nil {
				bad(path, "has states but no derivative")
			}
			if len(s.Outputs) > 0 && s.Equations.Output == nil {
				bad(path, "has outputs but no output function")
			}
			b.feedthrough = s.Equations.Feedthrough
		}
		for j, out := range s.Outputs {
			if k, taken := p.index[out]; taken {
				if p.producer[k] < 0 {
					bad(fmt.Sprintf("%s.outputs[%d]", path, j), "%s is an input of the model; a subsystem cannot produce it", out)
				} else {
					bad(fmt.Sprintf("%s.outputs[%d]", path, j), "%s is produced by %s too", out, m.Subsystems[p.producer[k]].Name)
				}
				continue
			}
			if IsIdentifier(out) {
				addSignal(out, i)
			}
		}
		p.subs = append(p.subs, b)
	}
	read := map[string]bool{}
	for i := range p.subs {
		b := &p.subs[i]
		for j, in := range b.Inputs {
			read[in] = true
			k, ok := p.index[in]
			if !ok {
				if IsIdentifier(in) {
					bad(fmt.Sprintf("subsystems.%s.inputs[%d]", b.Name, j), "no subsystem produces %s and it is not an input of the model%s", in, suggest.DidYouMean(in, p.signals))
				}
				k = -1
			}
			b.in = append(b.in, k)
		}
		for _, out := range b.Outputs {
			b.out = append(b.out, p.index[out])
		}
	}
	for _, in := range m.Inputs {
		if _, ok := p.index[in.Name]; ok && !read[in.Name] {
			bad("inputs."+in.Name, "is read by no subsystem")
		}
	}
	probs = append(probs, checkNumbers(m)...)
	// The checks below work on what resolved, so that one file's problems
	// are all reported at once.
	var loop []string
	p.order, loop = p.evaluationOrder()
	if loop != nil {
		bad("subsystems", "algebraic loop: %s pass their inputs straight to their outputs in a circle; give one of them a state", strings.Join(loop, " → "))
	}
	if m.Output != "" {
		if _, ok := p.index[m.Output]; !ok {
			bad("output", "no signal is named %s%s", m.Output, suggest.DidYouMean(m.Output, p.signals))
		}
	}
	seenCut := map[string]bool{}
	for _, c := range m.Cuts {
		path := "cuts." + c.Name
		if seenCut[c.Name] {
			bad(path, "given twice")
		}
		seenCut[c.Name] = true
		if loop != nil {
			continue // without an order there are no parts to check
		}
		if _, _, err := p.cut(c); err != nil {
			bad(path, "%s", err)
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return p, nil
}

func checkNames(names []string, path, what string, bad func(string, string, ...any)) {
	for i, n := range names {
		switch {
		case !IsIdentifier(n):
			bad(fmt.Sprintf("%s[%d]", path, i), "%q is not a valid %s name (letters, digits and _, not starting with a digit)", n, what)
		case slices.Index(names, n) < i:
			bad(fmt.Sprintf("%s[%d]", path, i), "%s given twice", n)
		}
	}
}

// checkNumbers finds the numbers of a model that are not finite: its
// blocks' matrix entries and initial states, and its inputs' stimuli.
// Nothing a model computes from a NaN or an infinity means anything.
func checkNumbers(m Model) Problems {
	var probs Problems
	bad := func(path string, v float64, what string) {
		probs = append(probs, Problem{path, fmt.Sprintf("is %v; %s must be a finite number", v, what)})
	}
	for _, s := range m.Subsystems {
		path := "subsystems." + s.Name
		for i, v := range s.Initial {
			if !finite(v) {
				bad(fmt.Sprintf("%s.initial[%d]", path, i), v, "an initial state")
			}
		}
		if s.Linear == nil {
			continue
		}
		for _, mx := range []struct {
			key string
			m   *mat.Dense
		}{{"A", s.Linear.A}, {"B", s.Linear.B}, {"C", s.Linear.C}, {"D", s.Linear.D}} {
			if mx.m == nil {
				continue
			}
			r, c := mx.m.Dims()
			for i := range r {
				for j := range c {
					if v := mx.m.At(i, j); !finite(v) {
						bad(fmt.Sprintf("%s.%s[%d][%d]", path, mx.key, i, j), v, "a matrix entry")
					}
				}
			}
		}
	}
	for _, in := range m.Inputs {
		if v, ok := stimulusFinite(in.Stimulus); !ok {
			probs = append(probs, Problem{"inputs." + in.Name, fmt.Sprintf("reaches %v; a stimulus must stay a finite number", v)})
		}
	}
	return probs
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// matrix checks a block's matrix against the sizes its lists imply and
// returns its data row-major, or nil if it is absent or all zero.
func matrix(m *mat.Dense, rows, cols int, path, rowsAre, colsAre string, bad func(string, string, ...any)) []float64 {
	if m == nil {
		return nil
	}
	r, c := m.Dims()
	if r != rows || c != cols {
		bad(path, "is %d×%d; want %d×%d (%d %s by %d %s)", r, c, rows, cols, rows, rowsAre, cols, colsAre)
		return nil
	}
	data := make([]float64, 0, r*c)
	zero := true
	for i := range r {
		for j := range c {
			v := m.At(i, j)
			zero = zero && v == 0
			data = append(data, v)
		}
	}
	if zero {
		return nil
	}
	return data
}

// evaluationOrder orders the subsystems so that a block that passes its
// inputs straight to its outputs comes after the producers of its inputs.
// Blocks without feedthrough depend only on their state and can go first.
// It returns a loop of feedthrough blocks instead when there is one.
func (p *Plant) evaluationOrder() (order []int, loop []string) {
	n := len(p.subs)
	deps := make([][]int, n) // feedthrough block → the blocks whose outputs it reads
	for i, b := range p.subs {
		if !b.feedthrough {
			continue
		}
		for _, k := range b.in {
			if k < 0 {
				continue // unresolved: reported already
			}
			if pr := p.producer[k]; pr >= 0 && !slices.Contains(deps[i], pr) {
				deps[i] = append(deps[i], pr)
			}
		}
	}
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, n)
	var stack []int
	var visit func(i int) bool
	visit = func(i int) bool {
		switch state[i] {
		case done:
			return true
		case visiting:
			at := slices.Index(stack, i)
			for _, j := range stack[at:] {
				loop = append(loop, p.subs[j].Name)
			}
			loop = append(loop, p.subs[i].Name)
			return false
		}
		state[i] = visiting
		stack = append(stack, i)
		for _, d := range deps[i] {
			if p.subs[d].feedthrough && !visit(d) {
				return false
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
		order = append(order, i)
		return true
	}
	// Blocks without feedthrough first, in model order, then the others.
	for i, b := range p.subs {
		if !b.feedthrough {
			state[i] = done
			order = append(order, i)
		}
	}
	for i := range p.subs {
		if !visit(i) {
			return nil, loop
		}
	}
	return order, nil
}

// Signals lists every signal of the plant: its inputs, then every output
// of its subsystems.
func (p *Plant) Signals() []string { return p.signals }

// SignalIndex returns the index of a signal in Signals, or -1.
func (p *Plant) SignalIndex(name string) int {
	if i, ok := p.index[name]; ok {
		return i
	}
	return -1
}

// CutNames lists the cuts the model offers.
func (p *Plant) CutNames() []string {
	names := make([]string, len(p.Cuts))
	for i, c := range p.Cuts {
		names[i] = c.Name
	}
	return names
}
