package supervisor

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Action is what the rig does when a model falls out of sync.
type Action uint8

const (
	// Shadow: notify, and command nothing (or only the safe levels) until
	// the model is back in sync: paper 004's digital shadow.
	Shadow Action = iota
	// Stop: notify and end the run, as a failure.
	Stop
	// Notify: notify only; the model keeps commanding.
	Notify
)

func (a Action) String() string {
	return [...]string{"shadow", "stop", "notify"}[a]
}

// Config is a supervisor's parameters (paper 004's, with its values in
// its experiments).
type Config struct {
	// ThetaSafe: out of sync while t_diff > ThetaSafe (299 ms).
	ThetaSafe time.Duration
	// Resync: back in sync once t_diff ≤ ThetaSafe − Resync. Paper 004
	// has no hysteresis (0), and its flag flaps on one-step violations.
	Resync time.Duration
	// Check is the interval Δ at which t_diff is computed between steps,
	// so that a model that stalls is flagged within Δ of crossing (not
	// stated in the paper).
	Check time.Duration
	// Jump J: while out of sync, a step may be up to J·Δh long where
	// queued data allows (3 in the drop experiment; 1, no jump, in the
	// degradation).
	Jump int
	// OnOutOfSync is what to do.
	OnOutOfSync Action
}

// Episode is one stretch of time out of sync.
type Episode struct {
	Start, End time.Duration // wall clock, from the run's start; End < 0 while it lasts
	// Peak is the largest t_diff observed in the episode (after steps and
	// at the checks between them).
	Peak  time.Duration
	Steps int // model steps taken while out of sync
	// StepSizes counts the steps by length in Δh: StepSizes[k-1] steps of
	// k·Δh.
	StepSizes []uint64
	// Disrupted is set when the episode overlapped a disruption of the
	// network (a named phase of the profile's schedule).
	Disrupted bool
}

// Supervisor is one model endpoint's watchdog. It is used from one
// goroutine; a real-time run's background check reports to it through
// Alarm.
type Supervisor struct {
	cfg        Config
	dh         time.Duration
	flagged    bool
	flaggedNow atomic.Bool // flagged, for other goroutines
	episodes   []Episode

	streak int           // consecutive steps with t_diff > θ_safe
	runs   []uint64      // runs[k-1]: stretches of k consecutive violating steps (paper 004's Figure 9)
	peak   time.Duration // the largest t_diff observed
}

// New returns a supervisor of a model stepping every dh.
func New(cfg Config, dh time.Duration) (*Supervisor, error) {
	switch {
	case cfg.ThetaSafe <= 0:
		return nil, fmt.Errorf("theta_safe must be positive")
	case cfg.Check <= 0:
		return nil, fmt.Errorf("check must be positive")
	case cfg.Jump < 1:
		return nil, fmt.Errorf("jump must be at least 1")
	case cfg.Resync < 0 || cfg.Resync >= cfg.ThetaSafe:
		return nil, fmt.Errorf("resync must be in [0, theta_safe)")
	}
	return &Supervisor{cfg: cfg, dh: dh, episodes: make([]Episode, 0, 16), runs: make([]uint64, 64)}, nil
}

// FlaggedNow is Flagged, safe to call from another goroutine than the
// one that uses the supervisor.
func (s *Supervisor) FlaggedNow() bool { return s.flaggedNow.Load() }

// Config is the supervisor's configuration.
func (s *Supervisor) Config() Config { return s.cfg }

// Flagged reports whether the model is out of sync.
func (s *Supervisor) Flagged() bool { return s.flagged }

// Transition is a change of the flag.
type Transition uint8

const (
	NoChange Transition = iota
	OutOfSync
	BackInSync
)

// Observe takes t_diff at wall time now (after a step, or at a check
// between steps) and says whether the flag changed: set when t_diff >
// θ_safe, cleared when t_diff ≤ θ_safe − resync. Every t_diff observed
// counts towards the peaks, the run's and the episode's.
func (s *Supervisor) Observe(now, tdiff time.Duration) Transition {
	s.peak = max(s.peak, tdiff)
	if s.flagged {
		ep := &s.episodes[len(s.episodes)-1]
		ep.Peak = max(ep.Peak, tdiff)
		if tdiff <= s.cfg.ThetaSafe-s.cfg.Resync {
			s.flagged = false
			s.flaggedNow.Store(false)
			ep.End = now
			return BackInSync
		}
		return NoChange
	}
	if tdiff > s.cfg.ThetaSafe {
		s.flagged = true
		s.flaggedNow.Store(true)
		// An episode is rare: its allocation is not on the per-step path.
		s.episodes = append(s.episodes, Episode{Start: now, End: -1, Peak: tdiff, StepSizes: make([]uint64, s.cfg.Jump)})
		return OutOfSync
	}
	return NoChange
}

// Stepped records a model step of size h (a multiple of Δh) that left the
// discrepancy at tdiff, and whether a disruption of the network is going
// on, when the step ends. The caller then Observes tdiff: the step belongs
// to the episode it ends in, and the discrepancy it left may end that
// episode.
func (s *Supervisor) Stepped(h, tdiff time.Duration, disrupted bool) {
	if s.flagged {
		ep := &s.episodes[len(s.episodes)-1]
		ep.Steps++
		if k := h / s.dh; k >= 1 && k <= time.Duration(len(ep.StepSizes)) { // not int: 32 bits on arm
			ep.StepSizes[k-1]++
		}
		ep.Disrupted = ep.Disrupted || disrupted
	}
	if tdiff > s.cfg.ThetaSafe {
		s.streak++
		return
	}
	s.endStreak()
}

func (s *Supervisor) endStreak() {
	if s.streak > 0 {
		s.runs[min(s.streak, len(s.runs))-1]++
		s.streak = 0
	}
}

// Disrupted marks the current episode as overlapping a disruption.
func (s *Supervisor) Disrupted() {
	if s.flagged {
		s.episodes[len(s.episodes)-1].Disrupted = true
	}
}

// InDisruptedEpisode reports whether the model is out of sync in an
// episode that overlapped a disruption: its skipped messages count as
// skipped during the disruption (paper 004's Tables 3 and 4).
func (s *Supervisor) InDisruptedEpisode() bool {
	return s.flagged && s.episodes[len(s.episodes)-1].Disrupted
}

// StepSize is the next step's length: Δh, or while out of sync up to J·Δh
// where the data allows, in whole multiples of Δh (paper 004: the largest
// step the newest queued message allows, newest − current, where current
// is the timestamp of the data the model last took up), and never beyond
// the wall clock (lag: how far the model's next step may go before it
// would run ahead).
func StepSize(dh time.Duration, jump int, flagged bool, newest, current, lag time.Duration) time.Duration {
	if !flagged || jump <= 1 {
		return dh
	}
	// In Durations: int is 32 bits on arm and 386, too few for hours of
	// microsecond steps.
	k := min((newest-current)/dh, lag/dh, time.Duration(jump))
	return max(1, k) * dh
}

// Episodes returns the out-of-sync episodes so far; one that lasts has
// End < 0.
func (s *Supervisor) Episodes() []Episode { return s.episodes }

// ViolatingRuns counts the stretches of consecutive steps with t_diff >
// θ_safe by their length: the returned slice's entry k−1 counts the
// stretches of k steps, the last entry those of its length or longer.
func (s *Supervisor) ViolatingRuns() []uint64 {
	out := make([]uint64, len(s.runs))
	copy(out, s.runs)
	if s.streak > 0 {
		out[min(s.streak, len(out))-1]++
	}
	return out
}

// Peak is the largest t_diff observed, after steps and at the checks
// between them: at least every episode's peak. A model that stalls
// reaches its largest discrepancy between steps, just before the step that
// catches up.
func (s *Supervisor) Peak() time.Duration { return s.peak }
