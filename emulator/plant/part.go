package plant

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hilrig/hilrig/emulator/suggest"
)

// Part is a set of subsystems simulated together: the whole plant, or one
// side of a cut.
type Part struct {
	plant    *Plant
	name     string
	subs     []int // in the order their outputs are computed
	stateOff []int // per entry of subs: where its states start
	n        int   // states in all
	external []int // the model inputs it reads
	in       []int // signals it reads that the other part produces
	out      []int // signals it produces that the other part reads
	produces []int // every signal it produces
}

// Whole is the uncut plant: what a cut is measured against.
func (p *Plant) Whole() *Part {
	all := make([]bool, len(p.subs))
	for i := range all {
		all[i] = true
	}
	return p.newPart("whole", all)
}

// Cut splits the plant at a named cut into the part the rig simulates and
// the part that is hardware.
func (p *Plant) Cut(name string) (simulated, hardware *Part, err error) {
	for _, c := range p.Cuts {
		if c.Name == name {
			return p.cut(c)
		}
	}
	if len(p.Cuts) == 0 {
		return nil, nil, fmt.Errorf("model %s has no cuts", p.Name)
	}
	return nil, nil, fmt.Errorf("model %s has no cut %s%s (its cuts: %s)", p.Name, name, suggest.DidYouMean(name, p.CutNames()), strings.Join(p.CutNames(), ", "))
}

func (p *Plant) cut(c Cut) (simulated, hardware *Part, err error) {
	onBench := make([]bool, len(p.subs))
	var names []string
	for _, b := range p.subs {
		names = append(names, b.Name)
	}
	for _, h := range c.Hardware {
		i := slices.Index(names, h)
		if i < 0 {
			return nil, nil, fmt.Errorf("no subsystem named %s%s (the subsystems: %s)", h, suggest.DidYouMean(h, names), strings.Join(names, ", "))
		}
		onBench[i] = true
	}
	switch n := len(c.Hardware); {
	case n == 0:
		return nil, nil, fmt.Errorf("names no hardware subsystem")
	case !slices.Contains(onBench, false):
		return nil, nil, fmt.Errorf("puts every subsystem on the bench: the rig would simulate nothing")
	}
	simOnly := make([]bool, len(onBench))
	for i, b := range onBench {
		simOnly[i] = !b
	}
	simulated, hardware = p.newPart("simulated", simOnly), p.newPart("hardware", onBench)
	if len(simulated.in) == 0 && len(hardware.in) == 0 {
		return nil, nil, fmt.Errorf("the hardware and the simulated part exchange no signal")
	}
	return simulated, hardware, nil
}

func (p *Plant) newPart(name string, member []bool) *Part {
	pt := &Part{plant: p, name: name}
	for _, i := range p.order {
		if member[i] {
			pt.subs = append(pt.subs, i)
			pt.stateOff = append(pt.stateOff, pt.n)
			pt.n += len(p.subs[i].States)
		}
	}
	reads := map[int]bool{}
	for _, i := range pt.subs {
		for _, k := range p.subs[i].in {
			reads[k] = true // -1, unresolved, matches no signal
		}
		pt.produces = append(pt.produces, p.subs[i].out...)
	}
	slices.Sort(pt.produces)
	for k := range p.signals {
		producer := p.producer[k]
		switch {
		case producer < 0 && reads[k]:
			pt.external = append(pt.external, k)
		case producer >= 0 && reads[k] && !member[producer]:
			pt.in = append(pt.in, k)
		case producer >= 0 && member[producer]:
			for i, b := range p.subs {
				if !member[i] && slices.Contains(b.in, k) {
					pt.out = append(pt.out, k)
					break
				}
			}
		}
	}
	return pt
}

// Name is whole, simulated or hardware.
func (pt *Part) Name() string { return pt.name }

// Plant is the plant the part belongs to.
func (pt *Part) Plant() *Plant { return pt.plant }

// States is the number of states the part integrates.
func (pt *Part) States() int { return pt.n }

// Subsystems lists the part's subsystems.
func (pt *Part) Subsystems() []string {
	names := make([]string, len(pt.subs))
	for i, s := range pt.subs {
		names[i] = pt.plant.subs[s].Name
	}
	return names
}

// In lists the signals the part receives from the other part, Out those it
// sends, External the model inputs it reads, and Produces every signal it
// computes; all by name, in signal order.
func (pt *Part) In() []string       { return pt.plant.names(pt.in) }
func (pt *Part) Out() []string      { return pt.plant.names(pt.out) }
func (pt *Part) External() []string { return pt.plant.names(pt.external) }
func (pt *Part) Produces() []string { return pt.plant.names(pt.produces) }

func (p *Plant) names(idx []int) []string {
	out := make([]string, len(idx))
	for i, k := range idx {
		out[i] = p.signals[k]
	}
	return out
}

// initialState is the part's state at time 0.
func (pt *Part) initialState(x []float64) {
	for i, s := range pt.subs {
		if init := pt.plant.subs[s].Initial; init != nil {
			copy(x[pt.stateOff[i]:], init)
		} else {
			clear(x[pt.stateOff[i] : pt.stateOff[i]+len(pt.plant.subs[s].States)])
		}
	}
}

// evaluator computes a part's signals and derivative. sig holds every
// signal of the plant; the part's inputs (model inputs and the values
// received from the other part) must be in it before a call. A sampled
// block's outputs are computed only while hit says it is at a hit; in
// between, sig holds them (each signal has one producer, so nothing else
// writes them).
type evaluator struct {
	pt   *Part
	sig  []float64
	u, y []float64 // a block's inputs and outputs, gathered
	hit  []bool    // per entry of pt.subs: a sampled block at a hit
}

func newEvaluator(pt *Part) *evaluator {
	maxIn, maxOut := 0, 0
	for _, s := range pt.subs {
		maxIn = max(maxIn, len(pt.plant.subs[s].in))
		maxOut = max(maxOut, len(pt.plant.subs[s].out))
	}
	return &evaluator{pt: pt, sig: make([]float64, len(pt.plant.signals)), u: make([]float64, maxIn), y: make([]float64, maxOut), hit: make([]bool, len(pt.subs))}
}

// Sampled lists the part's sampled blocks (those with a period).
func (pt *Part) Sampled() []string {
	var names []string
	for _, s := range pt.subs {
		if pt.plant.subs[s].period > 0 {
			names = append(names, pt.plant.subs[s].Name)
		}
	}
	return names
}

// hitAll marks every sampled block at a hit, as all are at time 0.
func (e *evaluator) hitAll(on bool) {
	for i, s := range e.pt.subs {
		e.hit[i] = on && e.pt.plant.subs[s].period > 0
	}
}

// stimulate writes the model inputs the part reads at time t.
func (e *evaluator) stimulate(t float64) {
	for _, k := range e.pt.external {
		e.sig[k] = e.pt.plant.stimulus[k].At(t)
	}
}

// stimulateBefore writes them as they are just before t: the end of a
// solver step.
func (e *evaluator) stimulateBefore(t float64) {
	for _, k := range e.pt.external {
		e.sig[k] = e.pt.plant.stimulus[k].Before(t)
	}
}

// signals computes every signal the part produces at time t and state x.
func (e *evaluator) signals(t float64, x []float64) {
	p := e.pt.plant
	for i, s := range e.pt.subs {
		b := &p.subs[s]
		if len(b.out) == 0 || b.period > 0 && !e.hit[i] {
			continue
		}
		xs := x[e.pt.stateOff[i] : e.pt.stateOff[i]+len(b.States)]
		u, y := e.u[:len(b.in)], e.y[:len(b.out)]
		for j, k := range b.in {
			u[j] = e.sig[k]
		}
		if b.Linear != nil {
			affine(y, b.c, xs, b.d, u)
		} else {
			b.Equations.Output(t, xs, u, y)
		}
		for j, k := range b.out {
			e.sig[k] = y[j]
		}
	}
}

// derivative writes dx/dt at time t and state x; it computes the signals
// first.
func (e *evaluator) derivative(t float64, x, dx []float64) {
	e.signals(t, x)
	p := e.pt.plant
	for i, s := range e.pt.subs {
		b := &p.subs[s]
		n := len(b.States)
		if n == 0 {
			continue
		}
		off := e.pt.stateOff[i]
		if b.period > 0 {
			clear(dx[off : off+n]) // it jumps at hits, and holds in between
			continue
		}
		u := e.u[:len(b.in)]
		for j, k := range b.in {
			u[j] = e.sig[k]
		}
		if b.Linear != nil {
			affine(dx[off:off+n], b.a, x[off:off+n], b.b, u)
		} else {
			b.Equations.Derivative(t, x[off:off+n], u, dx[off:off+n])
		}
	}
}

// affine sets out = M·v + N·w for row-major M and N (nil is zero).
func affine(out, m, v, n, w []float64) {
	for r := range out {
		sum := 0.0
		if m != nil {
			row := m[r*len(v) : (r+1)*len(v)]
			for c, a := range row {
				sum += float64(a * v[c])
			}
		}
		if n != nil {
			row := n[r*len(w) : (r+1)*len(w)]
			for c, a := range row {
				sum += float64(a * w[c])
			}
		}
		out[r] = sum
	}
}
