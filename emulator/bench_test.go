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
