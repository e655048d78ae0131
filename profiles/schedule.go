package profiles

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// The schedule becomes the engine's timed changes and the named phases
// without being written out: an entry that recurs stays one entry with a
// period and a count, however often it recurs (a 1 ns period over 100 s is
// 10^11 occurrences), and the checks between recurring entries are
// arithmetic on their periods. The engine queues one occurrence at a time.

// Phase is a named set of time windows of the schedule.
type Phase struct {
	Name    string
	Windows []Window
}

// Window is the half-open interval [From, To). With Count > 1 it recurs,
// Count times in all, Every apart: its k-th occurrence is [From + k·Every,
// To + k·Every), or [From + k·Every, To) when ToEnd (an entry without
// `for`, whose every occurrence lasts until the profile's end).
type Window struct {
	From, To time.Duration
	Every    time.Duration
	Count    int64
	ToEnd    bool
}

// Occurrences is how many intervals w stands for.
func (w Window) Occurrences() int64 { return max(w.Count, 1) }

// Occurrence returns w's k-th interval, from 0.
func (w Window) Occurrence(k int64) Window {
	shift := time.Duration(k) * w.Every
	if w.ToEnd {
		return Window{From: w.From + shift, To: w.To}
	}
	return Window{From: w.From + shift, To: w.To + shift}
}

// StartedBefore is how many of count occurrences, at at + k·every for
// k = 0, 1, …, begin before end: what a run that stops at end reaches of
// a recurring entry or phase.
func StartedBefore(at, every time.Duration, count int64, end time.Duration) int64 {
	switch {
	case at >= end:
		return 0
	case count <= 1 || every <= 0:
		return min(count, 1)
	}
	return min(count, int64((end-1-at)/every)+1)
}

// Contains reports whether t falls in one of w's intervals: the last to
// start by t is the one that can hold it.
func (w Window) Contains(t time.Duration) bool {
	if t < w.From {
		return false
	}
	var k int64
	if w.Count > 1 {
		k = min(int64((t-w.From)/w.Every), w.Count-1)
	}
	return t < w.Occurrence(k).To
}

// recurringEntry is a schedule entry's period, where it was written.
type recurringEntry struct {
	path  string
	pos   lang.Pos
	every time.Duration
}

// CheckPeriods reports, each at its place, the schedule's entries that
// recur more often than shortest: the shortest period the clock the run
// is on (what) can act on. Virtual time honours any period; a real-time
// run honours executor.Resolution.
func (p *Profile) CheckPeriods(shortest time.Duration, what string) error {
	var errs lang.ErrorList
	for _, r := range p.periods {
		if r.every < shortest {
			errs = append(errs, &lang.Error{Pos: r.pos, Path: r.path,
				Msg: fmt.Sprintf("%v is shorter than %s (%v): a change cannot recur that often in real time (sim can)", lang.Duration(r.every), what, lang.Duration(shortest))})
		}
	}
	return errs.Err()
}

// rampSteps is how many equal steps a ramp takes.
const rampSteps = 100

// outageWindow is an entry's outage on a hop, for the overlap check.
type outageWindow struct {
	Window
	path string
}

// buildSchedule turns the entries into the engine's timed changes (an
// entry's changes and ramp steps recur together, as one block) and
// collects the named phases.
func (p *Profile) buildSchedule(d *lang.Decoder) ([]emulator.Scheduled, []Phase) {
	var out []emulator.Scheduled
	var phases []Phase
	outages := map[int][]outageWindow{} // by hop
	phaseIndex := map[string]int{}      // in phases, by name
	end := time.Duration(p.Duration)
	var changes uint64 // in all, every occurrence and undo counted
	p.periods = nil
	for i := range p.Schedule {
		e := &p.Schedule[i]
		path := fmt.Sprintf("schedule[%d]", i)
		made, ramped := p.scheduleChanges(d, e, path)
		var length time.Duration
		if e.For != nil {
			if *e.For <= 0 {
				d.ErrorAt(path+".for", "must be positive")
			}
			length = time.Duration(*e.For)
		}
		if e.Ramp != nil && e.For == nil {
			d.ErrorAt(path+".ramp", "a ramp needs for: how long it takes")
		}
		at, every, count := p.occurrences(d, e, path)
		if count == 0 {
			continue
		}
		if every > 0 {
			p.periods = append(p.periods, recurringEntry{path + ".every", d.PosAt(path + ".every"), every})
		}
		w := Window{From: at, To: end, Every: every, Count: count, ToEnd: true}
		if length > 0 {
			w.To, w.ToEnd = at+length, false
		}
		block := len(out)
		for _, c := range made {
			out = append(out, emulator.Scheduled{At: at, For: length, Change: c})
			if o, ok := c.(emulator.Outage); ok {
				outages[o.Hop] = append(outages[o.Hop], outageWindow{w, path})
			}
		}
		for _, r := range ramped {
			out = append(out, r.steps(at, length)...)
		}
		var perOccurrence uint64
		for j := block; j < len(out); j++ {
			out[j].Every, out[j].Count, out[j].WithPrevious = every, count, j > block
			perOccurrence++
			if out[j].For > 0 {
				perOccurrence++
			}
		}
		if hi, all := bits.Mul64(perOccurrence, uint64(count)); hi != 0 || all > emulator.MaxScheduledChanges-changes {
			d.ErrorAt(path+".every", "recurs too often: with the entries before it the schedule makes more than %d changes", uint64(emulator.MaxScheduledChanges))
		} else {
			changes += all
		}
		if e.Phase != "" {
			i, seen := phaseIndex[string(e.Phase)]
			if !seen {
				i = len(phases)
				phaseIndex[string(e.Phase)] = i
				phases = append(phases, Phase{Name: string(e.Phase)})
			}
			phases[i].Windows = append(phases[i].Windows, w)
		}
	}
	for hop, name := range p.Hops.Names {
		checkOutageOverlaps(d, name, outages[hop])
	}
	return out, phases
}

// occurrences returns when an entry first takes effect, its period (0: it
// does not recur) and how many times it takes effect: `count`, or as many
// times as start before the profile's end. count is 0 when the entry never
// takes effect.
func (p *Profile) occurrences(d *lang.Decoder, e *ScheduleEntry, path string) (at, every time.Duration, count int64) {
	end := time.Duration(p.Duration)
	at = time.Duration(e.At)
	if at >= end && end > 0 {
		d.ErrorAt(path+".at", "%v is not before the profile's duration (%v)", e.At, p.Duration)
		return at, 0, 0
	}
	if e.Every == nil {
		if e.Count != nil {
			d.ErrorAt(path+".count", "count needs every: the period of the repetitions")
		}
		return at, 0, 1
	}
	every = time.Duration(*e.Every)
	switch {
	case every <= 0:
		d.ErrorAt(path+".every", "must be positive")
		return at, 0, 1
	case e.For != nil && every < time.Duration(*e.For):
		d.ErrorAt(path+".every", "%v is shorter than for (%v); repetitions would overlap", e.Every, *e.For)
		return at, 0, 1
	case e.Count != nil && *e.Count < 1:
		d.ErrorAt(path+".count", "must be at least 1")
		return at, 0, 1
	}
	var fit int64 // occurrences that start before the end
	if at < end {
		fit = int64((end-1-at)/every) + 1
	}
	if e.Count == nil {
		return at, every, fit
	}
	if int64(*e.Count) > fit {
		d.ErrorAt(path+".count", "repetition %d would start at %v, not before the profile's duration (%v)", fit+1, lang.Duration(at+time.Duration(fit)*every), p.Duration)
		return at, every, fit
	}
	return at, every, int64(*e.Count)
}

// checkOutageOverlaps reports the outages on one hop whose intervals
// overlap (the end of one would end the other early), each at the later
// of the two intervals that overlap first. Recurring outages are compared
// by counting, not by writing their occurrences out.
func checkOutageOverlaps(d *lang.Decoder, hop string, ws []outageWindow) {
	type overlap struct {
		at         time.Duration // when the later interval starts
		pair       [2]int        // the outages, by index (a < b; a == b: with itself)
		path, what string
		other      string
	}
	var found []overlap
	add := func(pair [2]int, later outageWindow, k int64, earlier outageWindow, j int64) {
		what := "outage"
		if k > 0 {
			what = fmt.Sprintf("repetition %d (at %v) of this outage", k+1, lang.Duration(later.Occurrence(k).From))
		}
		other := earlier.path
		if j > 0 {
			other = fmt.Sprintf("%s (repetition %d, at %v)", earlier.path, j+1, lang.Duration(earlier.Occurrence(j).From))
		}
		found = append(found, overlap{later.Occurrence(k).From, pair, later.path, what, other})
	}
	// An outage without `for` lasts until the end: a repetition overlaps
	// the one before it.
	selfOverlapping := func(w outageWindow) bool { return w.ToEnd && w.Occurrences() > 1 }
	for a, w := range ws {
		if selfOverlapping(w) {
			add([2]int{a, a}, w, 1, w, 0)
		}
	}
	// Only outages whose spans, from the first start to the last end, meet
	// can overlap. In order of their first start, each is compared with
	// the earlier ones whose span it starts in: outages that do not
	// overlap are compared with few others, not with all.
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ws[a].From, ws[b].From) })
	var active []int
	for _, b := range order {
		if selfOverlapping(ws[b]) {
			continue
		}
		active = slices.DeleteFunc(active, func(a int) bool { return ws[a].spanEnd() <= ws[b].From })
		for _, a := range active {
			first, second := min(a, b), max(a, b) // in the schedule's order
			x, y := ws[first], ws[second]
			i, j, ok := firstOverlap(x.Window, y.Window)
			switch {
			case !ok:
			case x.Occurrence(i).From > y.Occurrence(j).From:
				add([2]int{first, second}, x, i, y, j)
			default:
				add([2]int{first, second}, y, j, x, i)
			}
		}
		active = append(active, b)
	}
	// Earliest first; at the same instant, an outage's own repetitions
	// first, then pairs in the order the schedule lists them.
	slices.SortFunc(found, func(x, y overlap) int {
		return cmp.Or(cmp.Compare(x.at, y.at), cmp.Compare(btoi(x.pair[0] != x.pair[1]), btoi(y.pair[0] != y.pair[1])),
			cmp.Compare(x.pair[0], y.pair[0]), cmp.Compare(x.pair[1], y.pair[1]))
	})
	for _, o := range found {
		d.ErrorAt(o.path+".at", "%s on hop %q overlaps the one at %s", o.what, hop, o.other)
	}
}

// spanEnd is when w's last interval ends.
func (w Window) spanEnd() time.Duration { return w.Occurrence(w.Occurrences() - 1).To }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// firstOverlap returns the first intervals of a and b that overlap, by
// their indices, if any do. Neither may overlap itself. The overlapping
// pairs of two such sequences are ordered the same way in both (an
// interval of a overlapping a later interval of b than another of a's
// later intervals does would cross it), so the first interval of a that
// overlaps b and the first of b that overlaps a overlap each other.
func firstOverlap(a, b Window) (i, j int64, ok bool) {
	first := func(a, b Window) (int64, bool) {
		n := a.Occurrences()
		if overlapping(a, b, n).Sign() == 0 {
			return 0, false
		}
		// The smallest q with an overlapping interval among a's first q.
		lo, hi := int64(1), n
		for lo < hi {
			if mid := lo + (hi-lo)/2; overlapping(a, b, mid).Sign() > 0 {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return lo - 1, true
	}
	if i, ok = first(a, b); !ok {
		return 0, 0, false
	}
	j, _ = first(b, a)
	return i, j, true
}

// overlapping counts the intervals among a's first q that overlap an
// interval of b. With a's k-th interval [a0 + k·Ea, + La) and b's
// [b0 + m·Eb, + Lb), m < Kb, interval k overlaps b's m-th when
// lo_k ≤ m·Eb ≤ hi_k, lo_k = a0 + k·Ea − Lb + 1 − b0, hi_k = lo_k + La + Lb − 2.
// Both grow with k, so the k whose candidates m reach into [0, Kb) form a
// range; within it interval k overlaps iff some multiple of Eb falls in
// [lo_k, hi_k]: there are ⌊hi_k/Eb⌋ − ⌊(lo_k−1)/Eb⌋ of them, summed over
// the range as two floor sums.
func overlapping(a, b Window, q int64) *big.Int {
	period := func(w Window) *big.Int {
		if w.Occurrences() == 1 {
			return big.NewInt(1) // any: only the first interval counts
		}
		return big.NewInt(int64(w.Every))
	}
	length := func(w Window) *big.Int { return big.NewInt(int64(w.Occurrence(0).To - w.From)) }
	ea, eb, la, lb := period(a), period(b), length(a), length(b)
	one := big.NewInt(1)
	add := func(xs ...*big.Int) *big.Int {
		s := new(big.Int)
		for _, x := range xs {
			s.Add(s, x)
		}
		return s
	}
	neg := func(x *big.Int) *big.Int { return new(big.Int).Neg(x) }
	mul := func(x, y *big.Int) *big.Int { return new(big.Int).Mul(x, y) }
	floorDiv := func(x, y *big.Int) *big.Int { return new(big.Int).Div(x, y) } // Euclidean: floor for y > 0
	ceilDiv := func(x, y *big.Int) *big.Int { return neg(floorDiv(neg(x), y)) }
	// lo_k = c + k·Ea and hi_k = c + k·Ea + La + Lb − 2, with c = a0 − b0 − Lb + 1.
	c := add(big.NewInt(int64(a.From)), neg(big.NewInt(int64(b.From))), neg(lb), one)
	width := add(la, lb, big.NewInt(-2)) // hi_k − lo_k
	// hi_k ≥ 0 from k = first; lo_k ≤ (Kb−1)·Eb up to k = last.
	first := ceilDiv(neg(add(c, width)), ea)
	last := floorDiv(add(mul(big.NewInt(b.Occurrences()-1), eb), neg(c)), ea)
	if first.Sign() < 0 {
		first.SetInt64(0)
	}
	if limit := big.NewInt(q - 1); last.Cmp(limit) > 0 {
		last = limit
	}
	n := add(last, neg(first), one)
	if n.Sign() <= 0 {
		return new(big.Int)
	}
	if width.Cmp(eb) >= 0 {
		return n // an interval as long as b's period always holds a multiple of it
	}
	start := add(c, mul(first, ea))
	return add(floorSum(n, eb, ea, add(start, width)), neg(floorSum(n, eb, ea, add(start, neg(one)))))
}

// floorSum is Σ_{k<n} ⌊(a·k + b)/m⌋ for n ≥ 0, m > 0, a ≥ 0 and any b, by
// the Euclid-like reduction of AtCoder Library's floor_sum.
func floorSum(n, m, a, b *big.Int) *big.Int {
	n, m, a = new(big.Int).Set(n), new(big.Int).Set(m), new(big.Int).Set(a)
	ans := new(big.Int)
	// b = m·⌊b/m⌋ + (b mod m): the whole part adds n·⌊b/m⌋.
	bq, br := new(big.Int).DivMod(b, m, new(big.Int))
	ans.Add(ans, new(big.Int).Mul(n, bq))
	b = br
	two := big.NewInt(2)
	for {
		if a.Cmp(m) >= 0 {
			pairs := new(big.Int).Mul(n, new(big.Int).Sub(n, big.NewInt(1)))
			pairs.Quo(pairs, two)
			ans.Add(ans, pairs.Mul(pairs, new(big.Int).Quo(a, m)))
			a.Mod(a, m)
		}
		if b.Cmp(m) >= 0 {
			ans.Add(ans, new(big.Int).Mul(n, new(big.Int).Quo(b, m)))
			b.Mod(b, m)
		}
		yMax := new(big.Int).Add(new(big.Int).Mul(a, n), b)
		if yMax.Cmp(m) < 0 {
			return ans
		}
		n, b = new(big.Int).DivMod(yMax, m, new(big.Int))
		m, a = a, m
	}
}

// ramp is one ramped parameter of an entry.
type ramp struct {
	hop      int
	field    emulator.HopField
	from, to float64
}

// steps returns the ramp's changes: at at + k·length/N the value becomes
// from + (to − from)·k/N, for k = 0..N, so it starts at from and ends at to.
func (r ramp) steps(at, length time.Duration) []emulator.Scheduled {
	n := rampSteps
	if length < rampSteps*time.Millisecond {
		n = max(1, int(length/time.Millisecond)) // at most one step per millisecond
	}
	out := make([]emulator.Scheduled, 0, n+1)
	for k := 0; k <= n; k++ {
		v := r.from + (r.to-r.from)*float64(k)/float64(n)
		var params emulator.HopParams
		switch r.field {
		case emulator.FieldRate:
			params.Rate = emulator.Rate(math.Round(v))
		case emulator.FieldDelay:
			params.Delay = time.Duration(math.Round(v))
		case emulator.FieldLoss:
			params.Loss = emulator.Bernoulli{P: v}
		}
		// length·k/n in 128 bits: length may be a century, and k·length
		// pass an int64.
		hi, lo := bits.Mul64(uint64(length), uint64(k))
		offset, _ := bits.Div64(hi, lo, uint64(n))
		// A step past the last instant of any run never acts: it is kept
		// at that instant, which the engine takes.
		t := min(at+time.Duration(offset), emulator.MaxDuration)
		out = append(out, emulator.Scheduled{At: t, Change: emulator.SetHop{Hop: r.hop, Set: r.field, Params: params}})
	}
	return out
}

// scheduleChanges checks what an entry changes and returns the engine
// changes it makes each time it occurs, and its ramps.
func (p *Profile) scheduleChanges(d *lang.Decoder, e *ScheduleEntry, path string) ([]emulator.Change, []ramp) {
	params, hopSet := e.HopSettings.apply(d, lang.PathOf(path), emulator.HopParams{})
	hop, flow := -1, -1
	if e.Hop != "" {
		if hop = p.Hops.Index(string(e.Hop)); hop < 0 {
			d.ErrorAt(path+".hop", "no hop named %q%s", e.Hop, lang.DidYouMean(string(e.Hop), p.Hops.Names))
		}
	}
	if e.Flow != "" {
		if flow = p.Flows.Index(string(e.Flow)); flow < 0 {
			d.ErrorAt(path+".flow", "no flow named %q%s", e.Flow, lang.DidYouMean(string(e.Flow), p.Flows.Names))
		}
	}
	switch {
	case e.Hop != "" && e.Flow != "":
		d.ErrorAt(path, "give hop or flow, not both")
	case e.Hop == "" && e.Flow == "":
		if e.Phase == "" {
			d.ErrorAt(path, "say what to change: hop or flow (or name a phase)")
		}
		if e.Outage != nil || hopSet != 0 || e.Ramp != nil || e.Traffic != nil {
			d.ErrorAt(path, "say which hop or flow to change")
		}
	case e.Hop != "":
		return e.hopChanges(d, path, hop, params, hopSet)
	default:
		return p.flowChanges(d, e, path, flow, hopSet), nil
	}
	return nil, nil
}

// hopChanges checks an entry that changes hop (-1: unknown, reported)
// and returns its changes and ramps.
func (e *ScheduleEntry) hopChanges(d *lang.Decoder, path string, hop int, params emulator.HopParams, hopSet emulator.HopField) ([]emulator.Change, []ramp) {
	if e.Traffic != nil {
		d.ErrorAt(path+".traffic", "traffic switches a flow; use flow: instead of hop:")
	}
	if e.HoldLimit != nil && (e.Outage == nil || *e.Outage != "hold") {
		d.ErrorAt(path+".hold_limit", "only an outage: hold has a hold buffer")
	}
	if e.Outage == nil && hopSet == 0 && e.Ramp == nil {
		d.ErrorAt(path, "changes nothing (give outage, a ramp, or hop parameters such as rate or delay)")
	}
	var ramps []ramp
	if e.Ramp != nil && e.For != nil && *e.For > 0 {
		ramps = e.Ramp.build(d, path+".ramp", hopSet)
	}
	if hop < 0 {
		return nil, ramps
	}
	for i := range ramps {
		ramps[i].hop = hop
	}
	var changes []emulator.Change
	if hopSet != 0 {
		changes = append(changes, emulator.SetHop{Hop: hop, Set: hopSet, Params: params})
	}
	if e.Outage != nil {
		mode := emulator.OutageDropMode
		if *e.Outage == "hold" {
			mode = emulator.OutageHoldMode
		}
		var limit emulator.Limit
		if e.HoldLimit != nil {
			limit = emulator.Limit(*e.HoldLimit)
		}
		changes = append(changes, emulator.Outage{Hop: hop, Mode: mode, HoldLimit: limit})
	}
	return changes, ramps
}

// flowChanges checks an entry that switches flow's traffic (-1: unknown,
// reported) and returns its change.
func (p *Profile) flowChanges(d *lang.Decoder, e *ScheduleEntry, path string, flow int, hopSet emulator.HopField) []emulator.Change {
	if e.Outage != nil || hopSet != 0 || e.Ramp != nil {
		d.ErrorAt(path, "outages, ramps and hop parameters apply to a hop; use hop: instead of flow:")
	}
	if e.Traffic == nil {
		d.ErrorAt(path, "changes nothing (give traffic: on or off)")
		return nil
	}
	if flow < 0 {
		return nil
	}
	if p.Flows.Values[flow].Traffic == nil {
		d.ErrorAt(path+".flow", "flow %q has no traffic to switch", e.Flow)
	}
	return []emulator.Change{emulator.SwitchTraffic{Flow: flow, On: *e.Traffic == "on"}}
}

func (r *Ramp) build(d *lang.Decoder, path string, alsoSet emulator.HopField) []ramp {
	var out []ramp
	add := func(key string, field emulator.HopField, from, to float64) {
		if alsoSet&field != 0 {
			d.ErrorAt(path+"."+key, "%s is both set and ramped by this entry", key)
			return
		}
		out = append(out, ramp{field: field, from: from, to: to})
	}
	if r.Rate != nil {
		add("rate", emulator.FieldRate, float64(r.Rate.From), float64(r.Rate.To))
	}
	if r.Delay != nil {
		add("delay", emulator.FieldDelay, float64(r.Delay.From), float64(r.Delay.To))
	}
	if r.Loss != nil {
		add("loss", emulator.FieldLoss, float64(r.Loss.From), float64(r.Loss.To))
	}
	if r.Rate == nil && r.Delay == nil && r.Loss == nil {
		d.ErrorAt(path, "ramps nothing (give rate, delay or loss, each with from and to)")
	}
	return out
}
