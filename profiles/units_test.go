package profiles

import (
	"strings"
	"testing"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
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
		var d lang.Duration
		err := d.ParseScalar(tc.in)
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
			lang.ScalarParser
			String() string
		}
		want string // formatted back, or the error's text
	}{
		{"4Mbit", new(lang.Rate), "4Mbit"},
		{"512kbit", new(lang.Rate), "512kbit"},
		{"1.5Mbit", new(lang.Rate), "1500kbit"},
		{"100 Mbit/s", new(lang.Rate), "100Mbit"},
		{"4 Mbps", new(lang.Rate), "is not a rate (want e.g. 4Mbit, 512kbit)"},
		{"4MB", new(lang.Rate), "is not a rate"},
		{"0.5bit", new(lang.Rate), "whole number"},
		{"0bit", new(lang.Rate), "positive"},
		{"1000B", new(lang.Size), "1000B"},
		{"30kB", new(lang.Size), "30000B"},
		{"64KiB", new(lang.Size), "65536B"},
		{"1.5MB", new(lang.Size), "1500000B"},
		{"30KB", new(lang.Size), "ambiguous"},
		{"30kb", new(lang.Size), "ambiguous"},
		{"1000", new(lang.Size), "is not a size"},
		{"30000B", new(lang.Limit), "30000B"},
		{"50 frames", new(lang.Limit), "50 frames"},
		{"1frame", new(lang.Limit), "1 frames"},
		{"50", new(lang.Limit), "is not a limit"},
		{"1%", new(lang.Probability), "1%"},
		{"0.25", new(lang.Probability), "25%"},
		{"150%", new(lang.Probability), "outside [0, 1]"},
		{"1.5", new(lang.Probability), "outside [0, 1]"},
		{"-1%", new(lang.Probability), "outside [0, 1]"},
		{"lots", new(lang.Probability), "is not a probability"},
		{"0.0001%", new(lang.Probability), "0.0001%"},
		{"0.3%", new(lang.Probability), "0.3%"},
		{"8n1", new(lang.UARTFormat), "8N1"},
		{"5N1.5", new(lang.UARTFormat), "5N1.5"},
		{"7E2", new(lang.UARTFormat), "7E2"},
		{"8X1", new(lang.UARTFormat), "is not a UART format (want data bits 5 to 8, parity N, E, O, M or S, stop bits 1, 1.5 or 2: 8N1, 7E1, 8E2)"},
		{"9N1", new(lang.UARTFormat), "is not a UART format"},
		{"8N3", new(lang.UARTFormat), "is not a UART format"},
		{"8-N-1", new(lang.UARTFormat), "is not a UART format"},
	}
	for _, tc := range tests {
		err := tc.into.ParseScalar(tc.in)
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

// TestProbabilityStringRoundTrips: a probability prints as the shortest
// percentage in decimal notation that parses back to it exactly, else as
// its fraction, so that hilrig show's defaults read 100%, not 1e+02%
// (issue 16, item 8).
func TestProbabilityStringRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want string
	}{
		{1, "100%"}, {0, "0%"}, {0.5, "50%"}, {0.01, "1%"}, {0.003, "0.3%"}, {0.997, "99.7%"},
		{1e-6, "0.0001%"}, {1e-12, "0.0000000001%"}, {0.1, "10%"}, {0.123456789, "12.3456789%"},
		{1 - 0.02, "98%"}, {1 - 0.003, "99.7%"},
		// No percentage parses back to these: the fraction.
		{1e-7, "0.0000001"}, {1.0 / 3, "0.3333333333333333"}, {0.9999, "0.9999"}, {0.0007, "0.0007"},
		{1e-300, "1e-300"},
	} {
		s := lang.Probability(tc.p).String()
		var back lang.Probability
		if err := back.ParseScalar(s); err != nil || float64(back) != tc.p {
			t.Errorf("%v prints as %q, which parses as %v (%v)", tc.p, s, float64(back), err)
		}
		if s != tc.want {
			t.Errorf("%v prints as %q, want %q", tc.p, s, tc.want)
		}
	}
	// What a user writes prints as written (in its shortest form).
	for _, written := range []string{"0.07%", "0.0001%", "0.3%", "100%", "2%", "12.5%", "0.00001%", "0%"} {
		var p lang.Probability
		if err := p.ParseScalar(written); err != nil || p.String() != written {
			t.Errorf("%s prints as %q (%v)", written, p.String(), err)
		}
	}
}

func TestFormatDurationRoundTrips(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, 1300 * time.Microsecond, 20 * time.Second, 90 * time.Second, 2 * time.Hour, 1234567891} {
		s := lang.FormatDuration(d)
		var back lang.Duration
		if err := back.ParseScalar(s); err != nil || time.Duration(back) != d {
			t.Errorf("%v formats as %q, which parses as %v (%v)", d, s, time.Duration(back), err)
		}
	}
}

func TestLimitUnits(t *testing.T) {
	var l lang.Limit
	if err := l.ParseScalar("30kB"); err != nil || l.Unit != emulator.Bytes || l.N != 30000 {
		t.Errorf("30kB: %+v %v", l, err)
	}
}

// TestUARTLineRates: a line's rate is the bit rate at which a byte takes
// one character time, baud·8/(1 + data + parity + stop bits), rounded to
// the nearest whole bit/s when not whole; errors are at the key at fault.
func TestUARTLineRates(t *testing.T) {
	tests := []struct {
		rate string
		want emulator.Rate // baud·8/bits per character
	}{
		{"{baud: 115200, format: 8N1}", 92160}, // 115200·8/10
		{"{baud: 115200}", 92160},              // 8N1 by default
		{"{baud: 115200, format: 7E1}", 92160}, // 1+7+1+1 = 10 bits
		{"{baud: 115200, format: 8E1}", 83782}, // 921600/11 = 83781.8
		{"{baud: 115200, format: 8O1}", 83782}, // the same length
		{"{baud: 115200, format: 8N2}", 83782}, // 1+8+2 = 11 bits
		{"{baud: 19200, format: 8E1}", 13964},  // 153600/11 = 13963.6, rs485-noisy's
		{"{baud: 9600, format: 8E2}", 6400},    // 12 bits
		{"{baud: 9600, format: 5N1.5}", 10240}, // 7.5 bits: 76800/7.5
		{"{baud: 300, format: 7O2}", 218},      // 2400/11 = 218.2
		{"{baud: 1, format: 8N1}", 1},          // 0.8, never 0
		{"2Mbit", 2 * emulator.Mbitps},         // a bit rate as before
	}
	for _, tc := range tests {
		p, err := Parse("x.yaml", []byte(minimal), "hops.a.rate="+tc.rate)
		if err != nil {
			t.Errorf("%s: %v", tc.rate, err)
			continue
		}
		if got := hopParams(p, "a").Rate; got != tc.want {
			t.Errorf("%s: %d bit/s, want %d", tc.rate, got, tc.want)
		}
	}
	mistakes := []struct{ rate, want string }{
		{"{baud: 115200, format: 8X1}", `--set:1:36: hops.a.rate.format: "8X1" is not a UART format`},
		{"{baud: 0}", `--set:1:20: hops.a.rate.baud: must be positive`},
		{"{baud: fast}", `--set:1:20: hops.a.rate.baud: "fast" is not a whole number`},
		{"{format: 8N1}", `--set:1:13: hops.a.rate: missing baud: want a whole number`},
		{"{baud: 9600, parity: even}", `--set:1:26: hops.a.rate.parity: unknown key (want baud, format)`},
	}
	for _, tc := range mistakes {
		_, err := Parse("x.yaml", []byte(minimal), "hops.a.rate="+tc.rate)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got  %v\n want %s", tc.rate, err, tc.want)
		}
	}
}
