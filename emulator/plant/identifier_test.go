package plant

import (
	"regexp"
	"testing"
)

// TestIsIdentifier holds IsIdentifier to the pattern it replaced, which
// every command used to compile at start.
func TestIsIdentifier(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{
		"", "a", "_", "Z9", "_9", "9a", "a-b", "a b", "x_y_Z", "é", "aé", "a\x00", "0", "__", "A", "z", "a.b",
		"`", "{", "@", "[", "/", ":", "a/", "a:", "a@", "a[", "a`", "a{",
	} {
		if got, want := IsIdentifier(s), pattern.MatchString(s); got != want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzIsIdentifier(f *testing.F) {
	pattern := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	for _, s := range []string{"", "a", "_9", "9a", "a-b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsIdentifier(s), pattern.MatchString(s); got != want {
			t.Errorf("IsIdentifier(%q) = %v, want %v", s, got, want)
		}
	})
}
