package lang

import (
	"math/big"
	"regexp"
	"strings"
	"testing"
	"time"
)

// referenceQuantity is how quantities were read before parseQuantity: a
// regular expression and math/big, exact and slow (its time grows with the
// square of the digits, and with the exponent).
var referenceQuantityRE = regexp.MustCompile(`^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*(\S*)$`)

// It says huge when math/big refused the number's exponent as too large,
// which makes the number 0, or no value of any unit.
func referenceScaled(s string, unit int64) (v int64, suffix string, whole, ok, huge bool) {
	m := referenceQuantityRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, "", false, false, false
	}
	num, good := new(big.Rat).SetString(m[1])
	if !good {
		return 0, m[2], false, true, true
	}
	r := new(big.Rat).Mul(num, new(big.Rat).SetInt64(unit))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, m[2], false, true, false
	}
	return r.Num().Int64(), m[2], true, true, false
}

// FuzzQuantity: parseQuantity and scaled read what the regular expression
// and math/big read, to the nanosecond and the bit, for numbers short
// enough for math/big.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"1.5ms", "1.3ms", "0", "-0", "+7ns", " 20 ms ", "1e-3s", "0.000000001s", ".5s", "5.s", "1e999999s",
		"9223372036854775807ns", "9223372036854775808ns", "-9223372036854775808ns", "18446744073709551616", "0.0000000000000000000001e22",
		"1000000000000000000000e-3", "1.2.3s", "e5", "1e", "- 1s", "1 2s", "3155760000s", "1.0000000000000000000000000000001s", "00000000000000000000000000001"} {
		f.Add(s, int64(1e9))
		f.Add(s, int64(1))
	}
	f.Fuzz(func(t *testing.T, s string, unit int64) {
		if len(s) > 200 || unit <= 0 || strings.Count(strings.ToLower(s), "e") > 0 && len(s) > 40 {
			return // math/big's time grows with the exponent
		}
		q, suffix, ok := parseQuantity(s)
		want, wantSuffix, wantWhole, wantOK, huge := referenceScaled(s, unit)
		if ok != wantOK {
			t.Fatalf("%q: read %v, the reference %v", s, ok, wantOK)
		}
		if !ok {
			return
		}
		got, whole := scaled(q, unit)
		if huge && suffix == wantSuffix && (!whole || got == 0) {
			return
		}
		if suffix != wantSuffix || whole != wantWhole || got != want {
			t.Fatalf("%q ×%d: %d %v %q, the reference %d %v %q", s, unit, got, whole, suffix, want, wantWhole, wantSuffix)
		}
	})
}

// TestLongQuantities: a number of any length is read in time linear in
// its length (math/big took seconds for a megabyte of digits).
func TestLongQuantities(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("9", 1<<20) + "s",
		"0." + strings.Repeat("0", 1<<20) + "1s",
		strings.Repeat("0", 1<<20) + "1s",
		"1" + strings.Repeat("0", 1<<20) + "e-1048576s",
		"1e" + strings.Repeat("9", 1<<20) + "s",
		"1e-" + strings.Repeat("9", 1<<20) + "s",
	} {
		start := time.Now()
		var d Duration
		err := d.ParseScalar(s)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%.20q…: %v", s, took)
		}
		want := s == strings.Repeat("0", 1<<20)+"1s" || strings.HasPrefix(s, "1"+strings.Repeat("0", 10))
		if (err == nil) != want {
			t.Errorf("%.20q…: %v", s, err)
		}
	}
}
