package lang

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/emulator/suggest"
)

// The decoder walks a YAML node tree and a Go value together, driven by the
// Go types of a language's schema (profiles/schema.go, a Bench, a Suite):
// struct fields are keys, their tags say
// which are required, and the unit types parse themselves. Every value's
// position can be found by its path, so later checks (references, overlaps)
// can point at the line and column too. It reports every problem it finds,
// not only the first.

// ScalarParser is implemented by the unit types: they parse a scalar and
// return an error that completes the sentence `"<value>" ...`.
type ScalarParser interface{ ParseScalar(string) error }

// NodeDecoder is implemented by types that decode themselves from a node:
// maps that keep their key order, and values written either as a scalar or
// as a mapping.
type NodeDecoder interface {
	DecodeNode(d *Decoder, n *yaml.Node, path Path)
}

// Absence is a key whose default is the absence of an impairment (no loss,
// no jitter, no corruption, no flap): written none, it removes it, as a
// schedule entry or a change made live (DELETE's reset) may need to.
type Absence interface {
	SetNone()
	IsNone() bool
}

// OneOf marks a struct whose fields are alternatives: exactly one is given.
type OneOf interface{ OneOf() }

// SchemaTyped is a struct whose keys are those of another struct, made at
// run time (an endpoint's, of the device kinds registered); it decodes
// itself through it.
type SchemaTyped interface{ SchemaType() reflect.Type }

type Decoder struct {
	// File is the source of the first file parsed (the profile, bench or
	// suite itself), and so of every node files does not name: files
	// holds only the nodes of the others (a base it extends, a --set),
	// not an entry for each of a large file's hundreds of thousands.
	File      string
	Files     map[*yaml.Node]string
	Errs      ErrorList       // the problems found, up to maxErrors
	omitted   int             // problems found after errs was full
	Positions map[string]Pos  // position of the value at each path decoded, unless Tree is set
	Failed    map[string]bool // paths that already have an error
	// failedBelow marks the paths that hold a path that failed, so that
	// whether a value or anything in it failed is a few lookups.
	failedBelow map[string]bool
	// Read are the files the document's values name (an empirical
	// jitter's delays, a recorded series), as they are read while it is
	// checked.
	Read    []string
	Removed []removal  // keys an override (extends, --set) removed with null
	Added   []addition // named entries a --set created
	// Tree, when set, is the resolved tree of a profile: the positions of
	// its paths are looked for in it when a message or a check needs one,
	// not recorded for each path decoded (16 MB for 10 000 hops and flows).
	// Only a document whose keys hold no '.' or '[' can be looked up by
	// path so: a profile's names cannot, but a suite's set: keys are
	// paths (hops.core-up.rate), so suites record their positions (as
	// benches and model files do, which are small).
	Tree *yaml.Node
	keys map[*yaml.Node]map[string]int // the index of a large mapping of tree, see keyIndex
	// The document's language, for extends and --set: its schema, how a
	// reference to a document it extends is read, and the names of the
	// shipped documents (for did-you-mean).
	Schema   reflect.Type
	ReadRef  func(ref, source string) ([]byte, string, error)
	RefNames func() []string
	// DropComments marks a document that is decoded and not rendered
	// (hilrig show prints its comments): its trees leave the comments out,
	// so that fastParse reads a file with comments too, and the first file
	// is parsed lazily (see lazyDepth): the entries of the collections at
	// its second level are parsed one by one as the decoder reaches them.
	DropComments bool
	// unparsed is the parser of a tree parsed lazily, which expands its
	// stubs; nil once a tree has none (or was never lazy).
	unparsed *fastParser
}

func NewDecoder() *Decoder {
	return &Decoder{Files: map[*yaml.Node]string{}, Positions: map[string]Pos{}, Failed: map[string]bool{}, failedBelow: map[string]bool{}}
}

func (d *Decoder) PosOf(n *yaml.Node) Pos {
	return Pos{File: d.FileOf(n), Line: n.Line, Col: n.Column}
}

// FileOf is the source file of node n (profiles merge several).
func (d *Decoder) FileOf(n *yaml.Node) string {
	if file, ok := d.Files[n]; ok {
		return file
	}
	return d.File
}

// Report adds a problem at pos, about the value at path. Once the list is
// full it only counts it: the message is not made.
func (d *Decoder) Report(pos Pos, path, format string, args ...any) {
	if len(d.Errs) >= MaxErrors {
		d.omitted++
		return
	}
	d.Errs = append(d.Errs, &Error{Pos: pos, Path: path, Msg: message(format, args)})
}

// Add adds problems found elsewhere (in a file the one being read names),
// counting those over maxErrors, and those the list counted.
func (d *Decoder) Add(list ...*Error) {
	for _, e := range list {
		switch {
		case e.omitted > 0:
			d.omitted += e.omitted
		case len(d.Errs) >= MaxErrors:
			d.omitted++
		default:
			d.Errs = append(d.Errs, e)
		}
	}
}

// Problems is how many problems were found, listed or counted.
func (d *Decoder) Problems() int { return len(d.Errs) + d.omitted }

// Err is the problems found, sorted, closed by the count of those not
// listed; nil when there are none.
func (d *Decoder) Err() error {
	if d.Problems() == 0 {
		return nil
	}
	list := d.Errs.sorted()
	if d.omitted > 0 {
		list = append(list, omittedEntry(d.omitted))
	}
	return list
}

// Fail marks the value at path as having an error.
func (d *Decoder) Fail(path string) {
	if d.Failed[path] {
		return
	}
	d.Failed[path] = true
	for q := path; q != ""; {
		q = ParentPath(q)
		if d.failedBelow[q] {
			break // and so are the paths above it
		}
		d.failedBelow[q] = true
	}
}

// failedAt reports whether the value at path, a value it is in, or one in
// it has an error.
func (d *Decoder) failedAt(path string) bool {
	if d.failedBelow[path] {
		return true
	}
	for q := path; ; q = ParentPath(q) {
		if d.Failed[q] {
			return true
		}
		if q == "" {
			return false
		}
	}
}

func (d *Decoder) Errorf(n *yaml.Node, path Path, format string, args ...any) {
	at := path.String()
	d.Fail(at)
	d.Report(d.PosOf(n), at, format, args...)
}

// ErrorAt reports a problem found after decoding, at the position of path
// (or of its nearest decoded ancestor). A check on a value that already
// failed to decode would only repeat that error, so it is skipped.
func (d *Decoder) ErrorAt(path, format string, args ...any) {
	if d.failedAt(path) {
		return
	}
	d.Fail(path)
	d.Report(d.PosAt(path), path, format, args...)
}

// PosAt is the position of the value at path, or of its nearest decoded
// ancestor.
func (d *Decoder) PosAt(path string) Pos {
	for q := path; ; q = ParentPath(q) {
		if p, ok := d.At(q); ok || q == "" {
			return p
		}
	}
}

// stubOf is n's place when n is a stub of a tree parsed lazily.
func (d *Decoder) stubOf(n *yaml.Node) (stub, bool) {
	if d.unparsed == nil {
		return stub{}, false
	}
	return d.unparsed.stubOf(n)
}

// ExpandAll builds the whole of a tree parsed lazily, for what rewrites
// it (extends, --set).
func (d *Decoder) ExpandAll(root *yaml.Node) {
	if d.unparsed != nil {
		d.unparsed.expandAll(root)
		d.unparsed = nil
	}
}

// At is the position of the value at path, if it was written.
func (d *Decoder) At(path string) (Pos, bool) {
	if p, ok := d.Positions[path]; ok {
		return p, true
	}
	if d.Tree != nil {
		if n := d.NodeAt(d.Tree, path); n != nil {
			return d.PosOf(n), true
		}
	}
	return Pos{}, false
}

// NodeAt finds the node at a decoder path (hops.radio.jitter.file,
// schedule[2].jitter.file) in a tree, or nil. In a tree parsed lazily, the
// entry of a stub the path goes through is parsed again for the look; a
// path that ends at a stub finds the stub, without its children.
func (d *Decoder) NodeAt(root *yaml.Node, path string) *yaml.Node {
	n := Resolve(root)
	if path == "" {
		return n
	}
	// An entry of a stub is built again for each look, so an index of its
	// keys would only keep that copy alive: it is scanned.
	built := false
	for _, step := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(step, "[")
		if n.Kind != yaml.MappingNode {
			return nil
		}
		if at, ok := d.stubOf(n); ok {
			i := d.unparsed.entryNamed(n, at, key)
			if i < 0 {
				return nil
			}
			_, n = d.unparsed.entry(n, at, i)
			built = true
		} else {
			var i int
			if built {
				i = MappingIndex(n, key)
			} else {
				i = d.keyIndex(n, key)
			}
			if i < 0 {
				return nil
			}
			n = n.Content[i+1]
		}
		n = Resolve(n)
		for rest != "" {
			var index string
			index, rest, _ = strings.Cut(rest, "]")
			rest = strings.TrimPrefix(rest, "[")
			k, err := strconv.Atoi(index)
			if err != nil || n.Kind != yaml.SequenceNode || k < 0 || k >= d.entryCount(n) {
				return nil
			}
			if at, ok := d.stubOf(n); ok {
				_, n = d.unparsed.entry(n, at, k)
				built = true
			} else {
				n = n.Content[k]
			}
			n = Resolve(n)
		}
	}
	return n
}

// entryCount is how many entries the collection n has (pairs in a
// mapping), a stub's as counted when it was parsed through.
func (d *Decoder) entryCount(n *yaml.Node) int {
	if at, ok := d.stubOf(n); ok {
		return at.entryCount()
	}
	if n.Kind == yaml.MappingNode {
		return len(n.Content) / 2
	}
	return len(n.Content)
}

// keyIndex is mappingIndex, through an index for a mapping of many keys
// (the hops, the flows) made the first time it is looked in, so that
// looking up a path in each of N hops is not N² comparisons.
func (d *Decoder) keyIndex(n *yaml.Node, key string) int {
	const scanned = 16 // keys: a struct's, or a few names
	if len(n.Content) <= 2*scanned {
		return MappingIndex(n, key)
	}
	index, ok := d.keys[n]
	if !ok {
		index = make(map[string]int, len(n.Content)/2)
		for i := len(n.Content) - 2; i >= 0; i -= 2 { // the first of a key given twice, as mappingIndex
			index[Resolve(n.Content[i]).Value] = i
		}
		if d.keys == nil {
			d.keys = map[*yaml.Node]map[string]int{}
		}
		d.keys[n] = index
	}
	if i, ok := index[key]; ok {
		return i
	}
	return -1
}

// within reports whether path p is q or inside it.
func within(p, q string) bool {
	return p == q || q == "" || strings.HasPrefix(p, q) && (p[len(q)] == '.' || p[len(q)] == '[')
}

func ParentPath(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

func Resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if IsNull(n) {
		return "nothing"
	}
	return strconv.Quote(n.Value)
}

// Decode fills v from n. path names v in messages, e.g. hops.core-up.rate.
func (d *Decoder) Decode(n *yaml.Node, v reflect.Value, path Path) {
	n = Resolve(n)
	if d.Tree == nil {
		d.Positions[path.String()] = d.PosOf(n)
	}
	if v.CanAddr() {
		switch p := v.Addr().Interface().(type) {
		case NodeDecoder:
			if _, streams := p.(entriesReader); !streams {
				// It reads n's children itself: a stub is built whole
				// for it.
				if _, ok := d.stubOf(n); ok {
					n = d.unparsed.expand(n)
				}
			}
			p.DecodeNode(d, n, path)
			return
		case ScalarParser:
			if n.Kind != yaml.ScalarNode || IsNull(n) {
				d.Errorf(n, path, "want %s, got %s", WantOf(v.Type()), Describe(n))
				return
			}
			if err := p.ParseScalar(n.Value); err != nil {
				d.Errorf(n, path, "%q %s", n.Value, err)
			}
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if IsNull(n) {
			d.Errorf(n, path, "want %s, got nothing", WantOf(v.Type().Elem()))
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		if a, ok := v.Interface().(Absence); ok && n.Kind == yaml.ScalarNode && n.Value == "none" {
			a.SetNone()
			return
		}
		d.Decode(n, v.Elem(), path)
	case reflect.Struct:
		d.DecodeStruct(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	default:
		d.decodeBasic(n, v, path)
	}
}

// ScalarOr decodes n into full, a struct whose decodeNode calls this (given
// as a pointer to a type without the method, so the struct decoder handles
// it), or, when n is a scalar, into the field that scalar stands for: the
// shorthand `key: value` for `key: {field: value}`. It reports which.
func (d *Decoder) ScalarOr(n *yaml.Node, path Path, scalar, full any) bool {
	if n.Kind == yaml.ScalarNode && !IsNull(n) {
		d.Decode(n, reflect.ValueOf(scalar).Elem(), path)
		return true
	}
	d.DecodeStruct(n, reflect.ValueOf(full).Elem(), path)
	return false
}

func (d *Decoder) decodeSlice(n *yaml.Node, v reflect.Value, path Path) {
	if IsNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.Errorf(n, path, "want a list, got %s", Describe(n))
		return
	}
	count := d.entryCount(n)
	if count == 0 {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // given, and empty: not nil
	} else {
		// Grown in place: MakeSlice's Value holds a slice header of its
		// own (a route's, 24 bytes for each of 10 000 flows, garbage at
		// once). Its capacity is its length, as MakeSlice's was: an
		// append to it never writes into another's.
		v.SetZero()
		v.Grow(count)
		v.SetLen(count)
		v.SetCap(count)
	}
	at, stubbed := d.stubOf(n)
	for i := range count {
		var item *yaml.Node
		if stubbed {
			_, item = d.unparsed.entryReused(n, at, i)
		} else {
			item = n.Content[i]
		}
		d.Decode(item, v.Index(i), path.Index(i))
	}
}

func (d *Decoder) decodeBasic(n *yaml.Node, v reflect.Value, path Path) {
	if n.Kind != yaml.ScalarNode || IsNull(n) {
		d.Errorf(n, path, "want %s, got %s", WantOf(v.Type()), Describe(n))
		return
	}
	var err error
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		b, err = strconv.ParseBool(n.Value)
		if n.Value != "true" && n.Value != "false" {
			err = errors.New("not true or false")
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		// An int holds 32 bits on arm and 386: a profile means the same on
		// every machine only if an int field takes 32 bits on all.
		bits := 64
		if v.Kind() == reflect.Int {
			bits = 32
		}
		var i int64
		if i, err = strconv.ParseInt(n.Value, 10, bits); errors.Is(err, strconv.ErrRange) {
			d.Errorf(n, path, "%s is out of range (from %d to %d)", n.Value, int64(-1)<<(bits-1), 1<<(bits-1)-1)
			return
		}
		v.SetInt(i)
	case reflect.Uint64:
		var u uint64
		u, err = strconv.ParseUint(n.Value, 10, 64)
		v.SetUint(u)
	case reflect.Float64:
		var f float64
		f, err = strconv.ParseFloat(n.Value, 64)
		v.SetFloat(f)
	default:
		panic("profiles: no decoder for " + v.Type().String())
	}
	if err != nil {
		d.Errorf(n, path, "%q is not %s", n.Value, WantOf(v.Type()))
	}
}

func (d *Decoder) DecodeStruct(n *yaml.Node, v reflect.Value, path Path) {
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want %s, got %s", WantOf(v.Type()), Describe(n))
		return
	}
	_, alternatives := v.Addr().Interface().(OneOf)
	d.DecodeFields(n, v, path, FieldsOf(v.Type()), alternatives)
}

// DecodeFields decodes the mapping n into v's fields; with alternatives,
// exactly one of them must be given.
func (d *Decoder) DecodeFields(n *yaml.Node, v reflect.Value, path Path, fields []Field, alternatives bool) {
	seen := map[string]bool{}
	ForEachPair(d, n, path, func(key string, k, val *yaml.Node) {
		f := fieldNamed(fields, key)
		switch {
		case f == nil:
			d.Errorf(k, path.Key(key), "unknown key%s (want %s)", hint{key: key, fields: fields}, keyNames(fields))
		case seen[key]:
			d.Errorf(k, path.Key(key), "given twice")
		default:
			seen[key] = true
			d.Decode(val, v.FieldByIndex(f.Index), path.Key(key))
		}
	})
	for _, f := range fields {
		if f.Required && !seen[f.Name] {
			d.Errorf(n, path, "missing %s: want %s", f.Name, WantOf(f.Type))
		}
	}
	if alternatives && len(seen) != 1 {
		if len(seen) == 0 {
			d.Errorf(n, path, "want one of %s", keyNames(fields))
		} else {
			d.Errorf(n, path, "give only one of %s", keyNames(fields))
		}
	}
}

// ForEachPair calls fn for each key of a mapping, rejecting keys that are
// not plain strings and YAML merge keys. A stub's entries are parsed one
// after the other, each living until the next is: fn keeps no node.
func ForEachPair(d *Decoder, n *yaml.Node, path Path, fn func(key string, k, v *yaml.Node)) {
	at, stubbed := d.stubOf(n)
	pairs := len(n.Content) / 2
	if stubbed {
		pairs = at.entryCount()
	}
	for i := range pairs {
		var k, v *yaml.Node
		if stubbed {
			k, v = d.unparsed.entryReused(n, at, i)
		} else {
			k, v = Resolve(n.Content[2*i]), n.Content[2*i+1]
		}
		switch {
		case k.Kind != yaml.ScalarNode:
			d.Errorf(k, path, "a key must be a name, got %s", Describe(k))
		case k.Value == "<<" && k.Tag == "!!merge":
			d.Errorf(k, path, "merge keys (<<) are not supported; use extends")
		default:
			fn(k.Value, k, v)
		}
	}
}

// Field is one key of a schema struct.
type Field struct {
	Name     string
	Index    []int
	Type     reflect.Type
	Required bool
	Doc      string
	Default  string
}

var fieldCache sync.Map // reflect.Type → []field

// FieldsOf lists a struct's keys from its yaml tags, flattening embedded
// structs into their parent.
func FieldsOf(t reflect.Type) []Field {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.([]Field)
	}
	if s, ok := reflect.New(t).Interface().(SchemaTyped); ok {
		return FieldsOf(s.SchemaType())
	}
	var fs []Field
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			for _, inner := range FieldsOf(sf.Type) {
				inner.Index = append([]int{i}, inner.Index...)
				fs = append(fs, inner)
			}
			continue
		}
		tag := sf.Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		doc, def := sf.Tag.Get("doc"), sf.Tag.Get("default")
		if _, isHopKey := sf.Tag.Lookup("hop"); isHopKey {
			// A hop's key is declared by the engine, with its meaning.
			k, ok := emulator.LookupHopKey(name)
			if !ok {
				panic("profiles: " + t.Name() + "." + sf.Name + " is not one of the engine's hop keys")
			}
			doc, def = k.Doc, k.Default
		}
		fs = append(fs, Field{
			Name:     name,
			Index:    []int{i},
			Type:     sf.Type,
			Required: opts == "required",
			Doc:      doc,
			Default:  def,
		})
	}
	fieldCache.Store(t, fs)
	return fs
}

func fieldNamed(fs []Field, name string) *Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

func fieldNames(fs []Field) []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return names
}

func KeyList(fs []Field) string { return strings.Join(fieldNames(fs), ", ") }

// keyNames is keyList, worked out when a message is made of it.
type keyNames []Field

func (k keyNames) String() string { return KeyList(k) }

// WantOf is what a value of type t should be, worked out when a message
// is made of it.
func WantOf(t reflect.Type) fmt.Stringer { return wanted{t} }

type wanted struct{ t reflect.Type }

func (w wanted) String() string { return typeInfoOf(w.t).want() }

// DidYouMean suggests the candidate closest to key, if one is close enough
// to be a typo. The suggestion is looked for when it is printed: a check
// that finds a million unknown names, with the error list full, does not
// compare each with every name there is.
func DidYouMean(key string, candidates []string) hint { return hint{key: key, candidates: candidates} }

// maxTyped is the longest name a suggestion is looked for.
const maxTyped = 64

// hint is the "; did you mean C?" of a name, or "": among candidates, or
// the keys of fields.
type hint struct {
	key        string
	candidates []string
	fields     []Field
}

func (h hint) String() string {
	if h.fields != nil {
		h.candidates = fieldNames(h.fields)
	}
	// A name longer than anyone types is not a typo worth the quadratic
	// comparison; and a candidate more than two characters shorter is not
	// a typo of the key (suggest's rule).
	n := utf8.RuneCountInString(h.key)
	if n > maxTyped {
		return ""
	}
	var near []string
	for _, c := range h.candidates {
		if len(c) >= n-2 && utf8.RuneCountInString(c) >= n-2 {
			near = append(near, c)
		}
	}
	return suggest.DidYouMean(h.key, near)
}

// Map is a mapping from names to T that keeps the order of the source, so
// that reports and `hilrig show` list things as they were written.
type Map[T any] struct {
	Names  []string
	Values []*T

	index nameIndex // the position of each name, once decoded
}

// nameIndex finds a name's position in a Map's Names: a table of
// positions (plus one: 0 is an empty slot) placed by the name's hash,
// probed in turn, kept at most three quarters full (linear probing finds
// a name missing in ½(1+1/(1−load)²) probes on average: 8.5 at three
// quarters, 2.5 at half; 10 000 names in 16 384 slots, 3.8). 4 bytes
// a slot, 5.3 to 10.7 a name, where a map[string]int took 43 a name
// (427 KB for 10 000 hops, kept through a whole run), and a table at
// most half full 8 to 16 (128 KB for 10 000, where 64 KB do now).
type nameIndex struct {
	slots []int32
	used  int
}

// nameSeed seeds the hashes of nameIndex (a name's slot is of no
// consequence outside it).
var nameSeed = maphash.MakeSeed()

// reserve makes room for n names, beside those there (of names).
func (x *nameIndex) reserve(names []string, n int) {
	size := 8
	for 3*size < 4*(x.used+n) {
		size *= 2
	}
	if size <= len(x.slots) {
		return
	}
	old := x.slots
	x.slots, x.used = make([]int32, size), 0
	for _, at := range old {
		if at != 0 {
			x.add(names, int(at-1))
		}
	}
}

// find is the position of name in names, or -1.
func (x *nameIndex) find(names []string, name string) int {
	if len(x.slots) == 0 {
		return -1
	}
	mask := uint64(len(x.slots) - 1)
	for i := maphash.String(nameSeed, name) & mask; ; i = (i + 1) & mask {
		at := x.slots[i]
		if at == 0 {
			return -1
		}
		if names[at-1] == name {
			return int(at - 1)
		}
	}
}

// add indexes names[i], a name not indexed yet.
func (x *nameIndex) add(names []string, i int) {
	x.reserve(names, 1)
	mask := uint64(len(x.slots) - 1)
	j := maphash.String(nameSeed, names[i]) & mask
	for x.slots[j] != 0 {
		j = (j + 1) & mask
	}
	x.slots[j] = int32(i + 1)
	x.used++
}

// ValidName reports whether name is letters, digits, _ and - (not
// first): a name can be written in a path (hops.NAME.rate).
func ValidName(name string) bool {
	for i, c := range []byte(name) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_':
		case c == '-' && i > 0:
		default:
			return false
		}
	}
	return name != ""
}

func (m *Map[T]) DecodeNode(d *Decoder, n *yaml.Node, path Path) {
	if IsNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "want a mapping of names to %s, got %s", WantOf(reflect.TypeFor[T]()), Describe(n))
		return
	}
	if pairs := d.entryCount(n); m.Names == nil && m.index.slots == nil && pairs > 0 {
		// Sized once, not grown through a copy at each doubling.
		m.Names = make([]string, 0, pairs)
		m.Values = make([]*T, 0, pairs)
		m.index.reserve(nil, pairs)
	}
	ForEachPair(d, n, path, func(name string, k, val *yaml.Node) {
		switch {
		case !ValidName(name):
			d.Errorf(k, path.Key(name), "is not a valid name (letters, digits, _ and -)")
		case m.Index(name) >= 0:
			d.Errorf(k, path.Key(name), "given twice")
		default:
			v := new(T)
			d.Decode(val, reflect.ValueOf(v).Elem(), path.Key(name))
			m.Names = append(m.Names, name)
			m.Values = append(m.Values, v)
			m.index.add(m.Names, len(m.Names)-1)
		}
	})
}

// readsEntries marks Map as reading a mapping's entries through
// ForEachPair, which reads a stub's one after the other.
func (m *Map[T]) readsEntries() {}

// entriesReader is a NodeDecoder that reads a mapping's entries only
// through ForEachPair, and so can be given a stub.
type entriesReader interface{ readsEntries() }

// Index returns the position of name, or -1.
func (m *Map[T]) Index(name string) int {
	if m.index.slots != nil {
		return m.index.find(m.Names, name)
	}
	for i, n := range m.Names { // a Map made in code, not decoded
		if n == name {
			return i
		}
	}
	return -1
}

// Len returns the number of entries.
func (m *Map[T]) Len() int { return len(m.Names) }

func (m *Map[T]) ElemType() reflect.Type { return reflect.TypeFor[T]() }

// ParseYAML parses one YAML document and records which file each node came
// from. Syntax errors carry their line and column. The tree is fastParse's
// when the file is within the YAML it reads, else yaml.v4's: the same. A
// first file only decoded (DropComments) is parsed lazily: Decode and
// NodeAt expand its stubs as they reach them, and what rewrites the tree
// (extends, --set) expands it whole first.
func (d *Decoder) ParseYAML(file string, data []byte) (*yaml.Node, error) {
	return d.ParseYAMLText(file, string(data))
}

// ParseYAMLText is ParseYAML of a text: the scalars of its tree, and so
// the strings decoded from them, are slices of it, not of a copy. (A
// loaded profile keeps its text, to parse it again for hilrig show.)
func (d *Decoder) ParseYAMLText(file, text string) (*yaml.Node, error) {
	var root *yaml.Node
	ok := false
	if d.DropComments && d.File == "" {
		root, d.unparsed, ok = fastParseLazy(text, true)
	} else {
		root, ok = fastParse(text, d.DropComments)
	}
	if !ok {
		var err error
		if root, err = composeYAML(file, text); err != nil {
			return nil, err
		}
	}
	if d.File == "" {
		d.File = file
		return root, nil
	}
	var mark func(*yaml.Node)
	mark = func(n *yaml.Node) {
		d.Files[n] = file
		for _, c := range n.Content {
			mark(c)
		}
	}
	if file != d.File {
		mark(root)
	}
	return root, nil
}

// composeYAML is the tree yaml.v4 composes of text, its document's root,
// for what fastParse declines.
func composeYAML(file, text string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, ErrorList{{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "empty profile"}}
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, ErrorList{{Pos: Pos{File: file, Line: extra.Line, Col: extra.Column}, Msg: "a profile is one YAML document; found a second"}}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntaxError(file, err)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
		// The file's own comments stay with its tree, for hilrig show.
		root.HeadComment = joinComments(doc.HeadComment, root.HeadComment)
		root.FootComment = joinComments(root.FootComment, doc.FootComment)
	}
	return root, nil
}

func syntaxError(file string, err error) error {
	var le *yaml.LoadError
	if errors.As(err, &le) {
		return ErrorList{{Pos: Pos{File: file, Line: le.Mark.Line, Col: le.Mark.Column}, Msg: "YAML syntax: " + clip(le.Message, maxText)}}
	}
	return ErrorList{{Pos: Pos{File: file}, Msg: "YAML syntax: " + clip(strings.TrimPrefix(err.Error(), "yaml: "), maxText)}}
}

// NameOf is a file's default name: its base name without its extension.
func NameOf(source string) string {
	return strings.TrimSuffix(filepath.Base(source), filepath.Ext(source))
}

// DecodeFile parses one YAML document and decodes it into v, a pointer to
// a schema struct; the decoder holds the problems found.
func DecodeFile(source string, data []byte, v any) (*Decoder, error) {
	d := NewDecoder()
	root, err := d.ParseYAML(source, data)
	if err != nil {
		return nil, err
	}
	d.Decode(root, reflect.ValueOf(v).Elem(), Path{})
	return d, nil
}
