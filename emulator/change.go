package emulator

import (
	"fmt"
	"math/bits"
)

// ApplyNow makes changes while the network runs, at its current time,
// between two of its events: what a schedule entry at that instant would
// do, each undone after its For and repeated every Every as written. They
// are all checked first; one that is wrong makes none take effect. At is
// ignored: the changes take effect now.
func (n *Network) ApplyNow(changes ...Scheduled) error {
	if n.finished {
		return errorf("the run has finished")
	}
	for i := range changes {
		changes[i].At, changes[i].WithPrevious = n.now, false
		if err := n.checkScheduled(&changes[i]); err != nil {
			return err
		}
	}
	for _, s := range changes {
		perOccurrence := uint64(1)
		if s.For > 0 {
			perOccurrence++
		}
		// The product can pass 2^64 (a change every nanosecond for a
		// century, with its undo), and liveRank can pass the bound by the
		// flows' starts, ranked after a schedule that took nearly all of it.
		hi, all := bits.Mul64(perOccurrence, uint64(s.occurrences()))
		if hi != 0 || n.liveRank > MaxScheduledChanges || all > MaxScheduledChanges-n.liveRank {
			return fmt.Errorf("the run has made more than %d changes", uint64(MaxScheduledChanges))
		}
		n.schedule = append(n.schedule, scheduleEntry{Scheduled: s, first: n.liveRank, stride: perOccurrence})
		n.liveRank += all
		n.applyScheduled(len(n.schedule) - 1)
	}
	return nil
}
