package rigtest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a T that keeps what a test would report.
type recorder struct {
	errors, fatals []string
}

func (*recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func TestRigtest(t *testing.T) {
	const bench = "../../profiles/benches/virtual.yaml"
	// Passing: nothing reported.
	rec := &recorder{}
	r := New(rec, bench, "bottleneck", Options{Duration: 2 * time.Second})
	r.SendAt("controller", time.Second, "PING")
	r.ExpectLine("plant", "PING", 5*time.Millisecond)
	if res := r.Run("flows.m2s.lost == 0", "flows.m2s.sent == 1"); !res.Passed() || len(rec.errors)+len(rec.fatals) > 0 {
		t.Errorf("a passing run reported %v %v", rec.errors, rec.fatals)
	}
	// A step that times out, and the steps after it, are test errors.
	rec = &recorder{}
	r = New(rec, bench, "bottleneck", Options{Duration: 2 * time.Second})
	r.SendAt("controller", time.Second, "PING")
	r.ExpectLine("plant", "PING", 3*time.Millisecond)
	r.SendBytes("plant", []byte{1, 2})
	r.Run()
	want := []string{
		`rigtest: expect line "PING" at plant within 3ms failed: nothing matched from 1.000000 s to 1.003000 s: no frame arrived`,
		`rigtest: send bytes 01 02 from plant failed: not reached`,
	}
	if strings.Join(rec.errors, "\n") != strings.Join(want, "\n") {
		t.Errorf("reported\n%s\nwant\n%s", strings.Join(rec.errors, "\n"), strings.Join(want, "\n"))
	}
	// What cannot be set up fails the test at once.
	for _, tc := range []struct {
		setup func(*recorder)
		want  string
	}{
		{func(rec *recorder) { New(rec, bench, "bottlenek", Options{}) }, "rigtest: bottlenek: no such file, and no shipped profile by that name (see hilrig profiles)"},
		{func(rec *recorder) { New(rec, bench, "lte", Options{Sets: []string{"flows.sensor.role=null"}}) }, `rigtest: ../../profiles/benches/virtual.yaml:15:18: bind.to-controller: profile lte has no flow with role to-controller`},
		{func(rec *recorder) { New(rec, bench, "bottleneck", Options{}).Run("flows.m2z.lost == 0") }, `rigtest: "flows.m2z.lost == 0": column 7: flows has no "m2z"; did you mean m2s? (it has m2s, s2m, cross)`},
		{func(rec *recorder) { New(rec, bench, "bottleneck", Options{}).Expect("plant", "a(", time.Second) }, "rigtest: Expect(\"a(\"): error parsing regexp: missing closing ): `a(`"},
		{func(rec *recorder) {
			r := New(rec, bench, "bottleneck", Options{})
			r.Send("robot", "x")
			r.Run()
		}, `rigtest: the session did not start: no endpoint "robot" in the bench to play`},
	} {
		rec := &recorder{}
		tc.setup(rec)
		if len(rec.fatals) == 0 || !strings.HasPrefix(rec.fatals[0], tc.want) {
			t.Errorf("fatal %q, want %q", rec.fatals, tc.want)
		}
	}
}
