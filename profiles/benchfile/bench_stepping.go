package benchfile

import (
	"slices"
	"strings"
	"time"

	"github.com/hilrig/hilrig/profiles/lang"
)

// ModelStepping is how a model endpoint's part steps, and the supervisor
// that watches it keep pace with the hardware (paper 004).
type ModelStepping struct {
	Stepping     *SteppingName   `yaml:"stepping" doc:"hold: step at every exchange on the input last received (classic HIL); wait: step only when an input valid for the step has arrived (paper 004's data-driven stepping, Eq. 1), so that the model's time falls behind when data is late" default:"hold"`
	MaxAge       *lang.Duration  `yaml:"maxage" doc:"wait: a message stamped T is valid for a step to h+Δh when h+Δh−maxage ≤ T ≤ h+Δh (paper 004: 300ms)" default:"3 exchanges"`
	Timeout      *lang.Duration  `yaml:"timeout" doc:"wait: with no valid data for this long the run stops, as a failure (paper 004's RMQFMU: 60s)" default:"60s"`
	NominalDelay *lang.Duration  `yaml:"nominal_delay" doc:"wait: a message is stamped with the time it entered the rig less this, the device's nominal delay to the rig (for devices that send no timestamp)" default:"0s"`
	StepCost     *lang.Duration  `yaml:"step_cost" doc:"sim: how long a step takes to compute, which bounds how fast a model that fell behind catches up (paper 004's Table 5: 2.5–3.4ms); a real-time run takes what it takes" default:"0s"`
	Supervisor   *SupervisorSpec `yaml:"supervisor" doc:"watch the discrepancy t_diff between the model's time and the wall clock (paper 004)" default:"none"`
	StandIn      *StandInName    `yaml:"stand_in" doc:"sim: how the hardware's part, standing in for the device, sends: clock, at every exchange as the rig's part does; or reply, at once in answer to each frame it receives, its part stepped by one of the sender's periods a frame so that its sampled blocks update on the sample they answer (a controller answering each measurement, as paper 002's does)" default:"clock"`
}

// StandInName is clock or reply.
type StandInName string

func (v *StandInName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a way to send", "clock", "reply")
}

func (StandInName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "clock or reply", Example: ""}
}

// SteppingName is hold or wait.
type SteppingName string

func (v *SteppingName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "a stepping mode", "hold", "wait")
}

func (SteppingName) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "hold or wait", Example: ""} }

// SupervisorSpec configures paper 004's time-discrepancy supervisor.
type SupervisorSpec struct {
	ThetaSafe   *lang.Duration    `yaml:"theta_safe,required" doc:"out of sync while t_diff > theta_safe (paper 004: 299ms)"`
	Check       *lang.Duration    `yaml:"check" doc:"interval Δ at which t_diff is computed between steps: a model that stalls is flagged within Δ (not stated in paper 004)" default:"10ms"`
	Jump        *int              `yaml:"jump" doc:"J: while out of sync, steps of up to J exchanges where queued data allows (paper 004: 3 in its drop, 1 in its degradation)" default:"1"`
	Resync      *lang.Duration    `yaml:"resync" doc:"hysteresis: back in sync once t_diff ≤ theta_safe − resync (paper 004: none)" default:"0s"`
	OnOutOfSync *OutOfSyncName    `yaml:"on_out_of_sync" doc:"shadow: command nothing (or the safe values) until back in sync; stop: end the run as a failure; notify: only tell" default:"shadow"`
	Safe        lang.Map[float64] `yaml:"safe" doc:"shadow: the values sent instead of nothing while out of sync, by the name of each variable the rig sends" default:"send nothing"`
}

// OutOfSyncName is shadow, stop or notify.
type OutOfSyncName string

func (v *OutOfSyncName) ParseScalar(s string) error {
	return lang.ParseEnum(v, s, "an action", "shadow", "stop", "notify")
}

func (OutOfSyncName) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "shadow, stop or notify", Example: ""}
}

// Stepping is a model endpoint's stepping, resolved and checked.
type Stepping struct {
	// Replies: in sim the hardware's stand-in sends in answer to each
	// frame it receives rather than at every exchange.
	Replies      bool
	Wait         bool
	MaxAge       time.Duration
	Timeout      time.Duration
	NominalDelay time.Duration
	StepCost     time.Duration
	Supervisor   *Supervisor
}

// Supervisor is a supervisor's configuration, resolved and checked.
type Supervisor struct {
	ThetaSafe, Check, Resync time.Duration
	Jump                     int
	OnOutOfSync              string
	// Safe are the values sent while out of sync, in the order of the
	// variables the rig sends; nil: nothing is sent.
	Safe []float64
}

// check resolves the stepping of a model endpoint at path; nil when it
// is a plain hold without supervisor. ok is false after a problem.
func (s ModelStepping) check(d *lang.Decoder, path string, bm *BenchModel) (*Stepping, bool) {
	c := &steppingCheck{d: d, path: path, ok: true}
	wait := s.Stepping != nil && *s.Stepping == "wait"
	replies := s.StandIn != nil && *s.StandIn == "reply"
	if replies && len(bm.Hardware.In()) == 0 {
		c.errorAt("stand_in", "cut %s sends nothing to the hardware's part, so it has nothing to answer", bm.Cut)
	}
	if !wait {
		for key, given := range map[string]bool{"maxage": s.MaxAge != nil, "timeout": s.Timeout != nil, "nominal_delay": s.NominalDelay != nil, "step_cost": s.StepCost != nil} {
			if given {
				c.errorAt(key, "only a model that steps on data has %s; add stepping: wait", key)
			}
		}
	}
	if !wait && s.Supervisor == nil && !replies {
		return nil, c.ok
	}
	st := &Stepping{
		Replies:      replies,
		Wait:         wait,
		MaxAge:       c.positive("maxage", s.MaxAge, 3*bm.Exchange),
		Timeout:      c.positive("timeout", s.Timeout, 60*time.Second),
		NominalDelay: c.atLeastZero("nominal_delay", s.NominalDelay),
		StepCost:     c.atLeastZero("step_cost", s.StepCost),
	}
	if wait && len(bm.Simulated.In()) == 0 {
		c.errorAt("stepping", "cut %s sends nothing to the rig's part, so it has no data to step on", bm.Cut)
	}
	if s.Supervisor != nil {
		st.Supervisor = c.supervisor(s.Supervisor, wait, bm)
	}
	return st, c.ok
}

// steppingCheck checks the stepping keys of a model endpoint at path; ok
// is false after a problem.
type steppingCheck struct {
	d    *lang.Decoder
	path string
	ok   bool
}

func (c *steppingCheck) errorAt(key, format string, args ...any) {
	c.d.ErrorAt(c.path+"."+key, format, args...)
	c.ok = false
}

// positive is v, which must be positive; def when not given.
func (c *steppingCheck) positive(key string, v *lang.Duration, def time.Duration) time.Duration {
	if v == nil {
		return def
	}
	if *v <= 0 {
		c.errorAt(key, "must be positive")
	}
	return time.Duration(*v)
}

// atLeastZero is v, which must not be negative; 0 when not given.
func (c *steppingCheck) atLeastZero(key string, v *lang.Duration) time.Duration {
	if v == nil {
		return 0
	}
	if *v < 0 {
		c.errorAt(key, "must not be negative")
	}
	return time.Duration(*v)
}

// supervisor resolves and checks a model endpoint's supervisor.
func (c *steppingCheck) supervisor(sup *SupervisorSpec, wait bool, bm *BenchModel) *Supervisor {
	cfg := &Supervisor{
		ThetaSafe:   c.positive("supervisor.theta_safe", sup.ThetaSafe, 0),
		Check:       c.positive("supervisor.check", sup.Check, 10*time.Millisecond),
		Resync:      c.atLeastZero("supervisor.resync", sup.Resync),
		Jump:        1,
		OnOutOfSync: "shadow",
	}
	if sup.Jump != nil {
		if cfg.Jump = *sup.Jump; cfg.Jump < 1 {
			c.errorAt("supervisor.jump", "must be at least 1")
		}
		if cfg.Jump > 1 && !wait {
			c.errorAt("supervisor.jump", "only a model that steps on data can jump to queued data; add stepping: wait")
		}
	}
	if cfg.Resync >= cfg.ThetaSafe && cfg.ThetaSafe > 0 {
		c.errorAt("supervisor.resync", "must be less than theta_safe (%v)", cfg.ThetaSafe)
	}
	if sup.OnOutOfSync != nil {
		cfg.OnOutOfSync = string(*sup.OnOutOfSync)
	}
	if sup.Safe.Len() > 0 {
		if cfg.OnOutOfSync != "shadow" {
			c.errorAt("supervisor.safe", "safe values are what a shadow sends; on_out_of_sync is %s", cfg.OnOutOfSync)
		}
		cfg.Safe = c.safeValues(sup.Safe, bm)
	}
	return cfg
}

// safeValues are what a shadow sends while out of sync, one for each
// variable the rig sends across the cut, in their order.
func (c *steppingCheck) safeValues(safe lang.Map[float64], bm *BenchModel) []float64 {
	sends := bm.Simulated.Out()
	values := make([]float64, len(sends))
	for i, name := range safe.Names {
		at := slices.Index(sends, name)
		if at < 0 {
			c.errorAt("supervisor.safe."+name, "is not a variable the rig sends across cut %s (it sends %s)%s", bm.Cut, strings.Join(sends, ", "), lang.DidYouMean(name, sends))
			continue
		}
		values[at] = *safe.Values[i]
	}
	for _, name := range sends {
		if safe.Index(name) < 0 {
			c.errorAt("supervisor.safe", "gives no safe value for %s (give one for each of %s)", name, strings.Join(sends, ", "))
		}
	}
	return values
}
