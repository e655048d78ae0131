package lang

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// yaml.v4 composes a node tree by a scanner, a parser of tokens into events
// and a composer of events, and resolves every plain scalar's tag by trying
// it as an integer and a float: for a profile of 10 000 hops and flows,
// 60 % of a load's CPU and some 45 MB allocated. fastParse builds the same
// tree for the YAML hilrig's files are written in, from the text in one
// pass, its nodes and their children taken from slabs and its scalars
// slices of the text.
//
// It reads a subset, and declines (ok false) anything outside it, before or
// while parsing, so that the file goes to yaml.v4 whole and means what it
// did, with yaml.v4's messages for what is wrong in it. The subset, one
// document of printable UTF-8 text:
//
//   - a block mapping at column 1, of keys that are single-line plain or
//     quoted scalars followed by ": " or ":" at the end of the line;
//   - block mappings and block sequences ("- " entries, an entry a
//     mapping begun on its line too) nested in it by indentation;
//   - flow mappings and sequences ({k: v, ...}, [a, ...]) on one line;
//   - single-line plain scalars, and quoted scalars without escapes.
//
// Declined: anchors, aliases, tags, directives, document markers, block
// scalars (| >), multi-line scalars and flow collections, explicit keys
// (?), empty values, tabs, escapes, and scalars yaml.v4 might resolve to a
// timestamp; and comments, unless the tree is to be decoded and not
// rendered (hilrig show prints them): then comment lines and comments
// after a block's values are passed over, whatever they hold, and the tree
// is yaml.v4's without its comments. FuzzFastParse holds it to yaml.v4's tree: the same
// kinds, tags, styles, values, lines and columns (and comments, when they
// are kept), or declined.

// fastDeclined marks the bytes whose presence anywhere sends a file to
// yaml.v4: control characters but the newline, and the escape of a double
// quoted scalar; commentDeclined those that do unless comments are
// dropped, the indicators of what the subset does not read, which the
// parser declines anywhere but in a comment or a quoted scalar (where
// they are text).
var fastDeclined, commentDeclined = func() (t [256]bool) {
	for c := range 0x80 {
		t[c] = c < 0x20 && c != '\n' || c == 0x7f || c == '\\'
	}
	return t
}(), byteSet("&*!|>?@`#")

// plainByte marks the bytes a plain scalar of the subset may hold after its
// first in a flow (':' only where it is not followed by a space or the end
// of the line, which ends a key); plainBlockByte, outside one, where the
// flow indicators and quotes are text too (a description's "a, b" or
// "Paper 001's").
var plainByte, plainBlockByte = func() (flow, block [256]bool) {
	for c := range 256 {
		flow[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	for _, c := range " _.+-/~=()$;^<:%" {
		flow[c] = true
	}
	for c := 0x80; c < 256; c++ {
		flow[c] = true // a rune of printableText
	}
	block = flow
	for _, c := range ",[]{}'\"" {
		block[c] = true
	}
	return flow, block
}()

// Parsed lazily (for a tree that is only decoded), the collections at
// lazyDepth (the root mapping is at 1: the hops, the flows, the schedule)
// are stubs: each is parsed through, so that the file is read or declined
// as a whole and the parse goes on after it, but only its own node is
// built, without children, and where each of its entries begins is noted
// (8 bytes an entry). The decoder reads a stub's entries one after the
// other, each parsed again from its place into the arrays the entry
// before it used (entryReused); a position looked for after decoding (a
// message, a check) parses the one entry it is in, into arrays of its own
// (entry), found by an index of the stub's keys made at the first look.
// Only the root, its keys and the stubs are kept through the decoding:
// stubs one level deeper, a key and a stub for each hop and flow, were
// 40 000 nodes (7 MB) for 10 000 of each, and the whole tree 38 MB. (Taken
// from the parser's slabs, the entries' trees would not be garbage: a
// slab lives while any node of it does, and its nodes hold the slabs of
// children that hold the nodes of the slab before.)
const lazyDepth = 2

// nodeSlab is how many nodes are allocated at once, at most: a slab stays
// alive while any node of it is, and no loaded value keeps a node. The
// slabs grow to it from firstSlab: the tree of a file parsed lazily is a
// few nodes (its top levels and their stubs), and a whole slab for them
// was 160 KB beside the loaded profile as it was decoded.
const (
	nodeSlab  = 1024
	firstSlab = 16
)

// fastDepth bounds nesting, far below yaml.v4's own limit (10 000).
const fastDepth = 64

type fastParser struct {
	text      string // the file: scalars are slices of it
	comments  bool   // passed over, not declined
	nonASCII  bool   // text has runes of more than a byte: columns count runes
	pos       int
	line      int // of pos, from 1
	lineStart int // the offset of line's first byte
	depth     int

	nodes   []yaml.Node  // the current slab, taken from the front
	content []*yaml.Node // the current slab of children
	slab    int          // the size of the last slab of nodes
	stack   []*yaml.Node // the children of the collections being parsed

	lazy       bool                // leave the collections at lazyDepth as stubs
	skipping   bool                // in a stub: parse through, build nothing
	skipped    int                 // the nodes of the stub's subtree, itself not counted
	stubAt     int                 // the offset of the stub being parsed through
	entryAt    int                 // skipped when its current entry began
	entryNodes int                 // the most nodes of an entry of it so far
	scratch    yaml.Node           // what the nodes of a stub's subtree are built in
	stubs      map[*yaml.Node]stub // each stub's place, once the file is read
	parsed     []placedStub        // the stubs as the file is read
	entries    []entryPlace        // where each entry of each stub begins, stub after stub

	keys map[*yaml.Node]map[string]int32 // the entry of each key of a stub, once looked for

	reused        []yaml.Node  // the nodes of entryReused
	reusedContent []*yaml.Node // and their children
}

// stub is where a stub's subtree is in the text, its size, and its
// entries.
type stub struct {
	offset     int32 // of its first byte
	nodes      int32 // below it
	entryNodes int32 // the most nodes of one of its entries (a key and its value)
	first, end int32 // its entries are p.entries[first:end]
}

// entryPlace is where an entry of a stub begins: its key, its "- ", or in a
// flow its first byte.
type entryPlace struct {
	offset, line int32
}

// placedStub is a stub and its place, as the parser leaves it.
type placedStub struct {
	n  *yaml.Node
	at stub
}

// printableText reports whether the text outside ASCII in data is what
// yaml.v4 reads without complaint, and without counting a line: valid
// UTF-8, printable in YAML's sense, not a line break of YAML 1.1 (U+0085,
// U+2028, U+2029) nor a byte order mark.
func printableText(text string) bool {
	if !utf8.ValidString(text) {
		return false
	}
	for _, r := range text {
		switch {
		case r < 0x80:
		case r == 0x2028 || r == 0x2029 || r == 0xfeff:
			return false
		case 0xa0 <= r && r <= 0xd7ff, 0xe000 <= r && r <= 0xfffd, 0x10000 <= r && r <= 0x10ffff:
		default:
			return false
		}
	}
	return true
}

// errDecline unwinds the parser when the file is outside the subset.
type errDecline struct{}

// fastParse returns the tree yaml.v4 composes for text (its document's
// root), or ok false when text is outside the subset fastParse reads. With
// dropComments, comments are passed over, and left out of the tree. Its
// scalars are slices of text.
func fastParse(text string, dropComments bool) (root *yaml.Node, ok bool) {
	root, _, ok = parseFast(text, dropComments, false)
	return root, ok
}

// fastParseLazy is fastParse with the collections at lazyDepth left as
// stubs, which the parser returned expands; it reads and declines the same
// files.
func fastParseLazy(text string, dropComments bool) (root *yaml.Node, p *fastParser, ok bool) {
	return parseFast(text, dropComments, true)
}

func parseFast(text string, dropComments, lazy bool) (root *yaml.Node, parser *fastParser, ok bool) {
	nonASCII := false
	for i := range len(text) {
		switch c := text[i]; {
		case c >= 0x80:
			nonASCII = true
		case fastDeclined[c] || commentDeclined[c] && !dropComments:
			return nil, nil, false
		}
	}
	if nonASCII && !printableText(text) || len(text) > math.MaxInt32 {
		return nil, nil, false
	}
	if strings.Contains(text, "---") || strings.Contains(text, "...") {
		return nil, nil, false // document markers, or scalars near enough to them
	}
	p := &fastParser{text: text, comments: dropComments, nonASCII: nonASCII, line: 1, lazy: lazy}
	if lazy {
		// An entry a line at most in a block, and 8 bytes each: growing
		// the list by doubling was more garbage than that.
		p.entries = make([]entryPlace, 0, strings.Count(text, "\n")+1)
	}
	defer func() {
		if r := recover(); r != nil {
			if _, declined := r.(errDecline); !declined {
				panic(r)
			}
			root, parser, ok = nil, nil, false
		}
	}()
	p.skipBlankLines()
	if p.pos >= len(p.text) || p.col() != 1 {
		p.decline()
	}
	root = p.blockMapping(0)
	p.skipBlankLines()
	if p.pos < len(p.text) {
		p.decline()
	}
	if lazy {
		p.stubs = make(map[*yaml.Node]stub, len(p.parsed))
		for _, s := range p.parsed {
			p.stubs[s.n] = s.at
		}
		p.parsed = nil
	}
	return root, p, true
}

// expand returns the tree of n, a stub (the node itself otherwise), parsed
// again from its place in the text: with n's kind, style, tag, line and
// column, and its children. Its nodes are arrays of its own, of the size
// counted when it was parsed through.
func (p *fastParser) expand(n *yaml.Node) *yaml.Node {
	at, ok := p.stubOf(n)
	if !ok {
		return n
	}
	p.nodes, p.content = make([]yaml.Node, at.nodes+1), make([]*yaml.Node, at.nodes)
	return p.parseAt(n, int(at.offset), n.Line, lazyDepth-1, func() (k, v *yaml.Node) {
		// The indent of a block collection is its column's: only spaces,
		// or a sequence's "- ", come before it on its line.
		switch {
		case n.Style == yaml.FlowStyle:
			return nil, p.flowCollection()
		case n.Kind == yaml.MappingNode:
			return nil, p.blockMapping(n.Column - 1)
		default:
			return nil, p.blockSequence(n.Column - 1)
		}
	})
}

// stubOf is n's place, if n is a stub.
func (p *fastParser) stubOf(n *yaml.Node) (stub, bool) {
	if n.Content != nil || n.Kind == yaml.ScalarNode {
		return stub{}, false // a stub has no children: most nodes are not looked up
	}
	at, ok := p.stubs[n]
	return at, ok
}

// entryCount is how many entries the stub at has: pairs in a mapping.
func (at stub) entryCount() int { return int(at.end - at.first) }

// entry parses the i-th entry of the stub n, at at, into arrays of its
// own: its key (nil in a list) and its value.
func (p *fastParser) entry(n *yaml.Node, at stub, i int) (key, value *yaml.Node) {
	p.nodes, p.content = make([]yaml.Node, at.entryNodes), make([]*yaml.Node, at.entryNodes)
	return p.parseEntry(n, at, i)
}

// entryReused is entry into the arrays the entry before used: what it
// returns lives until the next call. The decoder decodes an entry and is
// done with it, and keeps none of its nodes; an allocation for each hop
// and flow was a tenth of a large profile's load.
func (p *fastParser) entryReused(n *yaml.Node, at stub, i int) (key, value *yaml.Node) {
	if int(at.entryNodes) > len(p.reused) {
		p.reused, p.reusedContent = make([]yaml.Node, at.entryNodes), make([]*yaml.Node, at.entryNodes)
	} else {
		clear(p.reused[:at.entryNodes])
		clear(p.reusedContent[:at.entryNodes])
	}
	p.nodes, p.content = p.reused[:at.entryNodes], p.reusedContent[:at.entryNodes]
	return p.parseEntry(n, at, i)
}

// parseEntry parses the i-th entry of the stub n into p.nodes and
// p.content, as the stub's own loop parsed it.
func (p *fastParser) parseEntry(n *yaml.Node, at stub, i int) (key, value *yaml.Node) {
	e := p.entries[int(at.first)+i]
	var k, v *yaml.Node
	p.parseAt(n, int(e.offset), int(e.line), lazyDepth, func() (*yaml.Node, *yaml.Node) {
		switch {
		case n.Style == yaml.FlowStyle:
			k, v = p.flowEntry(n.Kind)
		case n.Kind == yaml.MappingNode:
			k, v = p.mappingEntry(n.Column - 1)
		default:
			v = p.sequenceEntry()
		}
		return k, v
	})
	return k, v
}

// entryNamed is the index of the first entry of the stub n, a mapping, of
// the key, or -1; the stub's keys are indexed at the first look, so that
// a position looked for in each of N hops is not N² keys parsed.
func (p *fastParser) entryNamed(n *yaml.Node, at stub, key string) int {
	index, ok := p.keys[n]
	if !ok {
		index = make(map[string]int32, at.entryCount())
		p.skipping = true // only the keys' values are wanted: built in scratch
		for i := range at.entryCount() {
			e := p.entries[int(at.first)+i]
			p.parseAt(n, int(e.offset), int(e.line), lazyDepth, func() (*yaml.Node, *yaml.Node) {
				k := p.key(n.Style == yaml.FlowStyle)
				if _, seen := index[k.Value]; !seen {
					index[k.Value] = int32(i)
				}
				return nil, nil
			})
		}
		p.skipping = false
		if p.keys == nil {
			p.keys = map[*yaml.Node]map[string]int32{}
		}
		p.keys[n] = index
	}
	if i, ok := index[key]; ok {
		return int(i)
	}
	return -1
}

// parseAt runs parse from offset, on line, at depth, the tree built whole
// (not lazily), into p.nodes and p.content, which it leaves empty; of the
// stub n, for what it says when it fails.
func (p *fastParser) parseAt(n *yaml.Node, offset, line, depth int, parse func() (k, v *yaml.Node)) *yaml.Node {
	p.pos, p.line, p.depth = offset, line, depth
	p.lineStart = strings.LastIndexByte(p.text[:p.pos], '\n') + 1
	p.lazy = false
	defer func() { p.lazy, p.nodes, p.content = true, nil, nil }()
	// The file was read through once: it cannot be declined now. (What
	// comes after is not looked at.)
	defer func() {
		if r := recover(); r != nil {
			if _, declined := r.(errDecline); declined {
				panic("profiles/lang: a stub declined when parsed again, at line " + strconv.Itoa(n.Line))
			}
			panic(r)
		}
	}()
	_, v := parse()
	return v
}

// expandAll replaces the stubs in the tree of root by their trees.
func (p *fastParser) expandAll(root *yaml.Node) {
	for i, c := range root.Content {
		root.Content[i] = p.expand(c)
		p.expandAll(root.Content[i])
	}
}

func (p *fastParser) decline() { panic(errDecline{}) }

// col is pos's column, in runes as yaml.v4 counts.
func (p *fastParser) col() int {
	if p.nonASCII {
		return utf8.RuneCountInString(p.text[p.lineStart:p.pos]) + 1
	}
	return p.pos - p.lineStart + 1
}

func (p *fastParser) peek() byte {
	if p.pos < len(p.text) {
		return p.text[p.pos]
	}
	return '\n'
}

// peekAt is the byte i after pos; past the text, a newline.
func (p *fastParser) peekAt(i int) byte {
	if p.pos+i < len(p.text) {
		return p.text[p.pos+i]
	}
	return '\n'
}

func (p *fastParser) skipSpaces() {
	for p.pos < len(p.text) && p.text[p.pos] == ' ' {
		p.pos++
	}
}

// atComment reports whether a comment begins at pos: a '#' after a space
// or at the start of a line.
func (p *fastParser) atComment() bool {
	return p.comments && p.pos < len(p.text) && p.text[p.pos] == '#' && (p.pos == p.lineStart || p.text[p.pos-1] == ' ')
}

// atLineEnd reports whether only spaces, and maybe a comment, are left of
// the line from pos.
func (p *fastParser) atLineEnd() bool {
	i := p.pos
	for i < len(p.text) && p.text[i] == ' ' {
		i++
	}
	if i >= len(p.text) || p.text[i] == '\n' {
		return true
	}
	return p.comments && p.text[i] == '#' && (i == p.lineStart || p.text[i-1] == ' ')
}

// endLine passes the spaces and a comment to the end of the line, and the
// newline; there must be nothing else.
func (p *fastParser) endLine() {
	p.skipSpaces()
	if p.atComment() {
		for p.pos < len(p.text) && p.text[p.pos] != '\n' {
			p.pos++
		}
	}
	if p.pos < len(p.text) {
		if p.text[p.pos] != '\n' {
			p.decline()
		}
		p.pos++
		p.line++
		p.lineStart = p.pos
	}
}

// skipBlankLines passes lines of spaces only (and comments), leaving pos
// at the first byte of the next line, or at the end.
func (p *fastParser) skipBlankLines() {
	for {
		i := p.pos
		for i < len(p.text) && p.text[i] == ' ' {
			i++
		}
		if p.comments && i < len(p.text) && p.text[i] == '#' {
			for i < len(p.text) && p.text[i] != '\n' {
				i++
			}
		}
		if i >= len(p.text) || p.text[i] != '\n' {
			if i >= len(p.text) {
				p.pos = i // a comment on the last line, without a newline
			}
			return
		}
		p.pos = i + 1
		p.line++
		p.lineStart = p.pos
	}
}

// indent is the indentation of the line pos begins, with pos after it;
// -1 at the end of the text.
func (p *fastParser) indent() int {
	p.skipBlankLines()
	if p.pos >= len(p.text) {
		return -1
	}
	p.skipSpaces()
	return p.pos - p.lineStart
}

func (p *fastParser) node(kind yaml.Kind, tag string, line, col int) *yaml.Node {
	if p.skipping {
		p.skipped++
		return &p.scratch
	}
	if len(p.nodes) == 0 {
		p.slab = min(max(2*p.slab, firstSlab), nodeSlab)
		p.nodes = make([]yaml.Node, p.slab)
	}
	n := &p.nodes[0]
	p.nodes = p.nodes[1:]
	n.Kind, n.Tag, n.Line, n.Column = kind, tag, line, col
	return n
}

// push stacks children of the collection being parsed; none in a stub,
// whose children are dropped: stacked, a stub's entries (the hops, the
// flows) grew the stack to two pointers an entry (0.7 MB of garbage for
// 10 000 hops and flows).
func (p *fastParser) push(children ...*yaml.Node) {
	if !p.skipping {
		p.stack = append(p.stack, children...)
	}
}

// children moves the children stacked from base to the collection n, in a
// slice of their own length and capacity (an append copies it).
func (p *fastParser) children(n *yaml.Node, base int) {
	if p.skipping {
		return
	}
	kids := p.stack[base:]
	if len(kids) > len(p.content) {
		p.content = make([]*yaml.Node, max(len(kids), 4*p.slab))
	}
	c := p.content[:len(kids):len(kids)]
	copy(c, kids)
	p.content = p.content[len(kids):]
	clear(kids)
	p.stack = p.stack[:base]
	if len(c) > 0 {
		n.Content = c
	}
}

// open begins a collection of the kind, at pos: its node, or, parsed
// lazily at lazyDepth, a stub, whose subtree is parsed through without
// being built (until close).
func (p *fastParser) open(kind yaml.Kind, tag string) (n *yaml.Node, stubbed bool) {
	if p.depth++; p.depth > fastDepth {
		p.decline()
	}
	n = p.node(kind, tag, p.line, p.col())
	if p.lazy && p.depth == lazyDepth {
		p.skipping, p.skipped, p.stubAt, p.entryAt, p.entryNodes = true, 0, p.pos, 0, 0
		p.parsed = append(p.parsed, placedStub{n, stub{first: int32(len(p.entries))}})
	}
	return n, p.lazy && p.depth == lazyDepth
}

// beginEntry notes, in a stub's own loop, where its next entry begins.
func (p *fastParser) beginEntry() {
	if p.skipping && p.depth == lazyDepth {
		p.endEntry()
		p.entries = append(p.entries, entryPlace{int32(p.pos), int32(p.line)})
	}
}

// endEntry counts the nodes of the stub's entry that began last.
func (p *fastParser) endEntry() {
	p.entryNodes = max(p.entryNodes, p.skipped-p.entryAt)
	p.entryAt = p.skipped
}

// close ends the collection n that open began, the children stacked from
// base its own (a stub's are dropped).
func (p *fastParser) close(n *yaml.Node, base int, stubbed bool) {
	p.children(n, base)
	p.depth--
	if stubbed {
		p.endEntry()
		p.skipping = false
		s := &p.parsed[len(p.parsed)-1].at
		s.offset, s.nodes, s.entryNodes, s.end = int32(p.stubAt), int32(p.skipped), int32(p.entryNodes), int32(len(p.entries))
	}
}

// blockMapping parses the mapping whose first key is at pos, in a line
// indented by indent (or after the "- " of a sequence's entry, at that
// column), through the last line of its keys.
func (p *fastParser) blockMapping(indent int) *yaml.Node {
	m, stub := p.open(yaml.MappingNode, "!!map")
	base := len(p.stack)
	for {
		p.beginEntry()
		key, value := p.mappingEntry(indent)
		p.push(key, value)
		next := p.indent()
		if next < indent {
			break
		}
		if next > indent {
			p.decline()
		}
	}
	p.close(m, base, stub)
	return m
}

// mappingEntry parses a key of a block mapping indented by indent, at pos,
// and its value.
func (p *fastParser) mappingEntry(indent int) (key, value *yaml.Node) {
	key = p.key(false)
	return key, p.blockValue(indent)
}

// key parses a mapping's key and its ':', and the space after it unless in
// a block the line ends there.
func (p *fastParser) key(flow bool) *yaml.Node {
	start := p.pos
	var k *yaml.Node
	if c := p.peek(); c == '"' || c == '\'' {
		k = p.quoted()
	} else {
		k = p.plain(flow)
	}
	if p.peek() != ':' || p.pos-start > 1000 {
		p.decline() // a simple key is at most 1024 characters in YAML
	}
	p.pos++
	switch p.peek() {
	case ' ':
		p.pos++
	case '\n':
		if flow {
			p.decline()
		}
	default:
		p.decline()
	}
	return k
}

// blockValue parses the value after a key of a block mapping indented by
// indent: on the key's line, or a collection on the lines below.
func (p *fastParser) blockValue(indent int) *yaml.Node {
	if !p.atLineEnd() {
		p.skipSpaces()
		v := p.inlineValue(false)
		p.endLine()
		return v
	}
	p.endLine()
	next := p.indent()
	switch {
	case next > indent && p.isEntry():
		return p.blockSequence(next)
	case next > indent:
		return p.blockMapping(next)
	case next == indent && p.isEntry():
		return p.blockSequence(next) // a list may sit at its key's indent
	}
	p.decline() // an empty value: null, placed where yaml.v4 places it
	return nil
}

// isEntry reports whether pos is at a block sequence's "- ".
func (p *fastParser) isEntry() bool {
	return p.peek() == '-' && (p.peekAt(1) == ' ' || p.peekAt(1) == '\n')
}

// blockSequence parses the entries at indent, from the first's "- " at pos.
func (p *fastParser) blockSequence(indent int) *yaml.Node {
	s, stub := p.open(yaml.SequenceNode, "!!seq")
	base := len(p.stack)
	for {
		p.beginEntry()
		p.push(p.sequenceEntry())
		next := p.indent()
		if next < indent || next == indent && !p.isEntry() {
			break // the mapping the list is the value of (at its key's indent) goes on
		}
		if next > indent {
			p.decline()
		}
	}
	p.close(s, base, stub)
	return s
}

// sequenceEntry parses an entry of a block sequence, from its "- " at pos.
func (p *fastParser) sequenceEntry() *yaml.Node {
	p.pos++ // the -
	p.skipSpaces()
	switch {
	case p.atLineEnd():
		p.decline() // an entry on the lines below, or empty
	case p.isEntry():
		p.decline() // a list in a list on one line
	case p.startsMapping():
		return p.blockMapping(p.col() - 1)
	}
	entry := p.inlineValue(false)
	p.endLine()
	return entry
}

// startsMapping reports whether the line from pos is a key and its ':'.
func (p *fastParser) startsMapping() bool {
	i := p.pos
	switch c := p.text[i]; c {
	case '{', '[':
		return false
	case '"', '\'':
		end := strings.IndexByte(p.text[i+1:], c)
		if end < 0 {
			return false
		}
		i += end + 2
		return i < len(p.text) && p.text[i] == ':'
	}
	for ; i < len(p.text) && p.text[i] != '\n'; i++ {
		if p.text[i] == ':' && (i+1 == len(p.text) || p.text[i+1] == ' ' || p.text[i+1] == '\n') {
			return true
		}
	}
	return false
}

// inlineValue parses a value that is on its line: a flow collection, or a
// scalar, which inFlow ends at a flow indicator too.
func (p *fastParser) inlineValue(inFlow bool) *yaml.Node {
	switch p.peek() {
	case '{', '[':
		return p.flowCollection()
	case '"', '\'':
		return p.quoted()
	}
	v := p.plain(inFlow)
	if p.peek() == ':' {
		p.decline() // a key where a value is: an error
	}
	return v
}

// flowCollection parses {k: v, ...} or [v, ...] from pos, on one line.
func (p *fastParser) flowCollection() *yaml.Node {
	kind, tag, closing := yaml.MappingNode, "!!map", byte('}')
	if p.peek() == '[' {
		kind, tag, closing = yaml.SequenceNode, "!!seq", ']'
	}
	n, stub := p.open(kind, tag)
	n.Style = yaml.FlowStyle
	base := len(p.stack)
	p.pos++
	p.skipSpaces()
	if p.peek() != closing {
		for {
			p.beginEntry()
			if key, value := p.flowEntry(kind); key != nil {
				p.push(key, value)
			} else {
				p.push(value)
			}
			p.skipSpaces()
			if p.peek() == closing {
				break
			}
			if p.peek() != ',' {
				p.decline()
			}
			p.pos++
			p.skipSpaces()
			if p.peek() == closing {
				p.decline() // a trailing comma
			}
		}
	}
	p.pos++ // closing
	p.close(n, base, stub)
	return n
}

// flowEntry parses an entry of a flow collection of the kind, at pos: a
// key (in a mapping) and its value.
func (p *fastParser) flowEntry(kind yaml.Kind) (key, value *yaml.Node) {
	if kind == yaml.MappingNode {
		key = p.key(true)
		p.skipSpaces()
	}
	return key, p.inlineValue(true)
}

// quoted parses a quoted scalar on one line, without escapes (nor a
// doubled quote in a single-quoted one).
func (p *fastParser) quoted() *yaml.Node {
	q := p.peek()
	line, col := p.line, p.col()
	start := p.pos + 1
	end := start
	for end < len(p.text) && p.text[end] != q {
		if p.text[end] == '\n' {
			p.decline() // a multi-line scalar
		}
		end++
	}
	if end >= len(p.text) || end+1 < len(p.text) && p.text[end+1] == q {
		p.decline()
	}
	p.pos = end + 1
	n := p.node(yaml.ScalarNode, "!!str", line, col)
	n.Value = p.text[start:end]
	n.Style = yaml.DoubleQuotedStyle
	if q == '\'' {
		n.Style = yaml.SingleQuotedStyle
	}
	return n
}

// plain parses a plain scalar on one line: up to a ": " (or ':' ending the
// line) when it is a key, a ',', ']' or '}' in a flow, the end of the line.
func (p *fastParser) plain(flow bool) *yaml.Node {
	line, col := p.line, p.col()
	start := p.pos
	if !p.startsPlain() {
		p.decline()
	}
	inside := &plainBlockByte
	if flow {
		inside = &plainByte
	}
	end := start // past the last byte that is not a space
	for p.pos < len(p.text) {
		c := p.text[p.pos]
		if c == ':' {
			next := p.peekAt(1)
			if next == ' ' || next == '\n' || flow {
				break // a key's end, or in a flow, anything yaml.v4 might read otherwise
			}
		} else if !inside[c] {
			break
		}
		p.pos++
		if c != ' ' {
			end = p.pos
		}
	}
	if !p.endsPlain(flow) {
		p.decline() // a byte the subset does not read in a plain scalar
	}
	value := p.text[start:end]
	n := p.node(yaml.ScalarNode, resolvePlain(value), line, col)
	n.Value = value
	return n
}

// startsPlain reports whether a plain scalar of the subset may begin at
// pos: not with an indicator, nor a '-' that is a list's entry.
func (p *fastParser) startsPlain() bool {
	c, next := p.peek(), p.peekAt(1)
	if c == '-' {
		return plainByte[next] && next != ' '
	}
	return plainByte[c] && c != ' ' && c != ':' && c != '%'
}

// endsPlain reports whether a plain scalar may end at pos: at a key's
// ": ", the end of the line, a comment in a block, or what ends an entry
// of a flow.
func (p *fastParser) endsPlain(flow bool) bool {
	switch c := p.peek(); {
	case c == ':':
		return !flow || p.peekAt(1) == ' '
	case c == '\n':
		return true
	case flow:
		return c == ',' || c == ']' || c == '}'
	}
	return p.atComment()
}

// mayBeNumber reports whether yaml.v4 might resolve s, a plain scalar
// beginning with a sign or a digit, to an integer or a float: a scalar
// with any other byte (10Mbit, 2ms, 100B) is a string, found without
// trying it as a number (and making the parser's errors, one a scalar).
// After the signs, 0x, 0o or 0b and digits of any base, or decimal digits,
// points and exponents; underscores anywhere.
func mayBeNumber(s string) bool {
	i := 0
	for i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	allowed := &decimalByte
	if len(s)-i > 2 && s[i] == '0' && prefixByte[s[i+1]] {
		i, allowed = i+2, &baseDigitByte
	}
	for ; i < len(s); i++ {
		if !allowed[s[i]] {
			return false
		}
	}
	return true
}

// The bytes of mayBeNumber: the letter of a base's prefix, the digits of
// any base, those of a decimal number.
var prefixByte, baseDigitByte, decimalByte = byteSet("xXoObB"), byteSet("0123456789abcdefABCDEF_"), byteSet("0123456789_.eE+-")

func byteSet(bytes string) (set [256]bool) {
	for _, c := range []byte(bytes) {
		set[c] = true
	}
	return set
}

// yamlStyleFloat is yaml.v4's pattern of a float (resolver.go), compiled
// at its first use rather than at every start of the binary (issue 21's
// process-start row: 136 allocations of every command's init).
var yamlStyleFloat = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$`)
})

// resolvePlain is the tag yaml.v4 resolves a plain scalar to (its
// resolver.go: YAML 1.2's core schema, with its extensions: underscores
// in numbers, 0b and 0o, and the merge key). A scalar that might be a
// timestamp declines the file.
func resolvePlain(s string) string {
	switch s {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case "", "~", "null", "Null", "NULL":
		return "!!null"
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "-0", "-0.0":
		return "!!float"
	case "<<":
		return "!!merge"
	}
	switch c := s[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(s, 64); err == nil {
			return "!!float"
		}
		return "!!str"
	case c == '+' || c == '-' || '0' <= c && c <= '9':
	default:
		return "!!str"
	}
	if len(s) > 4 && s[4] == '-' && strings.Trim(s[:4], "0123456789") == "" {
		panic(errDecline{}) // yaml.v4 may read a timestamp
	}
	if !mayBeNumber(s) {
		return "!!str"
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return "!!int"
	}
	if _, err := strconv.ParseUint(strings.TrimPrefix(plain, "+"), 0, 64); err == nil {
		return "!!int"
	}
	if yamlStyleFloat().MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return "!!float"
		}
	}
	return "!!str"
}
