package suitefile

import (
	"os"
	"testing"
)

// TestMain runs the tests in the profiles directory, where the shipped
// profiles, benches, suites and the test data are, as their messages
// name them.
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}
