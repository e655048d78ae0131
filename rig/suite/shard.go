package suite

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is the i-th of n parts of the suite (i from 1), for spreading a
// suite over several rigs or CI runners: case k (from 0, in the order of
// the file, each matrix combination a case) goes to part k mod n + 1. The
// parts are disjoint and together the whole suite, and a part is the same
// on every runner given the same suite file, whatever else runs.
func (s *Suite) Shard(i, n int) []*Case {
	var out []*Case
	for k, c := range s.Cases {
		if k%n == i-1 {
			out = append(out, c)
		}
	}
	return out
}

// EmptyShard says why part i of n holds no case, for the run's output,
// its JUnit XML and its report: with more parts than cases, the parts
// after the last case's are empty.
func (s *Suite) EmptyShard(i, n int) string {
	return fmt.Sprintf("part %d/%d holds none of the suite's %d cases: %d parts of %d cases leave parts %d to %d empty (each case runs once, in one part)",
		i, n, len(s.Cases), n, len(s.Cases), len(s.Cases)+1, n)
}

// ParseShard reads i/n, as --shard takes it (GitLab's
// $CI_NODE_INDEX/$CI_NODE_TOTAL).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	switch {
	case !ok || err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("--shard %q: want i/n, e.g. 2/3 (the second of three parts)", s)
	case n < 1:
		return 0, 0, fmt.Errorf("--shard %q: n must be at least 1", s)
	case i < 1 || i > n:
		return 0, 0, fmt.Errorf("--shard %q: i must be from 1 to %d", s, n)
	}
	return i, n, nil
}
