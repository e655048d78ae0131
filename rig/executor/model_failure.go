package executor

import (
	"fmt"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// diverge tells the run that a part of the model (role) has a state or
// signal that is not a finite number (what): an event at the instant, and
// a failure that stops the run, as a device lost does. The part sends
// nothing more; a trace, signals and summary are complete up to the
// instant, and say so.
func (m *Model) diverge(x *Executor, role, what string) {
	now := x.net.Now()
	if m.spec.Failure != nil && role == m.sim.role {
		m.fail(x, now, what) // the rig's part is the FMU alone
		return
	}
	x.notify(now, "model_diverged", fmt.Sprintf("%s: in %s, %s: the model is unstable as it runs, or took a value that is not a number", m.name, role, what), true)
	if x.failure == nil {
		x.failure = fmt.Errorf("model %s diverged at %v: in %s, %s", m.name, now, role, what)
	}
}

// fail tells the run that an FMU endpoint's FMU failed (what: why): an
// event at the instant, its safe values handed to the hardware at once,
// past the emulated network (nothing more will cross it: a run that stops
// must leave the hardware safe), and the run stopped; or, with
// on_failure: continue, the run gone on with the safe values sent across
// the network at every exchange in place of the FMU's, as its values were
// (the frames on their way arrive first), to fail at its end (Failed).
func (m *Model) fail(x *Executor, now time.Duration, what string) {
	f := m.spec.Failure
	if err := f.Why(); err != nil {
		what = err.Error() // the FMU's own words, not the block's NaN
	}
	m.failed = fmt.Errorf("FMU %s failed: %s", m.name, what)
	var safe []string
	for i, name := range m.sends {
		safe = append(safe, fmt.Sprintf("%s = %g", name, f.Safe[i]))
	}
	then := "the run stops"
	if f.Continue {
		then = "the run goes on (on_failure: continue)"
	}
	x.notify(now, "model_failed", fmt.Sprintf("%s: the FMU failed %s; it sends its safe values (%s) and %s", m.name, what, strings.Join(safe, ", "), then), true)
	if flow := m.sim.flow; !f.Continue && flow >= 0 && x.egress[flow] != nil {
		payload := m.sim.frameOf(f.Safe)
		x.egress[flow].deliver(x, &emulator.Frame{Flow: flow, Payload: payload, Sent: now, Done: now})
	}
	if !f.Continue && x.failure == nil {
		x.failure = m.failed
	}
}

// Failed is why the model's FMU failed, or nil: the run's failure when it
// stopped the run, and one to report at its end when the run went on.
func (m *Model) Failed() error { return m.failed }

// Continued reports whether the model's FMU failed and the run went on
// (on_failure: continue): its failure is not what stopped the run.
func (m *Model) Continued() bool { return m.failed != nil && m.spec.Failure.Continue }
