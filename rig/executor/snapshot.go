package executor

import (
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/rig/record"
)

// fillSnapshot copies the run's state into the monitor's snapshot, reusing
// its slices.
func (x *Executor) fillSnapshot(s *record.Snapshot) {
	s.Time = x.clock.Now()
	s.Flows = s.Flows[:0]
	for i, name := range x.flowNames {
		st := x.net.FlowStats(i)
		arrived := st.Status[emulator.Delivered] + st.Status[emulator.Corrupted]
		dropped := st.Status[emulator.QueueDrop] + st.Status[emulator.OutageDrop] + st.Status[emulator.LossDrop]
		fp := record.FlowProgress{Name: name, Sent: st.Sent, Arrived: arrived, Dropped: dropped}
		if st.Delay.Count() > 0 {
			fp.DelayP50, fp.DelayP99 = st.Delay.Quantile(0.5), st.Delay.Quantile(0.99)
		}
		s.Flows = append(s.Flows, fp)
	}
	s.Models = s.Models[:0]
	for _, m := range x.models {
		s.Models = append(s.Models, m.progress())
	}
}

// Ingress is where the endpoints report what they read.
func (x *Executor) Ingress() *Ingress { return x.in }

// Phases is the phase recorder, if the run has one.
func (x *Executor) Phases() *record.Phases { return x.phases }
