package fmi

import (
	"fmt"
	"slices"
	"strings"
)

// Version is the FMI major version of a description: 2 or 3.
type Version int

const (
	FMI2 Version = 2
	FMI3 Version = 3
)

// Kind is an interface an FMU offers.
type Kind int

const (
	// CS, Co-Simulation: the FMU carries its own solver and is stepped
	// from one communication point to the next (DoStep).
	CS Kind = iota + 1
	// ME, Model Exchange: the FMU gives derivatives and event indicators,
	// and the importer integrates it.
	ME
	// SE, Scheduled Execution (FMI 3): the importer activates model
	// partitions on clock ticks. Listed, not run.
	SE
)

func (k Kind) String() string {
	switch k {
	case CS:
		return "Co-Simulation"
	case ME:
		return "Model Exchange"
	case SE:
		return "Scheduled Execution"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Description is what modelDescription.xml says of an FMU.
type Description struct {
	Version        Version
	FMIVersion     string // as written: "2.0", "3.0"
	ModelName      string
	Token          string // FMI 2's guid, FMI 3's instantiationToken: passed back at instantiation
	Description    string
	Author         string
	ModelVersion   string
	GenerationTool string
	GenerationDate string
	Interfaces     []Interface // in the order written
	Experiment     Experiment
	Units          []Unit
	Types          []TypeDefinition
	Variables      []Variable
	// ModelStructure, as indices into Variables.
	Outputs         []int
	Derivatives     []int // each a derivative; its state is Variables[i].Derivative
	InitialUnknowns []int
	// EventIndicators (FMI 3) are the variables the model structure names
	// as event indicators; FMI 2 gives only their number.
	EventIndicators []int
	// NumberOfEventIndicators is FMI 2's numberOfEventIndicators, or the
	// total size of FMI 3's event indicator variables.
	NumberOfEventIndicators int
}

// Interface is one of the interfaces an FMU offers and what it can do.
type Interface struct {
	Kind            Kind
	ModelIdentifier string // the shared library's name, without .so
	// The capabilities hilrig acts on.
	NeedsExecutionTool                     bool
	CanHandleVariableCommunicationStepSize bool // Co-Simulation
	CanBeInstantiatedOnlyOncePerProcess    bool
	CanGetAndSetFMUState                   bool
	CompletedIntegratorStepNotNeeded       bool    // Model Exchange
	FixedInternalStepSize                  float64 // FMI 3 Co-Simulation; 0 when not given
	// Capabilities is every attribute as written (but the model
	// identifier), for describing the FMU.
	Capabilities []Attribute
}

// Attribute is an XML attribute as written.
type Attribute struct{ Name, Value string }

// Experiment is a description's DefaultExperiment. Zero Stop, Tolerance
// and Step mean not given (none of them can be zero).
type Experiment struct {
	Start, Stop, Tolerance, Step float64
}

// Unit is a unit definition with its display units.
type Unit struct {
	Name         string
	DisplayUnits []DisplayUnit
}

// DisplayUnit is value_display = Factor·value + Offset.
type DisplayUnit struct {
	Name           string
	Factor, Offset float64
}

// TypeDefinition is a declared type: defaults for the variables of that
// type that name it, and an enumeration's items.
type TypeDefinition struct {
	Name                        string
	Type                        Type
	Quantity, Unit, DisplayUnit string
	Min, Max                    *float64
	Nominal                     float64
	Items                       []Item
}

// Item is an enumeration's value.
type Item struct {
	Name  string
	Value int64
}

// Type is a variable's base type. FMI 2's Real is Float64 here, its
// Integer Int32.
type Type int

const (
	Float64 Type = iota + 1
	Float32
	Int8
	UInt8
	Int16
	UInt16
	Int32
	UInt32
	Int64
	UInt64
	Boolean
	Enumeration
	String
	Binary
	Clock
)

var typeNames = [...]string{Float64: "Float64", Float32: "Float32", Int8: "Int8", UInt8: "UInt8", Int16: "Int16", UInt16: "UInt16",
	Int32: "Int32", UInt32: "UInt32", Int64: "Int64", UInt64: "UInt64", Boolean: "Boolean", Enumeration: "Enumeration",
	String: "String", Binary: "Binary", Clock: "Clock"}

func (t Type) String() string {
	if t > 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", int(t))
}

// Numeric reports whether the type's values are numbers, which hilrig
// carries as float64 (Boolean as 0 or 1). String, Binary and Clock are not.
func (t Type) Numeric() bool { return t >= Float64 && t <= Enumeration }

// Integer reports whether the type holds whole numbers.
func (t Type) Integer() bool { return t >= Int8 && t <= Enumeration }

// Causality is what a variable is for.
type Causality string

const (
	Parameter           Causality = "parameter"
	CalculatedParameter Causality = "calculatedParameter"
	StructuralParameter Causality = "structuralParameter" // FMI 3
	Input               Causality = "input"
	Output              Causality = "output"
	Local               Causality = "local"
	Independent         Causality = "independent"
)

// Variability is when a variable's value may change.
type Variability string

const (
	Constant   Variability = "constant"
	Fixed      Variability = "fixed"
	Tunable    Variability = "tunable"
	Discrete   Variability = "discrete"
	Continuous Variability = "continuous"
)

// Initial is how a variable gets its initial value.
type Initial string

const (
	Exact      Initial = "exact"
	Approx     Initial = "approx"
	Calculated Initial = "calculated"
)

// ValueReference identifies a variable to an instance.
type ValueReference = uint32

// Variable is one model variable.
type Variable struct {
	Name           string
	ValueReference ValueReference
	Description    string
	Causality      Causality
	Variability    Variability
	Initial        Initial // "" when not written
	Type           Type
	TypeName       string // as written: Real, Integer, Float64, ...
	DeclaredType   string
	// Quantity, Unit and DisplayUnit are the variable's own or, when it
	// does not give them, its declared type's.
	Quantity, Unit, DisplayUnit string
	Min, Max                    *float64
	Nominal                     float64 // 1 when not given
	// Start is the numeric start value, one per element of an array; nil
	// when there is none or the type is not numeric. StartText is the
	// start as written.
	Start     []float64
	StartText string
	// Derivative is the index in Variables of the state this variable is
	// the derivative of, or -1.
	Derivative int
	// Shape is an FMI 3 array's size in each dimension, resolved from the
	// dimensions' start values or their structural parameters' start
	// values; nil for a scalar.
	Shape   []int
	Aliases []Alias // FMI 3
	Line    int     // where the variable is written
}

// Alias is another name of an FMI 3 variable.
type Alias struct {
	Name, Description, DisplayUnit string
}

// Size is the number of values of the variable: 1, or an array's elements.
func (v *Variable) Size() int {
	n := 1
	for _, d := range v.Shape {
		n *= d
	}
	return n
}

// ElementNames names each value of the variable: its name, or for an
// array name[i,j] (1-based, row-major, as FMI orders an array's values).
func (v *Variable) ElementNames() []string {
	if v.Shape == nil {
		return []string{v.Name}
	}
	names := make([]string, 0, v.Size())
	idx := make([]int, len(v.Shape))
	for range v.Size() {
		parts := make([]string, len(idx))
		for i, k := range idx {
			parts[i] = fmt.Sprint(k + 1)
		}
		names = append(names, v.Name+"["+strings.Join(parts, ",")+"]")
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < v.Shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return names
}

// Interface returns the interface of a kind, or nil if the FMU does not
// offer it.
func (d *Description) Interface(k Kind) *Interface {
	for i := range d.Interfaces {
		if d.Interfaces[i].Kind == k {
			return &d.Interfaces[i]
		}
	}
	return nil
}

// Variable finds a variable by its name or, in FMI 3, an alias. It
// returns its index, or -1.
func (d *Description) Variable(name string) int {
	for i := range d.Variables {
		v := &d.Variables[i]
		if v.Name == name {
			return i
		}
		if slices.ContainsFunc(v.Aliases, func(a Alias) bool { return a.Name == name }) {
			return i
		}
	}
	return -1
}

// VariableNames lists the variables' names, for did-you-mean.
func (d *Description) VariableNames() []string {
	names := make([]string, len(d.Variables))
	for i := range d.Variables {
		names[i] = d.Variables[i].Name
	}
	return names
}

// States lists the continuous states, as indices into Variables, in the
// order of the model structure's derivatives: the order of the vector
// that Model Exchange's state calls exchange.
func (d *Description) States() []int {
	states := make([]int, len(d.Derivatives))
	for i, k := range d.Derivatives {
		states[i] = d.Variables[k].Derivative
	}
	return states
}

// NumberOfContinuousStates is the length of the continuous state vector:
// the derivatives' total size.
func (d *Description) NumberOfContinuousStates() int {
	n := 0
	for _, k := range d.Derivatives {
		n += d.Variables[k].Size()
	}
	return n
}

// Unsupported lists what hilrig cannot run in an FMU, each said as a
// sentence; empty when it can run all of it. The FMU may still run if
// what is unsupported is not needed: a String output is left out of the
// outputs, while a String input cannot be set.
func (d *Description) Unsupported() []string {
	var out []string
	kinds := map[Type][]string{}
	var typeOrder []Type
	for i := range d.Variables {
		v := &d.Variables[i]
		if v.Type.Numeric() {
			continue
		}
		if _, seen := kinds[v.Type]; !seen {
			typeOrder = append(typeOrder, v.Type)
		}
		kinds[v.Type] = append(kinds[v.Type], v.Name)
	}
	for _, t := range typeOrder {
		names := kinds[t]
		more := ""
		if len(names) > 3 {
			names, more = names[:3], fmt.Sprintf(" and %d more", len(kinds[t])-3)
		}
		out = append(out, fmt.Sprintf("%s variables (%s%s): hilrig carries numbers only, so these are neither set nor recorded", t, strings.Join(names, ", "), more))
	}
	if d.Interface(SE) != nil {
		out = append(out, "Scheduled Execution: hilrig runs Co-Simulation and Model Exchange")
	}
	return out
}
