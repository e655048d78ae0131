package profiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

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

// discriminated is implemented by schema structs whose variants are named by
// one key (dist), so that overlaying another variant replaces the value.
type discriminated interface{ discriminator() string }

func (Jitter) discriminator() string { return "dist" }
func (Period) discriminator() string { return "dist" }

// overlay lays over on base, for a value of type t at path.
func (d *decoder) overlay(base, over *yaml.Node, t reflect.Type, path string) *yaml.Node {
	base, over = resolve(base), resolve(over)
	t = derefType(t)
	if t == nil || base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode || !mergeable(t) || replaces(t, base, over) {
		return over
	}
	merged := d.copyNode(base)
	keys := newKeyIndex(merged)
	for i := 0; i+1 < len(over.Content); i += 2 {
		key, value := over.Content[i], over.Content[i+1]
		at := keys.find(key.Value)
		switch {
		case isNull(resolve(value)):
			if at >= 0 {
				keys.remove(at)
				d.noteRemoval(join(path, key.Value), d.posOf(value))
			}
		case at >= 0:
			if key.HeadComment != "" || key.FootComment != "" {
				// The override's comments on a key join the base's.
				k := d.copyNode(merged.Content[at])
				k.HeadComment = joinComments(k.HeadComment, key.HeadComment)
				k.FootComment = joinComments(k.FootComment, key.FootComment)
				merged.Content[at] = k
			}
			merged.Content[at+1] = d.overlay(merged.Content[at+1], value, fieldType(t, key.Value), join(path, key.Value))
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
			key := resolve(n.Content[i]).Value
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
		return mappingIndex(k.n, key)
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
	key := resolve(k.n.Content[at]).Value
	k.n.Content[at], k.n.Content[at+1] = nil, nil
	k.holes = true
	delete(k.index, key)
	if k.dups { // the next pair of that key is found now, as it would be
		for i := at + 2; i+1 < len(k.n.Content); i += 2 {
			if c := k.n.Content[i]; c != nil && resolve(c).Value == key {
				k.index[key] = i
				break
			}
		}
	}
}

func (k *keyIndex) append(key, value *yaml.Node) {
	k.n.Content = append(k.n.Content, key, value)
	if k.index != nil {
		if _, there := k.index[resolve(key).Value]; !there {
			k.index[resolve(key).Value] = len(k.n.Content) - 2
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
func (d *decoder) dropKey(n *yaml.Node, i int) {
	if head := n.Content[i].HeadComment; head != "" && i+2 < len(n.Content) {
		next := d.copyNode(n.Content[i+2])
		next.HeadComment = joinComments(head, next.HeadComment)
		n.Content[i+2] = next
	}
	n.Content = append(n.Content[:i], n.Content[i+2:]...)
}

func derefType(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// mergeable reports whether values of type t merge key by key: schema
// structs and named maps, not values written as scalars.
func mergeable(t reflect.Type) bool {
	if _, scalar := reflect.New(t).Interface().(scalarParser); scalar {
		return false
	}
	_, isMap := reflect.New(t).Interface().(interface{ elemType() reflect.Type })
	return isMap || t.Kind() == reflect.Struct
}

// replaces reports whether over names a different alternative than base.
func replaces(t reflect.Type, base, over *yaml.Node) bool {
	v := reflect.New(t).Interface()
	if _, alternatives := v.(oneOf); alternatives {
		return !sameKeys(base, over)
	}
	if dk, ok := v.(discriminated); ok {
		if i := mappingIndex(over, dk.discriminator()); i >= 0 {
			j := mappingIndex(base, dk.discriminator())
			return j < 0 || resolve(base.Content[j+1]).Value != resolve(over.Content[i+1]).Value
		}
	}
	return false
}

func sameKeys(a, b *yaml.Node) bool {
	if len(a.Content) != len(b.Content) {
		return false
	}
	for i := 0; i < len(a.Content); i += 2 {
		if mappingIndex(b, a.Content[i].Value) < 0 {
			return false
		}
	}
	return true
}

// fieldType is the type of key's value in a value of type t, or nil.
func fieldType(t reflect.Type, key string) reflect.Type {
	t = derefType(t)
	if t == nil {
		return nil
	}
	if m, ok := reflect.New(t).Interface().(interface{ elemType() reflect.Type }); ok {
		return m.elemType()
	}
	if t.Kind() == reflect.Struct {
		if f := fieldNamed(fieldsOf(t), key); f != nil {
			return f.typ
		}
	}
	return nil
}

// mappingIndex returns the index in n.Content of key, or -1.
func mappingIndex(n *yaml.Node, key string) int {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if resolve(n.Content[i]).Value == key {
			return i
		}
	}
	return -1
}

// copyNode returns a shallow copy of n with its own Content.
func (d *decoder) copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = append([]*yaml.Node(nil), n.Content...)
	if file, ok := d.files[n]; ok { // else it is d.file's, as n is
		d.files[&c] = file
	}
	return &c
}

// maxExtends bounds a chain of extends, against runaway recursion.
const maxExtends = 16

// resolveExtends replaces a profile that extends another by the overlay of
// it on its (recursively resolved) base. chain lists the sources seen.
func (d *decoder) resolveExtends(root *yaml.Node, source string, chain []string) (*yaml.Node, error) {
	root = resolve(root)
	if root.Kind != yaml.MappingNode {
		return root, nil
	}
	i := mappingIndex(root, "extends")
	if i < 0 {
		return root, nil
	}
	refNode := resolve(root.Content[i+1])
	fail := func(format string, args ...any) error {
		return ErrorList{{Pos: d.posOf(refNode), Path: "extends", Msg: message(format, args)}}
	}
	// Only the first is taken out and resolved: a second would be left in
	// the result, as if it were the merged profile's own.
	for j := i + 2; j+1 < len(root.Content); j += 2 {
		if k := resolve(root.Content[j]); k.Value == "extends" {
			return nil, ErrorList{{Pos: d.posOf(k), Path: "extends", Msg: "given twice"}}
		}
	}
	if refNode.Kind != yaml.ScalarNode || isNull(refNode) || refNode.Value == "" {
		return nil, fail("want the name or path of a profile, got %s", describe(refNode))
	}
	data, baseSource, err := readProfileRef(refNode.Value, source)
	if err != nil {
		hint := ""
		if ref := refNode.Value; !strings.ContainsAny(ref, `/\`) && filepath.Ext(ref) == "" {
			hint = didYouMean(ref, Shipped()).String() // a shipped profile's name, mistyped
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
	base, err := d.parseYAML(baseSource, data)
	if err != nil {
		return nil, err
	}
	base, err = d.resolveExtends(base, baseSource, append(chain, baseSource))
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
	merged := d.copyNode(d.overlay(base, own, reflect.TypeFor[Profile](), ""))
	if mappingIndex(own, "name") < 0 {
		// A variant is not its base: without a name of its own it is named
		// after its file.
		if j := mappingIndex(merged, "name"); j >= 0 {
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

// readProfileRef finds the profile named by ref from a profile at source: a
// path relative to it, or the name of a shipped profile.
func readProfileRef(ref, source string) ([]byte, string, error) {
	if strings.HasPrefix(source, "shipped:") && !filepath.IsAbs(ref) {
		name := strings.TrimSuffix(ref, ".yaml")
		if data, err := library.ReadFile(name + ".yaml"); err == nil {
			return data, "shipped:" + name, nil
		}
		return nil, "", fmt.Errorf("no shipped profile %q", ref)
	}
	path := ref
	if !filepath.IsAbs(ref) {
		path = filepath.Join(filepath.Dir(source), ref)
	}
	data, err := ReadFile(path, MaxFileBytes)
	if err == nil {
		if abs, absErr := filepath.Abs(path); absErr == nil {
			path = abs
		}
		return data, path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", err
	}
	if !strings.ContainsAny(ref, `/\`) && filepath.Ext(ref) == "" {
		if data, err := library.ReadFile(ref + ".yaml"); err == nil {
			return data, "shipped:" + ref, nil
		}
	}
	return nil, "", fmt.Errorf("cannot find %q: no such file next to this profile, and no shipped profile by that name", ref)
}

// SetFile is the name --set overrides go by in messages: an error in the
// n-th --set is reported at --set:n:column, the column counted in its
// argument.
const SetFile = "--set"

var setSegmentRE = regexp.MustCompile(`^([A-Za-z0-9_-]+)(?:\[([0-9]+)\])?$`)

// pathStep is one step of a --set path: a key, maybe with a list index.
type pathStep struct {
	key   string
	index int // -1: none
	col   int // column of the key in the argument
}

// applySet lays `path=value`, the n-th --set, on root.
func (d *decoder) applySet(root *yaml.Node, arg string, n int) *yaml.Node {
	at := func(col int) Pos { return Pos{File: SetFile, Line: n, Col: col} }
	fail := func(col int, path, format string, args ...any) *yaml.Node {
		d.fail(path)
		d.report(at(col), path, format, args...)
		return root
	}
	path, text, ok := strings.Cut(arg, "=")
	if !ok || path == "" {
		return fail(1, "", "want path=value, e.g. hops.core-up.rate=2Mbit")
	}
	var steps []pathStep
	col := 1
	for _, seg := range strings.Split(path, ".") {
		m := setSegmentRE.FindStringSubmatch(seg)
		if m == nil {
			return fail(col, path, "%q is not a key (want keys and list indices, e.g. schedule[0].at)", seg)
		}
		step := pathStep{key: m[1], index: -1, col: col}
		if m[2] != "" {
			step.index, _ = strconv.Atoi(m[2])
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
	return d.setPath(root, reflect.TypeFor[Profile](), steps, "", value, at)
}

// markSet places the nodes of a --set value in its argument.
func (d *decoder) markSet(v *yaml.Node, n, col int) {
	d.files[v] = SetFile
	v.Column += col - 1
	v.Line = n
	for _, c := range v.Content {
		d.markSet(c, n, col)
	}
}

// setPath returns n with the value at steps replaced (overlaid) by value.
func (d *decoder) setPath(n *yaml.Node, t reflect.Type, steps []pathStep, done string, value *yaml.Node, at func(int) Pos) *yaml.Node {
	if len(steps) == 0 {
		if n == nil {
			return value
		}
		return d.overlay(n, value, t, done)
	}
	step := steps[0]
	path := join(done, step.key)
	if n != nil {
		n = resolve(n)
	}
	if n == nil || isNull(n) {
		n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: at(step.col).Line, Column: step.col}
		d.files[n] = SetFile
	}
	if n.Kind != yaml.MappingNode {
		d.fail(done)
		d.report(at(step.col), done, "is %s, not a mapping with keys", describe(n))
		return n
	}
	n = d.copyNode(n)
	i := mappingIndex(n, step.key)
	last := len(steps) == 1 && step.index < 0
	if mt := derefType(t); mt != nil && mergeable(mt) && !(last && isNull(value)) {
		// Naming another alternative (a loss model, a jitter distribution)
		// replaces the value, as in extends: the same question, asked of a
		// mapping of the one key set.
		probe := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: step.key}, {Kind: yaml.MappingNode}}}
		if last {
			probe.Content[1] = value
		}
		if replaces(mt, n, probe) {
			d.forgetSets(done)
			n = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: n.Style, Line: at(step.col).Line, Column: step.col}
			d.files[n] = SetFile
			i = -1
		}
	}
	var child *yaml.Node
	if i >= 0 {
		child = n.Content[i+1]
	}
	childType := fieldType(t, step.key)
	if mapOf := derefType(t); mapOf != nil && i < 0 && isNamedMap(mapOf) {
		var names []string
		for k := 0; k+1 < len(n.Content); k += 2 {
			names = append(names, n.Content[k].Value)
		}
		d.added = append(d.added, addition{in: done, name: step.key, at: at(step.col), others: names})
	}
	if last && isNull(value) {
		if i >= 0 {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			d.noteRemoval(path, at(step.col))
		}
		return n
	}
	if last {
		if value.Kind != yaml.MappingNode {
			d.forgetSets(path) // replaced whole
		}
		d.removed = append(d.removed, removal{path: path, by: at(step.col), set: true, setAt: at(step.col)})
	}
	if step.index >= 0 {
		child = d.setIndex(child, childType, step, path, steps[1:], value, at)
	} else {
		child = d.setPath(child, childType, steps[1:], path, value, at)
	}
	if i >= 0 {
		n.Content[i+1] = child
	} else {
		key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: step.key, Line: at(step.col).Line, Column: step.col}
		d.files[key] = SetFile
		n.Content = append(n.Content, key, child)
	}
	return n
}

// setIndex sets, in the list n, the entry step.index, then the rest of the
// path.
func (d *decoder) setIndex(n *yaml.Node, t reflect.Type, step pathStep, path string, rest []pathStep, value *yaml.Node, at func(int) Pos) *yaml.Node {
	if n != nil {
		n = resolve(n)
	}
	if n == nil || n.Kind != yaml.SequenceNode || step.index >= len(n.Content) {
		size := 0
		if n != nil && n.Kind == yaml.SequenceNode {
			size = len(n.Content)
		}
		entries := "entries"
		if size == 1 {
			entries = "entry"
		}
		at := at(step.col + len(step.key) + 1) // the index, after the [
		d.fail(path)
		d.report(at, path, "has %d %s; [%d] is not one of them", size, entries, step.index)
		return n
	}
	if t = derefType(t); t != nil && t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	n = d.copyNode(n)
	n.Content[step.index] = d.setPath(n.Content[step.index], t, rest, fmt.Sprintf("%s[%d]", path, step.index), value, at)
	return n
}

// removal is a key an override removed with null, or (set) a value a
// --set gave, and where it did. (Both are kept in one list: a suite moves
// what its overrides did to its own file.)
type removal struct {
	path  string
	by    Pos
	set   bool
	setAt Pos // by, as the values the --set placed are (a suite moves by)
}

func (d *decoder) noteRemoval(path string, by Pos) {
	d.removed = append(d.removed, removal{path: path, by: by})
}

// forgetSets forgets the values earlier --sets gave at or inside path,
// which a later one replaced: they cause nothing now.
func (d *decoder) forgetSets(path string) {
	d.removed = slices.DeleteFunc(d.removed, func(r removal) bool { return r.set && within(r.path, path) })
}

// citeRemovals adds to each error that a removal may have caused where
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
func (d *decoder) citeRemovals() {
	for _, e := range d.errs {
		cited := map[Pos]bool{}
		for _, r := range d.removed {
			near := parentPath(r.path) == e.Path || parentPath(r.path) == parentPath(e.Path)
			if r.set {
				elsewhere := e.Pos.File != r.setAt.File || e.Pos.Line != r.setAt.Line
				if elsewhere && e.Path != "" && (near || within(e.Path, r.path)) && !cited[r.by] {
					e.Msg += fmt.Sprintf(" (%s sets %s)", r.by, clip(r.path, maxNamed))
					cited[r.by] = true
				}
				continue
			}
			key := r.path[strings.LastIndexAny(r.path, ".[")+1:]
			if namesWord(e.Msg, key) && near || strings.Contains(e.Msg, quoted(key)) {
				e.Msg += fmt.Sprintf(" (%s removes %s)", r.by, clip(r.path, maxNamed))
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
	in, name string
	at       Pos
	others   []string
}

// checkAdditions refuses a hop that a --set added but no flow crosses: it
// is most likely a mistyped name (--set hops.core-upp.rate=2Mbit), which
// would otherwise add a hop that changes nothing. Adding a hop and putting
// it on a route, in another --set, is how a hop is added.
func (d *decoder) checkAdditions(p *Profile) {
	for _, a := range d.added {
		if a.in != "hops" || p.Hops.Index(a.name) < 0 {
			continue
		}
		crossed := false
		for _, f := range p.Flows.Values {
			crossed = crossed || slices.Contains(f.Route, HopName(a.name))
		}
		if !crossed {
			d.report(a.at, join(a.in, a.name), "the profile has no hop %q, and no flow crosses the one this would add%s", a.name, didYouMean(a.name, a.others))
		}
	}
}

// isNamedMap reports whether t is a mapping of names to values (hops,
// flows), not a schema struct.
func isNamedMap(t reflect.Type) bool {
	_, named := reflect.New(t).Interface().(interface{ elemType() reflect.Type })
	return named
}
