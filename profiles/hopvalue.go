package profiles

import (
	"strconv"
	"time"

	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles/lang"
)

// HopValue writes the value of a hop's key in the engine's parameters p as
// a change's body in the profile language does (JSON-ready: strings, and
// maps of them), the inverse of what a profile's key builds. ok is false
// when the profile language cannot write it inline: a recorded series or
// measured delays, which only a file gives. A key whose absence is its
// value (no rate, no loss, no jitter, no corruption, no flap) is written
// none.
func HopValue(key string, p *emulator.HopParams) (v any, ok bool) {
	write, known := hopWriters[key]
	if !known {
		return nil, false
	}
	return write(p)
}

// hopWriters write each of the engine's hop keys (TestHopValueWritesEveryKey).
var hopWriters = map[string]func(p *emulator.HopParams) (any, bool){
	"rate": func(p *emulator.HopParams) (any, bool) {
		if p.Rate == 0 {
			return "none", true
		}
		return p.Rate.String(), true
	},
	"delay": func(p *emulator.HopParams) (any, bool) { return durationText(p.Delay), p.DelayTrace == nil },
	"queue": func(p *emulator.HopParams) (any, bool) {
		return lang.Limit(p.Queue).String(), p.Queue.Unit != emulator.Unlimited
	},
	"overhead":  func(p *emulator.HopParams) (any, bool) { return strconv.Itoa(p.Overhead) + "B", true },
	"per_frame": func(p *emulator.HopParams) (any, bool) { return durationText(p.PerFrame), true },
	"loss":      writeLoss,
	"jitter":    writeJitter,
	"reorder":   writeReorder,
	"duplicate": func(p *emulator.HopParams) (any, bool) { return lang.Probability(p.Duplicate).String(), true },
	"corrupt":   writeCorrupt,
	"flap": func(p *emulator.HopParams) (any, bool) {
		f := p.Flap
		if f == (emulator.Flap{}) {
			return "none", true
		}
		return map[string]any{"rate": f.Rate.String(), "every": durationText(f.Every), "for": durationText(f.For)}, true
	},
}

func durationText(d time.Duration) string { return lang.Duration(d).String() }
func probabilityText(p float64) string    { return lang.Probability(p).String() }

func writeLoss(p *emulator.HopParams) (any, bool) {
	switch m := p.Loss.(type) {
	case nil:
		return "none", true
	case emulator.Bernoulli:
		return map[string]any{"random": probabilityText(m.P)}, true
	case emulator.GilbertElliott:
		return map[string]any{"gilbert": map[string]string{"p": probabilityText(m.P), "r": probabilityText(m.R), "loss_bad": probabilityText(m.LossBad), "loss_good": probabilityText(m.LossGood)}}, true
	case emulator.Markov4:
		return map[string]any{"markov4": map[string]string{"p13": probabilityText(m.P13), "p31": probabilityText(m.P31), "p32": probabilityText(m.P32), "p23": probabilityText(m.P23), "p14": probabilityText(m.P14)}}, true
	}
	return nil, false // a recorded series
}

func writeJitter(p *emulator.HopParams) (any, bool) {
	var out map[string]any
	switch d := p.Jitter.Dist.(type) {
	case nil:
		return "none", true
	case emulator.Uniform:
		out = map[string]any{"dist": "uniform", "spread": durationText(d.Spread)}
	case emulator.Normal:
		out = map[string]any{"dist": "normal", "sigma": durationText(d.Sigma)}
	case emulator.Pareto:
		out = map[string]any{"dist": "pareto", "mean": durationText(d.Mean), "sigma": durationText(d.Sigma)}
	case emulator.ParetoNormal:
		out = map[string]any{"dist": "paretonormal", "mean": durationText(d.Mean), "sigma": durationText(d.Sigma)}
	default:
		return nil, false // an empirical distribution
	}
	if c := p.Jitter.Correlation; c != 0 {
		out["correlation"] = strconv.FormatFloat(c, 'g', -1, 64)
	}
	return out, true
}

func writeReorder(p *emulator.HopParams) (any, bool) {
	switch p.Reorder.Mode {
	case emulator.InOrder:
		return "in_order", true
	case emulator.ReorderAllowed:
		return "allowed", true
	}
	return map[string]any{"p": probabilityText(p.Reorder.P), "gap": p.Reorder.Gap}, true
}

func writeCorrupt(p *emulator.HopParams) (any, bool) {
	switch c := p.Corrupt; {
	case c.BER > 0:
		return map[string]any{"ber": strconv.FormatFloat(c.BER, 'g', -1, 64)}, true
	case c.FrameP > 0:
		return map[string]any{"frame": probabilityText(c.FrameP)}, true
	}
	return "none", true
}
