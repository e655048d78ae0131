package lang

import "fmt"

// ParseSize parses a size written as in a profile (1500B, 30kB, 64KiB),
// for expectations and command-line flags.
func ParseSize(s string) (int64, error) {
	v, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%q %v", s, err)
	}
	return v, nil
}
