package lang

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v4"
)

// Profiles compose: a profile may extend another, and --set overrides any
// value. Both are an overlay of one YAML tree on another, guided by the
// schema's types:
//
//   - mappings merge key by key, recursively;
//   - a value that names a different alternative replaces the old one (a
//     gilbert loss over a random one, a normal jitter over a pareto one),
//     while the same alternative merges ({gilbert: {p: 2%}} keeps r);
//   - lists and scalars replace;
//   - null deletes the key.
//
// Nodes are copied on write, so anchors and the base's own tree are never
// changed, and every node keeps the file it came from for messages.

// Discriminated is implemented by schema structs whose variants are named by
// one key (dist), so that overlaying another variant replaces the value.
type Discriminated interface{ Discriminator() string }

// overlay lays over on base, for a value of type t at path.
func (d *Decoder) overlay(base, over *yaml.Node, t reflect.Type, path string) *yaml.Node {
	base, over = Resolve(base), Resolve(over)
	t = DerefType(t)
	if t == nil || base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode || !mergeable(t) || replaces(t, base, over) {
		return over
	}
	merged := d.copyNode(base)
	keys := newKeyIndex(merged)
	for i := 0; i+1 < len(over.Content); i += 2 {
		key, value := over.Content[i], over.Content[i+1]
		at := keys.find(key.Value)
		switch {
		case IsNull(Resolve(value)):
			if at >= 0 {
				keys.remove(at)
				d.noteRemoval(Join(path, key.Value), d.PosOf(value))
			}
		case at >= 0:
			if key.HeadComment != "" || key.FootComment != "" {
				// The override's comments on a key join the base's.
				k := d.copyNode(merged.Content[at])
				k.HeadComment = joinComments(k.HeadComment, key.HeadComment)
				k.FootComment = joinComments(k.FootComment, key.FootComment)
				merged.Content[at] = k
			}
			merged.Content[at+1] = d.overlay(merged.Content[at+1], value, FieldType(t, key.Value), Join(path, key.Value))
		default:
			keys.append(key, value)
		}
	}
	keys.compact()
	if over.LineComment != "" {
		merged.LineComment = over.LineComment
	}
	return merged
}

// keyIndex finds the keys of a mapping node that an overlay changes: by a
// map when the mapping is large (a base of a hundred thousand hops, each
// overridden), by looking through it when it is small. Removed pairs are
// left as holes until compact, so that removing is not a copy of the rest.
type keyIndex struct {
	n     *yaml.Node
	index map[string]int // key → its first pair's index in n.Content; nil: small
	dups  bool           // a key is there twice (an error, reported later)
	holes bool
}

// indexedKeys is the size from which a mapping's keys are looked up in a map.
const indexedKeys = 16

func newKeyIndex(n *yaml.Node) *keyIndex {
	k := &keyIndex{n: n}
	if len(n.Content) >= 2*indexedKeys {
		k.index = make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := Resolve(n.Content[i]).Value
			if _, seen := k.index[key]; seen {
				k.dups = true
				continue
			}
			k.index[key] = i
		}
	}
	return k
}

// find returns the index in the node's Content of key's first pair, or -1.
func (k *keyIndex) find(key string) int {
	if k.index == nil {
		return MappingIndex(k.n, key)
	}
	if i, ok := k.index[key]; ok {
		return i
	}
	return -1
}

func (k *keyIndex) remove(at int) {
	if k.index == nil {
		k.n.Content = append(k.n.Content[:at], k.n.Content[at+2:]...)
		return
	}
	key := Resolve(k.n.Content[at]).Value
	k.n.Content[at], k.n.Content[at+1] = nil, nil
	k.holes = true
	delete(k.index, key)
	if k.dups { // the next pair of that key is found now, as it would be
		for i := at + 2; i+1 < len(k.n.Content); i += 2 {
			if c := k.n.Content[i]; c != nil && Resolve(c).Value == key {
				k.index[key] = i
				break
			}
		}
	}
}

func (k *keyIndex) append(key, value *yaml.Node) {
	k.n.Content = append(k.n.Content, key, value)
	if k.index != nil {
		if _, there := k.index[Resolve(key).Value]; !there {
			k.index[Resolve(key).Value] = len(k.n.Content) - 2
		}
	}
}

// compact closes the holes removals left.
func (k *keyIndex) compact() {
	if k.holes {
		k.n.Content = slices.DeleteFunc(k.n.Content, func(c *yaml.Node) bool { return c == nil })
	}
}

// joinComments joins comment blocks, one after the other.
func joinComments(blocks ...string) string {
	var kept []string
	for _, b := range blocks {
		if b != "" {
			kept = append(kept, b)
		}
	}
	return strings.Join(kept, "\n")
}

// dropKey removes the pair at index i of a mapping d owns, passing the
// key's head comment to the key after it: a file's header is the head
// comment of its first key, and must not go with that key.
func (d *Decoder) dropKey(n *yaml.Node, i int) {
	if head := n.Content[i].HeadComment; head != "" && i+2 < len(n.Content) {
		next := d.copyNode(n.Content[i+2])
		next.HeadComment = joinComments(head, next.HeadComment)
		n.Content[i+2] = next
	}
	n.Content = append(n.Content[:i], n.Content[i+2:]...)
}

func DerefType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// mergeable reports whether values of type t merge key by key: schema
// structs and named maps, not values written as scalars.
func mergeable(t reflect.Type) bool {
	if _, scalar := reflect.New(t).Interface().(ScalarParser); scalar {
		return false
	}
	_, isMap := reflect.New(t).Interface().(interface{ ElemType() reflect.Type })
	return isMap || t.Kind() == reflect.Struct
}

// replaces reports whether over names a different alternative than base.
func replaces(t reflect.Type, base, over *yaml.Node) bool {
	v := reflect.New(t).Interface()
	if _, alternatives := v.(OneOf); alternatives {
		return !sameKeys(base, over)
	}
	if dk, ok := v.(Discriminated); ok {
		if i := MappingIndex(over, dk.Discriminator()); i >= 0 {
			j := MappingIndex(base, dk.Discriminator())
			return j < 0 || Resolve(base.Content[j+1]).Value != Resolve(over.Content[i+1]).Value
		}
	}
	return false
}

func sameKeys(a, b *yaml.Node) bool {
	if len(a.Content) != len(b.Content) {
		return false
	}
	for i := 0; i < len(a.Content); i += 2 {
		if MappingIndex(b, a.Content[i].Value) < 0 {
			return false
		}
	}
	return true
}

// FieldType is the type of key's value in a value of type t, or nil.
func FieldType(t reflect.Type, key string) reflect.Type {
	t = DerefType(t)
	if t == nil {
		return nil
	}
	if m, ok := reflect.New(t).Interface().(interface{ ElemType() reflect.Type }); ok {
		return m.ElemType()
	}
	if t.Kind() == reflect.Struct {
		if f := fieldNamed(FieldsOf(t), key); f != nil {
			return f.Type
		}
	}
	return nil
}

// MappingIndex returns the index in n.Content of key, or -1.
func MappingIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if Resolve(n.Content[i]).Value == key {
			return i
		}
	}
	return -1
}

// copyNode returns a shallow copy of n with its own Content.
func (d *Decoder) copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = append([]*yaml.Node(nil), n.Content...)
	if file, ok := d.Files[n]; ok { // else it is d.file's, as n is
		d.Files[&c] = file
	}
	return &c
}

// maxExtends bounds a chain of extends, against runaway recursion.
const maxExtends = 16

// ResolveExtends replaces a document that extends another (of d.Schema,
// found by d.ReadRef) by the overlay of it on its (recursively resolved)
// base. chain lists the sources seen.
func (d *Decoder) ResolveExtends(root *yaml.Node, source string, chain []string) (*yaml.Node, error) {
	root = Resolve(root)
	if root.Kind != yaml.MappingNode {
		return root, nil
	}
	i := MappingIndex(root, "extends")
	if i < 0 {
		return root, nil
	}
	d.ExpandAll(root) // laid over its base
	refNode := Resolve(root.Content[i+1])
	fail := func(format string, args ...any) error {
		return ErrorList{{Pos: d.PosOf(refNode), Path: "extends", Msg: message(format, args)}}
	}
	// Only the first is taken out and resolved: a second would be left in
	// the result, as if it were the merged profile's own.
	for j := i + 2; j+1 < len(root.Content); j += 2 {
		if k := Resolve(root.Content[j]); k.Value == "extends" {
			return nil, ErrorList{{Pos: d.PosOf(k), Path: "extends", Msg: "given twice"}}
		}
	}
	if refNode.Kind != yaml.ScalarNode || IsNull(refNode) || refNode.Value == "" {
		return nil, fail("want the name or path of a profile, got %s", Describe(refNode))
	}
	data, baseSource, err := d.ReadRef(refNode.Value, source)
	if err != nil {
		hint := ""
		if ref := refNode.Value; !strings.ContainsAny(ref, `/\`) && filepath.Ext(ref) == "" {
			hint = DidYouMean(ref, d.RefNames()).String() // a shipped profile's name, mistyped
		}
		return nil, fail("%v%s", err, hint)
	}
	for i, seen := range chain {
		if sameProfile(seen, baseSource) {
			// From the profile that starts the loop, each file once, then
			// the one it comes back to.
			var names []string
			for _, c := range append(chain[i:], baseSource) {
				names = append(names, displayName(c))
			}
			return nil, fail("extends loops: %s", strings.Join(names, " → "))
		}
	}
	if len(chain) >= maxExtends {
		return nil, fail("more than %d profiles extend each other", maxExtends)
	}
	base, err := d.ParseYAML(baseSource, data)
	if err != nil {
		return nil, err
	}
	base, err = d.ResolveExtends(base, baseSource, append(chain, baseSource))
	if err != nil {
		return nil, err
	}
	// The variant's header (comments before its first key) heads the
	// merged tree, then the base's.
	own := d.copyNode(root)
	header := joinComments(own.HeadComment, own.Content[0].HeadComment)
	own.HeadComment = ""
	own.Content[0] = d.copyNode(own.Content[0])
	own.Content[0].HeadComment = ""
	own.Content = append(own.Content[:i], own.Content[i+2:]...)
	merged := d.copyNode(d.overlay(base, own, d.Schema, ""))
	if MappingIndex(own, "name") < 0 {
		// A variant is not its base: without a name of its own it is named
		// after its file.
		if j := MappingIndex(merged, "name"); j >= 0 {
			d.dropKey(merged, j)
		}
	}
	merged.HeadComment = joinComments(header, "# extends "+refNode.Value+":", merged.HeadComment)
	return merged, nil
}

// sameProfile reports whether two sources (a path as given, a path made
// absolute, shipped:NAME) are the same profile.
func sameProfile(a, b string) bool {
	if a == b {
		return true
	}
	if strings.HasPrefix(a, "shipped:") || strings.HasPrefix(b, "shipped:") {
		return false
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}

// displayName is a source as a user would name it: a path relative to the
// working directory when the file is below it, else as it is.
func displayName(source string) string {
	if strings.HasPrefix(source, "shipped:") || !filepath.IsAbs(source) {
		return source
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, source); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return source
}

// SetFile is the name --set overrides go by in messages: an error in the
// n-th --set is reported at --set:n:column, the column counted in its
// argument.
const SetFile = "--set"

// SetSegmentRE matches one segment of a --set path: a key, and an index.
var SetSegmentRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_-]+)(?:\[([0-9]+)\])?$`)
})

// PathStep is one step of a --set path: a key, maybe with a list index.
type PathStep struct {
	Key   string
	Index int // -1: none
	Col   int // column of the key in the argument
}

// ApplySet lays `path=value`, the n-th --set, on root.
func (d *Decoder) ApplySet(root *yaml.Node, arg string, n int) *yaml.Node {
	d.ExpandAll(root)
	at := func(col int) Pos { return Pos{File: SetFile, Line: n, Col: col} }
	fail := func(col int, path, format string, args ...any) *yaml.Node {
		d.Fail(path)
		d.Report(at(col), path, format, args...)
		return root
	}
	path, text, ok := strings.Cut(arg, "=")
	if !ok || path == "" {
		return fail(1, "", "want path=value, e.g. hops.core-up.rate=2Mbit")
	}
	var steps []PathStep
	col := 1
	for _, seg := range strings.Split(path, ".") {
		m := SetSegmentRE().FindStringSubmatch(seg)
		if m == nil {
			return fail(col, path, "%q is not a key (want keys and list indices, e.g. schedule[0].at)", seg)
		}
		step := PathStep{Key: m[1], Index: -1, Col: col}
		if m[2] != "" {
			step.Index, _ = strconv.Atoi(m[2])
		}
		steps = append(steps, step)
		col += len(seg) + 1
	}
	valueCol := len(path) + 2
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		var le *yaml.LoadError
		if errors.As(err, &le) {
			col := valueCol + le.Mark.Column - 1
			if le.Mark.Line > 1 { // past the end of the value
				col = len(arg) + 1
			}
			return fail(col, path, "YAML syntax: %s", le.Message)
		}
		return fail(valueCol, path, "YAML syntax: %v", err)
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n, Column: valueCol}
	if len(doc.Content) == 1 {
		value = doc.Content[0]
	}
	d.markSet(value, n, valueCol)
	return d.SetPath(root, d.Schema, steps, "", value, at)
}

// markSet places the nodes of a --set value in its argument.
func (d *Decoder) markSet(v *yaml.Node, n, col int) {
	d.Files[v] = SetFile
	v.Column += col - 1
	v.Line = n
	for _, c := range v.Content {
		d.markSet(c, n, col)
	}
}

// SetPath returns n with the value at steps replaced (overlaid) by value.
// A tree parsed lazily is expanded first (ExpandAll), or a stub would be
// overlaid as it stands.
func (d *Decoder) SetPath(n *yaml.Node, t reflect.Type, steps []PathStep, done string, value *yaml.Node, at func(int) Pos) *yaml.Node {
	if len(steps) == 0 {
		if n == nil {
			return value
		}
		return d.overlay(n, value, t, done)
	}
	step := steps[0]
	path := Join(done, step.Key)
	if n != nil {
		n = Resolve(n)
	}
	if n == nil || IsNull(n) {
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: at(step.Col).Line, Column: step.Col}
		d.Files[n] = SetFile
	}
	if n.Kind != yaml.MappingNode {
		d.Fail(done)
		d.Report(at(step.Col), done, "is %s, not a mapping with keys", Describe(n))
		return n
	}
	n = d.copyNode(n)
	i := MappingIndex(n, step.Key)
	last := len(steps) == 1 && step.Index < 0
	if !(last && IsNull(value)) {
		n, i = d.replaceAlternative(n, i, t, step, done, last, value, at)
	}
	var child *yaml.Node
	if i >= 0 {
		child = n.Content[i+1]
	}
	childType := FieldType(t, step.Key)
	if mapOf := DerefType(t); mapOf != nil && i < 0 && IsNamedMap(mapOf) {
		d.noteAddition(n, step, done, at)
	}
	if last && IsNull(value) {
		if i >= 0 {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			d.noteRemoval(path, at(step.Col))
		}
		return n
	}
	if last {
		if value.Kind != yaml.MappingNode {
			d.forgetSets(path) // replaced whole
		}
		d.Removed = append(d.Removed, removal{path: path, By: at(step.Col), set: true, setAt: at(step.Col)})
	}
	if step.Index >= 0 {
		child = d.setIndex(child, childType, step, path, steps[1:], value, at)
		if child == nil {
			return n // no list to index, reported: nothing to add
		}
	} else {
		child = d.SetPath(child, childType, steps[1:], path, value, at)
	}
	if i >= 0 {
		n.Content[i+1] = child
	} else {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: step.Key, Line: at(step.Col).Line, Column: step.Col}
		d.Files[key] = SetFile
		n.Content = append(n.Content, key, child)
	}
	return n
}

// replaceAlternative empties n, of type t at done, when the step names
// another alternative than it holds (a loss model, a jitter distribution):
// that replaces the value, as in extends, the same question asked of a
// mapping of the one key set. It returns n and the index of the step's key
// in it (-1 once emptied).
func (d *Decoder) replaceAlternative(n *yaml.Node, i int, t reflect.Type, step PathStep, done string, last bool, value *yaml.Node, at func(int) Pos) (*yaml.Node, int) {
	mt := DerefType(t)
	if mt == nil || !mergeable(mt) {
		return n, i
	}
	probe := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: step.Key}, {Kind: yaml.MappingNode}}}
	if last {
		probe.Content[1] = value
	}
	if !replaces(mt, n, probe) {
		return n, i
	}
	d.forgetSets(done)
	n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: n.Style, Line: at(step.Col).Line, Column: step.Col}
	d.Files[n] = SetFile
	return n, -1
}

// noteAddition notes the entry of the mapping of names n (at done) that a
// --set adds, and the names that were there.
func (d *Decoder) noteAddition(n *yaml.Node, step PathStep, done string, at func(int) Pos) {
	var names []string
	for k := 0; k+1 < len(n.Content); k += 2 {
		names = append(names, n.Content[k].Value)
	}
	d.Added = append(d.Added, addition{In: done, Name: step.Key, At: at(step.Col), Others: names})
}

// setIndex sets, in the list n, the entry step.index, then the rest of the
// path.
func (d *Decoder) setIndex(n *yaml.Node, t reflect.Type, step PathStep, path string, rest []PathStep, value *yaml.Node, at func(int) Pos) *yaml.Node {
	if n != nil {
		n = Resolve(n)
	}
	if n == nil || n.Kind != yaml.SequenceNode || step.Index >= len(n.Content) {
		size := 0
		if n != nil && n.Kind == yaml.SequenceNode {
			size = len(n.Content)
		}
		entries := "entries"
		if size == 1 {
			entries = "entry"
		}
		at := at(step.Col + len(step.Key) + 1) // the index, after the [
		d.Fail(path)
		d.Report(at, path, "has %d %s; [%d] is not one of them", size, entries, step.Index)
		return n
	}
	if t = DerefType(t); t != nil && t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	n = d.copyNode(n)
	n.Content[step.Index] = d.SetPath(n.Content[step.Index], t, rest, fmt.Sprintf("%s[%d]", path, step.Index), value, at)
	return n
}

// removal is a key an override removed with null, or (set) a value a
// --set gave, and where it did. (Both are kept in one list: a suite moves
// what its overrides did to its own file.)
type removal struct {
	path  string
	By    Pos
	set   bool
	setAt Pos // by, as the values the --set placed are (a suite moves by)
}

func (d *Decoder) noteRemoval(path string, by Pos) {
	d.Removed = append(d.Removed, removal{path: path, By: by})
}

// forgetSets forgets the values earlier --sets gave at or inside path,
// which a later one replaced: they cause nothing now.
func (d *Decoder) forgetSets(path string) {
	d.Removed = slices.DeleteFunc(d.Removed, func(r removal) bool { return r.set && within(r.path, path) })
}

// CiteRemovals adds to each error that a removal may have caused where
// that removal was made, since the error itself points at the base that
// lost the key (a required key now missing, a value that needed the key, a
// reference to a hop that is gone). A removal is taken to be the cause when
// the message names the removed key and the key was in the mapping the
// error is about or next to it, or the message quotes it as a name.
//
// A value a --set gave is cited likewise when an error placed elsewhere
// (in a file, or in another --set) is about the mapping the --set wrote
// into, a key next to the one it set, or a value inside the one it set: a
// csma-cd bus's slot, in the base, once a --set made the bus can.
func (d *Decoder) CiteRemovals() {
	for _, e := range d.Errs {
		cited := map[Pos]bool{}
		for _, r := range d.Removed {
			near := ParentPath(r.path) == e.Path || ParentPath(r.path) == ParentPath(e.Path)
			if r.set {
				elsewhere := e.Pos.File != r.setAt.File || e.Pos.Line != r.setAt.Line
				if elsewhere && e.Path != "" && (near || within(e.Path, r.path)) && !cited[r.By] {
					e.Msg += fmt.Sprintf(" (%s sets %s)", r.By, clip(r.path, MaxNamed))
					cited[r.By] = true
				}
				continue
			}
			key := r.path[strings.LastIndexAny(r.path, ".[")+1:]
			if namesWord(e.Msg, key) && near || strings.Contains(e.Msg, Quoted(key)) {
				e.Msg += fmt.Sprintf(" (%s removes %s)", r.By, clip(r.path, MaxNamed))
			}
		}
	}
}

// namesWord reports whether msg has word as a word of a name: not next to
// a letter, a digit, _ or -.
func namesWord(msg, word string) bool {
	inName := func(c byte) bool {
		return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	for from := 0; word != ""; {
		i := strings.Index(msg[from:], word)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(word)
		if (start == 0 || !inName(msg[start-1])) && (end == len(msg) || !inName(msg[end])) {
			return true
		}
		from = start + 1
	}
	return false
}

// addition is an entry of a mapping of names (a hop, a flow) that a --set
// created, and the names that were there.
type addition struct {
	In, Name string
	At       Pos
	Others   []string
}

// IsNamedMap reports whether t is a mapping of names to values (hops,
// flows), not a schema struct.
func IsNamedMap(t reflect.Type) bool {
	_, named := reflect.New(t).Interface().(interface{ ElemType() reflect.Type })
	return named
}

// Override is one path: value of a set.
type Override struct {
	Path  string
	Value *yaml.Node
	Pos   Pos // of the path
	Steps []PathStep
}

// PlaceOverride copies an override's value for the profile decoder,
// keeping its place in the suite (under SetFile until the errors are
// placed back).
func (d *Decoder) PlaceOverride(n *yaml.Node, files map[*yaml.Node]string) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = d.PlaceOverride(child, files)
	}
	d.Files[&c] = SetFile
	return &c
}
