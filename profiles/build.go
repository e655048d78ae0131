package profiles

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// build checks what the types alone cannot (references, ranges, overlaps)
// and turns the profile into the engine's configuration. Problems are
// reported through d, at the position of the value at fault.
func (p *Profile) build(d *decoder) emulator.Config {
	cfg := emulator.Config{Seed: p.Seed}
	if p.Duration <= 0 {
		d.errorAt("duration", "must be positive")
	}
	for i, name := range p.Hops.Names {
		h := p.Hops.Values[i]
		path := "hops." + name
		hc := emulator.HopConfig{Name: name}
		hc.HopParams, _ = h.HopSettings.apply(d, path, hc.HopParams)
		if h.Reorder != nil && h.Reorder.Mode == "gap" && h.Delay == nil && h.Jitter == nil {
			d.errorAt(path+".reorder", "sending some frames at once needs a delay to overtake; give the hop a delay")
		}
		if h.Bus != nil {
			for _, given := range []struct {
				key string
				set bool
			}{{"rate", h.Rate != nil}, {"queue", h.Queue != nil}, {"overhead", h.Overhead != nil}} {
				if given.set {
					d.errorAt(path+"."+given.key, "a bus has its own %s: give it under bus", given.key)
				}
			}
		} else if h.Rate == nil {
			if h.Queue != nil {
				d.errorAt(path+".queue", "a hop without a rate has no queue; give it a rate or remove the queue")
			}
			if h.Overhead != nil {
				d.errorAt(path+".overhead", "overhead only counts when serialising; give the hop a rate")
			}
		}
		cfg.Hops = append(cfg.Hops, hc)
	}
	for i, name := range p.Flows.Names {
		f := p.Flows.Values[i]
		path := "flows." + name
		fc := emulator.FlowConfig{Name: name}
		if len(f.Route) == 0 {
			d.errorAt(path+".route", "must name at least one hop")
		}
		for j, hopName := range f.Route {
			h := p.Hops.Index(string(hopName))
			if h < 0 {
				d.errorAt(fmt.Sprintf("%s.route[%d]", path, j), "no hop named %q%s", hopName, didYouMean(string(hopName), p.Hops.Names))
			}
			fc.Route = append(fc.Route, h)
		}
		if f.Traffic != nil {
			fc.Traffic = f.Traffic.build(d, path+".traffic")
		}
		cfg.Flows = append(cfg.Flows, fc)
	}
	for i, h := range p.Hops.Values {
		if h.Bus != nil {
			cfg.Hops[i].Bus = p.buildBus(d, "hops."+p.Hops.Names[i], i, h)
		}
	}
	cfg.Schedule, p.phases = p.buildSchedule(d)
	return cfg
}

// apply sets the parameters given in s on base and says which it set.
func (s *HopSettings) apply(d *decoder, path string, base emulator.HopParams) (emulator.HopParams, emulator.HopField) {
	var set emulator.HopField
	if s.Rate != nil {
		base.Rate, set = s.Rate.engine(), set|emulator.FieldRate
	}
	if s.Delay != nil {
		base.Delay, set = time.Duration(*s.Delay), set|emulator.FieldDelay
	}
	if s.Queue != nil {
		base.Queue, set = emulator.Limit(*s.Queue), set|emulator.FieldQueue
	}
	if s.Overhead != nil {
		if *s.Overhead > emulator.MaxFrameSize {
			d.errorAt(path+".overhead", "must be at most %d bytes", emulator.MaxFrameSize)
		}
		base.Overhead, set = int(*s.Overhead), set|emulator.FieldOverhead
	}
	if s.Loss != nil {
		base.Loss, set = s.Loss.build(d, path+".loss"), set|emulator.FieldLoss
	}
	if s.Jitter != nil {
		base.Jitter, set = s.Jitter.build(d, path+".jitter"), set|emulator.FieldJitter
	}
	if s.Reorder != nil {
		base.Reorder, set = s.Reorder.build(d, path+".reorder"), set|emulator.FieldReorder
	}
	if s.Duplicate != nil {
		base.Duplicate, set = float64(*s.Duplicate), set|emulator.FieldDuplicate
	}
	if s.Corrupt != nil {
		base.Corrupt, set = s.Corrupt.build(), set|emulator.FieldCorrupt
	}
	return base, set
}

func (l *Loss) build(d *decoder, path string) emulator.LossModel {
	switch {
	case l.Random != nil:
		return emulator.Bernoulli{P: float64(*l.Random)}
	case l.Gilbert != nil:
		g := l.Gilbert
		return emulator.GilbertElliott{P: float64(g.P), R: float64(*g.R), LossBad: float64(*g.LossBad), LossGood: float64(*g.LossGood)}
	case l.Markov4 != nil:
		m := l.Markov4
		out := emulator.Markov4{P13: float64(m.P13), P31: float64(*m.P31), P32: float64(*m.P32), P23: float64(*m.P23), P14: float64(*m.P14)}
		if out.P13+out.P14 > 1 {
			d.errorAt(path+".markov4", "p13 + p14 is %.4g; leaving state 1 cannot be more likely than 100%%", out.P13+out.P14)
		}
		if out.P31+out.P32 > 1 {
			d.errorAt(path+".markov4", "p31 + p32 is %.4g; leaving state 3 cannot be more likely than 100%%", out.P31+out.P32)
		}
		return out
	}
	return nil
}

// jitterKeys says which parameters each distribution needs and accepts.
var jitterKeys = map[JitterDist]struct{ needs, accepts []string }{
	"uniform":      {needs: []string{"spread"}},
	"normal":       {needs: []string{"sigma"}},
	"pareto":       {needs: []string{"mean", "sigma"}},
	"paretonormal": {needs: []string{"mean", "sigma"}},
	"empirical":    {needs: []string{"file"}, accepts: []string{"unit"}},
}

func (j *Jitter) build(d *decoder, path string) emulator.Jitter {
	var out emulator.Jitter
	if j.Correlation != nil {
		out.Correlation = float64(*j.Correlation)
	}
	keys, known := jitterKeys[j.Dist]
	if !known {
		return out // the distribution's name was already reported
	}
	given := map[string]bool{"spread": j.Spread != nil, "sigma": j.Sigma != nil, "mean": j.Mean != nil, "file": j.File != nil, "unit": j.Unit != nil}
	for _, key := range []string{"spread", "sigma", "mean", "file", "unit"} {
		if given[key] && !slices.Contains(keys.needs, key) && !slices.Contains(keys.accepts, key) {
			d.errorAt(path+"."+key, "%s jitter takes no %s (it takes %s)", j.Dist, key, strings.Join(keys.needs, " and "))
		}
	}
	missing := false
	for _, key := range keys.needs {
		if !given[key] {
			d.errorAt(path, "%s jitter needs %s", j.Dist, key)
			missing = true
		}
	}
	if missing {
		return out
	}
	positive := func(key string, v *Duration) time.Duration {
		if *v <= 0 {
			d.errorAt(path+"."+key, "must be positive")
		}
		return time.Duration(*v)
	}
	switch j.Dist {
	case "uniform":
		out.Dist = emulator.Uniform{Spread: positive("spread", j.Spread)}
	case "normal":
		out.Dist = emulator.Normal{Sigma: positive("sigma", j.Sigma)}
	case "pareto":
		out.Dist = emulator.Pareto{Mean: positive("mean", j.Mean), Sigma: positive("sigma", j.Sigma)}
	case "paretonormal":
		out.Dist = emulator.ParetoNormal{Mean: time.Duration(*j.Mean), Sigma: positive("sigma", j.Sigma)}
	case "empirical":
		samples, file := d.readDelays(*j.File, j.Unit, path+".file")
		if len(samples) > 0 {
			out.Dist = emulator.NewEmpirical(samples)
		}
		j.readFrom = file
	}
	return out
}

func (r *Reorder) build(d *decoder, path string) emulator.Reorder {
	switch r.Mode {
	case "allowed":
		return emulator.Reorder{Mode: emulator.ReorderAllowed}
	case "gap":
		if *r.Gap < 1 {
			d.errorAt(path+".gap", "must be at least 1")
		}
		return emulator.Reorder{Mode: emulator.ReorderGap, P: float64(r.P), Gap: *r.Gap}
	}
	return emulator.Reorder{}
}

func (c *Corrupt) build() emulator.Corruption {
	switch {
	case c.BER != nil:
		return emulator.Corruption{BER: float64(*c.BER)}
	case c.Frame != nil:
		return emulator.Corruption{FrameP: float64(*c.Frame)}
	}
	return emulator.Corruption{}
}

func checkFrameSize(d *decoder, path string, size Size) int {
	if size <= 0 || size > emulator.MaxFrameSize {
		d.errorAt(path, "must be between 1B and %dB", emulator.MaxFrameSize)
	}
	return int(size)
}

func checkWindow(d *decoder, path string, start Duration, stop *Duration) time.Duration {
	if stop == nil {
		return 0
	}
	if *stop <= start {
		d.errorAt(path+".stop", "must be after start (%v)", start)
	}
	return time.Duration(*stop)
}

func (t *Traffic) build(d *decoder, path string) emulator.Traffic {
	switch {
	case t.CBR != nil:
		c, path := t.CBR, path+".cbr"
		out := emulator.CBR{Size: checkFrameSize(d, path+".size", c.Size), Start: time.Duration(c.Start)}
		out.Stop = checkWindow(d, path, c.Start, c.Stop)
		switch {
		case (c.Interval == nil) == (c.Rate == nil):
			d.errorAt(path, "give either interval or rate")
		case c.Interval != nil && *c.Interval <= 0:
			d.errorAt(path+".interval", "must be positive")
		case c.Interval != nil:
			out.Interval = time.Duration(*c.Interval)
		default:
			out.Rate = emulator.Rate(*c.Rate)
		}
		return out
	case t.Poisson != nil:
		c, path := t.Poisson, path+".poisson"
		out := emulator.Poisson{Rate: emulator.Rate(c.Rate), Size: checkFrameSize(d, path+".size", c.Size), Start: time.Duration(c.Start)}
		out.Stop = checkWindow(d, path, c.Start, c.Stop)
		return out
	case t.OnOff != nil:
		c, path := t.OnOff, path+".onoff"
		out := emulator.OnOff{
			Rate:  emulator.Rate(c.Rate),
			Size:  checkFrameSize(d, path+".size", c.Size),
			On:    c.On.build(d, path+".on"),
			Off:   c.Off.build(d, path+".off"),
			Start: time.Duration(c.Start),
		}
		out.Stop = checkWindow(d, path, c.Start, c.Stop)
		return out
	}
	return nil
}

func (p *Period) build(d *decoder, path string) emulator.Period {
	out := emulator.Period{Mean: time.Duration(p.Mean)}
	if p.Mean <= 0 {
		d.errorAt(path, "must be positive")
	}
	switch p.Dist {
	case "exponential":
		out.Kind = emulator.Exponential
	case "pareto":
		out.Kind = emulator.ParetoPeriod
		out.Shape = *p.Shape
		if out.Shape <= 1 {
			d.errorAt(path+".shape", "must be greater than 1 (the mean is infinite otherwise)")
		}
	}
	if p.Dist != "pareto" && p.Shape != nil {
		d.errorAt(path+".shape", "only a pareto period has a shape")
	}
	return out
}

// Phase is a named set of time windows of the schedule.
type Phase struct {
	Name    string
	Windows []Window
}

// Window is the half-open interval [From, To).
type Window struct{ From, To time.Duration }

// rampSteps is how many equal steps a ramp takes.
const rampSteps = 100

// buildSchedule expands repetitions and ramps into the engine's timed
// changes and collects the named phases.
func (p *Profile) buildSchedule(d *decoder) ([]emulator.Scheduled, []Phase) {
	var out []emulator.Scheduled
	var phases []Phase
	type window struct {
		Window
		path       string // the entry's path
		repetition int    // from 1
	}
	describe := func(w window) string {
		if w.repetition == 1 {
			return w.path
		}
		return fmt.Sprintf("%s (repetition %d, at %v)", w.path, w.repetition, Duration(w.From))
	}
	outages := map[string][]window{}
	end := time.Duration(p.Duration)
	for i := range p.Schedule {
		e := &p.Schedule[i]
		path := fmt.Sprintf("schedule[%d]", i)
		changes, ramped := p.scheduleChanges(d, e, path)
		var length time.Duration
		if e.For != nil {
			if *e.For <= 0 {
				d.errorAt(path+".for", "must be positive")
			}
			length = time.Duration(*e.For)
		}
		if e.Ramp != nil && e.For == nil {
			d.errorAt(path+".ramp", "a ramp needs for: how long it takes")
		}
		for k, at := range p.occurrences(d, e, path) {
			until := end
			if length > 0 {
				until = at + length
			}
			for _, c := range changes {
				out = append(out, emulator.Scheduled{At: at, For: length, Change: c})
				if o, ok := c.(emulator.Outage); ok {
					hop := p.Hops.Names[o.Hop]
					outages[hop] = append(outages[hop], window{Window{at, until}, path, k + 1})
				}
			}
			for _, r := range ramped {
				out = append(out, r.steps(at, length)...)
			}
			if e.Phase != "" {
				phases = addPhaseWindow(phases, string(e.Phase), Window{at, until})
			}
		}
	}
	for hop, ws := range outages {
		sort.Slice(ws, func(i, j int) bool { return ws[i].From < ws[j].From })
		for i := 1; i < len(ws); i++ {
			if ws[i].From < ws[i-1].To {
				what := "outage"
				if ws[i].repetition > 1 {
					what = fmt.Sprintf("repetition %d (at %v) of this outage", ws[i].repetition, Duration(ws[i].From))
				}
				d.errorAt(ws[i].path+".at", "%s on hop %q overlaps the one at %s", what, hop, describe(ws[i-1]))
			}
		}
	}
	return out, phases
}

func addPhaseWindow(phases []Phase, name string, w Window) []Phase {
	for i := range phases {
		if phases[i].Name == name {
			phases[i].Windows = append(phases[i].Windows, w)
			return phases
		}
	}
	return append(phases, Phase{Name: name, Windows: []Window{w}})
}

// occurrences returns the start times of an entry: at, then every `every`
// for `count` times or while before the profile's end.
func (p *Profile) occurrences(d *decoder, e *ScheduleEntry, path string) []time.Duration {
	end := time.Duration(p.Duration)
	at := time.Duration(e.At)
	if at >= end && end > 0 {
		d.errorAt(path+".at", "%v is not before the profile's duration (%v)", e.At, p.Duration)
		return nil
	}
	if e.Every == nil {
		if e.Count != nil {
			d.errorAt(path+".count", "count needs every: the period of the repetitions")
		}
		return []time.Duration{at}
	}
	every := time.Duration(*e.Every)
	switch {
	case every <= 0:
		d.errorAt(path+".every", "must be positive")
		return []time.Duration{at}
	case e.For != nil && every < time.Duration(*e.For):
		d.errorAt(path+".every", "%v is shorter than for (%v); repetitions would overlap", e.Every, *e.For)
		return []time.Duration{at}
	case e.Count != nil && *e.Count < 1:
		d.errorAt(path+".count", "must be at least 1")
		return []time.Duration{at}
	}
	var times []time.Duration
	for k := 0; ; k++ {
		t := at + time.Duration(k)*every
		if e.Count != nil && k == *e.Count {
			break
		}
		if t >= end {
			if e.Count != nil {
				d.errorAt(path+".count", "repetition %d would start at %v, not before the profile's duration (%v)", k+1, Duration(t), p.Duration)
			}
			break
		}
		times = append(times, t)
	}
	return times
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
		t := at + time.Duration(int64(length)*int64(k)/int64(n))
		out = append(out, emulator.Scheduled{At: t, Change: emulator.SetHop{Hop: r.hop, Set: r.field, Params: params}})
	}
	return out
}

// scheduleChanges checks what an entry changes and returns the engine
// changes it makes each time it occurs, and its ramps.
func (p *Profile) scheduleChanges(d *decoder, e *ScheduleEntry, path string) ([]emulator.Change, []ramp) {
	params, hopSet := e.HopSettings.apply(d, path, emulator.HopParams{})
	hop, flow := -1, -1
	if e.Hop != "" {
		if hop = p.Hops.Index(string(e.Hop)); hop < 0 {
			d.errorAt(path+".hop", "no hop named %q%s", e.Hop, didYouMean(string(e.Hop), p.Hops.Names))
		}
	}
	if e.Flow != "" {
		if flow = p.Flows.Index(string(e.Flow)); flow < 0 {
			d.errorAt(path+".flow", "no flow named %q%s", e.Flow, didYouMean(string(e.Flow), p.Flows.Names))
		}
	}
	var changes []emulator.Change
	var ramps []ramp
	switch {
	case e.Hop != "" && e.Flow != "":
		d.errorAt(path, "give hop or flow, not both")
	case e.Hop == "" && e.Flow == "":
		if e.Phase == "" {
			d.errorAt(path, "say what to change: hop or flow (or name a phase)")
		}
		if e.Outage != nil || hopSet != 0 || e.Ramp != nil || e.Traffic != nil {
			d.errorAt(path, "say which hop or flow to change")
		}
	case e.Hop != "":
		if e.Traffic != nil {
			d.errorAt(path+".traffic", "traffic switches a flow; use flow: instead of hop:")
		}
		if e.HoldLimit != nil && (e.Outage == nil || *e.Outage != "hold") {
			d.errorAt(path+".hold_limit", "only an outage: hold has a hold buffer")
		}
		if e.Outage == nil && hopSet == 0 && e.Ramp == nil {
			d.errorAt(path, "changes nothing (give outage, a ramp, or hop parameters such as rate or delay)")
		}
		if e.Ramp != nil && e.For != nil && *e.For > 0 {
			ramps = e.Ramp.build(d, path+".ramp", hopSet)
		}
		if hop < 0 {
			break
		}
		for i := range ramps {
			ramps[i].hop = hop
		}
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
	default:
		if e.Outage != nil || hopSet != 0 || e.Ramp != nil {
			d.errorAt(path, "outages, ramps and hop parameters apply to a hop; use hop: instead of flow:")
		}
		if e.Traffic == nil {
			d.errorAt(path, "changes nothing (give traffic: on or off)")
		} else if flow >= 0 {
			if p.Flows.Values[flow].Traffic == nil {
				d.errorAt(path+".flow", "flow %q has no traffic to switch", e.Flow)
			}
			changes = append(changes, emulator.SwitchTraffic{Flow: flow, On: *e.Traffic == "on"})
		}
	}
	return changes, ramps
}

func (r *Ramp) build(d *decoder, path string, alsoSet emulator.HopField) []ramp {
	var out []ramp
	add := func(key string, field emulator.HopField, from, to float64) {
		if alsoSet&field != 0 {
			d.errorAt(path+"."+key, "%s is both set and ramped by this entry", key)
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
		d.errorAt(path, "ramps nothing (give rate, delay or loss, each with from and to)")
	}
	return out
}
