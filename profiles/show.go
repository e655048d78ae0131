package profiles

import (
	"fmt"

	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"

	"go.yaml.in/yaml/v4"
)

// AsWritten renders the resolved profile as its files and overrides wrote
// it: what it extends merged in, the --set overrides laid on, every value
// in its original text (0.0001%, not its float) and every comment kept,
// followed by a comment listing the values that run with a default because
// they were not written. Parsing the result gives the same engine
// configuration. This is what hilrig show prints.
func (l *Loaded) AsWritten() []byte {
	if l.written == nil && l.reparse != nil {
		// The same text parsed again, with its tree kept; what it
		// extends is read again, and if that no longer loads, what the
		// profile was is rendered from its values.
		if again, err := l.reparse(); err == nil {
			l = again
		}
	}
	if l.written == nil {
		return l.YAML()
	}
	out, err := yaml.Dump(l.written, yaml.WithIndent(2), yaml.WithLineWidth(-1), yaml.WithCompactSeqIndent(false))
	if err != nil {
		panic("profiles: encoding a parsed profile: " + err.Error()) // it was parsed from YAML; it always encodes
	}
	if len(l.defaults) > 0 {
		out = append(out, "# Not written above, so their defaults:\n"...)
		for _, line := range l.defaults {
			out = append(out, "#   "+line+"\n"...)
		}
	}
	return out
}

// unwritten prepares the tree of the profile at source for AsWritten and
// lists the values of p that were not written (no position recorded for
// their path) but run with a default: the name, the seed, a hop's keys
// whose default is a rule that changes results (emulator.HopKey's
// DefaultMatters: reorder's in_order, an unlimited queue on a hop that
// serialises), and what resolveDefaults filled in. A file named by a base elsewhere or by a --set
// (relative to the working directory) is renamed as seen from source, so
// that the rendering reads the same file.
func unwritten(d *lang.Decoder, root *yaml.Node, p *Profile, cfg *emulator.Config, source string) []string {
	w := defaultsWalker{d: d, root: root, source: source, r: renderer{source: source}, dumped: map[string]string{}}
	if _, ok := d.At("name"); !ok {
		w.defaults = append(w.defaults, "name: "+p.Name)
	}
	if _, ok := d.At("seed"); !ok {
		w.defaults = append(w.defaults, "seed: 0")
	}
	for i, name := range p.Hops.Names {
		for _, k := range emulator.HopKeys() {
			at := "hops." + name + "." + k.Key
			if _, written := d.At(at); !written && k.DefaultMatters(&cfg.Hops[i].HopParams) {
				w.defaults = append(w.defaults, at+": "+k.Default)
			}
		}
	}
	w.walk(reflect.ValueOf(p).Elem(), "")
	return w.defaults
}

// defaultsWalker walks a decoded profile for the values that were filled
// in with a default, renaming the files it names for the tree at root.
type defaultsWalker struct {
	d        *lang.Decoder
	root     *yaml.Node
	source   string
	r        renderer
	defaults []string
	// A default is written as YAML writes its value; most are the same
	// scalar (every flow's trace: true), written once.
	dumped map[string]string
}

func (w *defaultsWalker) dump(n *yaml.Node) string {
	scalar := n.Kind == yaml.ScalarNode && n.Tag == "" && n.Style == 0
	if text, ok := w.dumped[n.Value]; ok && scalar {
		return text
	}
	text, err := yaml.Dump(n, yaml.WithLineWidth(-1))
	if err != nil {
		panic("profiles: encoding a default: " + err.Error())
	}
	if scalar {
		w.dumped[n.Value] = strings.TrimSpace(string(text))
	}
	return strings.TrimSpace(string(text))
}

// walk lists the defaults in v, the value at path.
func (w *defaultsWalker) walk(v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			w.walk(v.Elem(), path)
		}
		return
	case reflect.Slice:
		for i := range v.Len() {
			w.walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
		}
		return
	case reflect.Struct:
	default:
		return
	}
	if _, isMap := v.Addr().Interface().(interface{ ElemType() reflect.Type }); isMap {
		names, values := v.FieldByName("Names"), v.FieldByName("Values")
		for i := range names.Len() {
			w.walk(values.Index(i), lang.Join(path, names.Index(i).String()))
		}
		return
	}
	w.renameFile(v, path)
	for _, f := range lang.FieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		switch fv.Kind() {
		case reflect.Pointer:
			if fv.IsNil() {
				continue // not given, and no default was filled in
			}
		case reflect.Struct, reflect.Slice:
		default:
			continue // a scalar: nothing in it to default
		}
		at := lang.Join(path, f.Name)
		if _, written := w.d.At(at); !written && fv.Kind() == reflect.Pointer {
			w.defaults = append(w.defaults, at+": "+w.dump(w.r.node(fv.Elem(), 3)))
			continue
		}
		w.walk(fv, at)
	}
}

// renameFile renames the file v (at path) read, when it was written in
// another file than source, as seen from source.
func (w *defaultsWalker) renameFile(v reflect.Value, path string) {
	f, ok := v.Addr().Interface().(fileValued)
	if !ok || f.fileRead() == "" {
		return
	}
	n := w.d.NodeAt(w.root, lang.Join(path, "file"))
	if n == nil {
		n = w.d.NodeAt(w.root, path) // the short form, trace: FILE
	}
	if n != nil && n.Kind == yaml.ScalarNode && w.d.FileOf(n) != w.source {
		n.Value = w.r.relative(f.fileRead())
	}
}

// YAML renders the resolved profile (after extends, --set and defaults) in
// the profile language: keys in the schema's order, values in canonical
// units. Parsing the result gives the same engine configuration. The web
// API renders profiles it changed with it.
func (l *Loaded) YAML() []byte {
	r := renderer{source: l.Source}
	root := r.node(reflect.ValueOf(l.Profile).Elem(), 0)
	out, err := yaml.Dump(root, yaml.WithIndent(2), yaml.WithLineWidth(-1))
	if err != nil {
		panic("profiles: encoding a resolved profile: " + err.Error()) // the tree is built here; it always encodes
	}
	return out
}

// alwaysShown are optional keys shown even when zero, because a reader of a
// resolved profile needs them.
var alwaysShown = map[string]bool{"seed": true}

// renderer writes a profile that lives at source.
type renderer struct{ source string }

// node renders v; depth decides the layout: the top level and flows are
// blocks, anything deeper is written on one line.
func (r renderer) node(v reflect.Value, depth int) *yaml.Node {
	if a, ok := v.Addr().Interface().(lang.Absence); ok && a.IsNone() {
		return scalar("none")
	}
	v, short := r.shortForm(v)
	if short != nil {
		return short
	}
	if s, ok := v.Interface().(fmt.Stringer); ok && v.Kind() != reflect.Struct {
		return scalar(s.String())
	}
	if s, ok := v.Interface().(fmt.Stringer); ok && isUnit(v.Type()) {
		return scalar(s.String())
	}
	if _, ok := v.Addr().Interface().(interface{ ElemType() reflect.Type }); ok {
		n := mapping(depth)
		names, values := v.FieldByName("Names"), v.FieldByName("Values")
		for i := range names.Len() {
			n.Content = append(n.Content, scalar(names.Index(i).String()), r.node(values.Index(i).Elem(), depth+1))
		}
		return n
	}
	switch v.Kind() {
	case reflect.Struct:
		return r.structNode(v, depth)
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		if depth > 1 {
			n.Style = yaml.FlowStyle
		}
		for i := range v.Len() {
			n.Content = append(n.Content, r.node(v.Index(i), depth+1))
		}
		return n
	}
	return scalarNode(v)
}

// shortForm is the scalar a value written in its short form renders as
// (a constant period, a fixed delay...), else nil and v, with the files
// it read named from where the profile lives.
func (r renderer) shortForm(v reflect.Value) (reflect.Value, *yaml.Node) {
	switch x := v.Addr().Interface().(type) {
	case *Jitter:
		if x.File != nil {
			// Point at the file that was read, from where this profile lives.
			j := *x
			j.File = ptr(r.relative(x.readFrom))
			v = reflect.ValueOf(&j).Elem()
		}
	case *TraceRef:
		if x.readFrom != "" {
			t := *x
			t.File = r.relative(x.readFrom)
			v = reflect.ValueOf(&t).Elem()
		}
	case *Period:
		if x.Dist == "constant" {
			return v, scalar(x.Mean.String())
		}
	case *Reorder:
		if x.Mode != "gap" {
			return v, scalar(x.Mode)
		}
	case *lang.HopRate:
		if x.Baud == nil {
			return v, scalar(x.Bits.String())
		}
	case *HopDelay:
		if x.Trace == nil {
			return v, scalar(x.fixed.String())
		}
	}
	return v, nil
}

// structNode renders a struct's keys in the schema's order, leaving out
// those not given.
func (r renderer) structNode(v reflect.Value, depth int) *yaml.Node {
	n := mapping(depth)
	if oneLine[v.Type()] {
		n.Style = yaml.FlowStyle
	}
	for _, f := range lang.FieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		if f.Name == "extends" || !f.Required && !alwaysShown[f.Name] && fv.IsZero() {
			continue
		}
		if fv.Kind() == reflect.Pointer {
			fv = fv.Elem()
		}
		n.Content = append(n.Content, scalar(f.Name), r.node(fv, depth+1))
	}
	return n
}

// scalarNode renders a value of a basic kind.
func scalarNode(v reflect.Value) *yaml.Node {
	switch v.Kind() {
	case reflect.String:
		return scalar(v.String())
	case reflect.Bool:
		return scalar(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int64:
		return scalar(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint64:
		return scalar(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float64:
		return scalar(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	}
	panic("profiles: cannot render " + v.Type().String())
}

// relative names file as seen from the rendered profile.
func (r renderer) relative(file string) string {
	shippedFile, fromLibrary := strings.CutPrefix(file, "shipped:")
	_, intoLibrary := strings.CutPrefix(r.source, "shipped:")
	switch {
	case fromLibrary && intoLibrary:
		return shippedFile
	case fromLibrary:
		return file // not on disk: only another shipped profile can name it
	case intoLibrary:
		if abs, err := filepath.Abs(file); err == nil {
			return abs
		}
		return file
	}
	dir := filepath.Dir(r.source)
	if filepath.IsAbs(dir) != filepath.IsAbs(file) {
		// One is relative to the working directory: compare them whole.
		absDir, err1 := filepath.Abs(dir)
		absFile, err2 := filepath.Abs(file)
		if err1 != nil || err2 != nil {
			return file
		}
		dir, file = absDir, absFile
	}
	if rel, err := filepath.Rel(dir, file); err == nil {
		return rel
	}
	return file
}

// fileValued is a schema struct that names a file, read relative to the
// profile (or, from a --set, to the working directory): an empirical
// jitter's delays, a recorded series. fileRead is the file read, or "".
type fileValued interface{ fileRead() string }

func (j *Jitter) fileRead() string {
	if j.File == nil {
		return ""
	}
	return j.readFrom
}

func (r *TraceRef) fileRead() string { return r.readFrom }

// oneLine are the schema structs written on one line, as in the shipped
// profiles.
var oneLine = map[reflect.Type]bool{reflect.TypeFor[Hop](): true, reflect.TypeFor[ScheduleEntry](): true}

// isUnit reports whether t is one of the unit types written as a scalar.
func isUnit(t reflect.Type) bool {
	_, ok := reflect.New(t).Interface().(lang.ScalarParser)
	return ok
}

func mapping(depth int) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if depth > 2 {
		n.Style = yaml.FlowStyle
	}
	return n
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
