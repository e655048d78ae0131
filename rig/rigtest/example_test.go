package rigtest_test

import (
	"fmt"
	"time"

	"github.com/hilrig/hilrig/rig/rigtest"
)

// printT stands in for the *testing.T of a real test: it prints what the
// test would report.
type printT struct{ failed bool }

func (*printT) Helper() {}
func (t *printT) Errorf(format string, args ...any) {
	t.failed = true
	fmt.Printf(format+"\n", args...)
}
func (t *printT) Fatalf(format string, args ...any) { t.Errorf(format, args...) }

// A test plays both ends of the virtual bench through paper 000's
// bottleneck in virtual time: a ping crosses it in Σ(prop + size·8/rate) =
// 4.00864 ms (4 bytes), and the answer comes back as fast; a 4 ms budget
// is not met. In a real test, t is the test's *testing.T.
func Example() {
	t := &printT{}
	r := rigtest.New(t, "../../profiles/benches/virtual.yaml", "bottleneck", rigtest.Options{Duration: 2 * time.Second})
	r.SendAt("controller", time.Second, "PING")
	r.ExpectLine("plant", "PING", 5*time.Millisecond)
	r.Send("plant", "PONG")
	r.Expect("controller", "^PO", 5*time.Millisecond)
	res := r.Run("flows.m2s.lost == 0", "flows.s2m.delay.max < 4ms")
	for _, step := range res.Script {
		fmt.Println(step)
	}
	fmt.Println("failed:", t.failed)
	// Output:
	// rigtest: flows.s2m.delay.max < 4ms failed: measured 4.00864ms, limit 4ms
	// send line "PING" from controller at 1s: sent at 1.000000 s
	// expect line "PING" at plant within 5ms: "PING" arrived at 1.004009 s, 4.00864ms after the step began
	// send line "PONG" from plant: sent at 1.004009 s
	// expect a frame matching "^PO" at controller within 5ms: "PONG" arrived at 1.008017 s, 4.00864ms after the step began
	// failed: true
}
