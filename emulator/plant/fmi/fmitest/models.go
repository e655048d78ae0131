package fmitest

import (
	"math"

	"github.com/hilrig/hilrig/emulator/plant/fmi"
)

// BouncingBall is a ball dropped from h = 1 m (FMI 2): h' = v, v' = g,
// and at h = 0 falling, v ← −e·v; below v_min = 0.1 m/s it lies still.
// Its one event indicator is h. The first bounce is at √(2/9.81) s, and
// each flight after the k-th lasts 2·eᵏ·v₁/|g|, v₁ = √(2·9.81) m/s.
func BouncingBall() *Model { return bouncingBall }

var bouncingBall = mustParse("BouncingBall", `<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="BouncingBall" guid="{fmitest-bouncing-ball}" numberOfEventIndicators="1">
  <ModelExchange modelIdentifier="BouncingBall"/>
  <CoSimulation modelIdentifier="BouncingBall" canHandleVariableCommunicationStepSize="true"/>
  <UnitDefinitions>
    <Unit name="m"/><Unit name="m/s"/><Unit name="m/s2"/>
  </UnitDefinitions>
  <TypeDefinitions>
    <SimpleType name="Position"><Real quantity="Position" unit="m"/></SimpleType>
  </TypeDefinitions>
  <DefaultExperiment startTime="0" stopTime="3" stepSize="0.01"/>
  <ModelVariables>
    <ScalarVariable name="h" valueReference="1" causality="output" variability="continuous" initial="exact"><Real declaredType="Position" start="1"/></ScalarVariable>
    <ScalarVariable name="der(h)" valueReference="2"><Real derivative="1" unit="m/s"/></ScalarVariable>
    <ScalarVariable name="v" valueReference="3" causality="output" variability="continuous" initial="exact"><Real unit="m/s" start="0"/></ScalarVariable>
    <ScalarVariable name="der(v)" valueReference="4"><Real derivative="3" unit="m/s2"/></ScalarVariable>
    <ScalarVariable name="g" valueReference="5" causality="parameter" variability="fixed" initial="exact"><Real unit="m/s2" start="-9.81"/></ScalarVariable>
    <ScalarVariable name="e" valueReference="6" causality="parameter" variability="tunable" initial="exact"><Real start="0.7" min="0.5" max="1"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="1"/><Unknown index="3"/></Outputs>
    <Derivatives><Unknown index="2"/><Unknown index="4"/></Derivatives>
  </ModelStructure>
</fmiModelDescription>
`, func() equations { return &ball{h: 1, g: -9.81, e: 0.7} })

type ball struct{ h, v, g, e float64 }

const vMin = 0.1

func (b *ball) get(vr fmi.ValueReference) (float64, bool) {
	switch vr {
	case 1:
		return b.h, true
	case 2, 3:
		return b.v, true
	case 4, 5:
		return b.g, true
	case 6:
		return b.e, true
	}
	return 0, false
}

func (b *ball) set(vr fmi.ValueReference, v float64) bool {
	switch vr {
	case 1:
		b.h = v
	case 3:
		b.v = v
	case 5:
		b.g = v
	case 6:
		b.e = v
	default:
		return false
	}
	return true
}

func (b *ball) states() []*float64                  { return []*float64{&b.h, &b.v} }
func (b *ball) derivatives(_ float64, dx []float64) { dx[0], dx[1] = b.v, b.g }
func (b *ball) indicators(_ float64, z []float64)   { z[0] = b.h }
func (b *ball) internalStep() float64               { return 1e-3 }

func (b *ball) update(float64) fmi.EventInfo {
	if b.h > 0 || b.v >= 0 {
		return fmi.EventInfo{}
	}
	// Just above the ground, so that the indicator is in the domain it
	// rises in, and the bounce is not found again.
	b.h = math.SmallestNonzeroFloat64
	b.v = -b.e * b.v
	if b.v < vMin {
		b.v, b.g = 0, 0
	}
	return fmi.EventInfo{ValuesOfContinuousStatesChanged: true}
}

// FirstOrder is a first-order lag (FMI 3): τ·x' = k·s·u − x, y = x, with
// u a continuous input, s a discrete Int32 input (a sign, ±1, changed in
// event mode only) and k and τ parameters. From x = 0 with u and s
// constant, y(t) = k·s·u·(1 − e^(−t/τ)).
func FirstOrder() *Model { return firstOrder }

var firstOrder = mustParse("FirstOrder", `<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="FirstOrder" instantiationToken="{fmitest-first-order}">
  <ModelExchange modelIdentifier="FirstOrder"/>
  <CoSimulation modelIdentifier="FirstOrder" canHandleVariableCommunicationStepSize="true" fixedInternalStepSize="1e-4"/>
  <UnitDefinitions><Unit name="s"/><Unit name="V"/></UnitDefinitions>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.01"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="u" valueReference="1" causality="input" start="0" unit="V"/>
    <Int32 name="s" valueReference="2" causality="input" variability="discrete" start="1"/>
    <Float64 name="k" valueReference="3" causality="parameter" variability="fixed" start="2"/>
    <Float64 name="tau" valueReference="4" causality="parameter" variability="fixed" start="0.5" unit="s"/>
    <Float64 name="x" valueReference="5" causality="local" initial="exact" start="0" unit="V"/>
    <Float64 name="der(x)" valueReference="6" derivative="5"/>
    <Float64 name="y" valueReference="7" causality="output" unit="V"/>
  </ModelVariables>
  <ModelStructure>
    <Output valueReference="7" dependencies="5"/>
    <ContinuousStateDerivative valueReference="6"/>
  </ModelStructure>
</fmiModelDescription>
`, func() equations { return &lag{s: 1, k: 2, tau: 0.5} })

type lag struct{ u, s, k, tau, x float64 }

func (l *lag) get(vr fmi.ValueReference) (float64, bool) {
	switch vr {
	case 1:
		return l.u, true
	case 2:
		return l.s, true
	case 3:
		return l.k, true
	case 4:
		return l.tau, true
	case 5, 7:
		return l.x, true
	case 6:
		return (float64(l.k*l.s*l.u) - l.x) / l.tau, true
	}
	return 0, false
}

func (l *lag) set(vr fmi.ValueReference, v float64) bool {
	switch vr {
	case 1:
		l.u = v
	case 2:
		l.s = v
	case 3:
		l.k = v
	case 4:
		l.tau = v
	case 5:
		l.x = v
	default:
		return false
	}
	return true
}

func (l *lag) states() []*float64                  { return []*float64{&l.x} }
func (l *lag) derivatives(_ float64, dx []float64) { dx[0] = (float64(l.k*l.s*l.u) - l.x) / l.tau }
func (l *lag) indicators(float64, []float64)       {}
func (l *lag) update(float64) fmi.EventInfo        { return fmi.EventInfo{} }
func (l *lag) internalStep() float64               { return 1e-4 }

// Counter counts time events (FMI 2): n starts at 0 and goes up by one
// at every multiple of the parameter period (0.3 s), each a time event.
func Counter() *Model { return counter }

var counter = mustParse("Counter", `<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="Counter" guid="{fmitest-counter}">
  <ModelExchange modelIdentifier="Counter"/>
  <CoSimulation modelIdentifier="Counter"/>
  <DefaultExperiment startTime="0" stopTime="2" stepSize="0.1"/>
  <ModelVariables>
    <ScalarVariable name="n" valueReference="1" causality="output" variability="discrete" initial="exact"><Integer start="0"/></ScalarVariable>
    <ScalarVariable name="period" valueReference="2" causality="parameter" variability="fixed" initial="exact"><Real start="0.3"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="1"/></Outputs></ModelStructure>
</fmiModelDescription>
`, func() equations { return &count{period: 0.3} })

type count struct {
	n, period float64
	started   bool
}

func (c *count) get(vr fmi.ValueReference) (float64, bool) {
	switch vr {
	case 1:
		return c.n, true
	case 2:
		return c.period, true
	}
	return 0, false
}

func (c *count) set(vr fmi.ValueReference, v float64) bool {
	switch vr {
	case 1:
		c.n = v
	case 2:
		c.period = v
	default:
		return false
	}
	return true
}

func (c *count) states() []*float64             { return nil }
func (c *count) derivatives(float64, []float64) {}
func (c *count) indicators(float64, []float64)  {}
func (c *count) internalStep() float64          { return 1e-3 }

// update counts a tick at every event but the first (initialisation),
// and names the next multiple of the period.
func (c *count) update(t float64) fmi.EventInfo {
	if c.started {
		c.n++
	}
	c.started = true
	k := math.Round(t/c.period) + 1
	return fmi.EventInfo{NextEventTimeDefined: true, NextEventTime: k * c.period}
}
