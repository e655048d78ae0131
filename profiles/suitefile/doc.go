// Package suitefile is the language of suite files: regression cases
// that each run a profile, on a bench or alone, with overrides, a matrix,
// expectations and a script; loading a suite loads every profile and bench
// it names. The rig runs them (rig/suite).
package suitefile
