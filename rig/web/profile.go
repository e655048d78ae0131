package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
)

// getProfile answers the resolved profile as it runs now, in the profile
// language: its seed and duration the run's (which --seed and --duration
// may have set), its hops' parameters as they are at this instant of the
// run (changed by hand or by the schedule; a comment says the instant),
// its schedule the profile's, but for the entries the run does not reach.
// The rig writes it (Host.profileNow), since the hops are the executor's.
// With ?as-run, the profile that replays the run: its hops as the run
// began, and every change made by hand as a schedule entry at the instant
// it took effect.
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) {
	if _, asRun := r.URL.Query()["as-run"]; !asRun {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		text, err := s.profileNow(ctx)
		if err != nil {
			writeRefusal(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, text)
		return
	}
	p := *s.run.profile
	prof := *p.Profile
	end := time.Duration(s.run.hello.End)
	prof.Seed, prof.Duration, prof.Schedule = s.run.hello.Seed, profiles.Duration(end), within(prof.Schedule, end)
	byHand := s.asRun.entries() // the changes made by hand
	if len(byHand) > 0 {
		prof.Schedule = append(prof.Schedule, asRunMarker)
	}
	p.Profile = &prof
	text := p.YAML()
	if len(byHand) > 0 {
		var err error
		if text, err = spliceChanges(text, s.renderEntry(asRunMarker), byHand); err != nil {
			writeError(w, http.StatusInternalServerError, "writing the as-run profile: "+err.Error(), "")
			return
		}
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(text)
}

// within returns the entries of a schedule that take effect before end
// (a run shorter than its profile's duration does not reach the others),
// with as many repetitions as start before it.
func within(schedule []profiles.ScheduleEntry, end time.Duration) []profiles.ScheduleEntry {
	var out []profiles.ScheduleEntry
	for _, e := range schedule {
		at := time.Duration(e.At)
		if at >= end {
			continue
		}
		if e.Every != nil && e.Count != nil {
			fit := profiles.StartedBefore(at, time.Duration(*e.Every), *e.Count, end)
			e.Count = &fit
		}
		out = append(out, e)
	}
	return out
}

func networkHops(n *emulator.Network) []emulator.HopState {
	hops := make([]emulator.HopState, n.NumHops())
	for i := range hops {
		hops[i] = n.HopNow(i)
	}
	return hops
}

// hopField is one of a hop's parameters: the engine's field, its key in
// the profile language, its field in profiles.HopSettings, its value in
// the engine's parameters, and that value written as a change's body
// does (false: it cannot be).
type hopField struct {
	field  emulator.HopField
	key    string
	name   string
	value  func(p *emulator.HopParams) any
	render func(p *emulator.HopParams) (any, bool)
}

var hopFields = []hopField{
	{emulator.FieldRate, "rate", "Rate", func(p *emulator.HopParams) any { return p.Rate },
		func(p *emulator.HopParams) (any, bool) { return p.Rate.String(), p.Rate > 0 }},
	{emulator.FieldDelay, "delay", "Delay", func(p *emulator.HopParams) any { return [2]any{p.Delay, p.DelayTrace} },
		func(p *emulator.HopParams) (any, bool) { return duration(p.Delay), p.DelayTrace == nil }},
	{emulator.FieldQueue, "queue", "Queue", func(p *emulator.HopParams) any { return p.Queue },
		func(p *emulator.HopParams) (any, bool) { return p.Queue.String(), p.Queue.Unit != emulator.Unlimited }},
	{emulator.FieldOverhead, "overhead", "Overhead", func(p *emulator.HopParams) any { return p.Overhead },
		func(p *emulator.HopParams) (any, bool) { return strconv.Itoa(p.Overhead) + "B", true }},
	{emulator.FieldPerFrame, "per_frame", "PerFrame", func(p *emulator.HopParams) any { return p.PerFrame },
		func(p *emulator.HopParams) (any, bool) { return duration(p.PerFrame), true }},
	{emulator.FieldLoss, "loss", "Loss", func(p *emulator.HopParams) any { return p.Loss }, renderLoss},
	{emulator.FieldJitter, "jitter", "Jitter", func(p *emulator.HopParams) any { return p.Jitter }, renderJitter},
	{emulator.FieldReorder, "reorder", "Reorder", func(p *emulator.HopParams) any { return p.Reorder }, renderReorder},
	{emulator.FieldDuplicate, "duplicate", "Duplicate", func(p *emulator.HopParams) any { return p.Duplicate },
		func(p *emulator.HopParams) (any, bool) { return probability(p.Duplicate), true }},
	{emulator.FieldCorrupt, "corrupt", "Corrupt", func(p *emulator.HopParams) any { return p.Corrupt }, renderCorrupt},
}

func duration(d time.Duration) string { return profiles.Duration(d).String() }
func probability(p float64) string    { return profiles.Probability(p).String() }

func renderLoss(p *emulator.HopParams) (any, bool) {
	switch m := p.Loss.(type) {
	case emulator.Bernoulli:
		return map[string]any{"random": probability(m.P)}, true
	case emulator.GilbertElliott:
		return map[string]any{"gilbert": map[string]string{"p": probability(m.P), "r": probability(m.R), "loss_bad": probability(m.LossBad), "loss_good": probability(m.LossGood)}}, true
	case emulator.Markov4:
		return map[string]any{"markov4": map[string]string{"p13": probability(m.P13), "p31": probability(m.P31), "p32": probability(m.P32), "p23": probability(m.P23), "p14": probability(m.P14)}}, true
	}
	return nil, false // none, or a recorded series
}

func renderJitter(p *emulator.HopParams) (any, bool) {
	var out map[string]any
	switch d := p.Jitter.Dist.(type) {
	case emulator.Uniform:
		out = map[string]any{"dist": "uniform", "spread": duration(d.Spread)}
	case emulator.Normal:
		out = map[string]any{"dist": "normal", "sigma": duration(d.Sigma)}
	case emulator.Pareto:
		out = map[string]any{"dist": "pareto", "mean": duration(d.Mean), "sigma": duration(d.Sigma)}
	case emulator.ParetoNormal:
		out = map[string]any{"dist": "paretonormal", "mean": duration(d.Mean), "sigma": duration(d.Sigma)}
	default:
		return nil, false // none, or an empirical distribution
	}
	if c := p.Jitter.Correlation; c != 0 {
		out["correlation"] = strconv.FormatFloat(c, 'g', -1, 64)
	}
	return out, true
}

func renderReorder(p *emulator.HopParams) (any, bool) {
	switch p.Reorder.Mode {
	case emulator.InOrder:
		return "in_order", true
	case emulator.ReorderAllowed:
		return "allowed", true
	}
	return map[string]any{"p": probability(p.Reorder.P), "gap": p.Reorder.Gap}, true
}

func renderCorrupt(p *emulator.HopParams) (any, bool) {
	switch c := p.Corrupt; {
	case c.BER > 0:
		return map[string]any{"ber": strconv.FormatFloat(c.BER, 'g', -1, 64)}, true
	case c.FrameP > 0:
		return map[string]any{"frame": probability(c.FrameP)}, true
	}
	return nil, false
}

// hopsAsTheyAre sets the hops of prof (of the run's profile p) to their
// parameters in hops: a parameter as the profile wrote it while it has
// that value, as the latest change made by hand that set it wrote it
// while it has that change's value, or else written from its value. It
// returns the parameters that could not be written (hops.NAME.KEY).
func hopsAsTheyAre(p *profiles.Loaded, prof *profiles.Profile, hops []emulator.HopState, latest map[hopParam]*change) (unshown []string) {
	values := slices.Clone(prof.Hops.Values)
	prof.Hops.Values = values
	for i, h := range hops {
		if i >= len(values) || i >= len(p.Config.Hops) {
			break
		}
		name := prof.Hops.Names[i]
		settings := values[i].HopSettings
		changed := false
		rendered := map[string]any{}
	fields:
		for _, f := range hopFields {
			now := f.value(&h.Params)
			if reflect.DeepEqual(now, f.value(&p.Config.Hops[i].HopParams)) {
				continue
			}
			changed = true
			if c := latest[hopParam{i, f.field}]; c != nil && reflect.DeepEqual(now, f.value(&c.params)) {
				setField(&settings, &c.entry.HopSettings, f.name)
				continue fields
			}
			if v, ok := f.render(&h.Params); ok {
				rendered[f.key] = v
			} else {
				unshown = append(unshown, "hops."+name+"."+f.key)
			}
		}
		if len(rendered) > 0 {
			body, _ := json.Marshal(rendered)
			_, entry, err := p.ParseChange("the hop as it is", body, name)
			for _, f := range hopFields {
				if _, ok := rendered[f.key]; !ok {
					continue
				}
				if err != nil {
					unshown = append(unshown, "hops."+name+"."+f.key)
				} else {
					setField(&settings, &entry.HopSettings, f.name)
				}
			}
		}
		if changed {
			hop := *values[i]
			hop.HopSettings = settings
			values[i] = &hop
		}
	}
	return unshown
}

// setField sets the field name of dst to src's.
func setField(dst, src *profiles.HopSettings, name string) {
	reflect.ValueOf(dst).Elem().FieldByName(name).Set(reflect.ValueOf(src).Elem().FieldByName(name))
}
