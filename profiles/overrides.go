package profiles

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/hilrig/hilrig/profiles/lang"
	"go.yaml.in/yaml/v4"
)

// LoadOverridden loads the profile ref names (a shipped name, or a file
// relative to the suite at source) with the overrides laid on it, as
// Parse does with --set; a problem in an override is reported at its place
// in the suite.
// sd is the decoder of the suite the overrides are in.
func LoadOverridden(sd *lang.Decoder, ref, source, refPath, setPath string, sets []lang.Override) (*Loaded, error) {
	data, from, err := readProfileRef(ref, source)
	if err != nil {
		msg := strings.Replace(err.Error(), "next to this profile", "next to the suite", 1)
		if !strings.ContainsAny(ref, `/\`) && filepath.Ext(ref) == "" {
			msg += lang.DidYouMean(ref, Shipped()).String()
		}
		return nil, lang.ErrorList{{Pos: sd.Positions[refPath], Path: refPath, Msg: msg}}
	}
	d := newProfileDecoder()
	root, err := d.ParseYAML(from, data)
	if err != nil {
		return nil, err
	}
	if root, err = d.ResolveExtends(root, from, []string{from}); err != nil {
		return nil, err
	}
	d.ExpandAll(root) // SetPath rewrites the tree: all of it is there
	for _, o := range sets {
		at := func(col int) lang.Pos {
			return lang.Pos{File: lang.SetFile, Line: o.Pos.Line, Col: o.Pos.Col + col - 1}
		}
		if err := namesExist(root, o, at); err != nil {
			d.Add(err)
			continue
		}
		value := d.PlaceOverride(o.Value, sd.Files)
		root = d.SetPath(root, reflect.TypeFor[Profile](), o.Steps, "", value, at)
	}
	// What the profile decoder attributes to --set is the suite's.
	for i := range d.Removed {
		if d.Removed[i].By.File == lang.SetFile {
			d.Removed[i].By.File = source
		}
	}
	p, err := load(d, root, from)
	if err != nil {
		for _, e := range err.(lang.ErrorList) {
			if e.Pos.File == lang.SetFile {
				e.Pos.File = source
			}
		}
		return nil, err
	}
	return p, nil
}

// namesExist checks that the named entries an override goes through (a
// hop, a flow) are the profile's: an override changes a profile, it does
// not add to it a hop that no flow crosses.
func namesExist(root *yaml.Node, o lang.Override, at func(int) lang.Pos) *lang.Error {
	t, n, done := reflect.TypeFor[Profile](), lang.Resolve(root), ""
	for _, st := range o.Steps {
		named := lang.IsNamedMap(lang.DerefType(t))
		var child *yaml.Node
		if n != nil && n.Kind == yaml.MappingNode {
			if i := lang.MappingIndex(n, st.Key); i >= 0 {
				child = lang.Resolve(n.Content[i+1])
			}
		}
		if named && child == nil {
			var names []string
			if n != nil && n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					names = append(names, n.Content[i].Value)
				}
			}
			return &lang.Error{Pos: at(st.Col), Path: lang.Join(done, st.Key), Msg: fmt.Sprintf("the profile has no %q in %s%s", st.Key, done, lang.DidYouMean(st.Key, names))}
		}
		if child == nil || st.Index >= 0 {
			return nil // a new key, or a list entry: setPath says
		}
		t, n, done = lang.FieldType(t, st.Key), child, lang.Join(done, st.Key)
		if t == nil {
			return nil
		}
	}
	return nil
}
