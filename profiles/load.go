package profiles

import (
	"errors"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
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
	text, source, err := read(ref)
	if err != nil {
		return nil, err
	}
	return parseText(source, text, sets)
}

// read finds ref on disk or in the library, and reads it as the text a
// loaded profile keeps.
func read(ref string) (string, string, error) {
	text, err := lang.ReadText(ref, lang.MaxFileBytes)
	if err == nil {
		return text, ref, nil
	}
	if !errors.Is(err, fs.ErrNotExist) || strings.ContainsAny(ref, `/\`) || filepath.Ext(ref) != "" {
		return "", "", err
	}
	if lib, libErr := library.ReadFile(ref + ".yaml"); libErr == nil {
		return string(lib), "shipped:" + ref, nil
	}
	return "", "", errors.New(ref + ": no such file, and no shipped profile by that name (see hilrig profiles)")
}

// Parse decodes and validates a profile from YAML text; source names it in
// messages and anchors the files it refers to.
func Parse(source string, data []byte, sets ...string) (*Loaded, error) {
	// One copy of the file is kept, not two (the bytes read and the text
	// parsed, 1.5 MB each for 10 000 hops and flows): the names and
	// values decoded are slices of the text, and AsWritten parses it
	// again.
	return parseText(source, string(data), sets)
}

// parseText is Parse of the text the loaded profile keeps.
func parseText(source, text string, sets []string) (*Loaded, error) {
	l, err := parse(source, text, sets, decodeProfile, false)
	if err != nil {
		return nil, err
	}
	l.reparse = func() (*Loaded, error) { return parse(source, text, sets, load, true) }
	return l, nil
}

// parse is Parse, loading the resolved tree with load; the tree keeps the
// comments of the files if it is to be rendered.
func parse(source, text string, sets []string, load func(*lang.Decoder, *yaml.Node, string) (*Loaded, error), rendered bool) (*Loaded, error) {
	d := newProfileDecoder()
	d.DropComments = !rendered
	root, err := d.ParseYAMLText(source, text)
	if err != nil {
		return nil, err
	}
	if root, err = d.ResolveExtends(root, source, []string{source}); err != nil {
		return nil, err
	}
	for i, set := range sets {
		root = d.ApplySet(root, set, i+1)
	}
	defer holdCollection()()
	return load(d, root, source)
}

// collectionHold counts the profiles being decoded at once (a live server
// parses one for each link that connects), so that the first of them
// takes the collector's percent and the last gives it back.
var collectionHold struct {
	sync.Mutex
	decoding int
	percent  int
}

// holdCollection keeps the garbage collector from starting a collection
// while a parsed profile is decoded and built, and returns what lets it
// start them again. Decoding and building keep almost all they allocate
// (the loaded profile), so a collection then frees next to nothing and
// costs CPU and the collector's own memory, its mark buffers and bits:
// without the two collections it made, hilrig check of 10 000 hops and
// flows peaks 0.8 MiB lower, its heap 9 MB of which 6.8 are the profile.
// Parsing, which may leave garbage (yaml.v4's tree of a file the fast
// parser declines, the trees of extends and --set laid on one another),
// is collected as before, and a memory limit (GOMEMLIMIT) still applies.
// Holds nest with others' when taken in turn, as hilrig does: a real-time
// run holds the collector (rig) after its profile is loaded.
func holdCollection() (release func()) {
	collectionHold.Lock()
	defer collectionHold.Unlock()
	if collectionHold.decoding == 0 {
		collectionHold.percent = debug.SetGCPercent(-1)
	}
	collectionHold.decoding++
	return func() {
		collectionHold.Lock()
		defer collectionHold.Unlock()
		if collectionHold.decoding--; collectionHold.decoding == 0 {
			// A percent set by someone else meanwhile (a real-time run
			// that ended during the load gave its own back) stands.
			if now := debug.SetGCPercent(collectionHold.percent); now != -1 {
				debug.SetGCPercent(now)
			}
		}
	}
}

// load decodes, validates and builds the resolved tree of the profile at
// source (extends and overrides laid on it), and keeps the tree for
// AsWritten.
func load(d *lang.Decoder, root *yaml.Node, source string) (*Loaded, error) {
	l, err := decodeProfile(d, root, source)
	if err != nil {
		return nil, err
	}
	l.written = root
	l.defaults = unwritten(d, root, l.Profile, &l.Config, source)
	return l, nil
}

// decodeProfile is load without keeping the tree.
func decodeProfile(d *lang.Decoder, root *yaml.Node, source string) (*Loaded, error) {
	d.Tree = root
	p := &Profile{}
	d.Decode(root, reflect.ValueOf(p).Elem(), lang.Path{})
	p.resolveDefaults()
	if p.Name == "" {
		p.Name = lang.NameOf(strings.TrimPrefix(source, "shipped:"))
	}
	cfg := p.build(d)
	p.checkRoles(d)
	checkAdditions(d, p)
	d.CiteRemovals()
	if err := d.Err(); err != nil {
		return nil, err
	}
	return &Loaded{Profile: p, Source: source, Config: cfg, files: filesRead(d)}, nil
}

// filesRead lists the files on disk that went into a profile: those
// parsed (the profile, what it extends) and those its values name, as d
// noted them when they were read (not found by a reflective walk of
// every value: 12 % of the load of 10 000 hops and flows).
func filesRead(d *lang.Decoder) []string {
	read := map[string]bool{}
	note := func(file string) {
		if file != "" && file != lang.SetFile && !strings.HasPrefix(file, "shipped:") {
			read[file] = true
		}
	}
	note(d.File)
	for _, file := range d.Files {
		note(file)
	}
	for _, file := range d.Read {
		note(file)
	}
	return slices.Sorted(maps.Keys(read))
}

// checkAdditions refuses a hop that a --set added but no flow crosses: it
// is most likely a mistyped name (--set hops.core-upp.rate=2Mbit), which
// would otherwise add a hop that changes nothing. Adding a hop and putting
// it on a route, in another --set, is how a hop is added.
func checkAdditions(d *lang.Decoder, p *Profile) {
	for _, a := range d.Added {
		if a.In != "hops" || p.Hops.Index(a.Name) < 0 {
			continue
		}
		crossed := false
		for _, f := range p.Flows.Values {
			crossed = crossed || slices.Contains(f.Route, HopName(a.Name))
		}
		if !crossed {
			d.Report(a.At, lang.Join(a.In, a.Name), "the profile has no hop %q, and no flow crosses the one this would add%s", a.Name, lang.DidYouMean(a.Name, a.Others))
		}
	}
}

// newProfileDecoder is a decoder of profiles: what one extends is a
// profile, on disk or shipped.
func newProfileDecoder() *lang.Decoder {
	d := lang.NewDecoder()
	d.Schema, d.ReadRef, d.RefNames = reflect.TypeFor[Profile](), readProfileRef, Shipped
	return d
}
