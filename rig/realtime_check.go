package rig

import (
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/rig/executor"
)

// CheckRealTime reports, each at its place, what of p a real-time run
// cannot do and sim can: a schedule entry recurring more often than the
// executor acts (executor.Resolution). Open checks it before a real-time
// run starts and hilrig check --bench before one is tried, so that the
// two refuse the same.
func CheckRealTime(p *profiles.Loaded) error {
	return p.CheckPeriods(executor.Resolution, "the real-time executor's resolution")
}
