package executor

import (
	"time"

	"github.com/hilrig/hilrig/rig/record"
	"github.com/hilrig/hilrig/rig/supervisor"
)

// Summary is what the model did so far; late says whether to include the
// lateness of its exchanges (a real clock's).
func (m *Model) Summary(late bool) record.ModelSummary {
	s := record.ModelSummary{
		Endpoint: m.name, Model: m.spec.Model, Cut: m.spec.Cut, Solver: string(m.spec.Solver),
		ExchangeS: m.exchange.Seconds(), StepS: m.spec.Step.Seconds(), Exchanges: m.exchanges,
		FramesOut: m.sim.framesOut, FramesIn: m.sim.framesIn, BadFrames: m.sim.badFrames,
		Unconverged: m.sim.it.Unconverged(), Output: m.ref.summary(),
	}
	if m.hw != nil {
		s.Hardware = m.hw.endSummary()
	}
	if w := m.sim.wire; w != nil {
		s.Wire = w.summary()
	}
	if late {
		s.StepLateness, s.Overruns = m.late.Summarize(), m.overruns
	}
	if d := m.wait; d != nil {
		s.Stepping = "hold"
		if m.onData() {
			s.Stepping = "wait"
			s.SimTimeS = d.h.Seconds()
			s.Timestamps = m.sim.timestamps(m.stepping.NominalDelay)
		}
		s.Messages = &record.MessageCounts{Generated: d.generated, Skipped: d.skipped, SkippedDisruption: d.skippedDisrupted, SafeSent: d.safeSent}
		s.GapSteps = d.gapSteps
		if d.sup != nil {
			s.Sync = syncSummary(d.sup, m.exchange)
		}
	}
	return s
}

func syncSummary(sup *supervisor.Supervisor, dh time.Duration) *record.SyncSummary {
	cfg := sup.Config()
	out := &record.SyncSummary{
		ThetaSafeS: cfg.ThetaSafe.Seconds(), CheckS: cfg.Check.Seconds(), Jump: cfg.Jump,
		OnOutOfSync: cfg.OnOutOfSync.String(), OutOfSync: sup.Flagged(), PeakTDiffS: sup.Peak().Seconds(),
	}
	for _, ep := range sup.Episodes() {
		es := record.EpisodeSummary{StartS: ep.Start.Seconds(), PeakTDiffS: ep.Peak.Seconds(), Steps: ep.Steps, Disrupted: ep.Disrupted}
		if ep.End >= 0 {
			end := ep.End.Seconds()
			es.EndS = &end
		}
		for k, n := range ep.StepSizes {
			if n > 0 {
				es.StepSizes = append(es.StepSizes, record.StepCount{StepS: (time.Duration(k+1) * dh).Seconds(), Count: n})
			}
		}
		out.Episodes = append(out.Episodes, es)
	}
	for k, n := range sup.ViolatingRuns() {
		if n > 0 {
			out.ViolatingRuns = append(out.ViolatingRuns, record.RunCount{Steps: k + 1, Count: n})
		}
	}
	return out
}

// progress is the model's line of the live snapshot.
func (m *Model) progress() record.ModelProgress {
	mp := record.ModelProgress{Endpoint: m.name, Exchanges: m.exchanges, Overruns: m.overruns, FramesOut: m.sim.framesOut, FramesIn: m.sim.framesIn}
	if ref := m.ref; ref.output >= 0 {
		mp.Output, mp.Value, mp.Ideal = ref.name, ref.cut.Signal(ref.output), ref.ideal.Signal(ref.output)
		mp.Peak, mp.MaxError = ref.peak, ref.maxErr
	}
	for i, name := range m.sends {
		if mp.NCut < record.MaxCut {
			mp.Cut[mp.NCut] = record.CutValue{Name: name, Value: m.sim.it.Out(i), ToHardware: true}
			mp.NCut++
		}
	}
	for i, name := range m.takes {
		if mp.NCut < record.MaxCut {
			mp.Cut[mp.NCut] = record.CutValue{Name: name, Value: m.sim.it.In(i)}
			mp.NCut++
		}
	}
	return mp
}
