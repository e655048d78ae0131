// Package benchfile is the language of bench files: a rig's endpoints
// (devices of the registered kinds, plant models, FMUs, recordings) and
// which of a profile's flows each carries, checked against the profile
// they run with.
package benchfile
