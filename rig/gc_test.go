package rig

import (
	"context"
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrig/hilrig/profiles"
	"github.com/hilrig/hilrig/profiles/benchfile"
)

// ticker plays an endpoint: a frame every period, and nothing kept of
// what it is written.
type ticker struct {
	flow   int
	next   time.Duration
	period time.Duration
}

func (p *ticker) Feed(flow int) { p.flow = flow }
func (p *ticker) Next() time.Duration {
	if p.flow < 0 {
		return math.MaxInt64
	}
	return p.next
}
func (p *ticker) Emit(now time.Duration, inject func(int, []byte)) {
	inject(p.flow, []byte("tick"))
	p.next = now + p.period
}
func (p *ticker) Write([]byte) error { return nil }

// TestRealTimeRunHoldsTheGC: no garbage collection runs while a
// real-time run goes on, though another goroutine makes 64 MB of garbage
// meanwhile (less than GCHeadroom); the collector is as it was after.
func TestRealTimeRunHoldsTheGC(t *testing.T) {
	p, err := profiles.Parse("p.yaml", []byte(`duration: 400ms
hops:
  down: {delay: 1ms}
  up:   {delay: 1ms}
flows:
  m2s: {route: [down], role: to-plant}
  s2m: {route: [up], role: to-controller}
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := benchfile.LoadBench("../profiles/benches/virtual.yaml", p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(p, b, RealTime, Options{Players: map[string]Player{
		"controller": &ticker{period: time.Millisecond}, "plant": &ticker{period: time.Millisecond}}})
	if err != nil {
		t.Fatal(err)
	}
	var during atomic.Uint32
	var sink atomic.Pointer[[]byte]
	started, made := make(chan struct{}), make(chan struct{})
	go func() {
		<-started
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.NumGC
		for range 64 << 10 {
			b := make([]byte, 1024)
			sink.Store(&b)
		}
		runtime.ReadMemStats(&ms)
		during.Store(ms.NumGC - before)
		close(made)
	}()
	go func() {
		time.Sleep(50 * time.Millisecond) // into the run
		close(started)
	}()
	if _, err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-made
	if n := during.Load(); n != 0 {
		t.Errorf("%d garbage collections during the run", n)
	}
	if percent := debug.SetGCPercent(100); percent != 100 {
		t.Errorf("GOGC is %d after the run", percent)
	}
}
