// Package fmutest builds FMUs for tests, in the test run, from C sources
// written for hilrig (c/): a DC motor (voltage in, speed out), a bouncing
// ball (a state event at every bounce) and a bad FMU that crashes, fails,
// hangs, floods its logger, gives NaN, fails fatally, aborts or exits as
// its parameter mode says. Each is built for FMI 2 or 3, offering both Co-Simulation and
// Model Exchange, with gcc, and zipped with its description. Build skips
// the test when gcc is missing.
package fmutest

import (
	"archive/zip"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

//go:embed c/*.c
var sources embed.FS

// Model is a test FMU's model.
type Model string

const (
	// DCMotor is the University of Michigan's DC motor speed model:
	// J·w' = K·i − b·w, L·i' = V − R·i − K·w, with J = 0.01 kg·m², b =
	// 0.1 N·m·s, K = 0.01 N·m/A, R = 1 Ω, L = 0.5 H. Input V, output w.
	DCMotor Model = "dcmotor"
	// Ball is a ball dropped from 1 m that bounces with e = 0.7 and rests
	// below 0.1 m/s. Outputs h, v and resting (a Boolean).
	Ball Model = "ball"
	// Bad is a first-order lag y' = (u − y)/tau that misbehaves from the
	// time at on, as its parameter mode says (the Mode constants).
	Bad Model = "bad"
)

// The modes of the Bad model.
const (
	Behave     = 0
	Crash      = 1 // dereferences NULL: SIGSEGV
	Error      = 2 // returns fmiXError, after logging why
	Hang       = 3 // never returns
	Flood      = 4 // logs flood messages of 1 KiB at every step
	NotANumber = 5 // gives y as NaN
	Fatal      = 6 // returns fmiXFatal
	Ends       = 7 // ends the simulation at at, by a time event
	Abort      = 8 // calls abort(): SIGABRT
	Exit       = 9 // calls exit(3): the process ends as if it chose to
)

// Spec says which FMU to build.
type Spec struct {
	Model   Model
	Version fmi.Version // 2 or 3
	// Token, when not "", is the GUID or instantiation token the
	// description gives instead of the library's own.
	Token string
	// Omit lists functions the library leaves out (fmi2DoStep,
	// fmi2GetDerivatives, fmi3DoStep).
	Omit []string
	// Platform, when not "", is the binaries directory instead of this
	// machine's.
	Platform string
}

type variable struct {
	name, causality, variability, initial, typ, start, unit string
	vr, derivative                                          int // derivative: the state's value reference, 0 for none
}

type model struct {
	title, token        string
	stop, step          float64
	vars                []variable
	outputs, indicators []int // value references
}

var models = map[Model]model{
	DCMotor: {title: "DC motor", token: "{hilrig-test-dcmotor}", stop: 3, step: 0.01, outputs: []int{2}, vars: []variable{
		{name: "time", vr: 0, causality: "independent", variability: "continuous", typ: "Real"},
		{name: "V", vr: 1, causality: "input", variability: "continuous", typ: "Real", start: "0", unit: "V"},
		{name: "w", vr: 2, causality: "output", variability: "continuous", initial: "exact", typ: "Real", start: "0", unit: "rad/s"},
		{name: "i", vr: 3, causality: "local", variability: "continuous", initial: "exact", typ: "Real", start: "0", unit: "A"},
		{name: "der(w)", vr: 4, causality: "local", variability: "continuous", typ: "Real", unit: "rad/s2", derivative: 2},
		{name: "der(i)", vr: 5, causality: "local", variability: "continuous", typ: "Real", unit: "A/s", derivative: 3},
		{name: "R", vr: 6, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "1", unit: "Ohm"},
		{name: "L", vr: 7, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "0.5", unit: "H"},
		{name: "K", vr: 8, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "0.01", unit: "N.m/A"},
		{name: "J", vr: 9, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "0.01", unit: "kg.m2"},
		{name: "b", vr: 10, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "0.1", unit: "N.m.s"},
	}},
	Ball: {title: "bouncing ball", token: "{hilrig-test-ball}", stop: 3, step: 0.01, outputs: []int{1, 3, 7}, indicators: []int{1}, vars: []variable{
		{name: "time", vr: 0, causality: "independent", variability: "continuous", typ: "Real"},
		{name: "h", vr: 1, causality: "output", variability: "continuous", initial: "exact", typ: "Real", start: "1", unit: "m"},
		{name: "der(h)", vr: 2, causality: "local", variability: "continuous", typ: "Real", unit: "m/s", derivative: 1},
		{name: "v", vr: 3, causality: "output", variability: "continuous", initial: "exact", typ: "Real", start: "0", unit: "m/s"},
		{name: "der(v)", vr: 4, causality: "local", variability: "continuous", typ: "Real", unit: "m/s2", derivative: 3},
		{name: "g", vr: 5, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "-9.81", unit: "m/s2"},
		{name: "e", vr: 6, causality: "parameter", variability: "tunable", initial: "exact", typ: "Real", start: "0.7"},
		{name: "resting", vr: 7, causality: "output", variability: "discrete", typ: "Boolean"},
	}},
	Bad: {title: "bad lag", token: "{hilrig-test-bad}", stop: 1, step: 0.01, outputs: []int{2}, vars: []variable{
		{name: "time", vr: 0, causality: "independent", variability: "continuous", typ: "Real"},
		{name: "u", vr: 1, causality: "input", variability: "continuous", typ: "Real", start: "0"},
		{name: "y", vr: 2, causality: "output", variability: "continuous", initial: "exact", typ: "Real", start: "0"},
		{name: "der(y)", vr: 3, causality: "local", variability: "continuous", typ: "Real", derivative: 2},
		{name: "tau", vr: 4, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "0.1", unit: "s"},
		{name: "mode", vr: 5, causality: "parameter", variability: "fixed", initial: "exact", typ: "Integer", start: "0"},
		{name: "at", vr: 6, causality: "parameter", variability: "fixed", initial: "exact", typ: "Real", start: "0.5", unit: "s"},
		{name: "flood", vr: 7, causality: "parameter", variability: "fixed", initial: "exact", typ: "Integer", start: "4096"},
	}},
}

// Description is the model description of a spec's FMU.
func Description(s Spec) string {
	m := models[s.Model]
	token := m.token
	if s.Token != "" {
		token = s.Token
	}
	id := string(s.Model)
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	index := map[int]int{} // FMI 2 refers to variables by their index, from 1
	for i, v := range m.vars {
		index[v.vr] = i + 1
	}
	if s.Version == fmi.FMI2 {
		fmt.Fprintf(&b, "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"%s\" guid=\"%s\" generationTool=\"hilrig fmutest\" numberOfEventIndicators=\"%d\">\n", m.title, token, len(m.indicators))
	} else {
		fmt.Fprintf(&b, "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"%s\" instantiationToken=\"%s\" generationTool=\"hilrig fmutest\">\n", m.title, token)
	}
	fmt.Fprintf(&b, "  <ModelExchange modelIdentifier=\"%s\"/>\n  <CoSimulation modelIdentifier=\"%s\" canHandleVariableCommunicationStepSize=\"true\"/>\n", id, id)
	var units []string
	for _, v := range m.vars {
		if v.unit != "" && !slices.Contains(units, v.unit) {
			units = append(units, v.unit)
		}
	}
	b.WriteString("  <UnitDefinitions>\n")
	for _, u := range units {
		fmt.Fprintf(&b, "    <Unit name=\"%s\"/>\n", u)
	}
	b.WriteString("  </UnitDefinitions>\n")
	fmt.Fprintf(&b, "  <DefaultExperiment startTime=\"0\" stopTime=\"%g\" stepSize=\"%g\"/>\n  <ModelVariables>\n", m.stop, m.step)
	for _, v := range m.vars {
		attrs := fmt.Sprintf("name=\"%s\" valueReference=\"%d\" causality=\"%s\" variability=\"%s\"", v.name, v.vr, v.causality, v.variability)
		if v.initial != "" {
			attrs += fmt.Sprintf(" initial=\"%s\"", v.initial)
		}
		var typeAttrs string
		if v.start != "" {
			typeAttrs += fmt.Sprintf(" start=\"%s\"", v.start)
		}
		if v.unit != "" {
			typeAttrs += fmt.Sprintf(" unit=\"%s\"", v.unit)
		}
		if s.Version == fmi.FMI2 {
			if v.derivative != 0 {
				typeAttrs += fmt.Sprintf(" derivative=\"%d\"", index[v.derivative])
			}
			fmt.Fprintf(&b, "    <ScalarVariable %s><%s%s/></ScalarVariable>\n", attrs, v.typ, typeAttrs)
		} else {
			if v.derivative != 0 {
				typeAttrs += fmt.Sprintf(" derivative=\"%d\"", v.derivative)
			}
			typ := map[string]string{"Real": "Float64", "Integer": "Int32", "Boolean": "Boolean"}[v.typ]
			fmt.Fprintf(&b, "    <%s %s%s/>\n", typ, attrs, typeAttrs)
		}
	}
	b.WriteString("  </ModelVariables>\n  <ModelStructure>\n")
	var derivatives []int
	for _, v := range m.vars {
		if v.derivative != 0 {
			derivatives = append(derivatives, v.vr)
		}
	}
	if s.Version == fmi.FMI2 {
		list := func(tag string, vrs []int) {
			if len(vrs) == 0 {
				return
			}
			fmt.Fprintf(&b, "    <%s>", tag)
			for _, vr := range vrs {
				fmt.Fprintf(&b, "<Unknown index=\"%d\"/>", index[vr])
			}
			fmt.Fprintf(&b, "</%s>\n", tag)
		}
		list("Outputs", m.outputs)
		list("Derivatives", derivatives)
	} else {
		for _, vr := range m.outputs {
			fmt.Fprintf(&b, "    <Output valueReference=\"%d\"/>\n", vr)
		}
		for _, vr := range derivatives {
			fmt.Fprintf(&b, "    <ContinuousStateDerivative valueReference=\"%d\"/>\n", vr)
		}
		for _, vr := range m.indicators {
			fmt.Fprintf(&b, "    <EventIndicator valueReference=\"%d\"/>\n", vr)
		}
	}
	b.WriteString("  </ModelStructure>\n</fmiModelDescription>\n")
	return b.String()
}

// Build builds the FMU of a spec into the test's temporary directory and
// returns its path. It skips the test when there is no gcc.
func Build(tb testing.TB, s Spec) string {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("gcc not found: the test FMUs are built from C in the test run (apt-get install gcc)")
	}
	path, err := BuildIn(tb.TempDir(), s)
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// BuildIn builds the FMU of a spec in dir and returns its path.
func BuildIn(dir string, s Spec) (string, error) {
	if _, ok := models[s.Model]; !ok {
		return "", fmt.Errorf("no test model %q", s.Model)
	}
	if s.Version != fmi.FMI2 && s.Version != fmi.FMI3 {
		return "", fmt.Errorf("FMI version %d", s.Version)
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	entries, _ := sources.ReadDir("c")
	for _, e := range entries {
		data, _ := sources.ReadFile("c/" + e.Name())
		if err := os.WriteFile(filepath.Join(src, e.Name()), data, 0o644); err != nil {
			return "", err
		}
	}
	platform := s.Platform
	if platform == "" {
		platform = fmi.Platforms(s.Version, runtime.GOOS, runtime.GOARCH)[0]
	}
	lib := filepath.Join(dir, "lib.so")
	args := []string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-Wno-unused-function", "-O2", "-shared", "-fPIC", "-fvisibility=hidden",
		fmt.Sprintf("-DFMI_VERSION=%d", s.Version), fmt.Sprintf("-DMODEL_FILE=\"%s.c\"", s.Model)}
	for _, f := range s.Omit {
		args = append(args, "-DOMIT_"+f)
	}
	args = append(args, filepath.Join(src, "fmu.c"), "-o", lib, "-lm")
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	so, err := os.ReadFile(lib)
	if err != nil {
		return "", err
	}
	omitted := ""
	if len(s.Omit) > 0 {
		omitted = "-without-" + strings.Join(s.Omit, "-")
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-fmi%d%s.fmu", s.Model, s.Version, omitted))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	w := zip.NewWriter(f)
	for _, e := range []struct {
		name string
		data []byte
	}{
		{fmi.DescriptionFile, []byte(Description(s))},
		{"binaries/" + platform + "/" + fmi.LibraryName(runtime.GOOS, string(s.Model)), so},
	} {
		fw, err := w.Create(e.name)
		if err == nil {
			_, err = fw.Write(e.data)
		}
		if err != nil {
			f.Close()
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return "", err
	}
	return path, f.Close()
}

// Percentiles keeps the times of a benchmark's steps (the first 65 536)
// and reports their 50th, 99th and 99.9th percentiles: a step's cost is
// in its tail as much as in its mean.
type Percentiles struct{ took []time.Duration }

// NewPercentiles makes room for the times before the benchmark's loop.
func NewPercentiles() *Percentiles { return &Percentiles{took: make([]time.Duration, 0, 1<<16)} }

// Add keeps one step's time; it allocates nothing.
func (p *Percentiles) Add(d time.Duration) {
	if len(p.took) < cap(p.took) {
		p.took = append(p.took, d)
	}
}

// Report reports the percentiles as the benchmark's metrics, in ns.
func (p *Percentiles) Report(b *testing.B) {
	if len(p.took) == 0 {
		return
	}
	slices.Sort(p.took)
	for _, q := range []float64{50, 99, 99.9} {
		b.ReportMetric(float64(p.took[int(q/100*float64(len(p.took)-1))].Nanoseconds()), fmt.Sprintf("p%g-ns", q))
	}
}
