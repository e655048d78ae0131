package profiles

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator"
)

// Loaded is a profile that parsed and validated, with the engine
// configuration it describes.
type Loaded struct {
	*Profile
	Source string // file the profile came from, or shipped:NAME
	Config emulator.Config

	written  *yaml.Node // the resolved tree as written, comments and all
	defaults []string   // "path: value" of what runs with a default
	files    []string   // the files on disk it was made from
	// reparse loads the profile again with its tree kept, for AsWritten,
	// when written was not kept: the tree takes some thirty times the
	// file's size in memory (40 MB for 10 000 hops and flows), which only
	// hilrig show needs.
	reparse func() (*Loaded, error)
}

// Files are the files on disk the profile was made from: its own, those
// it extends and those its values name (an empirical jitter's delays, a
// recorded series), each once, sorted; the shipped library's are not on
// disk. hilrig refuses an output that is one of them.
func (l *Loaded) Files() []string { return l.files }

// Traced reports whether a flow's frames go to the trace.
func (l *Loaded) Traced(flow int) bool { return *l.Flows.Values[flow].Trace }

// Phases returns the schedule's named phases, in the order they first
// appear.
func (l *Loaded) Phases() []Phase { return l.phases }

// RunDuration is the profile's duration as a time.Duration.
func (l *Loaded) RunDuration() time.Duration { return time.Duration(l.Duration) }

// Load reads a profile from a file, or from the shipped library when ref is
// a bare name (e.g. "bottleneck") that is not a file, resolves what it
// extends, and applies the --set overrides in order. Every problem found is
// returned at once as an ErrorList.
func Load(ref string, sets ...string) (*Loaded, error) {
	data, source, err := read(ref)
	if err != nil {
		return nil, err
	}
	return Parse(source, data, sets...)
}

// read finds ref on disk or in the library.
func read(ref string) ([]byte, string, error) {
	data, err := ReadFile(ref, MaxFileBytes)
	if err == nil {
		return data, ref, nil
	}
	if !errors.Is(err, fs.ErrNotExist) || strings.ContainsAny(ref, `/\`) || filepath.Ext(ref) != "" {
		return nil, "", err
	}
	if lib, libErr := library.ReadFile(ref + ".yaml"); libErr == nil {
		return lib, "shipped:" + ref, nil
	}
	return nil, "", errors.New(ref + ": no such file, and no shipped profile by that name (see hilrig profiles)")
}

// Parse decodes and validates a profile from YAML text; source names it in
// messages and anchors the files it refers to.
func Parse(source string, data []byte, sets ...string) (*Loaded, error) {
	l, err := parse(source, data, sets, (*decoder).decodeProfile)
	if err != nil {
		return nil, err
	}
	l.reparse = func() (*Loaded, error) { return parse(source, data, sets, (*decoder).load) }
	return l, nil
}

// parse is Parse, loading the resolved tree with load.
func parse(source string, data []byte, sets []string, load func(*decoder, *yaml.Node, string) (*Loaded, error)) (*Loaded, error) {
	d := newDecoder()
	root, err := d.parseYAML(source, data)
	if err != nil {
		return nil, err
	}
	if root, err = d.resolveExtends(root, source, []string{source}); err != nil {
		return nil, err
	}
	for i, set := range sets {
		root = d.applySet(root, set, i+1)
	}
	return load(d, root, source)
}

// load decodes, validates and builds the resolved tree of the profile at
// source (extends and overrides laid on it), and keeps the tree for
// AsWritten.
func (d *decoder) load(root *yaml.Node, source string) (*Loaded, error) {
	l, err := d.decodeProfile(root, source)
	if err != nil {
		return nil, err
	}
	l.written = root
	l.defaults = d.unwritten(root, l.Profile, &l.Config, source)
	return l, nil
}

// decodeProfile is load without keeping the tree.
func (d *decoder) decodeProfile(root *yaml.Node, source string) (*Loaded, error) {
	d.tree = root
	p := &Profile{}
	d.decode(root, reflect.ValueOf(p).Elem(), "")
	p.resolveDefaults()
	if p.Name == "" {
		p.Name = nameOf(strings.TrimPrefix(source, "shipped:"))
	}
	cfg := p.build(d)
	p.checkRoles(d)
	d.checkAdditions(p)
	d.citeRemovals()
	if err := d.err(); err != nil {
		return nil, err
	}
	return &Loaded{Profile: p, Source: source, Config: cfg, files: d.filesRead(p)}, nil
}

// filesRead lists the files on disk that went into p: those parsed (the
// profile, what it extends) and those its values name.
func (d *decoder) filesRead(p *Profile) []string {
	read := map[string]bool{}
	note := func(file string) {
		if file != "" && file != SetFile && !strings.HasPrefix(file, "shipped:") {
			read[file] = true
		}
	}
	note(d.file)
	for _, file := range d.files {
		note(file)
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if f, ok := v.Addr().Interface().(fileValued); ok {
				note(f.fileRead())
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(p).Elem())
	return slices.Sorted(maps.Keys(read))
}

// nameOf is a file's default name: its base name without its extension.
func nameOf(source string) string {
	return strings.TrimSuffix(filepath.Base(source), filepath.Ext(source))
}

// decodeFile parses one YAML document and decodes it into v, a pointer to
// a schema struct; the decoder holds the problems found.
func decodeFile(source string, data []byte, v any) (*decoder, error) {
	d := newDecoder()
	root, err := d.parseYAML(source, data)
	if err != nil {
		return nil, err
	}
	d.decode(root, reflect.ValueOf(v).Elem(), "")
	return d, nil
}
