package executor_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hilrig/hilrig/rig"
	"github.com/hilrig/hilrig/rig/executor"
)

// TestSignalsHoldTheInputs: the signals file's columns are ModelSignals',
// and a model input (the quarter-car's road, v0, a step from 0 to 1 at
// 100 ms) has a column in the part that reads it and in the uncut model,
// holding its stimulus at each row's time.
func TestSignalsHoldTheInputs(t *testing.T) {
	_, signals, _ := run(t, &executor.Virtual{})
	lines := strings.Split(strings.TrimSuffix(signals, "\n"), "\n")
	header := strings.Split(lines[0], ",")
	p := parse(t, carLink)
	bm := carBench(t, p).Models["car"]
	var want []string
	for _, s := range executor.ModelSignals("car", rig.ModelSpecOf(bm), true, false) {
		want = append(want, s.Column)
	}
	if !slices.Equal(header[1:], want) {
		t.Fatalf("header %v, ModelSignals %v", header[1:], want)
	}
	cols := map[string]int{}
	for i, c := range header {
		cols[c] = i
	}
	for _, name := range []string{"car.v0", "car.ideal.v0"} {
		i, ok := cols[name]
		if !ok {
			t.Fatalf("no column %s in %v", name, header)
		}
		for _, l := range lines[1:] {
			f := strings.Split(l, ",")
			at, _ := strconv.ParseFloat(f[0], 64)
			want := "0"
			if at >= 0.1 {
				want = "1"
			}
			if f[i] != want {
				t.Fatalf("%s at %s is %s, the stimulus %s", name, f[0], f[i], want)
			}
		}
	}
	if _, ok := cols["car.hardware.v0"]; ok {
		t.Error("the hardware's part reads no v0 at CP2, but has a column of it")
	}
}

// TestSignalColumnsOfARealRun: without a stand-in (real time) there are no
// hardware columns; a part that keeps its own time adds sim_time and
// t_diff, in seconds.
func TestSignalColumnsOfARealRun(t *testing.T) {
	l := newCarLoop(t, &executor.Stepping{Wait: true, MaxAge: 10e6})
	cols := executor.SignalColumns([]*executor.Model{l.car})
	if slices.ContainsFunc(cols, func(c string) bool { return strings.HasPrefix(c, "car.hardware.") }) {
		t.Errorf("hardware columns without a stand-in: %v", cols)
	}
	for _, c := range []string{"car.v0", "car.ideal.v0", "car.sim_time", "car.t_diff"} {
		if !slices.Contains(cols, c) {
			t.Errorf("no column %s in %v", c, cols)
		}
	}
	p := parse(t, carLink)
	for _, s := range executor.ModelSignals("car", rig.ModelSpecOf(carBench(t, p).Models["car"]), false, true) {
		if s.Seconds != (s.Part == executor.TimePart) {
			t.Errorf("%s: seconds %v", s.Column, s.Seconds)
		}
	}
}
