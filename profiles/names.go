package profiles

import "github.com/hilrig/hilrig/profiles/lang"

// HopName refers to a hop by name.
type HopName string

// FlowName refers to a flow by name.
type FlowName string

// PhaseName names a phase of the schedule.
type PhaseName string

func (HopName) TypeInfo() lang.TypeInfo   { return lang.TypeInfo{What: "a hop name", Example: ""} }
func (PhaseName) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "a phase name", Example: ""} }
func (FlowName) TypeInfo() lang.TypeInfo  { return lang.TypeInfo{What: "a flow name", Example: ""} }

func (Hop) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a hop", Example: "{rate: 4Mbit, delay: 2ms, queue: 30000B}"}
}

func (Flow) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a flow", Example: "{route: [a, b], traffic: {cbr: {interval: 20ms, size: 1000B}}}"}
}

func (Traffic) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a traffic source", Example: "{cbr: {interval: 20ms, size: 1000B}}"}
}

func (ScheduleEntry) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "a schedule entry", Example: "{at: 20s, for: 1s, hop: edge, outage: hold}"}
}

// OutageMode is what an outage does with the frames it stops: drop or hold.
type OutageMode string

func (m *OutageMode) ParseScalar(s string) error {
	return lang.ParseEnum(m, s, "an outage mode", "drop", "hold")
}

func (OutageMode) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "drop or hold", Example: ""} }

// Switch turns a flow's traffic on or off.
type Switch string

func (w *Switch) ParseScalar(s string) error {
	return lang.ParseEnum(w, s, "a switch", "on", "off")
}

func (Switch) TypeInfo() lang.TypeInfo { return lang.TypeInfo{What: "on or off", Example: ""} }

// JitterDist names a jitter distribution.
type JitterDist string

func (j *JitterDist) ParseScalar(s string) error {
	return lang.ParseEnum(j, s, "a jitter distribution", "uniform", "normal", "pareto", "paretonormal", "empirical")
}

func (JitterDist) TypeInfo() lang.TypeInfo {
	return lang.TypeInfo{What: "uniform, normal, pareto, paretonormal or empirical", Example: ""}
}

func (Jitter) Discriminator() string { return "dist" }

func (Period) Discriminator() string { return "dist" }
