//go:build !race

package tests

// raceDetector says the tests were built with -race (race_on_test.go).
const raceDetector = false
