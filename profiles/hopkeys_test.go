package profiles

import (
	"reflect"
	"slices"
	"testing"

	"github.com/hilrig/hilrig/emulator"
)

// TestHopSettingsAreTheEnginesKeys: the profile language writes every key
// the engine declares for a hop, and no other, so a key added to the
// engine cannot be left out of profiles, show, live changes or the
// reference.
func TestHopSettingsAreTheEnginesKeys(t *testing.T) {
	var schema, engine []string
	for _, f := range fieldsOf(reflect.TypeFor[HopSettings]()) {
		schema = append(schema, f.name)
		if k, _ := emulator.LookupHopKey(f.name); f.doc != k.Doc || f.def != k.Default {
			t.Errorf("%s: doc and default are not the engine's", f.name)
		}
	}
	for _, k := range emulator.HopKeys() {
		engine = append(engine, k.Key)
	}
	if !slices.Equal(schema, engine) {
		t.Errorf("HopSettings has %v, the engine %v", schema, engine)
	}
}
