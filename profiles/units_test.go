package profiles

import (
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"1.5ms", 1500 * time.Microsecond, ""},
		{"1.3ms", 1300 * time.Microsecond, ""},
		{"2s", 2 * time.Second, ""},
		{"250us", 250 * time.Microsecond, ""},
		{"250µs", 250 * time.Microsecond, ""},
		{"7ns", 7, ""},
		{"0.000000001s", 1, ""},
		{"1e-3s", time.Millisecond, ""},
		{"2min", 2 * time.Minute, ""},
		{"1h", time.Hour, ""},
		{"20 ms", 20 * time.Millisecond, ""},
		{"0", 0, ""},
		{"5m", 0, "ambiguous"},
		{"5", 0, "is not a duration"},
		{"0.5ns", 0, "whole number of nanoseconds"},
		{"-1s", 0, "negative"},
		{"ms", 0, "is not a duration"},
		{"1.2.3s", 0, "is not a duration"},
		{"3000000h", 0, "too long"},
	}
	for _, tc := range tests {
		var d Duration
		err := d.parseScalar(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err == "" && time.Duration(d) != tc.want:
			t.Errorf("%q = %v, want %v", tc.in, time.Duration(d), tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.err)
		}
	}
}

func TestParseRateSizeLimitProbability(t *testing.T) {
	tests := []struct {
		in   string
		into interface {
			scalarParser
			String() string
		}
		want string // formatted back, or the error's text
	}{
		{"4Mbit", new(Rate), "4Mbit"},
		{"512kbit", new(Rate), "512kbit"},
		{"1.5Mbit", new(Rate), "1500kbit"},
		{"100 Mbit/s", new(Rate), "100Mbit"},
		{"4 Mbps", new(Rate), "is not a rate (want e.g. 4Mbit, 512kbit)"},
		{"4MB", new(Rate), "is not a rate"},
		{"0.5bit", new(Rate), "whole number"},
		{"0bit", new(Rate), "positive"},
		{"1000B", new(Size), "1000B"},
		{"30kB", new(Size), "30000B"},
		{"64KiB", new(Size), "65536B"},
		{"1.5MB", new(Size), "1500000B"},
		{"30KB", new(Size), "ambiguous"},
		{"30kb", new(Size), "ambiguous"},
		{"1000", new(Size), "is not a size"},
		{"30000B", new(Limit), "30000B"},
		{"50 frames", new(Limit), "50 frames"},
		{"1frame", new(Limit), "1 frames"},
		{"50", new(Limit), "is not a limit"},
		{"1%", new(Probability), "1%"},
		{"0.25", new(Probability), "25%"},
		{"150%", new(Probability), "outside [0, 1]"},
		{"1.5", new(Probability), "outside [0, 1]"},
		{"-1%", new(Probability), "outside [0, 1]"},
		{"lots", new(Probability), "is not a probability"},
	}
	for _, tc := range tests {
		err := tc.into.parseScalar(tc.in)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = tc.into.String()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q as %T: got %q, want %q", tc.in, tc.into, got, tc.want)
		}
	}
}

func TestFormatDurationRoundTrips(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, 1300 * time.Microsecond, 20 * time.Second, 90 * time.Second, 2 * time.Hour, 1234567891} {
		s := formatDuration(d)
		var back Duration
		if err := back.parseScalar(s); err != nil || time.Duration(back) != d {
			t.Errorf("%v formats as %q, which parses as %v (%v)", d, s, time.Duration(back), err)
		}
	}
}

func TestLimitUnits(t *testing.T) {
	var l Limit
	if err := l.parseScalar("30kB"); err != nil || l.Unit != emulator.Bytes || l.N != 30000 {
		t.Errorf("30kB: %+v %v", l, err)
	}
}
