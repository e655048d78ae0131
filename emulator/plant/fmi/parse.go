package fmi

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/emulator/suggest"
)

// DescriptionFile is the model description's name in an FMU, which
// Parse's messages start with.
const DescriptionFile = "modelDescription.xml"

// maxProblems is how many problems a DescriptionError lists; it counts
// the rest.
const maxProblems = 20

// maxDepth bounds the nesting of elements (a description needs 4).
const maxDepth = 64

// Problem is one thing wrong in a description, at a line and column
// (1-based, the column counted in characters).
type Problem struct {
	Line, Column int
	Msg          string
}

// DescriptionError is every problem Parse found.
type DescriptionError struct {
	File     string
	Problems []Problem
	More     int // problems found beyond those listed
}

func (e *DescriptionError) Error() string {
	lines := make([]string, 0, len(e.Problems)+1)
	for _, p := range e.Problems {
		lines = append(lines, fmt.Sprintf("%s:%d:%d: %s", e.File, p.Line, p.Column, p.Msg))
	}
	if e.More > 0 {
		lines = append(lines, fmt.Sprintf("%s: and %d more problems", e.File, e.More))
	}
	return strings.Join(lines, "\n")
}

// node is an element of the description, with where it is written.
type node struct {
	name  string
	attrs []xml.Attr
	kids  []*node
	off   int // of its '<'
	end   int // just after its start tag
}

type parser struct {
	data       []byte
	lineStarts []int
	probs      []Problem
	more       int
	d          *Description
	version    Version
}

// Parse reads a model description of FMI 2.0 or 3.0. It reports every
// problem it finds (up to 20, then how many more), each at its line and
// column, as a *DescriptionError. Elements and attributes it does not know
// are ignored, as later minor versions of FMI add some.
func Parse(data []byte) (*Description, error) {
	p := &parser{data: data, lineStarts: []int{0}}
	for i, b := range data {
		if b == '\n' {
			p.lineStarts = append(p.lineStarts, i+1)
		}
	}
	root, err := p.tree()
	if err != nil {
		return nil, err
	}
	p.description(root)
	if len(p.probs) > 0 {
		return nil, &DescriptionError{File: DescriptionFile, Problems: p.probs, More: p.more}
	}
	return p.d, nil
}

// position turns a byte offset into a line and a column in characters.
func (p *parser) position(off int) (line, col int) {
	off = min(max(off, 0), len(p.data))
	i := sort.Search(len(p.lineStarts), func(i int) bool { return p.lineStarts[i] > off }) - 1
	return i + 1, utf8.RuneCount(p.data[p.lineStarts[i]:off]) + 1
}

func (p *parser) problemAt(off int, format string, args ...any) {
	if len(p.probs) == maxProblems {
		p.more++
		return
	}
	line, col := p.position(off)
	p.probs = append(p.probs, Problem{line, col, fmt.Sprintf(format, args...)})
}

// tree reads the XML into nodes. A syntax error ends the reading: it is
// reported at where the decoder stopped.
func (p *parser) tree() (*node, error) {
	dec := xml.NewDecoder(bytes.NewReader(p.data))
	dec.CharsetReader = charsetReader
	var root *node
	var stack []*node
	for {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			msg := err.Error()
			var syntax *xml.SyntaxError
			if errors.As(err, &syntax) {
				msg = syntax.Msg
			}
			// At the start of the token that failed: the end tag that does
			// not match, the attribute that is not closed.
			line, col := p.position(off)
			return nil, &DescriptionError{File: DescriptionFile, Problems: []Problem{{line, col, "malformed XML: " + msg}}}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name.Local, attrs: t.Attr, off: off, end: int(dec.InputOffset())}
			switch {
			case len(stack) >= maxDepth:
				line, col := p.position(off)
				return nil, &DescriptionError{File: DescriptionFile, Problems: []Problem{{line, col, fmt.Sprintf("elements nested deeper than %d", maxDepth)}}}
			case len(stack) > 0:
				top := stack[len(stack)-1]
				top.kids = append(top.kids, n)
			case root != nil:
				line, col := p.position(off)
				return nil, &DescriptionError{File: DescriptionFile, Problems: []Problem{{line, col, "a second root element <" + n.name + ">"}}}
			default:
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if root == nil {
		line, col := p.position(len(p.data))
		return nil, &DescriptionError{File: DescriptionFile, Problems: []Problem{{line, col, "no <fmiModelDescription> element: the file is empty or holds no XML element"}}}
	}
	return root, nil
}

// charsetReader reads the encodings model descriptions are written in
// besides UTF-8: ISO-8859-1 (Latin-1), whose bytes are the first 256 code
// points.
func charsetReader(charset string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1":
		b, err := io.ReadAll(in)
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		for _, c := range b {
			out.WriteRune(rune(c))
		}
		return &out, nil
	}
	return nil, fmt.Errorf("the encoding %q (want UTF-8 or ISO-8859-1)", charset)
}

// attrAt is the offset of an attribute's value in n's start tag, or of the
// tag when the attribute is not written.
func (p *parser) attrAt(n *node, name string) int {
	tag := p.data[n.off:n.end]
	for i := 0; ; {
		j := bytes.Index(tag[i:], []byte(name))
		if j < 0 {
			return n.off
		}
		j += i
		k := j + len(name)
		for k < len(tag) && isSpace(tag[k]) {
			k++
		}
		if j > 0 && isSpace(tag[j-1]) && k < len(tag) && tag[k] == '=' {
			k++
			for k < len(tag) && isSpace(tag[k]) {
				k++
			}
			return n.off + k + 1 // past the quote
		}
		i = j + 1
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func (n *node) attr(name string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

func (n *node) kid(name string) *node {
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

// what names an element in a message: the tag, and the name attribute
// when it has one.
func (n *node) what() string {
	if name, ok := n.attr("name"); ok {
		return fmt.Sprintf("<%s> %q", n.name, name)
	}
	return "<" + n.name + ">"
}

func (p *parser) required(n *node, name string) string {
	v, ok := n.attr(name)
	if !ok || v == "" {
		p.problemAt(n.off, "%s needs the attribute %s", n.what(), name)
	}
	return v
}

func (p *parser) boolean(n *node, name string) bool {
	v, ok := n.attr(name)
	if !ok {
		return false
	}
	switch strings.TrimSpace(v) {
	case "true", "1":
		return true
	case "false", "0":
		return false
	}
	p.problemAt(p.attrAt(n, name), "%s: %s=%q is not a boolean (want true or false)", n.what(), name, v)
	return false
}

// float reads a finite number; ok is false when the attribute is not
// written or is wrong (and then reported).
func (p *parser) float(n *node, name string) (float64, bool) {
	v, ok := n.attr(name)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		p.problemAt(p.attrAt(n, name), "%s: %s=%q is not a finite number", n.what(), name, v)
		return 0, false
	}
	return f, true
}

func (p *parser) optionalFloat(n *node, name string) *float64 {
	if f, ok := p.float(n, name); ok {
		return &f
	}
	return nil
}

func (p *parser) uint(n *node, name string, bits int) (uint64, bool) {
	v, ok := n.attr(name)
	if !ok {
		return 0, false
	}
	u, err := strconv.ParseUint(strings.TrimSpace(v), 10, bits)
	if err != nil {
		p.problemAt(p.attrAt(n, name), "%s: %s=%q is not a whole number from 0 to %d", n.what(), name, v, uint64(1)<<bits-1)
		return 0, false
	}
	return u, true
}

func (p *parser) choice(n *node, name string, allowed []string, def string) string {
	v, ok := n.attr(name)
	if !ok {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.problemAt(p.attrAt(n, name), "%s: %s=%q is not one of %s%s", n.what(), name, v, strings.Join(allowed, ", "), suggest.DidYouMean(v, allowed))
	return def
}

func (p *parser) description(root *node) {
	if root.name != "fmiModelDescription" {
		p.problemAt(root.off, "the root element is <%s>; a model description's is <fmiModelDescription>", root.name)
		return
	}
	d := &Description{}
	p.d = d
	d.FMIVersion = p.required(root, "fmiVersion")
	switch {
	case d.FMIVersion == "":
		return
	case d.FMIVersion == "2.0" || strings.HasPrefix(d.FMIVersion, "2.0."):
		d.Version = FMI2
	case strings.HasPrefix(d.FMIVersion, "3."):
		d.Version = FMI3
	case strings.HasPrefix(d.FMIVersion, "1."):
		p.problemAt(p.attrAt(root, "fmiVersion"), "FMI %s is not supported: hilrig reads FMI 2.0 and 3.0 (export the model again as FMI 2.0 or 3.0)", d.FMIVersion)
		return
	default:
		p.problemAt(p.attrAt(root, "fmiVersion"), "fmiVersion=%q is not an FMI version hilrig reads (want 2.0 or 3.0)", d.FMIVersion)
		return
	}
	p.version = d.Version
	d.ModelName = p.required(root, "modelName")
	if d.Version == FMI2 {
		d.Token = p.required(root, "guid")
		if n, ok := p.uint(root, "numberOfEventIndicators", 31); ok {
			d.NumberOfEventIndicators = int(n)
		}
	} else {
		d.Token = p.required(root, "instantiationToken")
	}
	d.Description, _ = root.attr("description")
	d.Author, _ = root.attr("author")
	d.ModelVersion, _ = root.attr("version")
	d.GenerationTool, _ = root.attr("generationTool")
	d.GenerationDate, _ = root.attr("generationDateAndTime")

	for _, k := range root.kids {
		switch k.name {
		case "ModelExchange":
			p.iface(k, ME)
		case "CoSimulation":
			p.iface(k, CS)
		case "ScheduledExecution":
			if d.Version == FMI3 {
				p.iface(k, SE)
			}
		case "UnitDefinitions":
			p.units(k)
		case "DefaultExperiment":
			p.experiment(k)
		}
	}
	if len(d.Interfaces) == 0 {
		want := "<CoSimulation> or <ModelExchange>"
		p.problemAt(root.off, "the FMU offers no interface: a description needs %s", want)
	}
	if k := root.kid("TypeDefinitions"); k != nil {
		p.types(k)
	}
	vars := root.kid("ModelVariables")
	if vars == nil {
		p.problemAt(root.off, "no <ModelVariables>")
		return
	}
	var derivs []derivativeRef
	if d.Version == FMI2 {
		derivs = p.variables2(vars)
	} else {
		derivs = p.variables3(vars)
	}
	if len(p.probs) > 0 {
		return // the structure refers to variables that may be missing
	}
	vrIndex := p.resolve(derivs)
	p.structure(root.kid("ModelStructure"), vrIndex)
}

func (p *parser) iface(n *node, kind Kind) {
	if p.d.Interface(kind) != nil {
		p.problemAt(n.off, "<%s> is given twice", n.name)
		return
	}
	f := Interface{Kind: kind, ModelIdentifier: p.required(n, "modelIdentifier")}
	if f.ModelIdentifier != "" && !plant.IsIdentifier(f.ModelIdentifier) {
		// It names the shared library: binaries/<platform>/<id>.so.
		p.problemAt(p.attrAt(n, "modelIdentifier"), "<%s>: modelIdentifier=%q is not a C identifier (letters, digits and _, not starting with a digit), as the standard requires: it names the shared library", n.name, f.ModelIdentifier)
	}
	for _, a := range n.attrs {
		if a.Name.Space == "" && a.Name.Local != "modelIdentifier" {
			f.Capabilities = append(f.Capabilities, Attribute{a.Name.Local, a.Value})
		}
	}
	f.NeedsExecutionTool = p.boolean(n, "needsExecutionTool")
	f.CanHandleVariableCommunicationStepSize = p.boolean(n, "canHandleVariableCommunicationStepSize")
	f.CanBeInstantiatedOnlyOncePerProcess = p.boolean(n, "canBeInstantiatedOnlyOncePerProcess")
	if p.version == FMI2 {
		f.CanGetAndSetFMUState = p.boolean(n, "canGetAndSetFMUstate")
		f.CompletedIntegratorStepNotNeeded = p.boolean(n, "completedIntegratorStepNotNeeded")
	} else {
		f.CanGetAndSetFMUState = p.boolean(n, "canGetAndSetFMUState")
		f.CompletedIntegratorStepNotNeeded = kind == ME && !p.boolean(n, "needsCompletedIntegratorStep")
		if step, ok := p.float(n, "fixedInternalStepSize"); ok {
			if step <= 0 {
				p.problemAt(p.attrAt(n, "fixedInternalStepSize"), "<%s>: fixedInternalStepSize must be positive", n.name)
			}
			f.FixedInternalStepSize = step
		}
	}
	p.d.Interfaces = append(p.d.Interfaces, f)
}

func (p *parser) units(n *node) {
	for _, u := range n.kids {
		if u.name != "Unit" {
			continue
		}
		unit := Unit{Name: p.required(u, "name")}
		for _, du := range u.kids {
			if du.name != "DisplayUnit" {
				continue
			}
			d := DisplayUnit{Name: p.required(du, "name"), Factor: 1}
			if f, ok := p.float(du, "factor"); ok {
				d.Factor = f
			}
			d.Offset, _ = p.float(du, "offset")
			unit.DisplayUnits = append(unit.DisplayUnits, d)
		}
		p.d.Units = append(p.d.Units, unit)
	}
}

func (p *parser) experiment(n *node) {
	e := &p.d.Experiment
	e.Start, _ = p.float(n, "startTime")
	if stop, ok := p.float(n, "stopTime"); ok {
		if stop <= e.Start {
			p.problemAt(p.attrAt(n, "stopTime"), "<DefaultExperiment>: stopTime %g is not after startTime %g", stop, e.Start)
		}
		e.Stop = stop
	}
	for _, a := range []struct {
		name string
		v    *float64
	}{{"tolerance", &e.Tolerance}, {"stepSize", &e.Step}} {
		if f, ok := p.float(n, a.name); ok {
			if f <= 0 {
				p.problemAt(p.attrAt(n, a.name), "<DefaultExperiment>: %s must be positive", a.name)
			}
			*a.v = f
		}
	}
}

// fmi2Types maps FMI 2's type elements to base types.
var fmi2Types = map[string]Type{"Real": Float64, "Integer": Int32, "Boolean": Boolean, "String": String, "Enumeration": Enumeration}

// fmi3Types maps FMI 3's variable elements to base types; a type
// definition's element is the same name followed by "Type".
var fmi3Types = map[string]Type{"Float64": Float64, "Float32": Float32, "Int8": Int8, "UInt8": UInt8, "Int16": Int16, "UInt16": UInt16,
	"Int32": Int32, "UInt32": UInt32, "Int64": Int64, "UInt64": UInt64, "Boolean": Boolean, "Enumeration": Enumeration,
	"String": String, "Binary": Binary, "Clock": Clock}

func (p *parser) types(n *node) {
	for _, k := range n.kids {
		var td TypeDefinition
		var attrs *node
		if p.version == FMI2 {
			if k.name != "SimpleType" {
				continue
			}
			td.Name = p.required(k, "name")
			for _, c := range k.kids {
				if t, ok := fmi2Types[c.name]; ok {
					td.Type, attrs = t, c
					break
				}
			}
			if attrs == nil {
				p.problemAt(k.off, "%s has no type element (Real, Integer, Boolean, String or Enumeration)", k.what())
				continue
			}
		} else {
			t, ok := fmi3Types[strings.TrimSuffix(k.name, "Type")]
			if !ok || !strings.HasSuffix(k.name, "Type") {
				continue
			}
			td.Name, td.Type, attrs = p.required(k, "name"), t, k
		}
		td.Quantity, _ = attrs.attr("quantity")
		td.Unit, _ = attrs.attr("unit")
		td.DisplayUnit, _ = attrs.attr("displayUnit")
		td.Min, td.Max = p.optionalFloat(attrs, "min"), p.optionalFloat(attrs, "max")
		td.Nominal, _ = p.float(attrs, "nominal")
		for _, it := range attrs.kids {
			if it.name != "Item" {
				continue
			}
			item := Item{Name: p.required(it, "name")}
			if v, ok := it.attr("value"); ok {
				var err error
				if item.Value, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil {
					p.problemAt(p.attrAt(it, "value"), "%s: value=%q is not a whole number", it.what(), v)
				}
			} else if p.version == FMI3 {
				p.problemAt(it.off, "%s needs the attribute value", it.what())
			} else {
				item.Value = int64(len(td.Items) + 1) // FMI 2 numbers its items from 1
			}
			td.Items = append(td.Items, item)
		}
		for _, other := range p.d.Types {
			if other.Name == td.Name && td.Name != "" {
				p.problemAt(k.off, "the type %q is defined twice", td.Name)
			}
		}
		p.d.Types = append(p.d.Types, td)
	}
}

func (p *parser) typeDefinition(name string) *TypeDefinition {
	for i := range p.d.Types {
		if p.d.Types[i].Name == name {
			return &p.d.Types[i]
		}
	}
	return nil
}

// derivativeRef is a variable's derivative attribute, resolved once every
// variable is known: FMI 2 gives the state's index (1-based), FMI 3 its
// value reference.
type derivativeRef struct {
	variable int
	ref      uint64
	at       int
}

var causalities = []string{string(Parameter), string(CalculatedParameter), string(Input), string(Output), string(Local), string(Independent)}
var causalities3 = append([]string{string(StructuralParameter)}, causalities...)
var variabilities = []string{string(Constant), string(Fixed), string(Tunable), string(Discrete), string(Continuous)}
var initials = []string{string(Exact), string(Approx), string(Calculated)}

// common reads what FMI 2's ScalarVariable and FMI 3's variable elements
// share; sv holds the variable's own attributes, typ its type's.
func (p *parser) common(sv, typ *node, t Type, typeName string) Variable {
	v := Variable{Type: t, TypeName: typeName, Derivative: -1, Nominal: 1}
	v.Line, _ = p.position(sv.off)
	v.Name = p.required(sv, "name")
	if vr, ok := p.uint(sv, "valueReference", 32); ok {
		v.ValueReference = ValueReference(vr)
	} else if _, written := sv.attr("valueReference"); !written {
		p.problemAt(sv.off, "%s needs the attribute valueReference", sv.what())
	}
	v.Description, _ = sv.attr("description")
	allowed := causalities
	if p.version == FMI3 {
		allowed = causalities3
	}
	v.Causality = Causality(p.choice(sv, "causality", allowed, string(Local)))
	// Only Real/Float variables can be continuous: the others default to
	// discrete (FMI 3 says so; FMI 2's schema default, continuous, cannot
	// hold for them).
	defaultVariability := Continuous
	if t != Float64 && t != Float32 {
		defaultVariability = Discrete
	}
	v.Variability = Variability(p.choice(sv, "variability", variabilities, string(defaultVariability)))
	if v.Variability == Continuous && t != Float64 && t != Float32 {
		p.problemAt(p.attrAt(sv, "variability"), "%s is a %s variable: only Real/Float variables can be continuous", sv.what(), typeName)
	}
	v.Initial = Initial(p.choice(sv, "initial", initials, ""))
	v.DeclaredType, _ = typ.attr("declaredType")
	if v.DeclaredType != "" {
		td := p.typeDefinition(v.DeclaredType)
		switch {
		case td == nil:
			var names []string
			for _, t := range p.d.Types {
				names = append(names, t.Name)
			}
			p.problemAt(p.attrAt(typ, "declaredType"), "%s: no type definition named %q%s", sv.what(), v.DeclaredType, suggest.DidYouMean(v.DeclaredType, names))
		case td.Type != t && !(p.version == FMI2 && td.Type == Enumeration && t == Enumeration):
			p.problemAt(p.attrAt(typ, "declaredType"), "%s is %s but its declared type %q is %s", sv.what(), typeName, v.DeclaredType, td.Type)
		default:
			v.Quantity, v.Unit, v.DisplayUnit = td.Quantity, td.Unit, td.DisplayUnit
			v.Min, v.Max = td.Min, td.Max
			if td.Nominal != 0 {
				v.Nominal = td.Nominal
			}
		}
	} else if t == Enumeration {
		p.problemAt(typ.off, "%s is an Enumeration without a declaredType", sv.what())
	}
	if q, ok := typ.attr("quantity"); ok {
		v.Quantity = q
	}
	if u, ok := typ.attr("unit"); ok {
		v.Unit = u
	}
	if u, ok := typ.attr("displayUnit"); ok {
		v.DisplayUnit = u
	}
	if m := p.optionalFloat(typ, "min"); m != nil {
		v.Min = m
	}
	if m := p.optionalFloat(typ, "max"); m != nil {
		v.Max = m
	}
	if nom, ok := p.float(typ, "nominal"); ok {
		if nom <= 0 {
			p.problemAt(p.attrAt(typ, "nominal"), "%s: the nominal value must be positive", sv.what())
		} else {
			v.Nominal = nom
		}
	}
	if v.Min != nil && v.Max != nil && *v.Min > *v.Max {
		p.problemAt(p.attrAt(typ, "max"), "%s: max %g is below min %g", sv.what(), *v.Max, *v.Min)
	}
	return v
}

// parseStart reads a start value: numbers separated by spaces (one for a
// scalar; an array's elements in FMI 3), or true and false.
func (p *parser) parseStart(n *node, v *Variable) {
	text, ok := n.attr("start")
	if !ok {
		return
	}
	v.StartText = text
	if !v.Type.Numeric() {
		return
	}
	fields := strings.Fields(text)
	if len(fields) == 0 {
		p.problemAt(p.attrAt(n, "start"), "%q: start=%q holds no value", v.Name, text)
		return
	}
	v.Start = make([]float64, 0, len(fields))
	for _, f := range fields {
		x, err := ParseValue(v.Type, f)
		if err != nil {
			p.problemAt(p.attrAt(n, "start"), "%q: start: %v", v.Name, err)
			v.Start = nil
			return
		}
		v.Start = append(v.Start, x)
	}
}

// ParseValue reads one value of a numeric type as written in XML (and in
// an input file): a whole number within an integer type's range, true or
// false (or 1 or 0) for a Boolean, any number for a float.
func ParseValue(t Type, s string) (float64, error) {
	var err error
	switch t {
	case Float64, Float32:
		var f float64
		f, err = strconv.ParseFloat(s, 64)
		if err == nil {
			return f, nil
		}
		if errors.Is(err, strconv.ErrRange) {
			return f, fmt.Errorf("%q is out of range for %s", s, t)
		}
	case Boolean:
		switch s {
		case "true", "1":
			return 1, nil
		case "false", "0":
			return 0, nil
		}
		return 0, fmt.Errorf("%q is not a Boolean (want true or false)", s)
	case UInt8, UInt16, UInt32, UInt64:
		var u uint64
		u, err = strconv.ParseUint(s, 10, intBits(t))
		if err == nil {
			return float64(u), nil
		}
	default:
		var i int64
		i, err = strconv.ParseInt(s, 10, intBits(t))
		if err == nil {
			return float64(i), nil
		}
	}
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is out of range for %s", s, t)
	}
	return 0, fmt.Errorf("%q is not a %s value", s, t)
}

// intBits is the width of an integer type.
func intBits(t Type) int {
	switch t {
	case Int8, UInt8:
		return 8
	case Int16, UInt16:
		return 16
	case Int32, UInt32:
		return 32
	}
	return 64
}

func (p *parser) variables2(vars *node) []derivativeRef {
	var derivs []derivativeRef
	for _, sv := range vars.kids {
		if sv.name != "ScalarVariable" {
			continue
		}
		var typ *node
		var t Type
		for _, c := range sv.kids {
			if ct, ok := fmi2Types[c.name]; ok {
				typ, t = c, ct
				break
			}
		}
		if typ == nil {
			p.problemAt(sv.off, "%s has no type element (Real, Integer, Boolean, String or Enumeration)", sv.what())
			continue
		}
		v := p.common(sv, typ, t, typ.name)
		p.parseStart(typ, &v)
		if t == Float64 {
			if ref, ok := p.uint(typ, "derivative", 32); ok {
				derivs = append(derivs, derivativeRef{len(p.d.Variables), ref, p.attrAt(typ, "derivative")})
			}
		}
		if v.Start != nil && len(v.Start) != 1 {
			p.problemAt(p.attrAt(typ, "start"), "%s: start=%q has %d values for a scalar", sv.what(), v.StartText, len(v.Start))
		}
		p.d.Variables = append(p.d.Variables, v)
	}
	return derivs
}

func (p *parser) variables3(vars *node) []derivativeRef {
	var derivs []derivativeRef
	for _, n := range vars.kids {
		t, ok := fmi3Types[n.name]
		if !ok {
			p.problemAt(n.off, "<%s> is not a variable type of FMI 3 (Float64, Float32, Int8 … UInt64, Boolean, String, Binary, Enumeration, Clock)", n.name)
			continue
		}
		v := p.common(n, n, t, n.name)
		switch t {
		case String, Binary:
			var starts []string
			for _, s := range n.kids {
				if s.name == "Start" {
					val, _ := s.attr("value")
					starts = append(starts, val)
				}
			}
			v.StartText = strings.Join(starts, " ")
		default:
			p.parseStart(n, &v)
		}
		if t == Float64 || t == Float32 {
			if ref, ok := p.uint(n, "derivative", 32); ok {
				derivs = append(derivs, derivativeRef{len(p.d.Variables), ref, p.attrAt(n, "derivative")})
			}
		}
		for _, k := range n.kids {
			switch k.name {
			case "Dimension":
				p.dimension(k, &v)
			case "Alias":
				a := Alias{Name: p.required(k, "name")}
				a.Description, _ = k.attr("description")
				a.DisplayUnit, _ = k.attr("displayUnit")
				v.Aliases = append(v.Aliases, a)
			}
		}
		p.d.Variables = append(p.d.Variables, v)
	}
	return derivs
}

// dimension records an array dimension: its size now, or -1-vr for a
// structural parameter's value reference, resolved once every variable
// is known.
func (p *parser) dimension(k *node, v *Variable) {
	start, hasStart := p.uint(k, "start", 31)
	vr, hasVR := p.uint(k, "valueReference", 32)
	switch {
	case hasStart == hasVR:
		p.problemAt(k.off, "%q: a <Dimension> gives either start or valueReference", v.Name)
	case hasStart && start == 0:
		p.problemAt(p.attrAt(k, "start"), "%q: a dimension of size 0", v.Name)
	case hasStart:
		v.Shape = append(v.Shape, int(start))
	default:
		v.Shape = append(v.Shape, -1-int(vr))
	}
}

// resolve links derivatives to their states and dimensions to their
// structural parameters, checks value references are unique (FMI 3), and
// returns the index by value reference.
func (p *parser) resolve(derivs []derivativeRef) map[ValueReference]int {
	vrIndex := map[ValueReference]int{}
	names := map[string]int{}
	for i := range p.d.Variables {
		v := &p.d.Variables[i]
		if first, dup := names[v.Name]; dup {
			p.problemAt(p.varOff(i), "the variable name %q is used twice (first at line %d)", v.Name, p.d.Variables[first].Line)
		}
		names[v.Name] = i
		for _, a := range v.Aliases {
			if first, dup := names[a.Name]; dup {
				p.problemAt(p.varOff(i), "the alias %q of %q is the name of another variable (at line %d)", a.Name, v.Name, p.d.Variables[first].Line)
			}
			names[a.Name] = i
		}
		if first, dup := vrIndex[v.ValueReference]; dup {
			if p.version == FMI3 {
				p.problemAt(p.varOff(i), "%q has the value reference %d of %q (line %d): FMI 3 value references are unique", v.Name, v.ValueReference, p.d.Variables[first].Name, p.d.Variables[first].Line)
			}
			continue // FMI 2 aliases share a value reference; the first names it
		}
		vrIndex[v.ValueReference] = i
	}
	for _, dr := range derivs {
		v := &p.d.Variables[dr.variable]
		state := -1
		if p.version == FMI2 {
			if dr.ref >= 1 && dr.ref <= uint64(len(p.d.Variables)) {
				state = int(dr.ref) - 1
			} else {
				p.problemAt(dr.at, "%q: derivative=\"%d\" is not the index of a variable (1 to %d)", v.Name, dr.ref, len(p.d.Variables))
				continue
			}
		} else if k, ok := vrIndex[ValueReference(dr.ref)]; ok {
			state = k
		} else {
			p.problemAt(dr.at, "%q: derivative=\"%d\" is the value reference of no variable", v.Name, dr.ref)
			continue
		}
		if st := &p.d.Variables[state]; st.Type != Float64 && st.Type != Float32 {
			p.problemAt(dr.at, "%q is the derivative of %q, a %s variable: a state is a Real/Float variable", v.Name, st.Name, st.TypeName)
			continue
		}
		v.Derivative = state
	}
	for i := range p.d.Variables {
		v := &p.d.Variables[i]
		for j, dim := range v.Shape {
			if dim > 0 {
				continue
			}
			vr := ValueReference(-1 - dim)
			k, ok := vrIndex[vr]
			if !ok {
				p.problemAt(p.varOff(i), "%q: its dimension %d names the value reference %d, which no variable has", v.Name, j+1, vr)
				continue
			}
			sp := &p.d.Variables[k]
			size, ok := 0.0, false
			if sp.Type.Integer() && (sp.Causality == StructuralParameter || sp.Variability == Constant) && len(sp.Start) == 1 {
				size, ok = sp.Start[0], true
			}
			if !ok || size < 1 || size > math.MaxInt32 {
				p.problemAt(p.varOff(i), "%q: its dimension %d is the value of %q, which is not a structural parameter or constant with a positive whole start value", v.Name, j+1, sp.Name)
				continue
			}
			v.Shape[j] = int(size)
		}
		if v.Start != nil && len(v.Start) != v.Size() {
			p.problemAt(p.varOff(i), "%q has %d elements but its start has %d values", v.Name, v.Size(), len(v.Start))
		}
	}
	return vrIndex
}

// varOff is where the i-th variable is written, for messages.
func (p *parser) varOff(i int) int {
	line := p.d.Variables[i].Line
	if line < 1 || line > len(p.lineStarts) {
		return 0
	}
	off := p.lineStarts[line-1]
	for off < len(p.data) && isSpace(p.data[off]) && p.data[off] != '\n' {
		off++
	}
	return off
}

func (p *parser) structure(ms *node, vrIndex map[ValueReference]int) {
	d := p.d
	var outputs, derivatives, initial, indicators []*node
	if ms != nil {
		if p.version == FMI2 {
			for _, k := range ms.kids {
				var into *[]*node
				switch k.name {
				case "Outputs":
					into = &outputs
				case "Derivatives":
					into = &derivatives
				case "InitialUnknowns":
					into = &initial
				default:
					continue
				}
				for _, u := range k.kids {
					if u.name == "Unknown" {
						*into = append(*into, u)
					}
				}
			}
		} else {
			for _, k := range ms.kids {
				switch k.name {
				case "Output":
					outputs = append(outputs, k)
				case "ContinuousStateDerivative":
					derivatives = append(derivatives, k)
				case "InitialUnknown":
					initial = append(initial, k)
				case "EventIndicator":
					indicators = append(indicators, k)
				}
			}
		}
	}
	ref := func(u *node) int {
		if p.version == FMI2 {
			i, ok := p.uint(u, "index", 31)
			if !ok {
				if _, written := u.attr("index"); !written {
					p.problemAt(u.off, "<Unknown> needs the attribute index")
				}
				return -1
			}
			if i < 1 || int(i) > len(d.Variables) {
				p.problemAt(p.attrAt(u, "index"), "<Unknown>: index=\"%d\" is not the index of a variable (1 to %d)", i, len(d.Variables))
				return -1
			}
			return int(i) - 1
		}
		vr, ok := p.uint(u, "valueReference", 32)
		if !ok {
			if _, written := u.attr("valueReference"); !written {
				p.problemAt(u.off, "<%s> needs the attribute valueReference", u.name)
			}
			return -1
		}
		k, found := vrIndex[ValueReference(vr)]
		if !found {
			p.problemAt(p.attrAt(u, "valueReference"), "<%s>: valueReference=\"%d\" is the value reference of no variable", u.name, vr)
			return -1
		}
		return k
	}
	listed := map[int]bool{}
	for _, u := range outputs {
		if k := ref(u); k >= 0 {
			if d.Variables[k].Causality != Output {
				p.problemAt(u.off, "%q is listed as an output but its causality is %s", d.Variables[k].Name, d.Variables[k].Causality)
				continue
			}
			d.Outputs = append(d.Outputs, k)
			listed[k] = true
		}
	}
	// An output the structure does not list (it should list them all) is
	// still an output.
	for i := range d.Variables {
		if d.Variables[i].Causality == Output && !listed[i] {
			d.Outputs = append(d.Outputs, i)
		}
	}
	for _, u := range derivatives {
		if k := ref(u); k >= 0 {
			if d.Variables[k].Derivative < 0 {
				p.problemAt(u.off, "%q is listed as a state derivative but names no state (its derivative attribute)", d.Variables[k].Name)
				continue
			}
			d.Derivatives = append(d.Derivatives, k)
		}
	}
	for _, u := range initial {
		if k := ref(u); k >= 0 {
			d.InitialUnknowns = append(d.InitialUnknowns, k)
		}
	}
	if p.version == FMI3 {
		for _, u := range indicators {
			if k := ref(u); k >= 0 {
				d.EventIndicators = append(d.EventIndicators, k)
				d.NumberOfEventIndicators += d.Variables[k].Size()
			}
		}
	}
	if d.Interface(ME) != nil {
		for _, k := range d.Derivatives {
			v := &d.Variables[k]
			if st := &d.Variables[v.Derivative]; st.Size() != v.Size() {
				p.problemAt(p.varOff(k), "%q has %d elements but its state %q has %d", v.Name, v.Size(), st.Name, st.Size())
			}
		}
	}
}
