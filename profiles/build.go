package profiles

import (
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// build checks what the types alone cannot (references, ranges, overlaps)
// and turns the profile into the engine's configuration. Problems are
// reported through d, at the position of the value at fault.
func (p *Profile) build(d *lang.Decoder) emulator.Config {
	// Sized at once: a profile may have tens of thousands of hops and flows
	// (appending allocated twice what it kept: 14 MB for 10 000 of each).
	cfg := emulator.Config{Seed: p.Seed, Hops: make([]emulator.HopConfig, 0, p.Hops.Len()), Flows: make([]emulator.FlowConfig, 0, p.Flows.Len())}
	if p.Duration <= 0 {
		d.ErrorAt("duration", "must be positive")
	}
	for i, name := range p.Hops.Names {
		h := p.Hops.Values[i]
		path := lang.PathOf("hops").Key(name) // joined only for a message
		hc := emulator.HopConfig{Name: name}
		hc.HopParams, _ = h.HopSettings.apply(d, path, hc.HopParams)
		if h.Reorder != nil && h.Reorder.Mode == "gap" && h.Delay == nil && h.Jitter == nil {
			d.ErrorAt(path.Key("reorder").String(), "sending some frames at once needs a delay to overtake; give the hop a delay")
		}
		if h.Bus != nil {
			for _, given := range []struct {
				key string
				set bool
			}{{"rate", h.Rate != nil}, {"queue", h.Queue != nil}, {"overhead", h.Overhead != nil}, {"per_frame", h.PerFrame != nil}, {"flap", h.Flap != nil}} {
				if given.set {
					d.ErrorAt(path.Key(given.key).String(), "a bus has its own %s: give it under bus", given.key)
				}
			}
		} else if h.Rate == nil || h.Rate.None {
			if h.Queue != nil && h.PerFrame == nil {
				d.ErrorAt(path.Key("queue").String(), "a hop without a rate or a time per frame has no queue; give it one or remove the queue")
			}
			if h.Overhead != nil {
				d.ErrorAt(path.Key("overhead").String(), "overhead only counts when serialising; give the hop a rate")
			}
		}
		cfg.Hops = append(cfg.Hops, hc)
	}
	for i, name := range p.Flows.Names {
		f := p.Flows.Values[i]
		path := lang.PathOf("flows").Key(name)
		fc := emulator.FlowConfig{Name: name, Route: make([]int, 0, len(f.Route))}
		if len(f.Route) == 0 {
			d.ErrorAt(path.Key("route").String(), "must name at least one hop")
		}
		for j, hopName := range f.Route {
			h := p.Hops.Index(string(hopName))
			if h < 0 {
				d.ErrorAt(path.Key("route").Index(j).String(), "no hop named %q%s", hopName, lang.DidYouMean(string(hopName), p.Hops.Names))
			}
			fc.Route = append(fc.Route, h)
		}
		if f.Traffic != nil {
			fc.Traffic = f.Traffic.build(d, path.Key("traffic"))
		}
		cfg.Flows = append(cfg.Flows, fc)
	}
	// Both are required: given empty, they describe no network.
	if p.Hops.Len() == 0 {
		d.ErrorAt("hops", "a profile needs at least one hop")
	}
	if p.Flows.Len() == 0 {
		d.ErrorAt("flows", "a profile needs at least one flow")
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
func (s *HopSettings) apply(d *lang.Decoder, path lang.Path, base emulator.HopParams) (emulator.HopParams, emulator.HopField) {
	var set emulator.HopField
	if s.Rate != nil {
		base.Rate, set = s.Rate.Engine(), set|emulator.FieldRate
	}
	if s.Delay != nil {
		base.Delay, base.DelayTrace = s.Delay.build(d, path.Key("delay"))
		set |= emulator.FieldDelay
	}
	if s.Queue != nil {
		base.Queue, set = emulator.Limit(*s.Queue), set|emulator.FieldQueue
	}
	if s.Overhead != nil {
		if *s.Overhead > emulator.MaxFrameSize {
			d.ErrorAt(path.Key("overhead").String(), "must be at most %d bytes", emulator.MaxFrameSize)
		}
		base.Overhead, set = int(*s.Overhead), set|emulator.FieldOverhead
	}
	if s.PerFrame != nil {
		if *s.PerFrame < 0 {
			d.ErrorAt(path.Key("per_frame").String(), "must not be negative")
		}
		base.PerFrame, set = time.Duration(*s.PerFrame), set|emulator.FieldPerFrame
	}
	if s.Loss != nil {
		base.Loss, set = s.Loss.build(d, path.Key("loss")), set|emulator.FieldLoss
	}
	if s.Jitter != nil {
		base.Jitter, set = s.Jitter.build(d, path.Key("jitter")), set|emulator.FieldJitter
	}
	if s.Reorder != nil {
		base.Reorder, set = s.Reorder.build(d, path.Key("reorder")), set|emulator.FieldReorder
	}
	if s.Duplicate != nil {
		base.Duplicate, set = float64(*s.Duplicate), set|emulator.FieldDuplicate
	}
	if s.Corrupt != nil {
		base.Corrupt, set = s.Corrupt.build(), set|emulator.FieldCorrupt
	}
	if f := s.Flap; f != nil && f.none {
		base.Flap, set = emulator.Flap{}, set|emulator.FieldFlap
	} else if f != nil {
		if f.Every <= 0 {
			d.ErrorAt(path.Key("flap").Key("every").String(), "must be positive")
		}
		if f.Every > 0 && (f.For <= 0 || f.For > f.Every) {
			d.ErrorAt(path.Key("flap").Key("for").String(), "must be positive and at most every (%v)", f.Every)
		}
		base.Flap, set = emulator.Flap{Rate: emulator.Rate(f.Rate), Every: time.Duration(f.Every), For: time.Duration(f.For)}, set|emulator.FieldFlap
	}
	return base, set
}

func (l *Loss) build(d *lang.Decoder, path lang.Path) emulator.LossModel {
	switch {
	case l.none:
		return nil
	case l.Random != nil:
		return emulator.Bernoulli{P: float64(*l.Random)}
	case l.Gilbert != nil:
		g := l.Gilbert
		return emulator.GilbertElliott{P: float64(g.P), R: float64(*g.R), LossBad: float64(*g.LossBad), LossGood: float64(*g.LossGood)}
	case l.Markov4 != nil:
		m := l.Markov4
		out := emulator.Markov4{P13: float64(m.P13), P31: float64(*m.P31), P32: float64(*m.P32), P23: float64(*m.P23), P14: float64(*m.P14)}
		if out.P13+out.P14 > 1 {
			d.ErrorAt(path.Key("markov4").String(), "p13 + p14 is %.4g; leaving state 1 cannot be more likely than 100%%", out.P13+out.P14)
		}
		if out.P31+out.P32 > 1 {
			d.ErrorAt(path.Key("markov4").String(), "p31 + p32 is %.4g; leaving state 3 cannot be more likely than 100%%", out.P31+out.P32)
		}
		return out
	case l.Trace != nil:
		return buildLossTrace(d, l.Trace, path.Key("trace").String())
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

func (j *Jitter) build(d *lang.Decoder, path lang.Path) emulator.Jitter {
	var out emulator.Jitter
	if j.none {
		return out
	}
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
			d.ErrorAt(path.Key(key).String(), "%s jitter takes no %s (it takes %s)", j.Dist, key, strings.Join(keys.needs, " and "))
		}
	}
	missing := false
	for _, key := range keys.needs {
		if !given[key] {
			d.ErrorAt(path.String(), "%s jitter needs %s", j.Dist, key)
			missing = true
		}
	}
	if missing {
		return out
	}
	positive := func(key string, v *lang.Duration) time.Duration {
		if *v <= 0 {
			d.ErrorAt(path.Key(key).String(), "must be positive")
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
		samples, file := readDelays(d, *j.File, j.Unit, path.Key("file").String())
		if len(samples) > 0 {
			out.Dist = emulator.NewEmpirical(samples)
		}
		j.readFrom = file
	}
	return out
}

func (r *Reorder) build(d *lang.Decoder, path lang.Path) emulator.Reorder {
	switch r.Mode {
	case "allowed":
		return emulator.Reorder{Mode: emulator.ReorderAllowed}
	case "gap":
		if *r.Gap < 1 {
			d.ErrorAt(path.Key("gap").String(), "must be at least 1")
		}
		return emulator.Reorder{Mode: emulator.ReorderGap, P: float64(r.P), Gap: *r.Gap}
	}
	return emulator.Reorder{}
}

func (c *Corrupt) build() emulator.Corruption {
	switch {
	case c.none:
		return emulator.Corruption{}
	case c.BER != nil:
		return emulator.Corruption{BER: float64(*c.BER)}
	case c.Frame != nil:
		return emulator.Corruption{FrameP: float64(*c.Frame)}
	}
	return emulator.Corruption{}
}

func checkFrameSize(d *lang.Decoder, path lang.Path, size lang.Size) int {
	if size <= 0 || size > emulator.MaxFrameSize {
		d.ErrorAt(path.String(), "must be between 1B and %dB", emulator.MaxFrameSize)
	}
	return int(size)
}

func checkWindow(d *lang.Decoder, path lang.Path, start lang.Duration, stop *lang.Duration) time.Duration {
	if stop == nil {
		return 0
	}
	if *stop <= start {
		d.ErrorAt(path.Key("stop").String(), "must be after start (%v)", start)
	}
	return time.Duration(*stop)
}

func (t *Traffic) build(d *lang.Decoder, path lang.Path) emulator.Traffic {
	switch {
	case t.CBR != nil:
		c, path := t.CBR, path.Key("cbr")
		out := emulator.CBR{Size: checkFrameSize(d, path.Key("size"), c.Size), Start: time.Duration(c.Start)}
		out.Stop = checkWindow(d, path, c.Start, c.Stop)
		switch {
		case (c.Interval == nil) == (c.Rate == nil):
			d.ErrorAt(path.String(), "give either interval or rate")
		case c.Interval != nil && *c.Interval <= 0:
			d.ErrorAt(path.Key("interval").String(), "must be positive")
		case c.Interval != nil:
			out.Interval = time.Duration(*c.Interval)
		default:
			out.Rate = emulator.Rate(*c.Rate)
		}
		return out
	case t.Poisson != nil:
		c, path := t.Poisson, path.Key("poisson")
		out := emulator.Poisson{Rate: emulator.Rate(c.Rate), Size: checkFrameSize(d, path.Key("size"), c.Size), Start: time.Duration(c.Start)}
		out.Stop = checkWindow(d, path, c.Start, c.Stop)
		return out
	case t.OnOff != nil:
		c, path := t.OnOff, path.Key("onoff")
		out := emulator.OnOff{
			Rate:  emulator.Rate(c.Rate),
			Size:  checkFrameSize(d, path.Key("size"), c.Size),
			On:    c.On.build(d, path.Key("on")),
			Off:   c.Off.build(d, path.Key("off")),
			Start: time.Duration(c.Start),
		}
		out.Stop = checkWindow(d, path, c.Start, c.Stop)
		return out
	}
	return nil
}

func (p *Period) build(d *lang.Decoder, path lang.Path) emulator.Period {
	out := emulator.Period{Mean: time.Duration(p.Mean)}
	if p.Mean <= 0 {
		d.ErrorAt(path.String(), "must be positive")
	}
	switch p.Dist {
	case "exponential":
		out.Kind = emulator.Exponential
	case "pareto":
		out.Kind = emulator.ParetoPeriod
		out.Shape = *p.Shape
		if out.Shape <= 1 {
			d.ErrorAt(path.Key("shape").String(), "must be greater than 1 (the mean is infinite otherwise)")
		}
	}
	if p.Dist != "pareto" && p.Shape != nil {
		d.ErrorAt(path.Key("shape").String(), "only a pareto period has a shape")
	}
	return out
}
