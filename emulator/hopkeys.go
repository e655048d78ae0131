package emulator

import (
	"fmt"
	"reflect"
	"strings"
)

// A hop's keys are declared once, as the tags of HopParams' fields: the
// key a profile writes, its unit, its default and what it means. The
// profile language's schema and reference, show, live changes and the
// dashboard read them here (HopKeys), so a new impairment adds a field and
// its file, and every one of them knows it.

// HopKey describes one of a hop's keys.
type HopKey struct {
	Key     string   // as a profile writes it
	Field   HopField // for partial changes
	Unit    string   // of a plain value; empty when the value is a structure or a word
	Default string   // what a hop that does not write the key has
	Doc     string
	// matters says when the default is a rule that changes results rather
	// than the absence of an impairment: "always", or "serialising" (on a
	// hop that serialises). show lists such defaults.
	matters string
	fields  [][]int // the HopParams fields that hold it
}

// DefaultMatters reports whether, on a hop with parameters p, not writing
// the key is a choice that changes results (reorder: in_order makes a
// jittered flow wait for the frame ahead of it; an unlimited queue never
// drops), which a reader of the profile should be told.
func (k *HopKey) DefaultMatters(p *HopParams) bool {
	return k.matters == "always" || k.matters == "serialising" && p.serialises()
}

// Value returns the key's value in p, comparable with reflect.DeepEqual.
func (k *HopKey) Value(p *HopParams) any {
	v := reflect.ValueOf(p).Elem()
	if len(k.fields) == 1 {
		return v.FieldByIndex(k.fields[0]).Interface()
	}
	out := make([]any, len(k.fields))
	for i, f := range k.fields {
		out[i] = v.FieldByIndex(f).Interface()
	}
	return out
}

var hopKeys = hopKeysOf(reflect.TypeFor[HopParams]())

// hopKeysOf reads the keys from the tags of t's fields, in their order.
// Fields with the same key (a delay and its recorded series) are one key.
func hopKeysOf(t reflect.Type) []HopKey {
	var keys []HopKey
	for i := range t.NumField() {
		f := t.Field(i)
		key := f.Tag.Get("hop")
		if key == "" {
			panic(fmt.Sprintf("emulator: HopParams.%s has no hop tag", f.Name))
		}
		if n := len(keys); n > 0 && keys[n-1].Key == key {
			keys[n-1].fields = append(keys[n-1].fields, f.Index)
			continue
		}
		keys = append(keys, HopKey{
			Key: key, Field: 1 << len(keys), Unit: f.Tag.Get("unit"), Default: f.Tag.Get("default"),
			Doc: f.Tag.Get("doc"), matters: f.Tag.Get("matters"), fields: [][]int{f.Index},
		})
	}
	return keys
}

// HopKeys returns a hop's keys in their order. The caller must not change
// them.
func HopKeys() []HopKey { return hopKeys }

// LookupHopKey returns the key named key.
func LookupHopKey(key string) (*HopKey, bool) {
	for i := range hopKeys {
		if hopKeys[i].Key == key {
			return &hopKeys[i], true
		}
	}
	return nil, false
}

// Keys lists the keys named in set, in HopKeys' order.
func (set HopField) Keys() []string {
	var out []string
	for i := range hopKeys {
		if set&hopKeys[i].Field != 0 {
			out = append(out, hopKeys[i].Key)
		}
	}
	return out
}

func (set HopField) String() string { return strings.Join(set.Keys(), ",") }

// copyFields sets the keys of p named in set to their values in src.
func (p *HopParams) copyFields(src *HopParams, set HopField) {
	dst, from := reflect.ValueOf(p).Elem(), reflect.ValueOf(src).Elem()
	for i := range hopKeys {
		if set&hopKeys[i].Field == 0 {
			continue
		}
		for _, f := range hopKeys[i].fields {
			dst.FieldByIndex(f).Set(from.FieldByIndex(f))
		}
	}
}
