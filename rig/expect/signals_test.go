package expect_test

import (
	"bytes"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/expect"
)

// TestSignalsAgreeWithSummary: the output's error computed from the
// recorded signals (models.car.deflection.*) is the executor's own
// (models.car.output.*), at both of paper 001's cuts: the two read the
// same cut and uncut values at the same exchanges.
func TestSignalsAgreeWithSummary(t *testing.T) {
	p, err := profiles.Load("internet-hil")
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []string{"cp1", "cp2"} {
		b, err := benchfile.LoadBench("../../profiles/suites/benches/quarter-car-"+cut+".yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		sig := &expect.Signals{}
		sum, err := rig.Sim(p, b, rig.Options{Duration: 3e9, Signals: sig})
		if err != nil {
			t.Fatal(err)
		}
		names := expect.NamesOf(p, b)
		for _, pair := range [][2]string{
			{"models.car.deflection.error_pct", "models.car.output.error_pct"},
			{"models.car.deflection.max_error", "models.car.output.max_error"},
			{"models.car.deflection.rms_error", "models.car.output.rms_error"},
		} {
			var v [2]float64
			for i, path := range pair {
				x, err := expect.Parse(path+" >= 0", names)
				if err != nil {
					t.Fatal(err)
				}
				r := x.Eval(&sum, sig)
				if r.Measured == "" {
					t.Fatalf("%s: %s", path, r.Missing)
				}
				v[i] = r.Value
			}
			if math.Abs(v[0]-v[1]) > 1e-12*math.Max(1, math.Abs(v[1])) {
				t.Errorf("%s: %s is %v, %s %v", cut, pair[0], v[0], pair[1], v[1])
			}
		}
		if sig.Rows() != 1500 {
			t.Errorf("%s: %d rows of signals for 3 s at 2 ms", cut, sig.Rows())
		}
	}
}

// TestEverySignalIsMeasured: on each shipped co-simulation bench, every
// statistic of every signal NamesOf offers for a run in virtual time
// parses and is measured after a short sim (error_pct excepted where the
// uncut signal stays at 0), and every column of the signals file is a
// signal it offers: the names and the columns come from one list.
func TestEverySignalIsMeasured(t *testing.T) {
	for _, c := range []struct{ profile, bench, input string }{
		{"internet-hil", "benches/quarter-car-seat", "car.v0"}, {"internet-hil", "suites/benches/quarter-car-cp1", "car.v0"},
		{"platoon-80211p", "benches/platoon-lead", "followers.jerk"}, {"twin-dropout", "benches/digital-twin", "twin.speed"},
		{"twin-degradation", "benches/digital-twin-degradation", "twin.speed"}, {"shared-ethernet", "benches/robot-bus", "robot.x_d"},
	} {
		p, err := profiles.Load(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		b, err := benchfile.LoadBench("../../profiles/"+c.bench+".yaml", p)
		if err != nil {
			t.Fatal(err)
		}
		sig, file := &expect.Signals{}, &bytes.Buffer{}
		sum, err := rig.Sim(p, b, rig.Options{Duration: 1e9, Signals: io.MultiWriter(sig, file)})
		if err != nil {
			t.Fatal(err)
		}
		names := expect.NamesOf(p, b)
		names.Clock = expect.Virtual
		offered := map[string]bool{}
		for _, m := range names.Models {
			for _, s := range names.Signals[m] {
				offered[m+"."+s.Name] = true
				for _, st := range expect.SignalStats {
					text := "models." + m + "." + s.Name + "." + st.Name + " != 12345"
					if s.Unit == expect.Seconds {
						text += "s"
					}
					x, err := expect.Parse(text, names)
					if err != nil {
						if !s.Ideal && slices.Contains([]string{"max_error", "rms_error", "error_pct"}, st.Name) {
							continue // refused: nothing to compare with
						}
						t.Errorf("%s: %v", c.bench, err)
						continue
					}
					r := x.Eval(&sum, sig)
					if r.Measured == "" && !(st.Name == "error_pct" && strings.Contains(r.Missing, "stays at 0")) {
						t.Errorf("%s: %s: nothing measured (%s)", c.bench, text, r.Missing)
					}
				}
			}
		}
		header, _, _ := strings.Cut(file.String(), "\n")
		for _, col := range strings.Split(header, ",")[1:] {
			m, s, _ := strings.Cut(col, ".")
			s = strings.TrimPrefix(s, "hardware.")
			if _, ideal := strings.CutPrefix(s, "ideal."); !ideal && !offered[m+"."+s] {
				t.Errorf("%s: column %s is no signal NamesOf offers", c.bench, col)
			}
		}
		if !offered[c.input] {
			t.Errorf("%s: the model input %s is not offered", c.bench, c.input)
		}
	}
}

// FuzzSignals: the accumulator takes any bytes in any pieces without
// failing, and the same bytes give the same statistics however they are
// cut.
func FuzzSignals(f *testing.F) {
	f.Add("t,car.x,car.ideal.x\n0,1,1\n0.002,2,1.5\n", 7)
	f.Add("t,a\n0,abc\n", 1)
	f.Fuzz(func(t *testing.T, csv string, cut int) {
		whole, pieces := &expect.Signals{}, &expect.Signals{}
		whole.Write([]byte(csv))
		if cut < 0 {
			cut = -cut
		}
		if cut > len(csv) {
			cut = len(csv)
		}
		pieces.Write([]byte(csv[:cut]))
		pieces.Write([]byte(csv[cut:]))
		if whole.Rows() != pieces.Rows() || (whole.Err() == nil) != (pieces.Err() == nil) {
			t.Fatalf("%q cut at %d: rows %d and %d, errors %v and %v", csv, cut, whole.Rows(), pieces.Rows(), whole.Err(), pieces.Err())
		}
		x, _ := expect.Parse("models.car.x.error_pct < 1", nil)
		if a, b := x.Eval(nil, whole), x.Eval(nil, pieces); a.Measured != b.Measured || a.Missing != b.Missing {
			t.Fatalf("%q cut at %d: %v and %v", csv, cut, a, b)
		}
	})
}
