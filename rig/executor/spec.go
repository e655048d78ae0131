package executor

import (
	"time"

	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/firmware/wire"
)

// ModelSpec is a model endpoint in the executor's own terms, which the rig
// makes of a bench's model endpoint (rig.ModelSpecOf): a plant cut at a
// coupling point, how its parts step and exchange, how frames code what
// crosses the cut, and what is sent when the rig's part fails.
type ModelSpec struct {
	// Model names the model and Cut the coupling point, for the summary.
	Model, Cut string
	// Plant is the whole model; Simulated is the part the rig runs and
	// Hardware the part on the bench (or its stand-in in virtual time).
	Plant               *plant.Plant
	Simulated, Hardware *plant.Part
	// Exchange is the communication step, a whole number of Steps, the
	// integration step of Solver.
	Exchange, Step time.Duration
	Solver         plant.Solver
	// SendEvery is how many exchanges apart the rig's part sends.
	SendEvery int
	// Send encodes what the rig's part sends across the cut
	// (Simulated.Out); Receive decodes what comes back (Simulated.In).
	Send, Receive wire.Codec
	// Output is the signal of interest. With Reference, the uncut plant
	// runs alongside the cut one and the output's distortion is measured
	// against it; without (an FMU, which cannot run twice in step), there
	// is nothing to compare.
	Output    string
	Reference bool
	// Stepping is what the parts step on and who watches them; nil: at
	// every exchange on the last input received, unwatched.
	Stepping *Stepping
	// Failure, for a rig's part that can fail (an FMU), is what stands in
	// for it when it does; nil: a part that stops giving numbers has
	// diverged.
	Failure *FailurePolicy
}

// FailurePolicy is what a model endpoint does when its rig's part fails.
type FailurePolicy struct {
	// Why is why the part failed, nil while it has not.
	Why func() error
	// Safe are the values sent in place of the part's, in frame order.
	Safe []float64
	// Continue goes on with the run, sending Safe at every exchange,
	// rather than stopping it; the run fails at its end all the same.
	Continue bool
}

// OwnTime reports whether the rig's part keeps its own time: it steps on
// data, or a supervisor watches it.
func (s *ModelSpec) OwnTime() bool {
	return s.Stepping != nil && (s.Stepping.Wait || s.Stepping.Supervisor != nil)
}
