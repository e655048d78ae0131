package profiles

// HopName refers to a hop by name.
type HopName string

// FlowName refers to a flow by name.
type FlowName string

// PhaseName names a phase of the schedule.
type PhaseName string

func (HopName) TypeInfo() TypeInfo   { return TypeInfo{"a hop name", ""} }
func (PhaseName) TypeInfo() TypeInfo { return TypeInfo{"a phase name", ""} }
func (FlowName) TypeInfo() TypeInfo  { return TypeInfo{"a flow name", ""} }

func (Hop) TypeInfo() TypeInfo {
	return TypeInfo{"a hop", "{rate: 4Mbit, delay: 2ms, queue: 30000B}"}
}

func (Flow) TypeInfo() TypeInfo {
	return TypeInfo{"a flow", "{route: [a, b], traffic: {cbr: {interval: 20ms, size: 1000B}}}"}
}

func (Traffic) TypeInfo() TypeInfo {
	return TypeInfo{"a traffic source", "{cbr: {interval: 20ms, size: 1000B}}"}
}

func (ScheduleEntry) TypeInfo() TypeInfo {
	return TypeInfo{"a schedule entry", "{at: 20s, for: 1s, hop: edge, outage: hold}"}
}

// OutageMode is what an outage does with the frames it stops: drop or hold.
type OutageMode string

func (m *OutageMode) ParseScalar(s string) error {
	return ParseEnum(m, s, "an outage mode", "drop", "hold")
}

func (OutageMode) TypeInfo() TypeInfo { return TypeInfo{"drop or hold", ""} }

// Switch turns a flow's traffic on or off.
type Switch string

func (w *Switch) ParseScalar(s string) error {
	return ParseEnum(w, s, "a switch", "on", "off")
}

func (Switch) TypeInfo() TypeInfo { return TypeInfo{"on or off", ""} }

// JitterDist names a jitter distribution.
type JitterDist string

func (j *JitterDist) ParseScalar(s string) error {
	return ParseEnum(j, s, "a jitter distribution", "uniform", "normal", "pareto", "paretonormal", "empirical")
}

func (JitterDist) TypeInfo() TypeInfo {
	return TypeInfo{"uniform, normal, pareto, paretonormal or empirical", ""}
}

func (Jitter) Discriminator() string { return "dist" }

func (Period) Discriminator() string { return "dist" }
