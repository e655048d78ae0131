//go:build race

package fmu_test

// raceEnabled says the tests were built with -race, which allocates
// where the code does not.
const raceEnabled = true
