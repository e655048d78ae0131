package report

import (
	"bytes"
	"fmt"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/rig/record"
)

// signalsOf is a signals file of 6 s at 500 Hz: the input a square wave
// of period 2 s, the uncut output y(t), the loop's (1+theta)·y(t).
func signalsOf(theta float64, y func(t float64) float64) []byte {
	var b bytes.Buffer
	b.WriteString("t,car.v0,car.deflection,car.ideal.deflection\n")
	for k := 1; k <= 3000; k++ {
		t := float64(k) * 0.002
		u := 0.1
		if math.Mod(t, 2) >= 1 {
			u = -0.1
		}
		fmt.Fprintf(&b, "%.9f,%g,%.17g,%.17g\n", t, u, (1+theta)*y(t), y(t))
	}
	return b.Bytes()
}

// TestSpectraRatio: a loop whose output is the uncut one's scaled by
// 1 + Θ has distortion Θ at every frequency; the lines are the square
// wave's odd harmonics, the strongest first among them its fundamental
// (π rad/s, bin 3 of a 6 s run).
func TestSpectraRatio(t *testing.T) {
	y := func(t float64) float64 {
		return math.Sin(math.Pi*t) + 0.3*math.Sin(3*math.Pi*t+1) + 0.1*math.Cos(5*math.Pi*t)
	}
	for _, theta := range []float64{0.05, -0.2, 1e-4} {
		s, err := parseSpectra(bytes.NewReader(signalsOf(theta, y)), "car.v0", "car.deflection", "car.ideal.deflection")
		if err != nil {
			t.Fatal(err)
		}
		if len(s.omega) == 0 || math.Abs(s.omega[0]-math.Pi) > math.Pi/1000 { // the run is 5.998 s, from its first row to its last: 3π/2.999
			t.Fatalf("lines at %v; want the first at π", s.omega)
		}
		for k, om := range s.omega {
			// The rows are 2 ms apart (the file's 9 decimals are exact to
			// 1e-9 s): the ratio is exact to float64's rounding.
			if got := s.loop[k]/s.uncut[k] - 1; cmplx.Abs(got-complex(theta, 0)) > 1e-9*math.Max(1, math.Abs(theta)) {
				t.Errorf("Θ = %v: at %.4g rad/s measured %v", theta, om, got)
			}
		}
	}
}

func TestSpectraRefuses(t *testing.T) {
	y := func(t float64) float64 { return math.Sin(t) }
	good := signalsOf(0.1, y)
	for _, tc := range []struct{ name, text, want string }{
		{"no column", strings.Replace(string(good), "car.v0", "car.v1", 1), "no column car.v0"},
		{"not a number", strings.Replace(string(good), "0.002000000,0.1", "0.002000000,x", 1), "line 2: not a row of numbers"},
		{"short", "t,car.v0,car.deflection,car.ideal.deflection\n0.002,1,2,3\n", "too short a run to transform"},
		{"still input", strings.ReplaceAll(strings.ReplaceAll(string(good), ",-0.1,", ",0.1,"), ",0.1,", ",0,"), "the input car.v0 does not change over the run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSpectra(strings.NewReader(tc.text), "car.v0", "car.deflection", "car.ideal.deflection")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
}

func FuzzSpectra(f *testing.F) {
	f.Add(signalsOf(0.1, math.Sin)[:4000])
	f.Add([]byte("t,a,b,c\n0,1,2,3\n1,NaN,2,3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSpectra(bytes.NewReader(data), "a", "b", "c")
		if err == nil && (len(s.omega) == 0 || len(s.omega) != len(s.loop) || len(s.loop) != len(s.uncut)) {
			t.Fatalf("no error and lines %d, %d, %d", len(s.omega), len(s.loop), len(s.uncut))
		}
	})
}

// TestJoinSitesRefuses: runs that are not two sites of one loop are
// refused, saying why.
func TestJoinSitesRefuses(t *testing.T) {
	site := func(dir, cut string, peer bool) *Run {
		s := &record.Summary{Bench: dir, Models: []record.ModelSummary{{Endpoint: "car", Model: "quarter-car", Cut: cut, ExchangeS: 0.002}}}
		if peer {
			s.Endpoints = []record.EndpointSummary{{Name: "peer", Kind: "udp", Wire: &record.WireSummary{}}}
		}
		return &Run{Dir: dir, Summary: s}
	}
	for _, tc := range []struct {
		name string
		a, b *Run
		want string
	}{
		{"no peer", site("A", "CP2", false), site("B", "CP2", true), "A: no endpoint leads to another rig"},
		{"other cut", site("A", "CP2", true), site("B", "CP1", true), "the sites simulate different loops: quarter-car cut at CP2 in A, quarter-car cut at CP1 in B"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := JoinSites(tc.a, tc.b); err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v; want %q", err, tc.want)
			}
		})
	}
	s, err := JoinSites(site("A", "CP2", true), site("B", "CP2", true))
	if err != nil || s.Why == "" || s.Distortion != nil {
		t.Errorf("without an output compared or delays: %v, why %q, %d lines; want said why", err, s.Why, len(s.Distortion))
	}
}
