package wire_test

import (
	"fmt"
	"time"

	"github.com/hilrig/hilrig/firmware/wire"
)

// A device sends a sample of two signals: a position as a 32-bit float,
// a speed in hundredths as a 16-bit integer.
func ExampleSender_Values() {
	layout, _ := wire.NewStruct([]wire.Field{{Type: wire.F32LE}, {Type: wire.I16LE, Scale: 0.01}})
	var send wire.Sender
	body := send.Values(nil, wire.Sample, 1500*time.Millisecond, layout, []float64{1.25, -0.5})
	frame := wire.COBS{}.Append(nil, body)
	fmt.Printf("% x\n", frame)
	// Output: 00 03 01 01 01 01 01 01 04 2f 68 59 01 01 01 04 02 01 07 01 09 a0 3f ce ff 7d d7 53 2e 00
}

// The rig parses what a device sent and decodes its values with the
// layout the bench gives.
func ExampleParse() {
	layout, _ := wire.NewStruct([]wire.Field{{Type: wire.F32LE}, {Type: wire.I16LE, Scale: 0.01}})
	var send wire.Sender
	body := send.Values(nil, wire.Sample, 1500*time.Millisecond, layout, []float64{1.25, -0.5})

	m, err := wire.Parse(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	values := make([]float64, 2)
	if err := m.Values(layout, values); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Type, m.Seq, m.Time, values)
	// Output: sample 0 1.5s [1.25 -0.5]
}

// A tracker counts what went wrong on the way: here a frame lost, one
// corrupted and one arriving twice.
func ExampleTracker() {
	var send wire.Sender
	var bodies [][]byte
	for i := range 6 {
		bodies = append(bodies, send.Heartbeat(nil, time.Duration(i)*time.Millisecond, 0))
	}
	bodies[4][15] ^= 0x10 // a bit flipped on the line
	var track wire.Tracker
	for i, b := range [][]byte{bodies[0], bodies[1], bodies[3], bodies[4], bodies[3], bodies[5]} {
		m, arrival, err := track.Receive(b, time.Duration(i)*time.Millisecond)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(m.Seq, arrival)
	}
	fmt.Printf("%+v\n", track.Stats())
	// Output:
	// 0 in order
	// 1 in order
	// 3 after a gap
	// wire: CRC mismatch
	// 3 duplicate
	// 5 after a gap
	// {Messages:5 CRCErrors:1 Malformed:0 Gaps:2 Missed:2 Duplicates:1 Late:0 Restarts:0}
}

// The rig asks a device for its time, and from the answers estimates the
// device's clock, to tell how long the device's messages took to arrive.
func ExampleClockEstimator() {
	var rigSide, deviceSide wire.Sender
	var est wire.ClockEstimator
	ms := time.Millisecond
	deviceClock := func(rig time.Duration) time.Duration { return rig + 7*time.Second } // booted 7 s earlier
	for k := range 4 {
		t1 := time.Duration(k) * 100 * ms
		request, _ := wire.Parse(rigSide.TimeRequest(nil, t1))
		// 2 ms on the way there; the device answers 1 ms later; 2 ms back.
		t2 := deviceClock(t1 + 2*ms)
		answer := deviceSide.TimeResponse(nil, t2+ms, wire.TimeReply{Requested: request.Time, Received: t2})
		m, _ := wire.Parse(answer)
		est.Add(m.TimeSample(t1 + 5*ms))
	}
	fmt.Println(est.Offset(time.Second), est.Drift())
	// A sample the device stamped 3 ms before it reached the rig:
	fmt.Println(est.OneWayDelay(deviceClock(time.Second), time.Second+3*ms))
	// Output:
	// 7s 0
	// 3ms
}
