//go:build race

package main

// raceEnabled says the tests were built with -race, which allocates
// where the code does not.
const raceEnabled = true
