package fmi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/emulator/plant/fmi/fmitest"
)

// motor3 is an FMI 3 description using most of what the parser reads:
// both interfaces with capabilities, units with a display unit, type
// definitions, an enumeration, an array sized by a structural parameter,
// an alias, event indicators, a String and a Binary variable.
const motor3 = `<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription
  fmiVersion="3.0"
  modelName="Motor"
  instantiationToken="{motor-3}"
  description="a DC motor"
  generationTool="by hand">
  <ModelExchange modelIdentifier="motor" needsCompletedIntegratorStep="true"/>
  <CoSimulation modelIdentifier="motor" canHandleVariableCommunicationStepSize="true" fixedInternalStepSize="1e-4" canGetAndSetFMUState="false"/>
  <UnitDefinitions>
    <Unit name="rad/s"><BaseUnit s="-1" rad="1"/><DisplayUnit name="rpm" factor="9.549296585513721"/></Unit>
    <Unit name="V"/>
    <Unit name="degC"><DisplayUnit name="degF" factor="1.8" offset="32"/></Unit>
  </UnitDefinitions>
  <TypeDefinitions>
    <Float64Type name="Speed" quantity="AngularVelocity" unit="rad/s" displayUnit="rpm" nominal="100"/>
    <EnumerationType name="Mode"><Item name="off" value="0"/><Item name="on" value="1"/></EnumerationType>
  </TypeDefinitions>
  <DefaultExperiment startTime="0" stopTime="5" tolerance="1e-7" stepSize="1e-3"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="V" valueReference="1" causality="input" start="0" unit="V" description="armature voltage"/>
    <Float64 name="w" valueReference="2" causality="output" declaredType="Speed" initial="exact" start="0">
      <Alias name="speed" displayUnit="rpm"/>
    </Float64>
    <Float64 name="der(w)" valueReference="3" derivative="2"/>
    <Float64 name="i" valueReference="4" causality="local" initial="exact" start="0" unit="A"/>
    <Float64 name="der(i)" valueReference="5" derivative="4"/>
    <UInt32 name="n" valueReference="6" causality="structuralParameter" variability="fixed" start="3"/>
    <Float64 name="gains" valueReference="7" causality="parameter" variability="fixed" start="1 2 3"><Dimension valueReference="6"/></Float64>
    <Float64 name="grid" valueReference="8" causality="parameter" variability="tunable" start="1 2 3 4 5 6"><Dimension start="2"/><Dimension valueReference="6"/></Float64>
    <Enumeration name="mode" valueReference="9" declaredType="Mode" causality="input" start="1"/>
    <Boolean name="stalled" valueReference="10" causality="output" variability="discrete"/>
    <String name="label" valueReference="11" causality="parameter" variability="fixed"><Start value="motor A"/></String>
    <Binary name="blob" valueReference="12" causality="parameter" variability="fixed"><Start value="00ff"/></Binary>
    <Float64 name="zc" valueReference="13"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="2"/>
    <Output valueReference="10"/>
    <ContinuousStateDerivative valueReference="3"/>
    <ContinuousStateDerivative valueReference="5"/>
    <InitialUnknown valueReference="2"/>
    <EventIndicator valueReference="13"/>
  </ModelStructure>
</fmiModelDescription>
`

func TestParseFMI3(t *testing.T) {
	d, err := fmi.Parse([]byte(motor3))
	if err != nil {
		t.Fatal(err)
	}
	if d.Version != fmi.FMI3 || d.ModelName != "Motor" || d.Token != "{motor-3}" || d.GenerationTool != "by hand" {
		t.Errorf("header %+v", d)
	}
	cs, me := d.Interface(fmi.CS), d.Interface(fmi.ME)
	if cs == nil || me == nil || cs.ModelIdentifier != "motor" || !cs.CanHandleVariableCommunicationStepSize || cs.FixedInternalStepSize != 1e-4 {
		t.Errorf("interfaces %+v", d.Interfaces)
	}
	if me.CompletedIntegratorStepNotNeeded {
		t.Error("needsCompletedIntegratorStep=true read as not needed")
	}
	if d.Experiment != (fmi.Experiment{Start: 0, Stop: 5, Tolerance: 1e-7, Step: 1e-3}) {
		t.Errorf("experiment %+v", d.Experiment)
	}
	if len(d.Units) != 3 || d.Units[2].DisplayUnits[0] != (fmi.DisplayUnit{Name: "degF", Factor: 1.8, Offset: 32}) {
		t.Errorf("units %+v", d.Units)
	}
	w := d.Variables[d.Variable("speed")]
	if w.Name != "w" || w.Unit != "rad/s" || w.DisplayUnit != "rpm" || w.Quantity != "AngularVelocity" || w.Nominal != 100 || w.Causality != fmi.Output {
		t.Errorf("w, through its alias and declared type: %+v", w)
	}
	grid := d.Variables[d.Variable("grid")]
	if fmt.Sprint(grid.Shape) != "[2 3]" || len(grid.Start) != 6 || grid.ElementNames()[4] != "grid[2,2]" {
		t.Errorf("grid: shape %v, start %v, names %v", grid.Shape, grid.Start, grid.ElementNames())
	}
	if got := fmt.Sprint(d.States()); got != "[2 4]" {
		t.Errorf("states %s", got)
	}
	if d.NumberOfContinuousStates() != 2 || d.NumberOfEventIndicators != 1 || len(d.Outputs) != 2 {
		t.Errorf("%d states, %d indicators, outputs %v", d.NumberOfContinuousStates(), d.NumberOfEventIndicators, d.Outputs)
	}
	if v := d.Variables[d.Variable("mode")]; v.Type != fmi.Enumeration || v.Variability != fmi.Discrete || v.Start[0] != 1 {
		t.Errorf("mode %+v", v)
	}
	if v := d.Variables[d.Variable("label")]; v.Type != fmi.String || v.StartText != "motor A" || v.Start != nil {
		t.Errorf("label %+v", v)
	}
	unsupported := strings.Join(d.Unsupported(), "\n")
	if !strings.Contains(unsupported, "String variables (label)") || !strings.Contains(unsupported, "Binary variables (blob)") {
		t.Errorf("unsupported: %s", unsupported)
	}
	sigs, err := d.Signals([]string{"grid[2,3]", "gains"})
	if err != nil || len(sigs) != 4 || sigs[0].Element != 5 || sigs[3].Name != "gains[3]" {
		t.Errorf("signals %+v, %v", sigs, err)
	}
}

func TestParseFMI2(t *testing.T) {
	d := fmitest.BouncingBall().Description
	if d.Version != fmi.FMI2 || d.Token != "{fmitest-bouncing-ball}" || d.NumberOfEventIndicators != 1 {
		t.Errorf("header %+v", d)
	}
	h := d.Variables[d.Variable("h")]
	if h.Unit != "m" || h.Quantity != "Position" || h.Start[0] != 1 || h.Type != fmi.Float64 || h.TypeName != "Real" {
		t.Errorf("h %+v", h)
	}
	if got := fmt.Sprint(d.States()); got != "[0 2]" {
		t.Errorf("states %s", got)
	}
	if d.Variable("n") != -1 {
		t.Error("the ball has an n")
	}
	c := fmitest.Counter().Description
	if n := c.Variables[0]; n.Type != fmi.Int32 || n.Variability != fmi.Discrete {
		t.Errorf("counter's n %+v", n)
	}
}

// fmi2 wraps model variables and a structure in an FMI 2 description
// whose first variable is on line 5.
func fmi2(vars, structure string) string {
	return `<?xml version="1.0"?>
<fmiModelDescription fmiVersion="2.0" modelName="m" guid="{g}">
<CoSimulation modelIdentifier="m"/>
<ModelVariables>
` + vars + `
</ModelVariables>
<ModelStructure>` + structure + `</ModelStructure>
</fmiModelDescription>
`
}

// TestParseErrors: each mistake is reported at its line and column with
// what was expected.
func TestParseErrors(t *testing.T) {
	real := `<ScalarVariable name="x" valueReference="1"><Real/></ScalarVariable>`
	for _, tc := range []struct {
		name, xml, want string
	}{
		{"malformed", "<fmiModelDescription fmiVersion=\"2.0\">\n  <CoSimulation>\n</fmiModelDescription>", "modelDescription.xml:3:1: malformed XML: element <CoSimulation> closed by </fmiModelDescription>"},
		{"empty", "", "modelDescription.xml:1:1: no <fmiModelDescription> element"},
		{"wrong root", "<?xml version=\"1.0\"?>\n<model/>", "modelDescription.xml:2:1: the root element is <model>"},
		{"FMI 1", `<fmiModelDescription fmiVersion="1.0" modelName="m" guid="g"/>`, "modelDescription.xml:1:34: FMI 1.0 is not supported"},
		{"no guid", "<fmiModelDescription\n fmiVersion=\"2.0\" modelName=\"m\"><CoSimulation modelIdentifier=\"m\"/><ModelVariables/></fmiModelDescription>", "modelDescription.xml:1:1: <fmiModelDescription> needs the attribute guid"},
		{"bad identifier", fmi2(real, "")[:60] + strings.Replace(fmi2(real, "")[60:], `modelIdentifier="m"`, `modelIdentifier="../evil"`, 1), `modelDescription.xml:3:32: <CoSimulation>: modelIdentifier="../evil" is not a C identifier`},
		{"misspelt causality", fmi2(`<ScalarVariable name="x" valueReference="1" causality="outptu"><Real/></ScalarVariable>`, ""), `modelDescription.xml:5:56: <ScalarVariable> "x": causality="outptu" is not one of parameter, calculatedParameter, input, output, local, independent; did you mean output?`},
		{"value reference", fmi2(`<ScalarVariable name="x" valueReference="-1"><Real/></ScalarVariable>`, ""), `modelDescription.xml:5:42: <ScalarVariable> "x": valueReference="-1" is not a whole number from 0 to 4294967295`},
		{"no type", fmi2(`<ScalarVariable name="x" valueReference="1"/>`, ""), `modelDescription.xml:5:1: <ScalarVariable> "x" has no type element`},
		{"derivative index", fmi2(real+"\n"+`<ScalarVariable name="der(x)" valueReference="2"><Real derivative="7"/></ScalarVariable>`, ""), `modelDescription.xml:6:68: "der(x)": derivative="7" is not the index of a variable (1 to 2)`},
		{"declared type", fmi2(`<ScalarVariable name="x" valueReference="1"><Real declaredType="Lenght"/></ScalarVariable>`, ""), `modelDescription.xml:5:65: <ScalarVariable> "x": no type definition named "Lenght"`},
		{"output not an output", fmi2(real, `<Outputs><Unknown index="1"/></Outputs>`), `modelDescription.xml:7:26: "x" is listed as an output but its causality is local`},
		{"duplicate name", fmi2(real+"\n"+strings.Replace(real, `"1"`, `"2"`, 1), ""), `modelDescription.xml:6:1: the variable name "x" is used twice (first at line 5)`},
		{"boolean", strings.Replace(fmi2(real, ""), `modelIdentifier="m"`, `modelIdentifier="m" canHandleVariableCommunicationStepSize="yes"`, 1), `modelDescription.xml:3:75: <CoSimulation>: canHandleVariableCommunicationStepSize="yes" is not a boolean (want true or false)`},
		{"experiment", strings.Replace(fmi2(real, ""), "<ModelVariables>", `<DefaultExperiment startTime="2" stopTime="1"/><ModelVariables>`, 1), `modelDescription.xml:4:44: <DefaultExperiment>: stopTime 1 is not after startTime 2`},
		{"scalar start", fmi2(`<ScalarVariable name="x" valueReference="1"><Real start="1 2"/></ScalarVariable>`, ""), `modelDescription.xml:5:58: <ScalarVariable> "x": start="1 2" has 2 values for a scalar`},
		{"integer start", fmi2(`<ScalarVariable name="x" valueReference="1" variability="discrete"><Integer start="3000000000"/></ScalarVariable>`, ""), `modelDescription.xml:5:84: "x": start: "3000000000" is out of range for Int32`},
		{"continuous integer", fmi2(`<ScalarVariable name="x" valueReference="1" variability="continuous"><Integer/></ScalarVariable>`, ""), `modelDescription.xml:5:58: <ScalarVariable> "x" is a Integer variable: only Real/Float variables can be continuous`},
		{"dimension", strings.Replace(motor3, `<Dimension valueReference="6"/></Float64>
    <Float64 name="grid"`, `<Dimension valueReference="1"/></Float64>
    <Float64 name="grid"`, 1), `modelDescription.xml:30:5: "gains": its dimension 1 is the value of "V", which is not a structural parameter or constant with a positive whole start value`},
		{"FMI 3 value references", strings.Replace(motor3, `name="i" valueReference="4"`, `name="i" valueReference="2"`, 1), `modelDescription.xml:27:5: "i" has the value reference 2 of "w" (line 23): FMI 3 value references are unique`},
		{"no interface", `<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="t"><ModelVariables/></fmiModelDescription>`, "modelDescription.xml:1:1: the FMU offers no interface"},
		{"encoding", `<?xml version="1.0" encoding="KOI8-R"?><fmiModelDescription/>`, `modelDescription.xml:1:1: malformed XML: xml: opening charset "KOI8-R": the encoding "KOI8-R" (want UTF-8 or ISO-8859-1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fmi.Parse([]byte(tc.xml))
			var de *fmi.DescriptionError
			if !errors.As(err, &de) {
				t.Fatalf("%v; want a DescriptionError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestParseCountsProblems: a description with many problems lists 20 and
// counts the rest.
func TestParseCountsProblems(t *testing.T) {
	var vars strings.Builder
	for i := range 30 {
		fmt.Fprintf(&vars, "<ScalarVariable name=\"x%d\" valueReference=\"%d\" causality=\"bad\"><Real/></ScalarVariable>\n", i, i)
	}
	_, err := fmi.Parse([]byte(fmi2(vars.String(), "")))
	var de *fmi.DescriptionError
	if !errors.As(err, &de) || len(de.Problems) != 20 || de.More != 10 || !strings.Contains(err.Error(), "and 10 more problems") {
		t.Fatalf("%v", err)
	}
}

// TestParseLatin1: a description in ISO-8859-1 reads as the same text.
func TestParseLatin1(t *testing.T) {
	xml := strings.Replace(fmi2(`<ScalarVariable name="x" valueReference="1" description="Drehzahl des R`+"\xfc"+`ckens"><Real/></ScalarVariable>`, ""),
		`<?xml version="1.0"?>`, `<?xml version="1.0" encoding="ISO-8859-1"?>`, 1)
	d, err := fmi.Parse([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Variables[0].Description; got != "Drehzahl des Rückens" {
		t.Errorf("description %q", got)
	}
}

// FuzzDescription: whatever the bytes, Parse returns a description or
// positioned problems, and never panics; a description it returns is
// consistent.
func FuzzDescription(f *testing.F) {
	f.Add([]byte(motor3))
	f.Add([]byte(fmitest.BouncingBall().XML))
	f.Add([]byte(fmitest.FirstOrder().XML))
	f.Add([]byte(fmitest.Counter().XML))
	f.Add([]byte(fmi2(`<ScalarVariable name="x" valueReference="1"><Real derivative="1"/></ScalarVariable>`, `<Derivatives><Unknown index="1"/></Derivatives>`)))
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><fmiModelDescription/>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := fmi.Parse(data)
		if err != nil {
			var de *fmi.DescriptionError
			if !errors.As(err, &de) || len(de.Problems) == 0 {
				t.Fatalf("error %v is not a DescriptionError with problems", err)
			}
			lines := strings.Count(string(data), "\n") + 1
			for _, p := range de.Problems {
				if p.Line < 1 || p.Line > lines || p.Column < 1 {
					t.Fatalf("problem at %d:%d in %d lines: %s", p.Line, p.Column, lines, p.Msg)
				}
			}
			return
		}
		for _, k := range d.Outputs {
			if d.Variables[k].Causality != fmi.Output {
				t.Fatalf("output %d is %s", k, d.Variables[k].Causality)
			}
		}
		for _, k := range d.Derivatives {
			if s := d.Variables[k].Derivative; s < 0 || s >= len(d.Variables) {
				t.Fatalf("derivative %d of state %d", k, s)
			}
		}
		for i := range d.Variables {
			v := &d.Variables[i]
			if v.Size() < 1 || v.Start != nil && len(v.Start) != v.Size() {
				t.Fatalf("%s: size %d, start %v", v.Name, v.Size(), v.Start)
			}
		}
		if len(d.Interfaces) == 0 {
			t.Fatal("no interface")
		}
	})
}
