package report

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrig/hilrig/emulator/detmath"
	"github.com/hilrig/hilrig/emulator/plant"
	"github.com/hilrig/hilrig/profiles/lang"
	"github.com/hilrig/hilrig/profiles/modelfile"
	"github.com/hilrig/hilrig/rig/record"
)

// Sites is a loop between two rigs at two sites (paper 001's
// Internet-distributed HIL), joined from each site's run: the model's
// part simulated on one rig, the other side of its cut on the other, the
// coupling variables crossing a real network between them in the wire
// protocol. Each site measured the direction that reaches it; the site
// that simulates the model's output compared it with the uncut model run
// alongside.
type Sites struct {
	Runs [2]*Run
	// Peer is each site's endpoint that leads to the other site (codec
	// wire), and Model its model endpoint.
	Peer  [2]*record.EndpointSummary
	Model [2]*record.ModelSummary
	// Ref is the site whose model computes the output, compared with the
	// uncut model (its summary's output), or -1.
	Ref int
	// Started is each run's start on the wall clock (zero: unknown).
	Started [2]time.Time
	// Offset is the other site's clock less this one's, as this site's
	// time exchanges measured it (nil: no exchange answered), and
	// WallDisagreement what is left of it once the runs' starts on each
	// site's wall clock are taken out: how far the two sites' wall clocks
	// disagree (zero when they are one clock; NTP's error across labs).
	Offset           [2]*float64
	WallDisagreement [2]*float64
	// Tau is the one-way delay each way, the mean of the two directions'
	// measured means (s): what couple is asked for.
	Tau float64
	// Exchange is the model's exchange step (s).
	Exchange float64
	// Distortion compares, at the frequencies the input drives, the loop
	// measured against the uncut model with couple's prediction for the
	// delay measured; nil without signals or a model couple can analyse
	// (Why says why).
	Distortion []DistortionPoint
	Why        string
	// Ranking is the model's cuts by couple's peak distortion for the
	// delay measured, the least first (paper 001's choice of coupling
	// point).
	Ranking []CutPeak
}

// CutPeak is a cut's peak distortion, as couple predicts it.
type CutPeak struct {
	Cut         string
	DB, OmegaAt float64
}

// DistortionPoint is paper 001's distortion Θ = (P − Rd)/Rd at one
// frequency: measured, from the output of the loop (P) and of the uncut
// model (Rd) run beside it, as the ratio of their Fourier transforms; and
// as couple predicts it for the loop's delay, each way τ + Exchange: a
// value waits for the next exchange to be taken up (on average half an
// exchange) and is then held through it (half an exchange late on
// average).
//
// Low and High bound what the measurement can read for that prediction
// (the tolerance): the wait lies between none and a whole exchange, so
// the delay each way between τ + Exchange/2 and τ + 3·Exchange/2; and a
// transform over a Hann window of the run reads at ω a weighted mean of
// Θ over its main lobe, ω ± 2·2π/T for a run of length T. They are the
// least and the greatest |Θ| couple predicts over both.
type DistortionPoint struct {
	Omega     float64 // rad/s
	Measured  complex128
	Predicted complex128
	Low, High float64 // |Θ|
}

// Within reports whether the measured distortion's magnitude lies in the
// band couple predicts.
func (p DistortionPoint) Within() bool {
	m := detmath.Abs(p.Measured)
	return m >= p.Low && m <= p.High
}

// JoinSites joins two sites' runs into one loop: each must have a model
// endpoint and one endpoint speaking the wire protocol to the other site.
func JoinSites(a, b *Run) (*Sites, error) {
	s := &Sites{Runs: [2]*Run{a, b}, Ref: -1}
	for i, r := range s.Runs {
		sum := r.Summary
		for k := range sum.Endpoints {
			if e := &sum.Endpoints[k]; e.Wire != nil && (e.Kind == "udp" || e.Kind == "tcp") {
				if s.Peer[i] != nil {
					return nil, fmt.Errorf("%s: two endpoints lead to another rig (%s, %s): join takes a loop between two sites, one peer each", r.Dir, s.Peer[i].Name, e.Name)
				}
				s.Peer[i] = e
			}
		}
		if s.Peer[i] == nil {
			return nil, fmt.Errorf("%s: no endpoint leads to another rig: a site's bench has a udp or tcp endpoint with codec wire bound to its model", r.Dir)
		}
		if len(sum.Models) != 1 {
			return nil, fmt.Errorf("%s: %d model endpoints; a site of a two-site loop has one", r.Dir, len(sum.Models))
		}
		s.Model[i] = &sum.Models[0]
		if s.Model[i].Output != nil {
			s.Ref = i
		}
		if t := sum.Timing; t != nil && t.Started != "" {
			if at, err := time.Parse(time.RFC3339Nano, t.Started); err == nil {
				s.Started[i] = at
			}
		}
	}
	if ma, mb := s.Model[0], s.Model[1]; ma.Model != mb.Model || ma.Cut != mb.Cut {
		return nil, fmt.Errorf("the sites simulate different loops: %s cut at %s in %s, %s cut at %s in %s", ma.Model, ma.Cut, a.Dir, mb.Model, mb.Cut, b.Dir)
	}
	s.Exchange = s.Model[0].ExchangeS
	for i := range 2 {
		w := s.Peer[i].Wire
		if w.ClockOffsetS == nil {
			continue
		}
		s.Offset[i] = w.ClockOffsetS
		if !s.Started[0].IsZero() && !s.Started[1].IsZero() {
			// The other site's clock read zero at its start: on this
			// site's clock, that is this start less the other's.
			starts := s.Started[i].Sub(s.Started[1-i]).Seconds()
			d := *w.ClockOffsetS - starts
			s.WallDisagreement[i] = &d
		}
	}
	var means []float64
	for i := range 2 {
		if d := s.Peer[i].Wire.OneWayDelay; d != nil && s.Peer[i].Wire.Messages > 0 {
			means = append(means, d.Mean)
		}
	}
	if len(means) == 2 {
		s.Tau = (means[0] + means[1]) / 2
	}
	s.Distortion, s.Why = s.distortion()
	return s, nil
}

// Site is site i's name: the bench's, or its directory.
func (s *Sites) Site(i int) string {
	return cmpOr(s.Runs[i].Summary.Bench, s.Runs[i].Dir)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// distortion measures Θ from the reference site's signals and asks couple
// for its prediction at the same frequencies.
func (s *Sites) distortion() ([]DistortionPoint, string) {
	if s.Ref < 0 {
		return nil, "neither site compared the output with the uncut model (the site that simulates the output does, in real time)"
	}
	r, m := s.Runs[s.Ref], s.Model[s.Ref]
	if r.SignalsFile == "" {
		return nil, fmt.Sprintf("%s has no signals file (hilrig run --signals): the distortion over frequency is measured from it", r.Dir)
	}
	if s.Tau <= 0 {
		return nil, "the one-way delays were not measured both ways (each site's time exchanges with the other answered)"
	}
	lm, err := modelfile.LoadModel(m.Model, nil)
	if err != nil {
		return nil, fmt.Sprintf("couple cannot load model %s: %v", m.Model, err)
	}
	inputs := inputNames(lm.Plant)
	if len(inputs) != 1 {
		return nil, fmt.Sprintf("model %s has %d inputs; the distortion is measured for a model with one", m.Model, len(inputs))
	}
	output := m.Output.Signal
	spectra, err := readSpectra(r.SignalsFile, m.Endpoint+"."+inputs[0], m.Endpoint+"."+output, m.Endpoint+".ideal."+output)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", r.SignalsFile, err)
	}
	tau := time.Duration(math.Round(s.Tau * 1e9))
	ex := time.Duration(math.Round(s.Exchange * 1e9))
	// The main lobe of each line, in steps of a quarter bin.
	const lobe, steps = 2, 8
	var around []float64
	for _, om := range spectra.omega {
		for k := -steps; k <= steps; k++ {
			around = append(around, max(om+float64(float64(k)*lobe*spectra.bin/steps), spectra.bin/steps))
		}
	}
	for _, cut := range lm.CutNames() {
		if a, err := plant.Analyse(lm.Plant, cut, inputs[0], output, tau+ex, plant.LogSpace(0.1, 1000, 50)); err == nil {
			db, om := a.PeakDistortion()
			s.Ranking = append(s.Ranking, CutPeak{Cut: cut, DB: db, OmegaAt: om})
		}
	}
	slices.SortStableFunc(s.Ranking, func(a, b CutPeak) int { return cmp.Compare(a.DB, b.DB) })
	centre, err := plant.Analyse(lm.Plant, m.Cut, inputs[0], output, tau+ex, spectra.omega)
	if err != nil {
		return nil, fmt.Sprintf("couple: %v", err)
	}
	var points []DistortionPoint
	for k, om := range spectra.omega {
		points = append(points, DistortionPoint{Omega: om, Measured: detmath.Div(spectra.loop[k], spectra.uncut[k]) - 1, Predicted: centre.Distortion[k], Low: math.Inf(1)})
	}
	for _, d := range []time.Duration{tau + ex/2, tau + 3*ex/2} {
		a, err := plant.Analyse(lm.Plant, m.Cut, inputs[0], output, d, around)
		if err != nil {
			return nil, fmt.Sprintf("couple: %v", err)
		}
		for i, theta := range a.Distortion {
			p := &points[i/(2*steps+1)]
			p.Low, p.High = min(p.Low, detmath.Abs(theta)), max(p.High, detmath.Abs(theta))
		}
	}
	return points, ""
}

func inputNames(p *plant.Plant) []string {
	var names []string
	for _, in := range p.Inputs {
		names = append(names, in.Name)
	}
	return names
}

// spectra are the Fourier transforms of a loop's output and the uncut
// model's, at the frequencies where the input has power.
type spectra struct {
	bin         float64 // 2π/T, rad/s
	omega       []float64
	loop, uncut []complex128
}

// MaxSpectralLines is how many frequencies the distortion is measured at:
// the input's strongest peaks, to a hundredth of the strongest's
// amplitude.
// MaxSpectralSpan is how much of a run they are measured over, from its
// start: a longer one would resolve finer lines than a loop's response
// has, at a cost that grows with its square.
const (
	MaxSpectralLines = 8
	MaxSpectralSpan  = 60.0 // s
)

// readSpectra reads the input, the loop's output and the uncut model's
// from a signals file and transforms them over the run, each weighted by
// a Hann window (so that the run's edges, where neither is periodic, leak
// little into the lines), at the frequencies of the transform's bins
// (2πk/T for a run of length T, at most MaxSpectralSpan) where the input
// is strongest. Passes over the file: the run's length, the input's
// power, then the sums; its memory does not grow with the run.
func readSpectra(path, input, loop, uncut string) (*spectra, error) {
	f, _, err := lang.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseSpectra(f, input, loop, uncut)
}

func parseSpectra(f io.ReadSeeker, input, loop, uncut string) (*spectra, error) {
	var cols [3]int
	var first, last float64
	rows := 0
	var fields [][]byte
	pass := func(row func(t float64, v [3]float64)) error {
		rows = 0
		return scanLines(f, func(n int, line []byte) error {
			fields = splitFields(fields, line)
			if n == 1 {
				for k, name := range []string{input, loop, uncut} {
					i := slices.IndexFunc(fields, func(b []byte) bool { return string(b) == name })
					if i < 1 {
						return fmt.Errorf("no column %s", name)
					}
					cols[k] = i
				}
				return nil
			}
			var v [3]float64
			t, err := strconv.ParseFloat(string(fields[0]), 64)
			for k, i := range cols {
				if err != nil || i >= len(fields) {
					break
				}
				v[k], err = strconv.ParseFloat(string(fields[i]), 64)
			}
			if err != nil || len(fields) <= slices.Max(cols[:]) {
				return fmt.Errorf("line %d: not a row of numbers", n)
			}
			if rows > 0 && t-first > MaxSpectralSpan {
				return errStop
			}
			rows++
			row(t, v)
			return nil
		})
	}
	if err := pass(func(t float64, _ [3]float64) {
		if rows == 1 {
			first = t
		}
		last = t
	}); err != nil {
		return nil, err
	}
	span := last - first
	if rows < 16 || span <= 0 {
		return nil, errors.New("too short a run to transform")
	}
	// The input's power over the bins a run of this length resolves, up
	// to the Nyquist frequency of its rows, first; then the lines.
	bins := min(rows/2, 2048)
	power := make([]complex128, bins)
	var loopS, uncutS []complex128
	var omegas []float64
	transform := func(om []float64, sums [][]complex128) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		prev := first
		return pass(func(t float64, v [3]float64) {
			dt := t - prev // each row weighs the time since the last (rows come at the exchanges, unevenly in real time)
			prev = t
			w := 0.5 - float64(0.5*detmath.Cos(2*math.Pi*(t-first)/span))
			for k, o := range om {
				e := detmath.Mul(detmath.Cis(-o*(t-first)), complex(w*dt, 0))
				for j, sum := range sums {
					sum[k] += detmath.Mul(complex(v[j], 0), e)
				}
			}
		})
	}
	all := make([]float64, bins)
	for k := range all {
		all[k] = 2 * math.Pi * float64(k+1) / span
	}
	if err := transform(all, [][]complex128{power}); err != nil {
		return nil, err
	}
	// The lines are the peaks of the input's spectrum: a harmonic spreads
	// over the window's main lobe, and its neighbours say nothing more.
	var order []int
	for k := range bins {
		if (k == 0 || detmath.Abs(power[k]) >= detmath.Abs(power[k-1])) && (k == bins-1 || detmath.Abs(power[k]) >= detmath.Abs(power[k+1])) {
			order = append(order, k)
		}
	}
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(detmath.Abs(power[j]), detmath.Abs(power[i])) })
	strongest := detmath.Abs(power[order[0]])
	if strongest == 0 {
		return nil, fmt.Errorf("the input %s does not change over the run: nothing drives the loop", input)
	}
	for _, k := range order[:min(MaxSpectralLines, len(order))] {
		if detmath.Abs(power[k]) >= strongest/100 {
			omegas = append(omegas, all[k])
		}
	}
	slices.Sort(omegas)
	loopS, uncutS = make([]complex128, len(omegas)), make([]complex128, len(omegas))
	inputS := make([]complex128, len(omegas))
	if err := transform(omegas, [][]complex128{inputS, loopS, uncutS}); err != nil {
		return nil, err
	}
	return &spectra{bin: 2 * math.Pi / span, omega: omegas, loop: loopS, uncut: uncutS}, nil
}

// DB is a magnitude in decibels, 20·log10|z|.
func DB(z complex128) float64 { return dB(detmath.Abs(z)) }

func dB(m float64) float64 { return 20 * detmath.Log10(m) }

// Words describes the join in a few lines, for a terminal.
func (s *Sites) Words() string {
	var b strings.Builder
	m := s.Model[0]
	fmt.Fprintf(&b, "%s cut at %s between two sites: %s and %s\n", m.Model, m.Cut, s.Site(0), s.Site(1))
	for i := range 2 {
		w := s.Peer[i].Wire
		fmt.Fprintf(&b, "  %s received %d messages from %s", s.Site(i), w.Messages, s.Site(1-i))
		if d := w.OneWayDelay; d != nil && w.Messages > 0 {
			fmt.Fprintf(&b, ", one-way delay p50 %.3f ms (mean %.3f, p99 %.3f)", d.P50*1e3, d.Mean*1e3, d.P99*1e3)
		}
		fmt.Fprintf(&b, ", %d missed, %d late", w.Missed, w.Late)
		if o := s.Offset[i]; o != nil {
			fmt.Fprintf(&b, ", its clock %+.6f s from %s's", *o, s.Site(1-i))
			if d := s.WallDisagreement[i]; d != nil {
				fmt.Fprintf(&b, " (wall clocks %+.1f µs apart)", *d*1e6)
			}
		}
		b.WriteString("\n")
	}
	if s.Ref >= 0 {
		o := s.Model[s.Ref].Output
		fmt.Fprintf(&b, "  %s: %s strayed from the uncut model by at most %.3g, %.2f %% of its peak\n", s.Site(s.Ref), o.Signal, o.MaxError, 100*o.OfPeak)
	}
	if s.Why != "" {
		fmt.Fprintf(&b, "  distortion over frequency not measured: %s\n", s.Why)
	}
	if r := s.ranking(); r != "" {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	for _, p := range s.Distortion {
		fmt.Fprintf(&b, "  at %.3g rad/s: distortion %.1f dB measured, %.1f dB predicted (%.1f to %.1f)\n", p.Omega, DB(p.Measured), DB(p.Predicted), dB(p.Low), dB(p.High))
	}
	return b.String()
}

// sitesView is the join as the page shows it.
type sitesView struct {
	About      string
	LinkHead   []string
	Links      [][]string
	Notes      []string
	Output     string
	Distortion [][]string
	Verdict    string
}

func (s *Sites) view() *sitesView {
	m := s.Model[0]
	v := &sitesView{About: fmt.Sprintf("%s cut at %s, exchanging every %s: %s %s; %s %s. The coupling variables cross the network between them in the wire protocol. Each row is what one site measured of the direction that reaches it, from the other site's stamps and the clock its time exchanges estimated.",
		m.Model, m.Cut, seconds3(s.Exchange), s.Site(0), side(s.Runs[0], s.Ref == 0), s.Site(1), side(s.Runs[1], s.Ref == 1))}
	v.LinkHead = []string{"direction (measured at)", "messages", "missed", "late", "duplicates", "one-way p50", "mean", "p99", "jitter (max − min)", "clock of the other site", "wall clocks apart", "peer lost"}
	for i := range 2 {
		w := s.Peer[i].Wire
		row := []string{fmt.Sprintf("%s → %s (%s)", s.Site(1-i), s.Site(i), s.Site(i)), strconv.FormatUint(w.Messages, 10), strconv.FormatUint(w.Missed, 10), strconv.FormatUint(w.Late, 10), strconv.FormatUint(w.Duplicates, 10)}
		if d := w.OneWayDelay; d != nil && w.Messages > 0 {
			row = append(row, seconds3(d.P50), seconds3(d.Mean), seconds3(d.P99), seconds3(d.Max-d.Min))
		} else {
			row = append(row, "", "", "", "")
		}
		clock, apart := "not known", ""
		if o := s.Offset[i]; o != nil {
			clock = fmt.Sprintf("%+.6f s", *o)
			if w.ClockDrift != nil {
				clock += fmt.Sprintf(", drift %+.1f ppm", *w.ClockDrift*1e6)
			}
		}
		if d := s.WallDisagreement[i]; d != nil {
			apart = fmt.Sprintf("%+.1f µs", *d*1e6)
		}
		row = append(row, clock, apart, strconv.FormatUint(w.PeerLost, 10))
		v.Links = append(v.Links, row)
	}
	v.Notes = append(v.Notes, "clock of the other site: its run's clock less this one's, at the end; wall clocks apart: that less the difference of the two runs' starts on each site's wall clock, which is how far the sites' wall clocks disagree as the time exchanges see it (zero when both rigs share a clock; an NTP-synchronised pair of labs, a millisecond or so).")
	for i, r := range s.Runs {
		for _, e := range r.Summary.Events {
			if strings.HasPrefix(e.Kind, "peer_") {
				v.Notes = append(v.Notes, fmt.Sprintf("%s at %.6f s: %s", s.Site(i), e.AtS, e.Detail))
			}
		}
		if r.Summary.Stopped != "duration" {
			v.Notes = append(v.Notes, fmt.Sprintf("%s stopped: %s", s.Site(i), r.Summary.Stopped))
		}
	}
	if s.Ref >= 0 {
		o := s.Model[s.Ref].Output
		v.Output = fmt.Sprintf("Against the uncut model (the single-location reference, run beside the loop at %s): %s strayed by at most %.3g, %.2f %% of its peak of %.3g; RMS %.3g.", s.Site(s.Ref), o.Signal, o.MaxError, 100*o.OfPeak, o.Peak, o.RMSError)
	}
	if s.Why != "" {
		v.Notes = append(v.Notes, "Distortion over frequency not measured: "+s.Why)
	}
	within := 0
	for _, p := range s.Distortion {
		mark := "✘"
		if p.Within() {
			mark, within = "✔", within+1
		}
		v.Distortion = append(v.Distortion, []string{fmt.Sprintf("%.3g", p.Omega), fmt.Sprintf("%.1f dB", DB(p.Measured)), fmt.Sprintf("%.1f dB", DB(p.Predicted)), fmt.Sprintf("%.1f to %.1f dB", dB(p.Low), dB(p.High)), mark})
	}
	if r := s.ranking(); r != "" {
		v.Notes = append(v.Notes, strings.ToUpper(r[:1])+r[1:]+".")
	}
	if len(s.Distortion) > 0 {
		peak := slices.MaxFunc(s.Distortion, func(a, b DistortionPoint) int { return cmp.Compare(detmath.Abs(a.Measured), detmath.Abs(b.Measured)) })
		v.Verdict = fmt.Sprintf("Distortion Θ = (P − Rd)/Rd (paper 001) at the frequencies the input drives most, measured from the loop's %s and the uncut model's, beside couple's prediction for the delay measured: %s each way, plus one exchange (a value waits for the next exchange to be taken up and is held through it); the band is what the measurement can read for that prediction: the wait none to a whole exchange, and the transform's Hann window reading a mean of Θ over ±2 bins (2π/T, T the run). %d of %d lie in the band; the largest measured is %.1f dB at %.3g rad/s.",
			s.Model[s.Ref].Output.Signal, seconds3(s.Tau), within, len(s.Distortion), DB(peak.Measured), peak.Omega)
	}
	return v
}

// ranking says where the loop's cut ranks among the model's, as couple
// predicts their peak distortion for the delay measured.
func (s *Sites) ranking() string {
	if len(s.Ranking) < 2 {
		return ""
	}
	cut := s.Model[0].Cut
	var words []string
	for _, r := range s.Ranking {
		words = append(words, fmt.Sprintf("%s %.1f dB at %.3g rad/s", r.Cut, r.DB, r.OmegaAt))
	}
	peaks := "couple's peak distortion for the delay measured: " + strings.Join(words, ", ")
	if best := s.Ranking[0]; best.Cut != cut {
		i := slices.IndexFunc(s.Ranking, func(r CutPeak) bool { return r.Cut == cut })
		if i < 0 {
			return peaks
		}
		return fmt.Sprintf("%s: %s would distort less than %s, by %.1f dB at the peak", peaks, best.Cut, cut, s.Ranking[i].DB-best.DB)
	}
	return fmt.Sprintf("%s: %s distorts least", peaks, cut)
}

// side says what a site's rig simulates.
func side(r *Run, ref bool) string {
	if ref {
		return "simulates the part that computes the output, and compares it with the uncut model run beside it"
	}
	return "simulates the other side of the cut"
}

// seconds3 writes seconds in ms or µs, three significant digits.
func seconds3(s float64) string {
	if math.Abs(s) < 1e-3 {
		return fmt.Sprintf("%.3g µs", s*1e6)
	}
	return fmt.Sprintf("%.3g ms", s*1e3)
}
