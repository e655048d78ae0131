package tests

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// referenceEnv names the Reference FMUs' checkout, built for FMI 2 and 3
// with its CMake (BENCHMARKS.md says how): it holds <Model>/<Model>_out.csv
// and build-fmi2/fmus/*.fmu, build-fmi3/fmus/*.fmu.
const referenceEnv = "HILRIG_REFERENCE_FMUS"

// csvTable is a CSV of a simulation: its header and its rows as text.
type csvTable struct {
	header []string
	rows   [][]string
}

func parseTable(t *testing.T, data []byte) csvTable {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("a CSV: %v", err)
	}
	return csvTable{recs[0], recs[1:]}
}

// column is a column's values as numbers (true and false as 1 and 0), the
// index-th of the space-separated values of each cell for an array.
func (c csvTable) column(t *testing.T, name string, index int) []float64 {
	t.Helper()
	j := slices.Index(c.header, name)
	if j < 0 {
		t.Fatalf("no column %s in %v", name, c.header)
	}
	out := make([]float64, len(c.rows))
	for i, row := range c.rows {
		cell := strings.Fields(row[j])[index]
		switch cell {
		case "true":
			out[i] = 1
		case "false":
			out[i] = 0
		default:
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.Fatalf("%s row %d: %v", name, i+1, err)
			}
			out[i] = v
		}
	}
	return out
}

// gap is how far apart two columns are: the largest absolute difference,
// and the largest relative to the reference (where it is not 0).
func gap(ours, want []float64) (abs, rel float64) {
	for i := range want {
		d := math.Abs(ours[i] - want[i])
		abs = max(abs, d)
		if want[i] != 0 {
			rel = max(rel, d/math.Abs(want[i]))
		} else if d != 0 {
			rel = math.Inf(1)
		}
	}
	return abs, rel
}

func describe(t *testing.T, path string) *fmi.Description {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, _ := f.Stat()
	a, err := fmi.ReadArchive(f, info.Size())
	if err != nil {
		t.Fatal(err)
	}
	return a.Description
}

// TestReferenceFMUsCoSimulation: every Reference FMU that ships reference
// outputs, run by hilrig simulate in Co-Simulation at its default
// experiment's step (at the reference's spacing where it gives none),
// agrees with them row by row. They come from the FMUs' own solvers, so
// they must agree to their print precision: the files print 17 digits,
// and 1e-13 of max(1, |value|) is allowed for another compiler's
// rounding.
func TestReferenceFMUsCoSimulation(t *testing.T) {
	root := os.Getenv(referenceEnv)
	if root == "" {
		t.Skipf("%s is not set: the Reference FMUs (github.com/modelica/Reference-FMUs, built with its CMake for FMI 2 and 3) are not in CI; BENCHMARKS.md says how to run this", referenceEnv)
	}
	var report []string
	for _, v := range []string{"2", "3"} {
		fmus, _ := filepath.Glob(filepath.Join(root, "build-fmi"+v, "fmus", "*.fmu"))
		if len(fmus) == 0 {
			t.Fatalf("no FMUs in %s", filepath.Join(root, "build-fmi"+v, "fmus"))
		}
		for _, path := range fmus {
			model := strings.TrimSuffix(filepath.Base(path), ".fmu")
			t.Run("FMI"+v+"/"+model, func(t *testing.T) {
				d := describe(t, path)
				switch {
				case d.Interface(fmi.CS) == nil && d.Interface(fmi.ME) == nil:
					r := runHilrig(t, "simulate", path)
					if r.code != 2 || !strings.Contains(r.stderr, "offers neither Co-Simulation nor Model Exchange") {
						t.Fatalf("exit %d, %s", r.code, r.stderr)
					}
					report = append(report, fmt.Sprintf("FMI %s %s: refused (Scheduled Execution only, no reference outputs)", v, model))
					return
				case model == "Roberts":
					// Its _out.csv is BouncingBall's, byte for byte, and its
					// default experiment (1e-5 to 1e8 s at a fixed internal
					// step of 1 ms) is 1e11 steps of a stiff problem.
					report = append(report, fmt.Sprintf("FMI %s %s: not compared (its reference file is BouncingBall's)", v, model))
					t.Skip("Roberts' reference outputs are BouncingBall's")
				}
				refData, err := os.ReadFile(filepath.Join(root, model, model+"_out.csv"))
				if err != nil {
					t.Skipf("no reference outputs: %v", err)
				}
				ref := parseTable(t, refData)
				args := []string{"simulate", path}
				if d.Experiment.Step == 0 && len(ref.rows) > 1 {
					times := ref.column(t, "time", 0)
					args = append(args, "--step", strconv.FormatFloat(times[1]-times[0], 'g', -1, 64)+"s")
				}
				r := runHilrig(t, args...)
				if r.code != 0 {
					t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
				}
				ours := parseTable(t, []byte(r.stdout))
				if len(ours.rows) != len(ref.rows) {
					t.Fatalf("%d rows; the reference has %d", len(ours.rows), len(ref.rows))
				}
				worstAbs, worstRel := 0.0, 0.0
				var absent, skipped []string
				for _, name := range ref.header {
					k := d.Variable(name)
					switch {
					case name == "time":
					case k < 0: // the FMI 2 Feedthrough has no Float32, Int8, ...
						absent = append(absent, name)
						continue
					case !d.Variables[k].Type.Numeric():
						skipped = append(skipped, name)
						continue
					}
					size := 1
					if k >= 0 {
						size = d.Variables[k].Size()
					}
					for e := range size {
						col := name
						if size > 1 {
							col = d.Variables[k].ElementNames()[e]
						}
						got, want := ours.column(t, col, 0), ref.column(t, name, e)
						abs, rel := gap(got, want)
						for i := range want {
							if math.Abs(got[i]-want[i]) > 1e-13*max(1, math.Abs(want[i])) {
								t.Errorf("%s at row %d (t = %v): %v; the reference has %v", col, i+1, ours.rows[i][0], got[i], want[i])
								break
							}
						}
						worstAbs, worstRel = max(worstAbs, abs), max(worstRel, rel)
					}
				}
				line := fmt.Sprintf("FMI %s %s: %d rows, max abs %.3g, max rel %.3g", v, model, len(ref.rows), worstAbs, worstRel)
				if len(skipped) > 0 {
					line += "; not recorded (not numbers): " + strings.Join(skipped, ", ")
				}
				if len(absent) > 0 {
					line += "; not in this version of the FMU: " + strings.Join(absent, ", ")
				}
				report = append(report, line)
			})
		}
	}
	t.Logf("Co-Simulation against <Model>_out.csv:\n  %s", strings.Join(report, "\n  "))
}

// bouncingBall is the Reference FMUs' ball, exactly: dropped from 1 m with
// g = 9.81 m/s², each bounce leaving at 0.7 of the speed it hit at, at rest
// from the bounce that would leave slower than 0.1 m/s.
func bouncingBall(t float64) (h, v float64) {
	const g, e = 9.81, 0.7
	t0, u := 0.0, 0.0 // the last bounce (or the drop) and the speed it left at
	h0 := 1.0
	for {
		// The flight from t0: h = h0 + u·s − g·s²/2.
		land := t0 + (u+math.Sqrt(u*u+2*g*h0))/g
		if t < land {
			s := t - t0
			return h0 + u*s - g/2*s*s, u - g*s
		}
		hit := g*(land-t0) - u
		if e*hit < 0.1 {
			return 0, 0
		}
		t0, u, h0 = land, e*hit, 0
	}
}

// vanDerPol solves the oscillator at times with the helper script, or
// skips when there is no python3 with scipy.
func vanDerPol(t *testing.T, times []float64) (x0, x1 []float64) {
	var python string
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import scipy").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with scipy (apt-get install python3-scipy) for the Van der Pol reference solution")
	}
	var in strings.Builder
	for _, tm := range times {
		in.WriteString(strconv.FormatFloat(tm, 'g', -1, 64) + "\n")
	}
	cmd := exec.Command(python, "fmi_reference_solution.py")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fmi_reference_solution.py: %v", err)
	}
	sol := parseTable(t, out)
	return sol.column(t, "x0", 0), sol.column(t, "x1", 0)
}

// TestReferenceFMUsModelExchange: BouncingBall, Dahlquist, VanDerPol and
// StateSpace in Model Exchange, integrated by hilrig at their default
// tolerance (1e-6), agree with an accurate solution to 1e-4 of each
// output's range: analytic for the ball (its bounces included), Dahlquist
// (x = e^(−t)) and StateSpace (y = u·eᵗ, A = B = C = D = I, x₀ = 0), and
// scipy's DOP853 at 1e-13 for Van der Pol.
func TestReferenceFMUsModelExchange(t *testing.T) {
	root := os.Getenv(referenceEnv)
	if root == "" {
		t.Skipf("%s is not set: the Reference FMUs (github.com/modelica/Reference-FMUs, built with its CMake for FMI 2 and 3) are not in CI; BENCHMARKS.md says how to run this", referenceEnv)
	}
	type exact func(t *testing.T, times []float64) map[string][]float64
	pointwise := func(f func(float64) map[string]float64) exact {
		return func(_ *testing.T, times []float64) map[string][]float64 {
			out := map[string][]float64{}
			for _, tm := range times {
				for k, v := range f(tm) {
					out[k] = append(out[k], v)
				}
			}
			return out
		}
	}
	models := []struct {
		name     string
		versions []string
		solution exact
	}{
		{"BouncingBall", []string{"2", "3"}, pointwise(func(tm float64) map[string]float64 {
			h, v := bouncingBall(tm)
			return map[string]float64{"h": h, "v": v}
		})},
		{"Dahlquist", []string{"2", "3"}, pointwise(func(tm float64) map[string]float64 { return map[string]float64{"x": math.Exp(-tm)} })},
		{"StateSpace", []string{"3"}, pointwise(func(tm float64) map[string]float64 {
			return map[string]float64{"y[1]": math.Exp(tm), "y[2]": 2 * math.Exp(tm), "y[3]": 3 * math.Exp(tm)}
		})},
		{"VanDerPol", []string{"2", "3"}, func(t *testing.T, times []float64) map[string][]float64 {
			x0, x1 := vanDerPol(t, times)
			return map[string][]float64{"x0": x0, "x1": x1}
		}},
	}
	var report []string
	for _, m := range models {
		for _, v := range m.versions {
			t.Run("FMI"+v+"/"+m.name, func(t *testing.T) {
				path := filepath.Join(root, "build-fmi"+v, "fmus", m.name+".fmu")
				r := runHilrig(t, "simulate", path, "--interface", "me")
				if r.code != 0 {
					t.Fatalf("exit %d: %s", r.code, r.stderr)
				}
				ours := parseTable(t, []byte(r.stdout))
				times := ours.column(t, "time", 0)
				want := m.solution(t, times)
				line := fmt.Sprintf("FMI %s %s (%d rows):", v, m.name, len(times))
				for _, name := range ours.header[1:] {
					got, w := ours.column(t, name, 0), want[name]
					lo, hi := slices.Min(w), slices.Max(w)
					abs, _ := gap(got, w)
					if abs > 1e-4*(hi-lo) {
						t.Errorf("%s is off the accurate solution by up to %.3g, over 1e-4 of its range %.3g", name, abs, hi-lo)
					}
					line += fmt.Sprintf(" %s max abs %.3g (%.2g of its range)", name, abs, abs/(hi-lo))
				}
				report = append(report, line)
			})
		}
	}
	t.Logf("Model Exchange against accurate solutions:\n  %s", strings.Join(report, "\n  "))
}
