package emulator

import (
	"testing"
	"time"
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
