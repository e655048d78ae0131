package emulator

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// A hop's impairments are stages: each is one file (loss.go, duplicate.go,
// corrupt.go, reorder.go, tracedriven.go, jitter.go) holding its
// parameters' type, its behaviour behind Stage and its registration by its
// hop key. A hop runs its active stages in their registered order: those
// that act as a frame enters it (before the queue), then those that act as
// it leaves the serialiser (and decide its delay). The
// network applies what a stage decides (a drop, a copy, a corruption,
// sending at once), so a stage holds no engine code.

// A Stage is one impairment of a hop, made from the hop's parameters
// (which it reads when it acts, so a change takes effect at once).
type Stage interface {
	// Active reports whether the parameters impair at all.
	Active() bool
	// Check reports parameters out of range.
	Check() error
	// NewState returns a flow's state in the stage for the present
	// parameters, before its next frame. old is the state under the
	// previous parameters (nil at the first frame): what outlives a
	// change (a count for the summary) is kept from it.
	NewState(old any) any
	// Enter acts on frame f as it enters the hop.
	Enter(f *Frame, s *FlowState) Verdict
	// Propagate acts on f as it leaves the serialiser, given its delay so
	// far, and returns its delay.
	Propagate(f *Frame, s *FlowState, delay time.Duration) (time.Duration, Verdict)
}

// FlowState is one flow's place in one stage of one hop.
type FlowState struct {
	// Rand is the flow's stream at the hop named by the stage's key: what
	// the stage draws does not depend on any other stage, flow or hop.
	Rand *Stream
	// State is the stage's own, made by its NewState.
	State any
	// Stats are the flow's, for what a stage counts over frames (bursts).
	Stats *FlowStats
	epoch uint32 // of the stage's parameters it was made for
}

// Verdict is what a stage decides about a frame.
type Verdict uint8

// Verdicts.
const (
	Pass     Verdict = iota // the frame goes on
	Lose                    // the frame is lost (LossDrop)
	Copy                    // a copy goes on behind it, through the stages after this one
	Corrupt                 // the stage flipped bits of the frame's payload
	LeaveNow                // the frame leaves at once, without the hop's delay
)

// stageAt is when a stage acts.
type stageAt uint8

const (
	atEnter stageAt = iota
	atPropagate
)

// stageDef is a stage's registration.
type stageDef struct {
	key   string // the hop key that sets it, which also names its stream
	at    stageAt
	order int // among the stages acting at the same time: lower first
	of    func(p *HopParams) Stage
	field HopField // the key's
}

var stageDefs []stageDef

// registerStage adds a stage under its hop key; the key must be one of
// HopParams' (see HopKeys).
func registerStage(d stageDef) {
	k, ok := LookupHopKey(d.key)
	if !ok {
		panic(fmt.Sprintf("emulator: stage %q is not a hop key", d.key))
	}
	d.field = k.Field
	stageDefs = append(stageDefs, d)
	slices.SortStableFunc(stageDefs, func(a, b stageDef) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.order, b.order))
	})
}

// checkStages checks p's stages, in the order of HopKeys.
func (p *HopParams) checkStages() error {
	var errs []error
	for i := range hopKeys {
		for _, d := range stageDefs {
			if d.field == hopKeys[i].Field {
				if err := d.of(p).Check(); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// activeStage is one of a hop's stages that impairs.
type activeStage struct {
	Stage
	index int // in stageDefs, and in a flow's states at the hop
}

// hopStages are a hop's active stages, in order.
type hopStages struct {
	entering, propagating []activeStage
	// epochs count the changes to each stage's parameters, so that each
	// flow makes its state in the stage again.
	epochs []uint32
}

// initStages makes the stages of every hop, whose parameters must stay
// where they are: the stages read them. One array holds them all.
func initStages(hops []hop) {
	n := len(stageDefs)
	active, epochs := make([]activeStage, 2*n*len(hops)), make([]uint32, n*len(hops))
	for i := range hops {
		s := &hops[i].stages
		s.entering, active = active[:0:n], active[n:]
		s.propagating, active = active[:0:n], active[n:]
		s.epochs, epochs = epochs[:n:n], epochs[n:]
		s.update(&hops[i].HopParams, ^HopField(0))
	}
}

// update follows a change of the keys in changed of p.
func (s *hopStages) update(p *HopParams, changed HopField) {
	s.entering, s.propagating = s.entering[:0], s.propagating[:0]
	for i, d := range stageDefs {
		if changed&d.field != 0 {
			s.epochs[i]++
		}
		st := d.of(p)
		switch {
		case !st.Active():
		case d.at == atEnter:
			s.entering = append(s.entering, activeStage{st, i})
		default:
			s.propagating = append(s.propagating, activeStage{st, i})
		}
	}
}

// stageState returns frame f's flow's state in stage st of the hop f is
// in, making it when first needed or after the stage's parameters changed.
// Its stream depends on its name alone, so deriving it when first needed
// changes no draw, and flows through hops that do not impair keep none.
func (n *Network) stageState(f *Frame, h *hop, st activeStage) *FlowState {
	fl := &n.flows[f.Flow]
	extra := fl.extraAt(f.pos)
	if extra.stages == nil {
		extra.stages = make([]FlowState, len(stageDefs))
	}
	s := &extra.stages[st.index]
	switch {
	case s.Rand == nil:
		s.Rand = NewStream(n.seed, "hop", h.name, strconv.Itoa(int(fl.hopAt(f.pos).occurrence)), "flow", fl.name, stageDefs[st.index].key)
		s.Stats, s.epoch = &fl.stats, h.stages.epochs[st.index]
		s.State = st.NewState(nil)
	case s.epoch != h.stages.epochs[st.index]:
		s.epoch = h.stages.epochs[st.index]
		s.State = st.NewState(s.State)
	}
	return s
}

// A finisher is a stage's flow state that counts something the run's end
// must close (a burst still going on).
type finisher interface{ finish(s *FlowState) }

// finishStages closes the count of every flow's state that keeps one.
func (n *Network) finishStages() {
	for i := range n.flows {
		for j := range n.flows[i].extra {
			for k := range n.flows[i].extra[j].stages {
				if s := &n.flows[i].extra[j].stages[k]; s.State != nil {
					if fin, ok := s.State.(finisher); ok {
						fin.finish(s)
					}
				}
			}
		}
	}
}

func checkProbabilities(ps ...float64) error {
	for _, p := range ps {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("probability %v outside [0, 1]", p)
		}
	}
	return nil
}

// renew returns old, a *T, set to T's zero value, or a new T: a flow's
// state made again after a change without allocating.
func renew[T any](old any) *T {
	if t, ok := old.(*T); ok {
		var zero T
		*t = zero
		return t
	}
	return new(T)
}
