// Package suggest finds the name a user probably meant, for error
// messages: the profile, bench and model languages, the plant models and the
// command line all say "did you mean ...?" the same way. It lives under
// emulator, the lowest layer every language imports, so that emulator/plant
// and profiles share it without a cycle.
package suggest

import (
	"fmt"
	"strings"
)

// DidYouMean returns "; did you mean C?" for the candidate C closest to
// name, or "" when none is close enough to be a typo: C starts with name
// (of three letters or more), or is at most two edits away (letters
// inserted, deleted or changed, ignoring case) and the edits do not
// rewrite the whole of the longer name ("b" is not a typo of "a").
func DidYouMean(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if len(name) >= 3 && strings.HasPrefix(c, name) {
			return fmt.Sprintf("; did you mean %s?", c)
		}
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestDist && d < max(len(name), len(c)) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %s?", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
