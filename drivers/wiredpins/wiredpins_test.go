package wiredpins

import (
	"slices"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
)

func TestEdgesFollowTheEdgeSetting(t *testing.T) {
	var now time.Duration
	clock := func() time.Duration { return now }
	tests := []struct {
		edge gpio.Edge
		want []gpio.Level // edges seen for Low→High→Low→High
	}{
		{gpio.BothEdges, []gpio.Level{gpio.High, gpio.Low, gpio.High}},
		{gpio.RisingEdge, []gpio.Level{gpio.High, gpio.High}},
		{gpio.FallingEdge, []gpio.Level{gpio.Low}},
	}
	for _, tc := range tests {
		out, in := New("out", 1, clock), New("in", 2, clock)
		out.Out(gpio.Low)
		Wire(out, in)
		in.In(gpio.PullNoChange, tc.edge)
		var times []time.Duration
		for i, l := range []gpio.Level{gpio.High, gpio.Low, gpio.High, gpio.High} { // the last one is no edge
			now = time.Duration(i+1) * time.Millisecond
			out.Out(l)
		}
		var seen []gpio.Level
		for in.WaitForEdge(0) {
			at, level := in.LastEdge()
			seen = append(seen, level)
			times = append(times, at)
		}
		if !slices.Equal(seen, tc.want) {
			t.Errorf("%v: edges to %v, want %v", tc.edge, seen, tc.want)
		}
		if tc.edge == gpio.BothEdges && (times[0] != time.Millisecond || times[2] != 3*time.Millisecond) {
			t.Errorf("edges stamped %v by the test's clock", times)
		}
	}
}

func TestPullAndHalt(t *testing.T) {
	in := New("in", 1, func() time.Duration { return 0 })
	in.In(gpio.PullUp, gpio.NoEdge)
	if in.Read() != gpio.High {
		t.Error("an undriven input reads its pull-up")
	}
	if in.WaitForEdge(-1) {
		t.Error("an input without edge detection reports an edge")
	}
	in.In(gpio.PullDown, gpio.BothEdges)
	go func() { time.Sleep(10 * time.Millisecond); in.Halt() }()
	if in.WaitForEdge(-1) {
		t.Error("Halt did not unblock WaitForEdge")
	}
}
