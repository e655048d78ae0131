package profiles

import (
	"reflect"

	"github.com/hilrig/hilrig/profiles/lang"
	"go.yaml.in/yaml/v4"
)

// The schema of a profile. The yaml tag names the key (",required" when it
// must be given), doc says what it means and default what it is when absent;
// the reference in profiles/README.md is generated from these definitions.

// Profile is a reusable description of an emulated network: hops, flows,
// their synthetic traffic and a schedule of timed changes.
type Profile struct {
	Extends     string          `yaml:"extends" doc:"start from another profile (a shipped name, or a path relative to this file) and override parts of it: mappings merge key by key, a list or a different alternative (another loss model, jitter distribution or traffic source) replaces, null deletes"`
	Name        string          `yaml:"name" doc:"short name, shown in reports" default:"the file name"`
	Description string          `yaml:"description" doc:"one line saying what the profile models and where its numbers come from"`
	Seed        uint64          `yaml:"seed" doc:"seed of every random stream; the same seed reproduces a run exactly" default:"0"`
	Duration    lang.Duration   `yaml:"duration,required" doc:"length of a sim run (virtual time)"`
	Hops        lang.Map[Hop]   `yaml:"hops,required" doc:"the network's unidirectional stages, by name"`
	Flows       lang.Map[Flow]  `yaml:"flows,required" doc:"streams of frames along routes of hops, by name"`
	Schedule    []ScheduleEntry `yaml:"schedule" doc:"timed changes, in any order"`

	phases  []Phase          // built from the schedule
	periods []recurringEntry // the schedule's recurring entries, for CheckPeriods
}

// HopSettings are a hop's parameters; the schedule can change each of them.
// Each is one of the engine's hop keys (hop tag): their meaning and default
// are the engine's (emulator.HopKeys).
type HopSettings struct {
	Rate      *lang.HopRate     `yaml:"rate" hop:""`
	Delay     *HopDelay         `yaml:"delay" hop:""`
	Queue     *lang.Limit       `yaml:"queue" hop:""`
	Overhead  *lang.Size        `yaml:"overhead" hop:""`
	PerFrame  *lang.Duration    `yaml:"per_frame" hop:""`
	Loss      *Loss             `yaml:"loss" hop:""`
	Jitter    *Jitter           `yaml:"jitter" hop:""`
	Reorder   *Reorder          `yaml:"reorder" hop:""`
	Duplicate *lang.Probability `yaml:"duplicate" hop:""`
	Corrupt   *Corrupt          `yaml:"corrupt" hop:""`
	Flap      *Flap             `yaml:"flap" hop:""`
}

// Flap is a rate that flaps.
type Flap struct {
	Rate  lang.Rate     `yaml:"rate,required" doc:"the rate in each window"`
	Every lang.Duration `yaml:"every,required" doc:"a window opens every every"`
	For   lang.Duration `yaml:"for,required" doc:"how long each window lasts (at most every)"`

	none bool // written none: no flap
}

func (l *Loss) SetNone()       { *l = Loss{none: true} }
func (l *Loss) IsNone() bool   { return l.none }
func (j *Jitter) SetNone()     { *j = Jitter{none: true} }
func (j *Jitter) IsNone() bool { return j.none }
func (c *Corrupt) SetNone()    { *c = Corrupt{none: true} }
func (c *Corrupt) IsNone() bool {
	return c.none
}
func (f *Flap) SetNone()     { *f = Flap{none: true} }
func (f *Flap) IsNone() bool { return f.none }

// Loss is one of the loss models.
type Loss struct {
	Random  *lang.Probability `yaml:"random" doc:"each frame is lost independently with this probability"`
	Gilbert *Gilbert          `yaml:"gilbert" doc:"Gilbert–Elliott two-state model (netem's gemodel)"`
	Markov4 *Markov4          `yaml:"markov4" doc:"4-state model of Salsano et al. (netem's loss state)"`
	Trace   *TraceRef         `yaml:"trace" doc:"a recorded series of which frames were lost, replayed in order: the k-th frame of each flow through the hop takes the k-th fate (see Trace-driven hops)"`

	none bool // written none: no loss
}

func (*Loss) OneOf() {}

// Gilbert is the Gilbert–Elliott model with netem's parameters.
type Gilbert struct {
	P        lang.Probability  `yaml:"p,required" doc:"probability of moving from Good to Bad, per frame"`
	R        *lang.Probability `yaml:"r" doc:"probability of moving from Bad to Good, per frame" default:"1 − p"`
	LossBad  *lang.Probability `yaml:"loss_bad" doc:"loss probability in Bad (netem's 1−h)" default:"100%"`
	LossGood *lang.Probability `yaml:"loss_good" doc:"loss probability in Good (netem's 1−k)" default:"0%"`
}

// Markov4 is the 4-state loss model with netem's parameters.
type Markov4 struct {
	P13 lang.Probability  `yaml:"p13,required" doc:"gap → lost in a burst"`
	P31 *lang.Probability `yaml:"p31" doc:"lost in a burst → gap" default:"1 − p13"`
	P32 *lang.Probability `yaml:"p32" doc:"lost in a burst → received in a burst" default:"0%"`
	P23 *lang.Probability `yaml:"p23" doc:"received in a burst → lost in a burst" default:"100%"`
	P14 *lang.Probability `yaml:"p14" doc:"gap → isolated loss" default:"0%"`
}

// Jitter is the distribution of the random extra delay.
type Jitter struct {
	Dist        JitterDist        `yaml:"dist,required" doc:"uniform, normal, pareto, paretonormal or empirical"`
	Spread      *lang.Duration    `yaml:"spread" doc:"uniform: half-width; the extra delay is uniform on [−spread, +spread]"`
	Sigma       *lang.Duration    `yaml:"sigma" doc:"normal, pareto, paretonormal: standard deviation"`
	Mean        *lang.Duration    `yaml:"mean" doc:"pareto, paretonormal: mean extra delay"`
	File        *string           `yaml:"file" doc:"empirical: file of measured delays, one per line, relative to the profile"`
	Unit        *lang.TimeUnit    `yaml:"unit" doc:"empirical: unit of bare numbers in the file (ns, us, ms, s)" default:"none: each value has its unit"`
	Correlation *lang.Correlation `yaml:"correlation" doc:"ρ of the AR(1) process on the extra delay, in (−1, 1)" default:"0"`

	readFrom string // the file the empirical delays were read from
	none     bool   // written none: no jitter
}

// Reorder is "in_order", "allowed", or {p, gap}.
type Reorder struct {
	Mode string
	P    lang.Probability `yaml:"p,required" doc:"probability that an eligible frame is sent at once"`
	Gap  *int             `yaml:"gap" doc:"frames delayed normally before one becomes eligible, plus one" default:"1"`
}

func (r *Reorder) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	if n.Kind == yaml.ScalarNode && !lang.IsNull(n) {
		if err := lang.ParseEnum(&r.Mode, n.Value, "a reorder rule", "in_order", "allowed"); err != nil {
			d.Errorf(n, path, "%q %v, or {p, gap}", n.Value, err)
		}
		return
	}
	r.Mode = "gap"
	type plain Reorder
	d.DecodeStruct(n, reflect.ValueOf((*plain)(r)).Elem(), path)
}

func (Reorder) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a reorder rule", Example: "in_order, allowed, {p: 5%, gap: 3}"}
}

// Corrupt is one of the corruption models.
type Corrupt struct {
	BER   *lang.BitErrorRate `yaml:"ber" doc:"bit error rate: every bit flips independently with this probability"`
	Frame *lang.Probability  `yaml:"frame" doc:"probability that a frame has exactly one flipped bit"`

	none bool // written none: no corruption
}

func (*Corrupt) OneOf() {}

// Hop is one unidirectional stage of the network.
type Hop struct {
	HopSettings
	Bus *Bus `yaml:"bus" doc:"makes the hop a shared bus: its flows contend for one channel as stations (see Shared buses); the bus has its own rate, queue and overhead, and the hop's delay and impairments apply after it" default:"none: a point-to-point hop"`
}

// Flow is a stream of frames along a route.
type Flow struct {
	Route   []HopName `yaml:"route,required" doc:"the hops the flow crosses, in order"`
	Traffic *Traffic  `yaml:"traffic" doc:"synthetic source used in sim; a flow bound to hardware needs none" default:"none"`
	Trace   *bool     `yaml:"trace" doc:"write this flow's frames to the trace" default:"true"`
	Role    *FlowRole `yaml:"role" doc:"to-plant: the flow that carries the controller's frames to the plant; to-controller: the one that carries the plant's back. A bench binds a role to the flow that has it (see Flow roles); one flow a role" default:"none"`
}

// Traffic is one of the synthetic sources.
type Traffic struct {
	CBR     *CBR     `yaml:"cbr" doc:"constant bit rate: one frame every interval"`
	Poisson *Poisson `yaml:"poisson" doc:"Poisson arrivals: exponential gaps with mean size·8/rate"`
	OnOff   *OnOff   `yaml:"onoff" doc:"ON/OFF: constant rate while ON, silent while OFF"`
}

func (*Traffic) OneOf() {}

// CBR is a constant-bit-rate source.
type CBR struct {
	Interval *lang.Duration `yaml:"interval" doc:"time between frames (give interval or rate)"`
	Rate     *lang.Rate     `yaml:"rate" doc:"bit rate; frames are size·8/rate apart (give interval or rate)"`
	Size     lang.Size      `yaml:"size,required" doc:"frame size"`
	Start    lang.Duration  `yaml:"start" doc:"time of the first frame" default:"0s"`
	Stop     *lang.Duration `yaml:"stop" doc:"no frame at or after this time" default:"never"`
}

// Poisson is a source with exponential gaps.
type Poisson struct {
	Rate  lang.Rate      `yaml:"rate,required" doc:"mean bit rate"`
	Size  lang.Size      `yaml:"size,required" doc:"frame size"`
	Start lang.Duration  `yaml:"start" doc:"time the source switches on" default:"0s"`
	Stop  *lang.Duration `yaml:"stop" doc:"no frame at or after this time" default:"never"`
}

// OnOff alternates ON and OFF periods.
type OnOff struct {
	Rate  lang.Rate      `yaml:"rate,required" doc:"bit rate while ON: one frame every size·8/rate, the first at the start of each ON period"`
	Size  lang.Size      `yaml:"size,required" doc:"frame size"`
	On    Period         `yaml:"on,required" doc:"length of each ON period"`
	Off   Period         `yaml:"off,required" doc:"length of each OFF period"`
	Start lang.Duration  `yaml:"start" doc:"start of the first ON period" default:"0s"`
	Stop  *lang.Duration `yaml:"stop" doc:"no frame at or after this time" default:"never"`
}

// Period is the length of ON or OFF periods: a duration (constant), or
// {dist: exponential, mean: 3s}, or {dist: pareto, mean: 3s, shape: 1.5}.
type Period struct {
	Dist  PeriodDist    `yaml:"dist,required" doc:"constant, exponential or pareto"`
	Mean  lang.Duration `yaml:"mean,required" doc:"mean length"`
	Shape *float64      `yaml:"shape" doc:"Pareto shape α > 1 (scale is mean·(α−1)/α)" default:"1.5"`
}

func (p *Period) DecodeNode(d *lang.Decoder, n *yaml.Node, path lang.Path) {
	type plain Period
	if d.ScalarOr(n, path, &p.Mean, (*plain)(p)) {
		p.Dist = "constant"
	}
}

func (Period) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a period", Example: "3s, {dist: exponential, mean: 3s}, {dist: pareto, mean: 3s, shape: 1.5}"}
}

// PeriodDist is how ON and OFF period lengths are drawn.
type PeriodDist string

func (p *PeriodDist) ParseScalar(s string) error {
	return lang.ParseEnum(p, s, "a period distribution", "constant", "exponential", "pareto")
}

func (PeriodDist) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "constant, exponential or pareto", Example: ""}
}

// ScheduleEntry is one timed change: at `at` (for `for`, then reverted) set
// hop parameters, take a hop's output down, or switch a flow's traffic.
type ScheduleEntry struct {
	At        lang.Duration  `yaml:"at,required" doc:"when the change takes effect"`
	For       *lang.Duration `yaml:"for" doc:"how long it lasts before it is reverted; for a ramp, how long the ramp takes" default:"until the end"`
	Every     *lang.Duration `yaml:"every" doc:"repeat the entry with this period (at least for)" default:"no repeat"`
	Count     *int64         `yaml:"count" doc:"with every: how many times in all" default:"as many as fit before the end"`
	Phase     PhaseName      `yaml:"phase" doc:"name the entry's windows, so reports can say what happened during them; an entry may only name a phase"`
	Ramp      *Ramp          `yaml:"ramp" doc:"change rate, delay or random loss gradually, from from to to over for, in 100 equal steps; the value stays at to afterwards"`
	Hop       HopName        `yaml:"hop" doc:"the hop to change (with hop parameters or outage)"`
	Flow      FlowName       `yaml:"flow" doc:"the flow whose traffic to switch"`
	Outage    *OutageMode    `yaml:"outage" doc:"drop: frames that would leave the hop are dropped; hold: they are held and all released when the outage ends"`
	HoldLimit *lang.Limit    `yaml:"hold_limit" doc:"bound on the hold buffer; frames over it are outage_drop" default:"unlimited"`
	Traffic   *Switch        `yaml:"traffic" doc:"on or off"`
	HopSettings
}

// Ramp changes hop parameters gradually.
type Ramp struct {
	Rate  *RateRamp  `yaml:"rate" doc:"from one rate to another"`
	Delay *DelayRamp `yaml:"delay" doc:"from one delay to another"`
	Loss  *LossRamp  `yaml:"loss" doc:"from one random loss probability to another"`
}

// RateRamp goes from one rate to another.
type RateRamp struct {
	From lang.Rate `yaml:"from,required" doc:"rate at the start"`
	To   lang.Rate `yaml:"to,required" doc:"rate at the end"`
}

// DelayRamp goes from one delay to another.
type DelayRamp struct {
	From lang.Duration `yaml:"from,required" doc:"delay at the start"`
	To   lang.Duration `yaml:"to,required" doc:"delay at the end"`
}

// LossRamp goes from one random loss probability to another.
type LossRamp struct {
	From lang.Probability `yaml:"from,required" doc:"loss at the start"`
	To   lang.Probability `yaml:"to,required" doc:"loss at the end"`
}
