package expect_test

import (
	"math"
	"testing"

	"github.com/hilrig/hilrig/profiles"
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
		b, err := profiles.LoadBench("../../profiles/suites/benches/quarter-car-"+cut+".yaml", p)
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
