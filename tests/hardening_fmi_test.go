package tests

import (
	"archive/zip"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
	"github.com/hilrig/hilrig/rig/fmu"
	"github.com/hilrig/hilrig/rig/fmu/fmutest"
)

// buildFMU builds a test FMU (skipping without gcc, or where this build
// cannot load FMUs).
func buildFMU(t *testing.T, spec fmutest.Spec) string {
	t.Helper()
	if !fmu.Supported {
		t.Skip("this build cannot load FMUs")
	}
	return fmutest.Build(t, spec)
}

// readSimulation reads the CSV a simulation wrote: its header, and its rows as
// numbers, each of which must print back as it was written.
func readSimulation(t *testing.T, text string) ([]string, [][]float64) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	header := strings.Split(lines[0], ",")
	var rows [][]float64
	for i, line := range lines[1:] {
		fields := strings.Split(line, ",")
		if len(fields) != len(header) {
			t.Fatalf("row %d: %d fields for %d columns: %q", i+1, len(fields), len(header), line)
		}
		row := make([]float64, len(fields))
		for j, f := range fields {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("row %d: %v", i+1, err)
			}
			if back := strconv.FormatFloat(v, 'g', -1, 64); back != f {
				t.Fatalf("row %d: %q reads as %v, which prints as %q", i+1, f, v, back)
			}
			row[j] = v
		}
		rows = append(rows, row)
	}
	return header, rows
}

// motor is the DC motor of the test FMU, for its exact solution.
type motor struct{ J, b, K, R, L float64 }

var michigan = motor{J: 0.01, b: 0.1, K: 0.01, R: 1, L: 0.5}

// discretised is the motor's exact step of h with its voltage held over
// it (zero-order hold): x⁺ = Φ·x + Γ·V, Φ = e^(Ah), Γ = ∫₀ʰ e^(As) ds·B,
// read off e^(Mh), M = [A B; 0 0].
func (m motor) discretised(h float64) (phi *mat.Dense, gamma []float64) {
	a := mat.NewDense(3, 3, []float64{
		-m.b / m.J, m.K / m.J, 0,
		-m.K / m.L, -m.R / m.L, 1 / m.L,
		0, 0, 0,
	})
	a.Scale(h, a)
	var e mat.Dense
	e.Exp(a)
	return mat.NewDense(2, 2, []float64{e.At(0, 0), e.At(0, 1), e.At(1, 0), e.At(1, 1)}), []float64{e.At(0, 2), e.At(1, 2)}
}

// speeds is the motor's speed at every step of h from rest, the voltage
// held over each step at volts(t) of its start.
func (m motor) speeds(h float64, steps int, volts func(t float64) float64) []float64 {
	phi, gamma := m.discretised(h)
	x := []float64{0, 0}
	w := []float64{0}
	for k := range steps {
		v := volts(float64(k) * h)
		x = []float64{
			phi.At(0, 0)*x[0] + phi.At(0, 1)*x[1] + gamma[0]*v,
			phi.At(1, 0)*x[0] + phi.At(1, 1)*x[1] + gamma[1]*v,
		}
		w = append(w, x[0])
	}
	return w
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimulateFMU: hilrig simulate runs the DC motor FMU, FMI 2 and 3, in
// Co-Simulation (the default) and Model Exchange, a row per 10 ms from 0
// to its default stop of 3 s, with its voltage from an input file: a ramp
// from 0 to 1 V over the first second, then 1 V, sampled at the start of
// each step and held over it. The exact solution of that held input
// bounds the error: Co-Simulation's RK4 at 0.1 ms errs by 1e-15 (1e-10 is
// allowed); Model Exchange at the default tolerance keeps each step's
// error under 1e-6·(1 + |w|), 1.1e-6, over 300 steps: 3.3e-4.
func TestSimulateFMU(t *testing.T) {
	input := writeFile(t, "in.csv", "time,V\n0,0\n1,1\n")
	want := michigan.speeds(0.01, 300, func(t float64) float64 { return min(t, 1) })
	for _, v := range []fmi.Version{fmi.FMI2, fmi.FMI3} {
		path := buildFMU(t, fmutest.Spec{Model: fmutest.DCMotor, Version: v})
		for _, tc := range []struct {
			iface string
			tol   float64
		}{{"", 1e-10}, {"me", 3.3e-4}} {
			args := []string{"simulate", path, "--input", input}
			if tc.iface != "" {
				args = append(args, "--interface", tc.iface)
			}
			r := runHilrig(t, args...)
			if r.code != 0 {
				t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
			}
			header, rows := readSimulation(t, r.stdout)
			if strings.Join(header, ",") != "time,w" || len(rows) != 301 {
				t.Fatalf("%v: header %v, %d rows", args, header, len(rows))
			}
			worst := 0.0
			for k, row := range rows {
				if tk := float64(k) * 0.01; math.Abs(row[0]-tk) > 1e-12 {
					t.Fatalf("row %d at %v s; want %v", k, row[0], tk)
				}
				worst = max(worst, math.Abs(row[1]-want[k]))
			}
			if worst > tc.tol {
				t.Errorf("FMI %d %q: off the exact speed by up to %.3g rad/s; want under %.3g", v, tc.iface, worst, tc.tol)
			}
		}
	}
}

// TestSimulateFMUParamAndRange: --param changes the FMU, --stop and --step
// the rows; the last step is shortened to end at the stop.
func TestSimulateFMUParamAndRange(t *testing.T) {
	path := buildFMU(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2})
	input := writeFile(t, "in.csv", "time,V\n0,1\n")
	out := filepath.Join(t.TempDir(), "out.csv")
	r := runHilrig(t, "simulate", path, "--input", input, "--param", "R=2", "--stop", "1.005s", "--step", "10ms", "--out", out)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("exit %d, stdout %q: %s", r.code, r.stdout, r.stderr)
	}
	data, _ := os.ReadFile(out)
	_, rows := readSimulation(t, string(data))
	if len(rows) != 102 || rows[101][0] != 1.005 || math.Abs(rows[100][0]-1) > 1e-12 {
		t.Fatalf("%d rows, the last at %v", len(rows), rows[len(rows)-1][0])
	}
	m := michigan
	m.R = 2
	want := m.speeds(0.01, 100, func(float64) float64 { return 1 })
	if got := rows[100][1]; math.Abs(got-want[100]) > 1e-10 {
		t.Errorf("with R = 2 the speed at 1 s is %.12g; want %.12g", got, want[100])
	}
}

// TestSimulateFMUFailures: the FMU's own failure exits 1 with the rows
// before it written and the FMU's message; what the user gave wrong
// exits 2 and says where.
func TestSimulateFMUFailures(t *testing.T) {
	bad := buildFMU(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2})
	motor := buildFMU(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI3})
	elsewhere := buildFMU(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2, Platform: "win64"})
	wrongGUID := buildFMU(t, fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2, Token: "{0000}"})
	slip := filepath.Join(t.TempDir(), "slip.fmu")
	{
		f, _ := os.Create(slip)
		w := zip.NewWriter(f)
		fw, _ := w.Create("modelDescription.xml")
		fw.Write([]byte(fmutest.Description(fmutest.Spec{Model: fmutest.DCMotor, Version: fmi.FMI2})))
		fw, _ = w.Create("../../evil.so")
		fw.Write([]byte("x"))
		w.Close()
		f.Close()
	}
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
		rows int // rows written before the failure, header included; 0: not checked
	}{
		{"FMU error", []string{"simulate", bad, "--param", "mode=2"}, 1, "fmi2DoStep returned fmi2Error; the FMU logged: fmi2Error logStatusError: deliberate error at t = 0.5 in doStep (mode 2)", 52}, // header and rows 0 to 0.5
		{"NaN output", []string{"simulate", bad, "--param", "mode=5"}, 1, "the output y is NaN at t = 0.5", 51},                                                                                         // header and rows 0 to 0.49
		{"fatal", []string{"simulate", bad, "--param", "mode=6", "--interface", "me"}, 1, "returned fmi2Fatal", 0},
		{"unknown param", []string{"simulate", motor, "--param", "RR=2"}, 2, "the FMU has no variable RR; did you mean R?", 0},
		{"param not settable", []string{"simulate", motor, "--param", "der(w)=2"}, 2, "der(w) is computed by the FMU", 0},
		{"integer param", []string{"simulate", bad, "--param", "mode=1.5"}, 2, "mode: 1.5 is not a whole number, which a Int32 takes", 0},
		{"input name", []string{"simulate", motor, "--input", file("name.csv", "time,VV\n0,1\n")}, 2, "name.csv:1: the FMU has no input VV; did you mean V? (its inputs: V)", 0},
		{"input number", []string{"simulate", motor, "--input", file("number.csv", "time,V\n0,1\n0.5,abc\n")}, 2, `number.csv:3:5: V: "abc" is not a Float64 value`, 0},
		{"input not finite", []string{"simulate", motor, "--input", file("nan.csv", "time,V\n0,NaN\n")}, 2, `nan.csv:2:3: V: "NaN" is not a finite number`, 0},
		{"input fields", []string{"simulate", motor, "--input", file("fields.csv", "time,V\n0,1,2\n")}, 2, "fields.csv:2:1: wrong number of fields", 0},
		{"input backwards", []string{"simulate", motor, "--input", file("back.csv", "time,V\n1,1\n0.5,2\n")}, 2, "back.csv:3:1: time 0.5 comes before the row above's, 1", 0},
		{"input header", []string{"simulate", motor, "--input", file("header.csv", "t,V\n0,1\n")}, 2, `header.csv:1:1: the first column is "t"; an input file's is time`, 0},
		{"input not an input", []string{"simulate", motor, "--input", file("param.csv", "time,R\n0,1\n")}, 2, "R is not an input of the FMU (its causality is parameter)", 0},
		{"interface", []string{"simulate", motor, "--interface", "se"}, 2, `--interface "se": want cs or me`, 0},
		{"stop before start", []string{"simulate", motor, "--stop", "0s"}, 2, `"0s": give a duration longer than 0s`, 0},
		{"too many rows", []string{"simulate", motor, "--stop", "1000000s", "--step", "1us"}, 2, "hilrig writes at most 100000000", 0},
		{"no binary here", []string{"simulate", elsewhere}, 2, "the FMU has no dcmotor.so for this machine", 0},
		{"wrong GUID", []string{"simulate", wrongGUID}, 2, "fmi2Instantiate returned NULL", 0},
		{"zip-slip", []string{"simulate", slip}, 2, `the entry "../../evil.so" climbs out with ..`, 0},
		{"out over the model", []string{"simulate", motor, "--out", motor}, 2, "--out " + motor + " would overwrite " + motor + ", the model", 0},
		{"missing FMU", []string{"simulate", filepath.Join(dir, "nope.fmu")}, 2, "no such file or directory", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runHilrig(t, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.stderr, tc.code, tc.want)
			}
			if tc.rows > 0 {
				if n := strings.Count(r.stdout, "\n"); n != tc.rows {
					t.Errorf("%d lines written before the failure; want %d", n, tc.rows)
				}
			}
		})
	}
}

// TestSimulateFMUEnds: an FMU that ends the simulation ends the CSV with
// a row where it ended, and hilrig says so; that is a success.
func TestSimulateFMUEnds(t *testing.T) {
	path := buildFMU(t, fmutest.Spec{Model: fmutest.Bad, Version: fmi.FMI2})
	for _, iface := range []string{"cs", "me"} {
		r := runHilrig(t, "simulate", path, "--param", "mode=7", "--param", "at=0.255", "--interface", iface)
		if r.code != 0 || !strings.Contains(r.stderr, "the FMU ended the simulation at t = 0.255") {
			t.Fatalf("%s: exit %d, %q", iface, r.code, r.stderr)
		}
		_, rows := readSimulation(t, r.stdout)
		if len(rows) != 27 || rows[25][0] != 0.25 || math.Abs(rows[26][0]-0.255) > 1e-12 {
			t.Errorf("%s: %d rows, the last two at %v and %v; want 0 to 0.25 and the end at 0.255", iface, len(rows), rows[len(rows)-2][0], rows[len(rows)-1][0])
		}
	}
}

// TestSimulateBuiltin: a built-in model simulates too, and an input file
// that repeats its stimulus (the quarter car's road velocity stepping to
// 1 m/s at 0.1 s, a jump written as two rows at one time) gives the same
// CSV, byte for byte.
func TestSimulateBuiltin(t *testing.T) {
	plain := runHilrig(t, "simulate", "quarter-car", "--stop", "1s")
	if plain.code != 0 {
		t.Fatalf("exit %d: %s", plain.code, plain.stderr)
	}
	header, rows := readSimulation(t, plain.stdout)
	if header[0] != "time" || len(rows) != 1001 || rows[1000][0] != 1 {
		t.Fatalf("header %v, %d rows", header, len(rows))
	}
	input := writeFile(t, "road.csv", "time,v0\n0,0\n0.1,0\n0.1,1\n")
	same := runHilrig(t, "simulate", "quarter-car", "--stop", "1s", "--input", input)
	if same.code != 0 || same.stdout != plain.stdout {
		t.Errorf("with the stimulus as an input file: exit %d, %s; the CSV differs: %v", same.code, same.stderr, same.stdout != plain.stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "quarter-car", "--interface", "cs"}, "--interface chooses an FMU's interface; quarter-car is not an FMU"},
		{[]string{"simulate", "quarter-car", "--input", writeFile(t, "x.csv", "time,road\n0,1\n")}, "x.csv:1: the model quarter-car has no input road (its inputs: v0)"},
		{[]string{"simulate", "quater-car"}, "did you mean quarter-car?"},
	} {
		if r := runHilrig(t, tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestModelsFMU: hilrig models describes an FMU from its archive, and
// refuses one it cannot run here, after describing it.
func TestModelsFMU(t *testing.T) {
	path := buildFMU(t, fmutest.Spec{Model: fmutest.Ball, Version: fmi.FMI3})
	r := runHilrig(t, "models", path)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"bouncing ball (" + path + "): FMI 3.0, generated by hilrig fmutest",
		"instantiation token {hilrig-test-ball}",
		"Co-Simulation (library ball): canHandleVariableCommunicationStepSize=true",
		"default experiment: start 0 s, stop 3 s, step 0.01 s",
		"binaries: x86_64-linux (this machine",
		"continuous states: h, v; event indicators: 1",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q in\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "h ") || !strings.Contains(r.stdout, "output") || !strings.Contains(r.stdout, "m/s2") {
		t.Errorf("the variables are missing:\n%s", r.stdout)
	}
	elsewhere := buildFMU(t, fmutest.Spec{Model: fmutest.Ball, Version: fmi.FMI2, Platform: "win64"})
	r = runHilrig(t, "models", elsewhere)
	if r.code != 2 || !strings.Contains(r.stdout, "binaries: win64\n") || !strings.Contains(r.stderr, "cannot run on this machine: Model Exchange: the FMU has no ball.so for this machine (linux") {
		t.Errorf("an FMU for Windows: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runHilrig(t, "models", path, "--param", "e=0.8"); r.code != 2 || !strings.Contains(r.stderr, "set an FMU's with hilrig simulate --param") {
		t.Errorf("--param: exit %d, %s", r.code, r.stderr)
	}
}
