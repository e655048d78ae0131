package emulator

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkBottleneck300s runs the paper 000 bottleneck for 300 s of virtual
// time, without trace: the engine's own cost.
func BenchmarkBottleneck300s(b *testing.B) {
	cross := OnOff{Rate: 4 * Mbitps, Size: 1000, On: Period{Mean: 3 * time.Second}, Off: Period{Mean: 4 * time.Second}, Start: 5 * time.Second}
	var frames, hopVisits uint64
	b.ReportAllocs()
	for b.Loop() {
		n := mustNew(b, bottleneck(1, cross), nil)
		n.Run(300 * time.Second)
		frames, hopVisits = 0, 0
		for _, f := range n.Summary().Flows {
			frames += f.Sent
		}
		for _, h := range n.Summary().Hops {
			hopVisits += h.Frames
		}
	}
	perRun := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(frames)/perRun, "frames/s")
	b.ReportMetric(perRun*1e9/float64(hopVisits), "ns/frame-hop")
}

// BenchmarkImpairedHop sends Poisson traffic through one hop with every
// random impairment on: the cost of the stochastic models per frame.
func BenchmarkImpairedHop(b *testing.B) {
	hop := HopParams{Rate: 10 * Mbitps, Delay: 5 * ms, Queue: Limit{50, Frames},
		Loss:      GilbertElliott{P: 0.01, R: 0.2, LossBad: 0.9, LossGood: 0.001},
		Jitter:    Jitter{Dist: Normal{Sigma: ms}, Correlation: 0.5},
		Duplicate: 0.005, Corrupt: Corruption{BER: 1e-6}}
	cfg := oneHop(hop)
	cfg.Flows[0].Traffic = Poisson{Rate: 5 * Mbitps, Size: 500}
	var frames uint64
	b.ReportAllocs()
	for b.Loop() {
		n := mustNew(b, cfg, nil)
		n.Run(60 * time.Second)
		frames = n.FlowStats(0).Sent
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(frames), "ns/frame")
}

// manyFlows is issue 10's scenario: flows Poisson sources sharing two hops
// for 10 s, 100 000 frames a second in all whatever the number of flows,
// so that only the number of flows changes the engine's work.
func manyFlows(flows int) Config {
	hop := func(delay time.Duration) HopParams {
		return HopParams{Rate: Gbitps, Delay: delay, Queue: Limit{1_000_000, Bytes}}
	}
	cfg := Config{Seed: 1, Hops: []HopConfig{{Name: "a", HopParams: hop(ms)}, {Name: "b", HopParams: hop(5 * ms)}}}
	perFlow := 80 * Mbitps / Rate(flows) // 100 000 frames/s of 100 B in all
	for i := range flows {
		cfg.Flows = append(cfg.Flows, FlowConfig{Name: "f" + strconv.Itoa(i), Route: []int{0, 1},
			Traffic: Poisson{Rate: perFlow, Size: 100}})
	}
	return cfg
}

// retainedPerFlow runs cfg for d and returns the heap the finished network
// still holds, less the frames, event queue and hop queues (what frames in
// flight cost, which depends on the traffic, not on the number of flows),
// per flow.
func retainedPerFlow(b testing.TB, cfg Config, d time.Duration) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := mustNew(b, cfg, nil)
	n.Run(d)
	runtime.GC()
	runtime.ReadMemStats(&after)
	inFlight := uintptr(len(n.pool.free))*(unsafe.Sizeof(Frame{})+unsafe.Sizeof((*Frame)(nil))) +
		uintptr(max(cap(n.events.items), cap(n.events.run)))*unsafe.Sizeof(event{})
	for i := range n.hops {
		inFlight += uintptr(len(n.hops[i].serialiser.(*link).waiting.buf)+len(n.hops[i].outage.held.buf)) * unsafe.Sizeof((*Frame)(nil))
	}
	retained := float64(after.HeapAlloc) - float64(before.HeapAlloc) - float64(inFlight)
	runtime.KeepAlive(n)
	return retained / float64(len(cfg.Flows))
}

// BenchmarkFlows runs 1 M frames over two hops split among 10 to 10 000
// flows: the time per frame-hop and the memory per flow should not depend
// on how many flows share the frames (issue 10).
func BenchmarkFlows(b *testing.B) {
	const d = 10 * time.Second
	for _, flows := range []int{10, 100, 1000, 10_000} {
		b.Run(strconv.Itoa(flows), func(b *testing.B) {
			cfg := manyFlows(flows)
			perFlow := retainedPerFlow(b, cfg, d)
			var hopVisits uint64
			for b.Loop() {
				n := mustNew(b, cfg, nil)
				n.Run(d)
				hopVisits = 0
				for i := range n.hops {
					hopVisits += n.hops[i].stats.Frames
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(hopVisits), "ns/frame-hop")
			b.ReportMetric(perFlow, "B/flow")
		})
	}
}

// BenchmarkEventQueue is the queue alone in the hold model of a
// discrete-event run: with pending events queued, each operation pops the
// earliest and queues one a random time after it, as a run with one
// pending frame per flow does.
func BenchmarkEventQueue(b *testing.B) {
	for _, pending := range []int{10, 300, 10_000} {
		b.Run(fmt.Sprint(pending), func(b *testing.B) {
			var q eventQueue
			s := NewStream(1, "queue")
			for range pending {
				q.push(time.Duration(s.Uint64()%uint64(time.Second)), evExit, 0, 0)
			}
			for b.Loop() {
				e := q.pop()
				q.push(e.at+time.Duration(s.Uint64()%uint64(time.Second)), evExit, 0, 0)
			}
		})
	}
}

// BenchmarkSourcesApart runs BenchmarkFlows' scenario with the sources'
// events in the radix queue and in the heap, in turns in one process, so
// that a loaded machine weighs on both alike: what keeping them apart
// gains, and from how many flows (manySources).
func BenchmarkSourcesApart(b *testing.B) {
	const d = 2 * time.Second
	for _, flows := range []int{10, 1000, 10_000} {
		cfg := manyFlows(flows)
		for _, apart := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d/apart=%v", flows, apart), func(b *testing.B) {
				for b.Loop() {
					n := mustNew(b, cfg, nil)
					n.events.sourcesApart = apart // before the sources start
					n.Run(d)
				}
			})
		}
	}
}
