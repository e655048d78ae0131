package emulator_test

import (
	"fmt"
	"time"

	"github.com/hilrig/hilrig/emulator"
)

// fates prints each frame's fate as the engine decides it; it holds the
// flows' names.
type fates []string

func (names fates) Finished(f *emulator.Frame) {
	fmt.Printf("%s #%d sent at %v: %s at %v\n", names[f.Flow], f.Seq, f.Sent, f.Status, f.Done)
}

// Example runs a bottleneck in virtual time (Run: to the end at once): ten 1000-byte frames a
// millisecond apart into a 1 Mbit/s hop (8 ms each to send) whose queue
// holds two, then 10 ms of propagation. The first is sent at once, two
// wait, and the rest find the queue full until the serialiser frees a
// place.
func Example() {
	network, err := emulator.New(emulator.Config{
		Seed: 1,
		Hops: []emulator.HopConfig{{Name: "bottleneck", HopParams: emulator.HopParams{
			Rate:  emulator.Mbitps,
			Delay: 10 * time.Millisecond,
			Queue: emulator.Limit{N: 2, Unit: emulator.Frames},
		}}},
		Flows: []emulator.FlowConfig{{Name: "burst", Route: []int{0},
			Traffic: emulator.CBR{Interval: time.Millisecond, Size: 1000, Stop: 10 * time.Millisecond}}},
	}, fates{"burst"})
	if err != nil {
		fmt.Println(err)
		return
	}
	network.Run(time.Second)
	network.Finish()
	s := network.Summary()
	fmt.Printf("sent %d, delivered %d, dropped at the queue %d\n", s.Flows[0].Sent, s.Flows[0].Delivered, s.Flows[0].Dropped["queue_drop"])
	// Output:
	// burst #3 sent at 3ms: queue_drop at 3ms
	// burst #4 sent at 4ms: queue_drop at 4ms
	// burst #5 sent at 5ms: queue_drop at 5ms
	// burst #6 sent at 6ms: queue_drop at 6ms
	// burst #7 sent at 7ms: queue_drop at 7ms
	// burst #9 sent at 9ms: queue_drop at 9ms
	// burst #0 sent at 0s: delivered at 18ms
	// burst #1 sent at 1ms: delivered at 26ms
	// burst #2 sent at 2ms: delivered at 34ms
	// burst #8 sent at 8ms: delivered at 42ms
	// sent 10, delivered 4, dropped at the queue 6
}

// ExampleNetwork_Inject drives the engine as the real-time executor does:
// a frame from hardware enters at the instant it was read, and the engine
// is advanced to its next event, when the frame is due at the far side.
func ExampleNetwork_Inject() {
	network, err := emulator.New(emulator.Config{
		Hops:  []emulator.HopConfig{{Name: "link", HopParams: emulator.HopParams{Delay: 20 * time.Millisecond}}},
		Flows: []emulator.FlowConfig{{Name: "m2s", Route: []int{0}}},
	}, fates{"m2s"})
	if err != nil {
		fmt.Println(err)
		return
	}
	network.Advance(3 * time.Millisecond) // the wall clock when the frame was read
	network.Inject(0, []byte("speed=12.5\n"))
	if due, ok := network.NextEvent(); ok {
		fmt.Println("next event at", due)
		network.Advance(due)
	}
	// Output:
	// next event at 23ms
	// m2s #0 sent at 3ms: delivered at 23ms
}

// ExampleNetwork_ApplyNow changes a hop while the network runs, as a
// schedule entry at that instant would (the live API's PATCH): an outage
// of 50 ms that drops what would leave the hop meanwhile.
func ExampleNetwork_ApplyNow() {
	network, err := emulator.New(emulator.Config{
		Hops: []emulator.HopConfig{{Name: "link", HopParams: emulator.HopParams{Delay: 5 * time.Millisecond}}},
		Flows: []emulator.FlowConfig{{Name: "m2s", Route: []int{0},
			Traffic: emulator.CBR{Interval: 20 * time.Millisecond, Size: 64, Stop: 100 * time.Millisecond}}},
	}, fates{"m2s"})
	if err != nil {
		fmt.Println(err)
		return
	}
	network.Advance(30 * time.Millisecond)
	if err := network.ApplyNow(emulator.Scheduled{For: 50 * time.Millisecond, Change: emulator.Outage{Hop: 0, Mode: emulator.OutageDropMode}}); err != nil {
		fmt.Println(err)
	}
	network.Advance(200 * time.Millisecond)
	network.Finish()
	// Output:
	// m2s #0 sent at 0s: delivered at 5ms
	// m2s #1 sent at 20ms: delivered at 25ms
	// m2s #2 sent at 40ms: outage_drop at 45ms
	// m2s #3 sent at 60ms: outage_drop at 65ms
	// m2s #4 sent at 80ms: delivered at 85ms
}
