//go:build !race

package fmu_test

const raceEnabled = false
