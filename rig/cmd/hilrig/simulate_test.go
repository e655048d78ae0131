package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// anyColumns reads every column as a number, the last held, the others
// interpolated.
func anyColumns(names []string) ([]columnType, error) {
	cols := make([]columnType, len(names))
	for i := range cols {
		cols[i] = columnType{hold: i == len(cols)-1, parse: func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }}
	}
	return cols, nil
}

// TestInputTableSample: between rows a continuous column is interpolated
// and a discrete one held; two rows at one time are a jump, the later
// value from that time on and the earlier just before it.
func TestInputTableSample(t *testing.T) {
	tb, err := parseInputTable("in.csv", []byte("time,u,n\n0,0,1\n1,10,2\n1,-10,3\n3,-30,4\n"), anyColumns)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ at, u, uBefore, n, nBefore float64 }{
		{-1, 0, 0, 1, 1},
		{0, 0, 0, 1, 1},
		{0.25, 2.5, 2.5, 1, 1},
		{1, -10, 10, 3, 1},
		{2, -20, -20, 3, 3},
		{3, -30, -30, 4, 3},
		{9, -30, -30, 4, 4},
	} {
		if u, n := tb.at(0, tc.at), tb.at(1, tc.at); u != tc.u || n != tc.n {
			t.Errorf("at %g: u %g, n %g; want %g and %g", tc.at, u, n, tc.u, tc.n)
		}
		if u, n := tb.before(0, tc.at), tb.before(1, tc.at); u != tc.uBefore || n != tc.nBefore {
			t.Errorf("just before %g: u %g, n %g; want %g and %g", tc.at, u, n, tc.uBefore, tc.nBefore)
		}
	}
}

// FuzzInputTable: whatever the text, an input file is read or refused
// with its position, and never panics; a table read samples within the
// range of its column's values, at any time.
func FuzzInputTable(f *testing.F) {
	f.Add([]byte("time,u,n\n0,0,1\n1,10,2\n1,-10,3\n"), 0.5)
	f.Add([]byte("time,V\n0,1\n0.5,abc\n"), 0.1)
	f.Add([]byte("# comment\ntime, a ,b\n\"0\",1,2\n"), 2.0)
	f.Add([]byte("t,x\n"), 0.0)
	f.Fuzz(func(t *testing.T, data []byte, at float64) {
		tb, err := parseInputTable("in.csv", data, anyColumns)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "in.csv") {
				t.Fatalf("an error without the file's name: %v", err)
			}
			return
		}
		if math.IsNaN(at) {
			return
		}
		for c := range tb.names {
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, v := range tb.cols[c] {
				lo, hi = min(lo, v), max(hi, v)
			}
			for _, v := range []float64{tb.at(c, at), tb.before(c, at)} {
				if !(v >= lo && v <= hi) && !math.IsNaN(v) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0) {
					t.Fatalf("column %d at %g: %g, outside its values' range [%g, %g]", c, at, v, lo, hi)
				}
			}
		}
	})
}
