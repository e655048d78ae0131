package rig

import (
	"fmt"
	"slices"

	"github.com/hilrig/hilrig/drivers"
	"github.com/hilrig/hilrig/emulator"
	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
	"github.com/hilrig/hilrig/rig/executor"
	"github.com/hilrig/hilrig/rig/supervisor"
)

// binding is how a profile's flows meet a bench: which flows the
// endpoints and models feed (their generators then stand down) and where
// each flow's frames go.
type binding struct {
	flows      []emulator.FlowConfig
	egress     []executor.Egress // per flow
	flowOf     []int             // per device: the flow it feeds, or -1
	reconnects []bool            // per device
	models     []*executor.Model
	sources    []executor.Source // the players
	interfaces []string          // the recording's: the devices, then the players
	playerAt   []int             // per source: its interface
	// The wire links of the endpoints with codec wire: per device and
	// per source (nil for the others).
	deviceWire, sourceWire []*executor.WireLink
}

// A Player plays a bench endpoint in software, in virtual and real time
// alike: a test's script, a recording replayed. It sends frames into the
// flow the endpoint feeds at instants of its own, and takes the frames
// delivered to the endpoint.
type Player interface {
	// Feed tells the player the flow it sends on (-1: none) before the
	// run starts; Emit is then given the means to inject into it.
	Feed(flow int)
	executor.Source
	drivers.Writer
}

// bind resolves a bench against a profile. In real time, devices are the
// bench's endpoints that are not models, in bench order. In virtual time
// there are none: the hardware's part of each model stands in for the
// device across its cut, and flows between two devices keep the profile's
// generators as their stand-in.
func bind(p *profiles.Loaded, b *benchfile.LoadedBench, mode Mode, devices []endpoint, players map[string]Player) (binding, error) {
	bd := binding{flows: slices.Clone(p.Config.Flows), egress: make([]executor.Egress, p.Flows.Len())}
	if b == nil {
		return bd, nil
	}
	real := mode == RealTime
	device, player := map[string]int{}, map[string]int{}
	links := map[string]*executor.WireLink{} // by endpoint
	for i, d := range devices {
		device[d.Name()] = i
		bd.flowOf = append(bd.flowOf, -1)
		bd.reconnects = append(bd.reconnects, d.reconnects)
		bd.interfaces = append(bd.interfaces, d.Name())
		var l *executor.WireLink
		if d.wire {
			l = executor.NewWireLink(d.Name(), d)
			links[d.Name()] = l
			if u, ok := b.Endpoints.Values[b.Endpoints.Index(d.Name())].Device.(*benchfile.UDPSocket); ok {
				l.WatchPeer(u.PeerWatch())
			}
		}
		bd.deviceWire = append(bd.deviceWire, l)
	}
	for _, name := range b.Endpoints.Names {
		if _, ok := players[name]; ok {
			player[name] = len(bd.interfaces)
			bd.interfaces = append(bd.interfaces, name)
		}
	}
	for _, bound := range b.Bound {
		flow := p.Flows.Index(bound.Flow)
		from, to := bound.From, bound.To
		if d, ok := device[from]; ok {
			bd.flowOf[d] = flow
			bd.flows[flow].Traffic = nil // the device is the source now
		}
		if pl, ok := players[from]; ok {
			pl.Feed(flow)
			bd.flows[flow].Traffic = nil
		}
		if pl, ok := players[to]; ok {
			bd.egress[flow] = executor.ToEndpoint(player[to], pl)
		}
		if d, ok := device[to]; ok {
			bd.egress[flow] = executor.ToDevice(d, devices[d])
			if leader, ok := devices[d].Endpoint.(drivers.Leader); ok && leader.LineTime(1) > 0 {
				bd.flows[flow].Lead = leader.LineTime
			}
		}
	}
	for i, name := range b.Endpoints.Names {
		if pl, ok := players[name]; ok {
			bd.sources = append(bd.sources, pl)
			bd.playerAt = append(bd.playerAt, player[name])
			var l *executor.WireLink
			if b.Endpoints.Values[i].SpeaksWire() {
				// Only a player that answers between its instants (firmware)
				// is asked for its time; a script or a replay is followed.
				var requests drivers.Writer
				if _, ok := pl.(executor.Answerer); ok {
					requests = pl
				}
				l = executor.NewWireLink(name, requests)
				links[name] = l
			}
			bd.sourceWire = append(bd.sourceWire, l)
		}
	}
	for _, name := range b.Endpoints.Names {
		bm := b.Models[name]
		if bm == nil {
			continue
		}
		toHW, fromHW := modelFlows(b, p, name)
		// In virtual time the hardware's part stands in for the device
		// across the cut, unless the bench's endpoint there is played.
		standIn := !real && !playedPeer(b, name, players)
		if f := bm.FMU; f != nil && standIn && !f.StandIn {
			return binding{}, fmt.Errorf("%s: nothing stands in for the hardware across the FMU's cut in virtual time: give the endpoint hardware: {model: ..., cut: ...} (a model whose hardware part reads what the FMU sends), or run it against the hardware (hilrig run)", name)
		}
		m, err := executor.NewModel(name, ModelSpecOf(bm), toHW, fromHW, standIn)
		if err != nil {
			return binding{}, fmt.Errorf("%s: %w", name, err)
		}
		for _, f := range []int{toHW, fromHW} {
			if f >= 0 {
				bd.flows[f].Traffic = nil // the model is the source
			}
		}
		if fromHW >= 0 {
			bd.egress[fromHW] = m.Simulated()
			if bound, _ := b.Binding(p.Flows.Names[fromHW]); links[bound.From] != nil {
				m.SetPeer(links[bound.From])
				if _, isDevice := device[bound.From]; isDevice {
					// A model does not answer time requests: when another
					// rig (two sites) or a device asks, the rig does.
					links[bound.From].AnswerTimeRequests()
				}
			}
		}
		if toHW >= 0 && standIn {
			bd.egress[toHW] = m.StandIn()
		}
		bd.models = append(bd.models, m)
	}
	return bd, nil
}

// modelFlows finds the flows a model endpoint sends and receives on.
func modelFlows(b *benchfile.LoadedBench, p *profiles.Loaded, name string) (toHW, fromHW int) {
	toHW, fromHW = -1, -1
	for _, bound := range b.Bound {
		if bound.From == name {
			toHW = p.Flows.Index(bound.Flow)
		}
		if bound.To == name {
			fromHW = p.Flows.Index(bound.Flow)
		}
	}
	return toHW, fromHW
}

// ModelSpecOf is a bench's model endpoint (a model or an FMU) in the
// executor's terms.
func ModelSpecOf(bm *benchfile.BenchModel) *executor.ModelSpec {
	s := &executor.ModelSpec{
		Model: bm.Name, Cut: bm.Cut, Plant: bm.Plant, Simulated: bm.Simulated, Hardware: bm.Hardware,
		Exchange: bm.Exchange, Step: bm.Step, Solver: bm.Solver, SendEvery: bm.SendEvery,
		Send: bm.Send, Receive: bm.Receive, Output: bm.Output, Reference: bm.FMU == nil,
	}
	if st := bm.Stepping; st != nil {
		es := stepping(st)
		s.Stepping = &es
	}
	if f := bm.FMU; f != nil {
		s.Failure = &executor.FailurePolicy{Why: f.Block.Err, Safe: f.Safe, Continue: f.Continue}
	}
	return s
}

// stepping turns a bench's stepping into the executor's.
func stepping(st *benchfile.Stepping) executor.Stepping {
	out := executor.Stepping{Replies: st.Replies, Wait: st.Wait, MaxAge: st.MaxAge, Timeout: st.Timeout, NominalDelay: st.NominalDelay, StepCost: st.StepCost}
	if sup := st.Supervisor; sup != nil {
		action := map[string]supervisor.Action{"shadow": supervisor.Shadow, "stop": supervisor.Stop, "notify": supervisor.Notify}[sup.OnOutOfSync]
		out.Supervisor = &supervisor.Config{ThetaSafe: sup.ThetaSafe, Resync: sup.Resync, Check: sup.Check, Jump: sup.Jump, OnOutOfSync: action}
		out.Safe = sup.Safe
	}
	return out
}

// playedPeer reports whether an endpoint bound to or from the model
// endpoint name is played in software.
func playedPeer(b *benchfile.LoadedBench, name string, players map[string]Player) bool {
	for _, bound := range b.Bound {
		from, to := bound.From, bound.To
		if from == name && players[to] != nil || to == name && players[from] != nil {
			return true
		}
	}
	return false
}
