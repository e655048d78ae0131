package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/lang"
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
	byHand, times := s.asRun.entriesAndTimes() // the changes made by hand
	var groups []int
	prof.Seed, prof.Duration = s.run.hello.Seed, lang.Duration(end)
	prof.Schedule, groups = asRunSchedule(within(prof.Schedule, end), end, times)
	p.Profile = &prof
	text := p.YAML()
	for g, n := range groups {
		var lines []byte
		for range n {
			line, rest, _ := bytes.Cut(byHand, []byte("\n"))
			lines, byHand = append(append(lines, line...), '\n'), rest
		}
		var err error
		if text, err = spliceChanges(text, s.renderEntry(asRunMarkerN(g)), lines); err != nil {
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

// settingsField is the field of profiles.HopSettings that holds a hop's
// key, found by its yaml tag.
func settingsField(key string) string {
	t := reflect.TypeFor[profiles.HopSettings]()
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k == key {
			return t.Field(i).Name
		}
	}
	panic("web: profiles.HopSettings has no key " + key)
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
		for _, k := range emulator.HopKeys() {
			now := k.Value(&h.Params)
			if reflect.DeepEqual(now, k.Value(&p.Config.Hops[i].HopParams)) {
				continue
			}
			changed = true
			if c := latest[hopParam{i, k.Field}]; c != nil && reflect.DeepEqual(now, k.Value(&c.params)) {
				setField(&settings, &c.entry.HopSettings, k.Key)
				continue fields
			}
			if v, ok := profiles.HopValue(k.Key, &h.Params); ok {
				rendered[k.Key] = v
			} else {
				unshown = append(unshown, "hops."+name+"."+k.Key)
			}
		}
		if len(rendered) > 0 {
			body, _ := json.Marshal(rendered)
			_, entry, err := p.ParseChange("the hop as it is", body, name)
			for _, k := range emulator.HopKeys() {
				if _, ok := rendered[k.Key]; !ok {
					continue
				}
				if err != nil {
					unshown = append(unshown, "hops."+name+"."+k.Key)
				} else {
					setField(&settings, &entry.HopSettings, k.Key)
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

// setField sets the field of dst that holds key to src's.
func setField(dst, src *profiles.HopSettings, key string) {
	name := settingsField(key)
	reflect.ValueOf(dst).Elem().FieldByName(name).Set(reflect.ValueOf(src).Elem().FieldByName(name))
}
