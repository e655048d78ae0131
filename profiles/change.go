package profiles

import (
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// LiveChange is a change to a hop made while a run goes on: its parameters
// as a profile writes them, or an outage, for a while or until the end.
// JSON is YAML, so a JSON body reads as it is.
type LiveChange struct {
	For       *lang.Duration `yaml:"for" doc:"how long it lasts before it is undone" default:"until the end"`
	Outage    *OutageMode    `yaml:"outage" doc:"drop or hold: the hop's output goes down"`
	HoldLimit *lang.Limit    `yaml:"hold_limit" doc:"bound on the hold buffer" default:"unlimited"`
	HopSettings
}

// changePath prefixes the paths of a change's keys while it is read; an
// error's Path is given without it.
const changePath = "change"

// ParseChange reads a change to hop made while the run goes on, checked
// by the code and with the messages of the profile's own schedule. It
// returns the engine's changes (for the caller to apply now, for the
// duration they carry) and the schedule entry that replays them, its At
// left for the caller to fill. Problems are an ErrorList whose paths are
// the change's keys (loss.random), positioned in source.
func (l *Loaded) ParseChange(source string, body []byte, hop string) ([]emulator.Scheduled, ScheduleEntry, error) {
	d := lang.NewDecoder()
	root, err := d.ParseYAML(source, body)
	if err != nil {
		return nil, ScheduleEntry{}, err
	}
	var c LiveChange
	if root.Kind != yaml.MappingNode {
		d.Errorf(root, lang.PathOf(changePath), "want a mapping of a hop's parameters (or an outage), got %s", lang.Describe(root))
	} else {
		d.Decode(root, reflect.ValueOf(&c).Elem(), lang.PathOf(changePath))
	}
	var entry ScheduleEntry
	var made []emulator.Change
	if d.Problems() == 0 {
		entry = ScheduleEntry{For: c.For, Hop: HopName(hop), Outage: c.Outage, HoldLimit: c.HoldLimit, HopSettings: c.HopSettings}
		// Its defaults, as a profile's schedule entry has them (a
		// gilbert loss given only p takes netem's r, 1-h and 1-k).
		entry.HopSettings.resolveDefaults()
		made, _ = l.scheduleChanges(d, &entry, changePath) // no ramps: a live change has none
		if c.For != nil && *c.For <= 0 {
			d.ErrorAt(changePath+".for", "must be positive")
		}
		if len(made) == 0 && d.Problems() == 0 {
			d.ErrorAt(changePath, "changes nothing: give some of %s", lang.KeyList(lang.FieldsOf(reflect.TypeFor[LiveChange]())))
		}
	}
	if err := d.Err(); err != nil {
		for _, e := range err.(lang.ErrorList) {
			e.Path = strings.TrimPrefix(strings.TrimPrefix(e.Path, changePath), ".")
		}
		return nil, ScheduleEntry{}, err
	}
	var length time.Duration
	if c.For != nil {
		length = time.Duration(*c.For)
	}
	out := make([]emulator.Scheduled, len(made))
	for i, change := range made {
		out[i] = emulator.Scheduled{For: length, Change: change}
	}
	return out, entry, nil
}
