package profiles

import "github.com/hilrig/hilrig/profiles/lang"

// resolveDefaults writes the default of every optional value that has one
// worth showing into the profile, so that `hilrig show` prints what will
// actually run and the builder need not know the defaults.
func (p *Profile) resolveDefaults() {
	for _, h := range p.Hops.Values {
		h.HopSettings.resolveDefaults()
	}
	for _, f := range p.Flows.Values {
		if f.Trace == nil {
			f.Trace = ptr(true)
		}
		if t := f.Traffic; t != nil && t.OnOff != nil {
			t.OnOff.On.resolveDefaults()
			t.OnOff.Off.resolveDefaults()
		}
	}
	for i := range p.Schedule {
		p.Schedule[i].HopSettings.resolveDefaults()
	}
}

func (s *HopSettings) resolveDefaults() {
	if l := s.Loss; l != nil {
		if g := l.Gilbert; g != nil {
			// netem's defaults for gemodel p: r = 1 − p, 1−h = 100 %, 1−k = 0.
			setDefault(&g.R, 1-g.P)
			setDefault(&g.LossBad, 1)
			setDefault(&g.LossGood, 0)
		}
		if m := l.Markov4; m != nil {
			// netem's defaults for loss state p13: p31 = 1 − p13, p32 = 0,
			// p23 = 100 %, p14 = 0.
			setDefault(&m.P31, 1-m.P13)
			setDefault(&m.P32, 0)
			setDefault(&m.P23, 1)
			setDefault(&m.P14, 0)
		}
	}
	if r := s.Reorder; r != nil && r.Mode == "gap" && r.Gap == nil {
		r.Gap = ptr(1)
	}
}

func (p *Period) resolveDefaults() {
	if p.Dist == "pareto" && p.Shape == nil {
		p.Shape = ptr(1.5)
	}
}

func setDefault(p **lang.Probability, v lang.Probability) {
	if *p == nil {
		*p = &v
	}
}

func ptr[T any](v T) *T { return &v }
