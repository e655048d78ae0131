package rig

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/hilrig/hilrig/rig/record"
)

// Status shows a running run on a terminal: one line, redrawn in place,
// that fits the terminal's width. When its writer is not a terminal (a
// log, a pipe), it writes a plain line every PlainEvery of the run
// instead.
type Status struct {
	w         io.Writer
	fd        int // the terminal's, or -1
	total     time.Duration
	lastPlain time.Duration
	drawn     bool
	snap      record.Snapshot
}

// PlainEvery is how often a status that is not on a terminal writes a
// line, in the run's time.
const PlainEvery = time.Second

// NewStatus shows the status of a run of length total on w.
func NewStatus(w io.Writer, total time.Duration) *Status {
	st := &Status{w: w, fd: -1, total: total, lastPlain: -PlainEvery}
	if fd, ok := TerminalFd(w); ok {
		st.fd = fd
	}
	return st
}

// TerminalFd is the descriptor of w when w writes to a terminal: an
// *os.File, or a writer that wraps one and says its descriptor (Fd, as
// hilrig's standard output and error do).
func TerminalFd(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return -1, false
	}
	return int(f.Fd()), true
}

// Terminal reports whether the status redraws a line in place.
func (st *Status) Terminal() bool { return st.fd >= 0 }

// Show draws the monitor's latest snapshot, if there is one.
func (st *Status) Show(mon *record.Monitor) {
	if !mon.Read(&st.snap) {
		return
	}
	if st.fd < 0 {
		if st.snap.Time-st.lastPlain < PlainEvery {
			return
		}
		st.lastPlain = st.snap.Time
		fmt.Fprintln(st.w, StatusLine(&st.snap, st.total, 0))
		return
	}
	width, _, err := term.GetSize(st.fd)
	if err != nil || width <= 0 {
		width = 80
	}
	// One column short of the width: a line that fills it exactly makes
	// some terminals wrap before the carriage return.
	fmt.Fprintf(st.w, "\r%s\033[K", StatusLine(&st.snap, st.total, width-1))
	st.drawn = true
}

// Follow shows the monitor every interval until ctx is done.
func (st *Status) Follow(ctx context.Context, mon *record.Monitor, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			st.Show(mon)
		}
	}
}

// Close shows the last snapshot and ends the line.
func (st *Status) Close(mon *record.Monitor) {
	st.lastPlain = -PlainEvery // the last state is always worth a line
	st.Show(mon)
	if st.drawn {
		fmt.Fprintln(st.w)
	}
}

// StatusLine is a snapshot in one line of at most width columns (0: no
// limit): the run's time, then what matters most first (alarms: a model
// out of sync, a hop down; the models against the uncut reference; the
// flows; the executor's lateness), leaving out what does not fit.
func StatusLine(s *record.Snapshot, total time.Duration, width int) string {
	var b strings.Builder
	add := func(part string) {
		if width > 0 && utf8.RuneCountInString(b.String())+utf8.RuneCountInString(part) > width {
			return
		}
		b.WriteString(part)
	}
	add(fmt.Sprintf("%5.1f/%v", s.Time.Seconds(), total))
	// Alarms first: a model out of sync, a hop down.
	for _, m := range s.Models {
		if m.Sync.OutOfSync {
			add(fmt.Sprintf("  %s OUT OF SYNC (t_diff %v)", m.Endpoint, m.Sync.TDiff.Round(time.Microsecond)))
		}
	}
	if s.Timing.Overloaded {
		add("  OVERLOADED (the executor rests: releases are late)")
	}
	for _, h := range s.Hops {
		if h.Outage != 0 {
			add(fmt.Sprintf("  %s DOWN", h.Name))
		}
	}
	// A device's heartbeat: a controller's fault flag, a plant node's
	// watchdog holding its outputs safe.
	for _, w := range s.Wire {
		if w.Fault {
			add(fmt.Sprintf("  %s FAULT", w.Name))
		}
		if w.Safe {
			add(fmt.Sprintf("  %s SAFE", w.Name))
		}
	}
	for _, m := range s.Models {
		if m.Output != "" {
			errPct := 0.0
			if m.Peak > 0 {
				errPct = 100 * m.MaxError / m.Peak
			}
			add(fmt.Sprintf("  %s %+.3g (uncut %+.3g)%s worst error %.2f%% of peak", m.Output, m.Value, m.Ideal, crossing(&m), errPct))
		}
		if m.Sync.Supervised && !m.Sync.OutOfSync {
			add(fmt.Sprintf("  %s in sync", m.Endpoint))
		}
		if m.Overruns > 0 {
			add(fmt.Sprintf("  %d overruns", m.Overruns))
		}
	}
	for _, f := range s.Flows {
		part := fmt.Sprintf("  %s %d/%d", f.Name, f.Delivered, f.Sent)
		if f.Recent.Count > 0 {
			part += fmt.Sprintf(" %s", formatDelay(f.Recent.P50))
		}
		if lost := f.Lost(); lost > 0 {
			part += fmt.Sprintf(" lost %d", lost)
			if f.EgressDrops > 0 { // the engine delivered them; the device did not get them
				part += fmt.Sprintf(" (%d egress_drop)", f.EgressDrops)
			}
		}
		add(part)
	}
	for _, w := range s.Wire {
		part := fmt.Sprintf("  %s %d msgs", w.Name, w.Messages)
		if bad := w.CRCErrors + w.Malformed; bad > 0 {
			part += fmt.Sprintf(" %d bad", bad)
		}
		if w.Missed > 0 {
			part += fmt.Sprintf(" missed %d", w.Missed)
		}
		if w.ClockKnown {
			part += " " + formatDelay(w.OneWay)
		}
		if w.Heard && !w.Fault && !w.Safe {
			part += " ok"
		}
		add(part)
	}
	if r := s.Timing.Release; s.Timing.Real && r.Count > 0 {
		// The snapshot carries no quantiles of the whole run (they would
		// cost a walk of the histogram on the executor's thread).
		add("  released late by " + formatDelay(r.Mean) + " on average, at most " + formatDelay(r.Max))
	}
	return b.String()
}

// formatDelay writes a delay with three significant digits in a unit that
// suits it.
func formatDelay(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.3gµs", float64(d)/1e3)
}

// crossing is the other variables crossing a model's cut, after its
// output: what the rig sends, then → what it takes up.
func crossing(m *record.ModelProgress) string {
	var b strings.Builder
	arrow := false
	for _, c := range m.Cut[:m.NCut] {
		if c.Name == m.Output {
			continue
		}
		if !c.ToHardware && !arrow {
			b.WriteString(" →")
			arrow = true
		}
		fmt.Fprintf(&b, " %s %+.3g", c.Name, c.Value)
	}
	return b.String()
}
